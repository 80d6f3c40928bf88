"""``EmulatedTable``: an emulated shuffler, shoe and dealer wired together in one process, and the dealt log.

- A shoe profile of kind ``shuffler-shoe`` (e.g. ``emulated-autoshoe``) makes one device that
  shuffles and deals (``EmulatedShufflerShoe``): it is both ``table.shuffler`` and ``table.shoe``,
  ``devices`` holds it once, and the shuffler profile is not used.
- ``shuffler_profile=None``: a table without a shuffler (681a.5(a)): the shoe alone. When the shoe
  prompts ``SHUFFLE BY HAND`` the dealer opens a new pack of ``decks`` preshuffled decks (seeded
  by ``seed``) and takes it in hand to be cut; on ``SHUFFLE COLLECTED`` it shuffles the last
  shoe's collected cards by hand.
- The shuffler's DELIVER(SHOE) loads the table's shoe; DELIVER(DEALER) hands the stack to the
  dealer, who cuts, places the cover card and loads it on the shoe's prompts. The prompts and the
  DELIVER travel on different links, so a prompt may come first: while the shuffler holds a
  shuffled stack or delivers it, the dealer waits for it (``Dealer.stack_coming``).
- All parts share one clock and one lock (``table.lock`` is every device's ``lock``): the shuffler
  thread's delivery touches the shoe, the shoe thread's tick drives the dealer.
- ``seed`` makes the shuffles reproducible (the shuffler gets ``random.Random(seed)``); the same
  seed and the same prompts deal the same cards.
- ``faults`` go to every part (each acts on its own: card faults on the shoe, count faults on the
  shuffler, dealer faults on the dealer; ``reset-at`` on each device's own event counter).

``DealtLog`` writes one line per card that left the shoe, in order, flushed per line::

    POSITION CARD up|down[ misread]      e.g. "42 9H up", "43 KD down misread"

CARD is what really came out (the log is the ground truth a test compares the controller's
record with); ``misread`` marks a card the reader reported as unreadable. Cover cards are not
cards and are not logged. ``read_dealt_log(path)`` parses the file back.
"""
from __future__ import annotations

import contextlib
import os
import random
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from firmware_bridge.profiles import Profile

from firmware_bridge.protocol import DeviceState

from .cards import DeviceCard, parse_device_card, standard_stack
from .clock import Clock, monotonic
from .dealer import Dealer
from .device import EmulatedDevice
from .factory import resolve
from .faults import FaultSpec
from .shoe import Delivered, EmulatedShoe
from .shuffler import EmulatedShuffler
from .shuffler_shoe import EmulatedShufflerShoe

__all__ = ["DealtCard", "DealtLog", "EmulatedTable", "read_dealt_log"]


class DealtLog:
    """A draw listener that appends each delivered card to a text file (or an open stream). A
    write that fails (a full disk) is said once, as an error, and the log is left from there on
    (``failed`` says why): the emulated shoe deals on. It raised in the shoe's thread, which died
    with a traceback, and the table waited for ever for a shoe it took for unplugged (a review of
    disk faults)."""

    def __init__(self, target: str | os.PathLike[str] | IO[str]) -> None:
        if isinstance(target, (str, os.PathLike)):
            self._stream: IO[str] = open(target, "a", encoding="utf-8")  # noqa: SIM115
            self._owned = True
        else:
            self._stream = target
            self._owned = False
        self.lines = 0
        self.failed: str | None = None
        self._name = os.fspath(target) if isinstance(target, (str, os.PathLike)) else getattr(target, "name", "the dealt log")

    @staticmethod
    def format(record: Delivered) -> str:
        text = f"{record.position} {record.card} {'up' if record.face_up else 'down'}"
        return text + " misread" if record.misread else text

    def __call__(self, record: Delivered) -> None:
        if self.failed is not None:
            return
        try:
            self._stream.write(self.format(record) + "\n")
            self._stream.flush()
        except (OSError, ValueError) as exc:  # ValueError: the stream was closed
            self.failed = f"{self._name}: cannot be written: {getattr(exc, 'strerror', None) or exc}"
            import structlog  # here: only a failure logs

            structlog.get_logger().error("the dealt log stopped; the emulated shoe deals on without it",
                                         reason=self.failed, cards_logged=self.lines)
            return
        self.lines += 1

    def close(self) -> None:
        if self._owned and not self._stream.closed:
            with contextlib.suppress(OSError):  # what could not be written was said
                self._stream.close()


@dataclass(frozen=True, slots=True)
class DealtCard:
    """One line of a dealt log."""

    position: int
    card: DeviceCard
    face_up: bool
    misread: bool


