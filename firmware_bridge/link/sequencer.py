"""In-order, exactly-once event delivery state for one device (pure logic, no threads, no I/O).

The device numbers its events 1, 2, 3, ... per *event epoch* and resends every unacknowledged
one after a reconnect or on RESEND_EVENTS, so the same event can arrive several times and, after
line damage, out of order. ``EventSequencer`` turns that stream into the sequence the consumer
sees:

- ``offer(event)`` files an arriving event: the next expected counter goes to the ready queue
  (with whatever buffered events then follow it), a later one waits in a reorder buffer, an
  earlier or already buffered one is a duplicate and is dropped. Memory is bounded: the ready
  queue holds at most ``max_buffered`` events (then the consumer must catch up) and the reorder
  buffer only counters less than ``max_buffered`` past the last queued one; anything else is
  dropped unacknowledged (OVERFLOW), which is safe: the device sends it again;
- ``peek()`` is the next event to deliver; ``commit(event)`` records that the consumer took it
  (its callback returned). Until then the same event stays at the head (redelivery);
- ``last_delivered`` = ``(epoch, counter)`` of the last committed event of the unit answering now
  survives reconnects and epoch changes (and may be seeded from a journal), not another unit
  answering (a replaced unit's events delivered after the switch do not set it);
- ``gap``: some counter between the last queued one and the highest known to exist (from a later
  event or a HEARTBEAT_REPLY) is missing: ask the device for RESEND_EVENTS;
- ``set_epoch(epoch, serial)``: the device's counter restarted, or another unit (another
  ``serial``, whose counters are its own even under the same epoch number) answers. Events of the old epoch already queued
  are still delivered (they happened first), and at the same unit's epoch change those held
  behind a gap too; old-epoch events that never arrived are lost and returned to the caller to
  report (another unit's held events are dropped: it still holds them, unacknowledged, and resends
  them should it answer again);
- ``accept_gap(up_to)``: the host decided that missing counters are lost (docs/protocol.md E7);
  ``start_after(acknowledged)``: the device acknowledged them to someone else (no resend can come);
- ``asking()``: the link is asking for RESEND_EVENTS (the gaps known now are covered);
  ``resend_requested()``: the device took the request. A gap that outlasts
  ``stall_resends`` requests without its first missing counter arriving is *stalled*: a device
  fault (it lost events it must keep), reported once by the link, and asked about less often.
  A request after which frames came damaged is not held against the device (its resent events
  may have been among them): on such a line a gap stalls only after ``NOISY_STALL_FACTOR`` times
  as many requests, and its words say the line may be at fault.

Not thread-safe: the link guards it with its lock.
"""
from __future__ import annotations

import heapq
from collections import deque

from firmware_bridge.protocol import DeviceEvent

from .reporting import ranges_text
from .state import LinkEvent

__all__ = ["EventSequencer", "QUEUED", "BUFFERED", "DUPLICATE", "OVERFLOW", "STALL_RESENDS", "MAX_BUFFERED"]

QUEUED = "queued"        # ready for delivery (and maybe released buffered events behind it)
BUFFERED = "buffered"    # ahead of a gap; waits for the missing counters
DUPLICATE = "duplicate"  # already queued, buffered or delivered: dropped
OVERFLOW = "overflow"    # ready queue full, or too far past a gap: dropped unacknowledged (resent)

STALL_RESENDS = 8  # RESEND_EVENTS requests a gap may outlast before it is declared stalled
# ... counting only those after which no frame came damaged; with them, this many times as many.
# A line that damages most frames (3 % of the bytes: 60 % of the frames) still brings a resent
# event through within that many requests (a review saw a healthy shoe declared at fault after 8)
NOISY_STALL_FACTOR = 8
# Counters held past the last queued one (and events waiting for the consumer). A device reports
# at most 65,535 unacknowledged events (STATUS_REPLY pending_events is a u16) and keeps them all
# until they are acknowledged (docs/protocol.md E3, E6, E8), so a legitimate gap closes within it.
MAX_BUFFERED = 0xFFFF


