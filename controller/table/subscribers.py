"""The event streams of a running table (the control socket's subscribers): each subscriber is a
bounded queue of JSON-ready dicts, fed by the owner thread; a full queue loses the event, so a
slow client never holds the table up.

The first ``START_KEPT`` events after the table starts are kept, subscribers or not, and a
subscriber may ask for them first (``add(since_start=True)``): a console whose table stopped and
started again sees what the start decided (a round voided and its wagers returned, a device
replaced) before it could subscribe again (a floorperson review: those lines were lost). Past the
kept events, a notice says that some are not shown.

Surveillance's events (the edge monitor's ``edge`` and ``edge_alert`` records and its notice,
``Notice.surveillance``: which wager favours the player now, and by how much) go only to the
subscribers added with ``surveillance=True``: told to a dealer's console, they would tell the
table's staff when a side wager is worth a player's while (a security review). Who is one is the
control socket's decision (``controller.control.audience``)."""
from __future__ import annotations

import queue
import threading
from typing import Any

from controller.journal import kinds
from controller.table.io import Notice, TableRecord

__all__ = ["SURVEILLANCE_KINDS", "Subscribers"]


SURVEILLANCE_KINDS = frozenset({kinds.EDGE, kinds.EDGE_ALERT})  # records streamed to surveillance alone
START_KEPT = 500  # the table's first events, kept for a subscriber that asks for them
MORE_THAN_KEPT = {"type": "notice", "level": "warning",
                  "text": f"the table made more than {START_KEPT} events since it started: the later ones before "
                          "this subscription are not shown (`shoectl journal replay` has every one)"}


class Subscribers:
    """``add`` / ``remove`` from any thread; ``publish`` from the owner thread. True while there is
    at least one subscriber, or the table's first events are being kept (a cheap check before
    building an event)."""

    def __init__(self) -> None:
        self._queues: list[tuple[queue.Queue[Any], bool]] = []  # each queue, and whether it is surveillance's
        self._lock = threading.Lock()
        self._step_published: int | None = None  # the seq of the last clock_step published
        self._kept: list[tuple[dict[str, Any], bool]] = []  # the first START_KEPT events, each with its audience
        self._missed = False  # an event was made past them: not kept (or not even built)

    @property
    def _keeping(self) -> bool:
        """Whether the table's first events are still being kept."""
        return len(self._kept) < START_KEPT

    def add(self, maxsize: int, *, since_start: bool = False, surveillance: bool = False) -> queue.Queue[Any]:
        """A new subscriber's queue; ``since_start``: the events kept since the table started first
        (under the lock that ``publish`` takes: none is missed, none comes twice); ``surveillance``:
        surveillance's events too (see the module docstring)."""
        q: queue.Queue[Any] = queue.Queue(maxsize=maxsize)
        with self._lock:
            if since_start:
                for event in [e for e, theirs in self._kept if surveillance or not theirs][:maxsize - 1]:
                    q.put_nowait(event)
                if self._missed:
                    q.put_nowait(MORE_THAN_KEPT)
            self._queues.append((q, surveillance))
        return q

    def remove(self, q: queue.Queue[Any]) -> None:
        with self._lock:
            self._queues = [(mine, theirs) for mine, theirs in self._queues if mine is not q]

    def publish(self, event: dict[str, Any], *, surveillance: bool = False) -> None:
        """``event`` to every subscriber (``surveillance``: to surveillance's alone)."""
        with self._lock:
            queues = [q for q, theirs in self._queues if theirs or not surveillance]
            if self._keeping:
                self._kept.append((event, surveillance))
            else:
                self._missed = True
        for q in queues:
            try:
                q.put_nowait(event)
            except queue.Full:
                pass

    def publish_record(self, journal: Any, kind: str, shoe: str | None, round_no: int | None,
                       shown: dict[str, Any]) -> None:
        """A record the owner just journaled, with ``ts``, its journal time (that of its transaction:
        a watcher ties the event to its entry). A ``clock_step`` the journal's writer journaled since
        the last record published comes first, once (the times after it are a stepped clock's)."""
        step = journal.last_step
        if step is not None and step[0] != self._step_published:
            self._step_published = step[0]
            self.publish({"type": "clock_step", "ts": step[1], "shoe": shoe, "round": round_no, **step[2].payload()})
        self.publish({"type": kind, "ts": journal.last_ts, "shoe": shoe, "round": round_no, **shown},
                     surveillance=kind in SURVEILLANCE_KINDS)

    def publish_output(self, journal: Any, o: TableRecord | Notice) -> None:
        """The core's output as its event, when one is wanted: a record in its ``shown`` form (a
        face-down card stays hidden), a notice as ``{"type": "notice", "level", "text"}``."""
        if not self:
            self._missed = True  # not built: not kept either
            return
        if isinstance(o, TableRecord):
            self.publish_record(journal, o.kind, o.shoe, o.round, o.payload if o.shown is None else o.shown)
        else:
            self.publish({"type": "notice", "level": o.level, "text": o.text}, surveillance=o.surveillance)

    def __bool__(self) -> bool:
        return self._keeping or bool(self._queues)
