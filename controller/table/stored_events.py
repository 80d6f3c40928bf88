"""Which device events the journal already holds, known on the owner thread without asking SQLite
for each card.

The link's ``EventSequencer`` is the one judge of duplicates and gaps while this process lives;
what it knew dies with a crash, so the journal is the backstop (docs/link.md, section 6): this
class on the owner thread, and under it the journal's unique key on (device serial, epoch,
counter). After a restart a device resends what it was never told was stored, and a journal with
a gap may already hold events behind the gap. The runner must find those before the core decides on them again. A device's
counter only grows within an epoch and the owner stores its events in counter order, so an event
above the highest counter stored for its device and epoch cannot be in the journal: only the
others are looked up (``Journal.find_device_event``).
"""
from __future__ import annotations

from typing import Any

__all__ = ["StoredEvents"]

_UNKNOWN = object()


class StoredEvents:
    """Owner thread only. ``contains`` answers for an event about to be decided; ``add`` records one
    going into the transaction the owner is building (a second delivery of it before the commit
    counts as stored too); ``committed`` / ``rolled_back`` after that transaction."""

    def __init__(self, journal: Any) -> None:
        self._journal = journal
        self._highest: dict[str, tuple[int, int] | None] = {}  # serial -> (epoch, highest counter)
        self._pending: set[tuple[str, int, int]] = set()

    def _highest_of(self, serial: str) -> tuple[int, int] | None:
        if serial not in self._highest:
            self._highest[serial] = self._journal.last_device_counter(serial, contiguous=False)
        return self._highest[serial]

    def contains(self, serial: str, epoch: int, counter: int) -> bool:
        if (serial, epoch, counter) in self._pending:
            return True
        highest = self._highest_of(serial)
        if highest is None or (highest[0] == epoch and counter > highest[1]):
            return False
        return self._journal.find_device_event(serial, epoch, counter) is not None

    def add(self, serial: str, epoch: int, counter: int) -> None:
        highest = self._highest_of(serial)
        self._pending.add((serial, epoch, counter))
        if highest is not None and highest[0] == epoch:
            self._highest[serial] = (epoch, max(counter, highest[1]))
        else:  # the device's first event here, or a new epoch: the journal says after the commit
            del self._highest[serial]

    def committed(self) -> None:
        self._pending.clear()

    def rolled_back(self) -> None:
        """What was added is not stored after all: ask the journal again."""
        self._pending.clear()
        self._highest.clear()