def read_dealt_log(path: str | os.PathLike[str]) -> list[DealtCard]:
    """Parse a dealt log (``ValueError`` naming the line for a bad one)."""
    return list(_parse_lines(Path(path).read_text(encoding="utf-8").splitlines()))


def _parse_lines(lines: list[str]) -> Iterator[DealtCard]:
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        parts = line.split()
        try:
            if len(parts) not in (3, 4) or parts[2] not in ("up", "down") or parts[3:] not in ([], ["misread"]):
                raise ValueError("expected 'POSITION CARD up|down[ misread]'")
            yield DealtCard(int(parts[0]), parse_device_card(parts[1]), parts[2] == "up", len(parts) == 4)
        except ValueError as exc:
            raise ValueError(f"dealt log line {number}: {line!r}: {exc}") from None


class EmulatedTable:
    """Shuffler + shoe + dealer. ``devices`` is ``(shuffler, shoe)``, or ``(shoe,)`` when the shoe
    has the shuffler built in.

    Args:
        shuffler_profile, shoe_profile: profiles or profile names (a ``shuffler-shoe`` shoe profile:
            one device, the shuffler profile unused; ``shuffler_profile=None``: no shuffler).
        decks: without a shuffler, the decks in each preshuffled pack the dealer opens.
        clock, seed, speed, faults: as for the devices (``seed`` drives the shuffler).
        dealer_delay_s: the dealer's reaction time after a prompt.
        dealt_log: a path or stream for ``DealtLog``, or ``None``.
        device_kwargs: extra keyword arguments for both device constructors.
    """

    def __init__(self, *, shuffler_profile: Profile | str | None = "emulated-shuffler",
                 shoe_profile: Profile | str = "emulated-shoe", clock: Clock = monotonic,
                 seed: int | None = None, speed: float = 1.0, faults: FaultSpec | None = None,
                 dealer_delay_s: float = 0.0,
                 dealt_log: str | os.PathLike[str] | IO[str] | None = None, decks: int = 8,
                 **device_kwargs: Any) -> None:
        self.faults = faults or FaultSpec()
        self.clock = clock
        common = dict(clock=clock, faults=self.faults, speed=speed, **device_kwargs)
        shoe_prof = resolve(shoe_profile)
        self.shoe: EmulatedShoe
        self.shuffler: EmulatedShuffler | None
        if shoe_prof.kind == "shuffler-shoe":
            self.shoe = self.shuffler = EmulatedShufflerShoe(shoe_prof, seed=seed, **common)
        elif shuffler_profile is None:
            self.shuffler = None
            self.shoe = EmulatedShoe(shoe_prof, seed=None if seed is None else seed + 1, **common)
        else:
            self.shuffler = EmulatedShuffler(resolve(shuffler_profile), seed=seed, **common)
            self.shoe = EmulatedShoe(shoe_prof, seed=None if seed is None else seed + 1, **common)
        self.lock = threading.RLock()
        for device in self.devices:
            device.lock = self.lock
        self.dealer = Dealer(self.shoe, delay_s=dealer_delay_s, faults=self.faults)
        if self.shuffler is None:
            packs = random.Random(seed)
            self.dealer.open_pack = lambda: packs.sample(standard_stack(decks), decks * 52)
        else:
            shuffler = self.shuffler
            shuffler.attached_shoe = self.shoe
            shuffler.deliver_to_dealer = self.dealer.receive_stack
            # A stack is coming while the shuffler holds one (SHUFFLED: its DELIVER may still be on
            # the shuffler's link while the prompts to cut it already reached the shoe) or delivers it.
            self.dealer.stack_coming = lambda: shuffler.state in (DeviceState.SHUFFLED, DeviceState.DELIVERING)
            # A batch shuffler that keeps its stack shuffles it again when a restarted controller asks
            # (an integrator's review: the dealer refused the cut's prompts at once, and the table hung).
            self.dealer.stack_shuffling = lambda: shuffler.state is DeviceState.SHUFFLING
        self.dealt_log: DealtLog | None = None
        if dealt_log is not None:
            self.dealt_log = DealtLog(dealt_log)
            self.shoe.add_draw_listener(self.dealt_log)

    @property
    def devices(self) -> tuple[EmulatedDevice, ...]:
        return (self.shoe,) if self.shuffler in (None, self.shoe) else (self.shuffler, self.shoe)

    def tick(self, now: float | None = None) -> None:
        """Tick every device (and so the dealer) under the table lock."""
        with self.lock:
            for device in self.devices:
                device.tick(now)

    def close(self) -> None:
        """Close the dealt log (if this table opened it)."""
        if self.dealt_log is not None:
            self.dealt_log.close()

    def __enter__(self) -> EmulatedTable:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