class EventSequencer:
    """Delivery state. ``last_delivered``: ``(epoch, counter)`` already stored by the consumer
    (from its journal), or ``None`` for a fresh start. ``max_buffered`` bounds the ready queue and
    the reorder window (so at most about twice that many events are held); beyond them events are
    dropped unacknowledged, which is safe. ``stall_resends``: see ``resend_requested``.
    ``profile_name`` and ``serial`` go into every ``LinkEvent`` (the link sets them); ``serial``
    is also the unit whose counters these are (a seed's: the device it came from; "": unknown)."""

    def __init__(self, last_delivered: tuple[int, int] | None = None, *, profile_name: str = "",
                 serial: str = "", max_buffered: int = MAX_BUFFERED, stall_resends: int = STALL_RESENDS) -> None:
        self.profile_name = profile_name
        self.serial = serial
        self.max_buffered = max_buffered
        self.stall_resends = stall_resends
        self.epoch: int | None = None
        self.queued = 0          # highest counter of the current epoch placed in the ready queue
        self.known_highest = 0   # highest counter of the current epoch known to exist
        self.last_delivered: tuple[int, int] | None = None
        if last_delivered is not None:
            epoch, counter = last_delivered
            if not (0 <= epoch <= 0xFFFF_FFFF and 0 <= counter <= 0xFFFF_FFFF):
                raise ValueError(f"last_delivered must be two u32 values, got {last_delivered}")
            self.epoch = epoch
            self.queued = self.known_highest = counter
            self.last_delivered = (epoch, counter)
        self._ready: deque[LinkEvent] = deque()
        self._reorder: dict[int, DeviceEvent] = {}
        self._resends = 0                    # requests made while ``queued`` stood at ...
        self._damaged_resends = 0            # (those after which frames came damaged) ...
        self._damage_seen = 0                # (the link's damaged frames at the last request)
        self._resends_at: int | None = None  # ... this counter
        self._stalled_at: int | None = None  # ``queued`` when the gap was declared stalled
        self._asked_up_to = 0  # ``known_highest`` at the last resend request: the gaps it covered
        # Counters past ``queued`` whose frames came but did not decode: (message type name, times).
        self._unreadable: dict[int, tuple[str, int]] = {}

    # the epoch

    def set_epoch(self, epoch: int, serial: str = "") -> list[tuple[int, int]]:
        """Make ``epoch`` of the unit ``serial`` current ("": the same unit). Returns the counter
        ranges of the old epoch that were known to exist but never arrived (lost with the old
        epoch); ``[]`` if neither the epoch nor the unit changed."""
        another_unit = self.another_unit(serial)
        self.serial = serial or self.serial
        if not another_unit and epoch == self.epoch:
            return []
        lost: list[tuple[int, int]] = []
        if self.epoch is not None:
            lost = self.missing()
            if not another_unit:  # its counter restarted: the old epoch's missing events never come,
                self.accept_gap()  # so those held behind them are delivered first, in order
        if another_unit:  # nothing of this unit's was delivered, whatever its epoch's number
            self.last_delivered = None
        self.epoch = epoch
        self.queued = self.known_highest = self._asked_up_to = 0
        self._reorder.clear()
        self._unreadable.clear()
        self._stalled_at = self._resends_at = None
        return lost

    def unreadable(self, counter: int, type_name: str) -> None:
        """Event ``counter`` (a ``type_name``) came but its payload does not decode: it stays
        missing (nothing to deliver), and a stall says it came rather than that it never did."""
        if self.queued < counter <= self.queued + self.max_buffered:  # bounded as the reorder buffer
            self.known_highest = max(self.known_highest, counter)
            if len(self._unreadable) >= 64:  # those delivered or given up since are of no more use
                self._unreadable = {c: v for c, v in self._unreadable.items() if c > self.queued}
            self._unreadable[counter] = (type_name, self._unreadable.get(counter, ("", 0))[1] + 1)

    def stall_words(self) -> str:
        """The stalled gap in words: the first missing counters, whether the first came unreadable
        (``event 2 (JAM) came 17 times but cannot be read``) or never came, and whose fault that
        is (the device's; or the line's too, when frames came damaged after the requests)."""
        missing = self.missing(limit=9)
        first = missing[0][0] if missing else self.queued + 1
        # the requests the gap outlasted: the one just taken has had no time to bring anything back
        asked = f"although the device was asked {self._resends + self._damaged_resends - 1} times to resend"
        cause = ("a device fault, or a line that damages frames (it damaged some after these requests)"
                 if self._damaged_resends else "a device fault")
        if first in self._unreadable:
            type_name, times = self._unreadable[first]
            return f"event {first} ({type_name}) came {times} times but cannot be read, {asked} it: {cause}"
        return f"events {ranges_text(missing)} never arrived {asked} them: {cause}"

    def another_unit(self, serial: str) -> bool:
        """Whether ``serial`` is another unit than the one whose counters these are."""
        return bool(serial) and bool(self.serial) and serial != self.serial

    # arrivals

    def offer(self, event: DeviceEvent) -> str:
        """File an event of the current epoch; returns QUEUED, BUFFERED, DUPLICATE or OVERFLOW."""
        if self.epoch is None:
            raise RuntimeError("no event epoch yet: the IDENTITY reply sets it")
        counter: int = event.counter  # type: ignore[attr-defined]
        if counter > self.known_highest:
            self.known_highest = counter
        if counter <= self.queued or counter in self._reorder:
            return DUPLICATE
        if counter != self.queued + 1:
            if counter - self.queued > self.max_buffered:
                return OVERFLOW  # too far past the gap: holding it would not bound memory
            self._reorder[counter] = event
            return BUFFERED
        if self.full:
            return OVERFLOW
        self._queue(event)
        reorder = self._reorder
        while reorder and self.queued + 1 in reorder:
            self._queue(reorder.pop(self.queued + 1))
        return QUEUED

    def _queue(self, event: DeviceEvent) -> None:
        counter: int = event.counter  # type: ignore[attr-defined]
        assert self.epoch is not None
        self._ready.append(LinkEvent(self.profile_name, self.serial, self.epoch, counter, event))
        self.queued = counter

    def note_highest(self, counter: int) -> None:
        """The device says events up to ``counter`` exist (its HEARTBEAT_REPLY)."""
        if counter > self.known_highest:
            self.known_highest = counter

    # gaps

    @property
    def gap(self) -> bool:
        """True when some existing counter after ``queued`` has not arrived yet."""
        return self.known_highest > self.queued

    def missing(self, limit: int | None = None) -> list[tuple[int, int]]:
        """Inclusive ranges of counters known to exist that have not arrived (the first
        ``limit`` of them, if given)."""
        ranges: list[tuple[int, int]] = []
        start = self.queued + 1
        held = sorted(self._reorder) if limit is None else heapq.nsmallest(limit, self._reorder)
        for counter in held:
            if counter > start:
                ranges.append((start, counter - 1))
            start = counter + 1
        if start <= self.known_highest and (limit is None or len(held) == len(self._reorder)):
            ranges.append((start, self.known_highest))
        return ranges if limit is None else ranges[:limit]

    @property
    def unasked_gap(self) -> bool:
        """True when a gap is open that no resend request has covered yet: every counter known
        to exist when the last request was made has arrived since, so the missing ones are new
        (a device resends every unacknowledged event it holds, so one request covers every gap
        known when it is made). A link asks at once about such a gap, and about one already
        asked for only after a while (the resent events may be on their way)."""
        return self.gap and self.queued >= self._asked_up_to

    def asking(self) -> None:
        """The link is about to ask for RESEND_EVENTS: the gaps known now are covered by it."""
        self._asked_up_to = self.known_highest

    def resend_requested(self, damaged_frames: int = 0) -> bool:
        """The link asked the device to resend (RESEND_EVENTS). Returns True once per stall: when
        the gap has now outlasted ``stall_resends`` requests with its first missing counter still
        absent. A device keeps every unacknowledged event (docs/protocol.md E3), so a gap that does
        not close is a fault, not something to hold ever more events for. ``damaged_frames``: the
        link's count of frames that came damaged, so far; a request after which it grew (the resent
        events may have been among them) counts only towards ``NOISY_STALL_FACTOR`` times the
        limit (a gap's first request has nothing before it to judge by: it counts in full). (What
        it covered was noted by ``asking``, before it was sent.)"""
        if not self.gap:
            self._resends_at = None
            return False
        if self._resends_at != self.queued:
            self._resends_at, self._resends, self._damaged_resends = self.queued, 0, 0
            self._damage_seen = damaged_frames
        if damaged_frames != self._damage_seen:
            self._damaged_resends += 1
        else:
            self._resends += 1
        self._damage_seen = damaged_frames
        outlasted = (self._resends > self.stall_resends
                     or self._resends + self._damaged_resends > self.stall_resends * NOISY_STALL_FACTOR)
        if outlasted and self._stalled_at != self.queued:
            self._stalled_at = self.queued
            return True
        return False

    @property
    def stalled(self) -> bool:
        """True while a gap declared stalled (``resend_requested``) is still open where it was."""
        return self._stalled_at is not None and self._stalled_at == self.queued and self.gap

    def accept_stalled_gap(self) -> tuple[int, int, int] | None:
        """Give up the gap stalled now (``accept_gap`` up to its end), and nothing else: ``(first,
        last, counters given up)``, or None when none is stalled (or no epoch is known) or nothing
        was missing. One call, so that a caller holding its lock looks and acts at once."""
        if not self.stalled or self.epoch is None:
            return None
        first, last = self.missing(limit=1)[0]
        lost = self.accept_gap(last)
        return (first, last, lost) if lost else None

    def accept_gap(self, up_to: int | None = None) -> int:
        """Give up on missing counters up to ``up_to`` (default: all known); buffered events
        beyond them become deliverable. Returns how many counters were given up."""
        target = self.known_highest if up_to is None else min(up_to, self.known_highest)
        if target <= self.queued:
            return 0
        keys = sorted(k for k in self._reorder if k <= target)
        lost = target - self.queued - len(keys)
        for key in keys:
            self._queue(self._reorder.pop(key))
        self.queued = target
        while self._reorder and self.queued + 1 in self._reorder:
            self._queue(self._reorder.pop(self.queued + 1))
        self._stalled_at = self._resends_at = None
        return lost

    def start_after(self, acknowledged: int) -> int:
        """The device says it holds no event of the current epoch up to ``acknowledged`` (they were
        acknowledged): none of them can arrive any more, and those this host never had are given
        up (docs/protocol.md E7). Returns how many were given up."""
        self.known_highest = max(self.known_highest, acknowledged)
        return self.accept_gap(acknowledged)

    # delivery

    def peek(self) -> LinkEvent | None:
        """The next event to deliver, or ``None``."""
        return self._ready[0] if self._ready else None

    def commit(self, event: LinkEvent) -> None:
        """The consumer stored ``event`` (the head of the queue)."""
        head = self._ready[0] if self._ready else None
        if head is not event:
            raise RuntimeError(f"commit of event {event.counter}, but the head is "
                               f"{None if head is None else head.counter}")
        self._ready.popleft()
        if not self.another_unit(event.serial):  # a replaced unit's event, delivered after the switch,
            self.last_delivered = (event.epoch, event.counter)  # is no delivery of this unit's counters

    @property
    def full(self) -> bool:
        """True when ``max_buffered`` events wait for the consumer: the next ones are dropped
        (OVERFLOW), so asking the device to resend is pointless until it catches up. (Events held
        behind a gap never make it full: only a resend can fill the gap.)"""
        return len(self._ready) >= self.max_buffered

    @property
    def ready_count(self) -> int:
        return len(self._ready)

    @property
    def buffered_count(self) -> int:
        return len(self._reorder)

    def delivered_in_epoch(self) -> int:
        """The last delivered counter if it belongs to the current epoch, else 0: the most the
        host may acknowledge to the device now."""
        last = self.last_delivered
        if last is None or last[0] != self.epoch:
            return 0
        return last[1]
