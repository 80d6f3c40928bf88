"""``EventDeliverer``: the delivery of in-order events to ``on_event`` for one ``DeviceLink``.

It owns the delivery turn (one holder at a time, the reader in hand-off mode or the deliverer
thread, calls ``on_event`` in order, one by one), the event being handed over right now, and the
redelivery backoff after a consumer error. The events and their order belong to the link's
``EventSequencer``; every method named ``*_locked`` expects the link's lock held.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from .backoff import Backoff
from .sequencer import EventSequencer
from .session import MAX_IDLE_WAIT
from .state import LinkEvent

__all__ = ["EventDeliverer"]


class EventDeliverer:
    """Delivers what the sequencer has ready to ``on_event``.

    Args:
        lock: the link's lock (guards the sequencer and this object's state).
        sequencer: the link's sequencer: ``peek`` for the next event, ``commit`` once delivered.
        on_event: the consumer; a raise leaves the event at the head, offered again after
            ``backoff``. ``None``: nothing is delivered (the link starts no deliverer thread).
        stopping: set when the link stops: no further ``on_event`` starts.
        clock: monotonic seconds, for the redelivery backoff.
        stats: the link's counters (``events_delivered``, ``callback_errors``).
        report_error: reports a consumer failure (called without the lock).
        delivered_locked: called with the lock held after each event delivered (the link wakes
            its supervisor when an acknowledgement is now due).
    """

    def __init__(self, lock: threading.Lock, sequencer: EventSequencer,
                 on_event: Callable[[LinkEvent], None] | None, *, stopping: threading.Event,
                 clock: Callable[[], float], backoff: Backoff, stats: dict[str, int],
                 report_error: Callable[[str], None],
                 delivered_locked: Callable[[], None]) -> None:
        self._lock = lock
        self.ready = threading.Condition(lock)  # notified when an event may be waiting
        self._sequencer = sequencer
        self._on_event = on_event
        self._stopping = stopping
        self._clock = clock
        self._backoff = backoff
        self._stats = stats
        self._report_error = report_error
        self._delivered_locked = delivered_locked
        self._retry_at: float | None = None
        self._delivering = False             # the delivery turn is held (reader or deliverer)
        self._held = False                   # a new session's events wait for its CONNECTED report
        self.handing: LinkEvent | None = None  # the event inside on_event right now

    def run(self) -> None:
        """The deliverer thread: deliver whatever is ready when nobody else is delivering (with
        ``auto_ack`` every event; in hand-off mode what the reader left: a redelivery after a
        consumer error, events released by ``accept_gap``) until the link stops."""
        while True:
            with self.ready:
                while not self.take_turn_locked():
                    if self._stopping.is_set():
                        return
                    retry_at = self._retry_at
                    wait = MAX_IDLE_WAIT if retry_at is None else retry_at - self._clock()
                    self.ready.wait(min(max(wait, 0.001), MAX_IDLE_WAIT))
            self.deliver_turn()

    def take_turn_locked(self) -> bool:
        """Take the delivery turn if an event is ready, nobody holds the turn and no redelivery
        backoff is running. One holder at a time keeps ``on_event`` calls in order, one by one."""
        if self._delivering or self._held or self._stopping.is_set() or self._sequencer.peek() is None:
            return False
        retry_at = self._retry_at
        if retry_at is not None and self._clock() < retry_at:
            return False
        self._delivering = True
        return True

    def hold_locked(self) -> None:
        """A new session's IDENTITY was accepted: deliver nothing more until ``release``, so that
        the owner hears the session's ``CONNECTED`` (with the identity) before any of its events.
        A turn already running finishes the event in hand and stops at the next one."""
        self._held = True

    def release(self) -> None:
        """The session's outcome was reported (``CONNECTED``, or the handshake failed): deliver
        again; the deliverer thread takes over what is ready."""
        with self._lock:
            self._held = False
            if self._sequencer.peek() is not None:
                self.ready.notify_all()

    def deliver_turn(self) -> None:
        """Holding the delivery turn (without the lock): call ``on_event`` for each ready event in
        order until none is left, one raises (it stays at the head, redelivered after a backoff)
        or the link stops; then give the turn back."""
        callback = self._on_event
        assert callback is not None
        try:
            while True:
                with self._lock:
                    event = self._sequencer.peek()
                    if event is None or self._held or self._stopping.is_set():
                        return
                    self.handing = event
                try:
                    callback(event)
                except Exception as exc:  # noqa: BLE001 - the consumer's failure is reported
                    with self._lock:
                        delay = self._backoff.next()
                        self._retry_at = self._clock() + delay
                        self._stats["callback_errors"] += 1
                    self._report_error(f"on_event raised for event {event.epoch}:{event.counter}: "
                                       f"{exc!r}; not acknowledged, redelivered in {delay:.3g} s")
                    return
                with self._lock:
                    self._sequencer.commit(event)
                    self._stats["events_delivered"] += 1
                    if self._retry_at is not None:
                        self._retry_at = None
                        self._backoff.reset()
                    self._delivered_locked()
        finally:
            with self._lock:
                self._delivering = False
                self.handing = None
                if self._sequencer.peek() is not None:
                    self.ready.notify_all()  # the deliverer takes over
