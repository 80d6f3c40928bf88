"""Event delivery of a ``DeviceLink``: the delivery turn (one holder at a time calls
``on_event`` in order), the deliverer thread, redelivery after a consumer error with backoff,
and the highest counter that may be acknowledged.

A mixin of ``DeviceLink`` (``device_link``): it works on the link's lock and sequencer.
"""
from __future__ import annotations

from .session import MAX_IDLE_WAIT

__all__ = ["EventDelivery"]


class EventDelivery:
    """Event delivery of a ``DeviceLink`` (see the module docstring)."""

    def _ack_target_locked(self) -> int:
        """The highest counter EVENT_ACK may cover now: delivered (and, in hand-off mode,
        acknowledged by the consumer), so never past a counter missing in the sequencer."""
        session = self._session
        if session is None or not session.epoch_confirmed:
            return 0
        target = self._sequencer.delivered_in_epoch()
        if not self.auto_ack:
            target = min(self._ack_requested, target)
        return target

    def _deliver_loop(self) -> None:
        """Deliver whatever is ready when nobody else is delivering: with ``auto_ack`` every
        event; in hand-off mode what the reader left (a redelivery after a consumer error, events
        released by ``accept_gap``)."""
        while True:
            with self._ready_cond:
                while not self._take_turn_locked():
                    if self._stopping.is_set():
                        return
                    retry_at = self._deliver_retry_at
                    wait = MAX_IDLE_WAIT if retry_at is None else retry_at - self._clock()
                    self._ready_cond.wait(min(max(wait, 0.001), MAX_IDLE_WAIT))
            self._deliver_turn()

    def _take_turn_locked(self) -> bool:
        """Take the delivery turn if an event is ready, nobody holds the turn and no redelivery
        backoff is running. One holder at a time keeps ``on_event`` calls in order, one by one."""
        if self._delivering or self._stopping.is_set() or self._sequencer.peek() is None:
            return False
        retry_at = self._deliver_retry_at
        if retry_at is not None and self._clock() < retry_at:
            return False
        self._delivering = True
        return True

    def _deliver_turn(self) -> None:
        """Holding the delivery turn: call ``on_event`` for each ready event in order until none
        is left, one raises (it stays at the head, redelivered after a backoff) or the link stops;
        then give the turn back."""
        callback = self._on_event
        assert callback is not None
        try:
            while True:
                with self._lock:
                    event = self._sequencer.peek()
                    if event is None or self._stopping.is_set():
                        return
                    self._handing = event
                try:
                    callback(event)
                except Exception as exc:  # noqa: BLE001 - the consumer's failure is reported
                    with self._lock:
                        delay = self._deliver_backoff.next()
                        self._deliver_retry_at = self._clock() + delay
                        self._stats["callback_errors"] += 1
                    self._report_error(f"on_event raised for event {event.epoch}:{event.counter}: "
                                       f"{exc!r}; not acknowledged, redelivered in {delay:.3g} s")
                    return
                with self._lock:
                    self._sequencer.commit(event)
                    self._stats["events_delivered"] += 1
                    if self._deliver_retry_at is not None:
                        self._deliver_retry_at = None
                        self._deliver_backoff.reset()
                    if self._ack_target_locked() > self._acked:
                        self._cond.notify_all()  # the supervisor acknowledges
        finally:
            with self._lock:
                self._delivering = False
                self._handing = None
                if self._sequencer.peek() is not None:
                    self._ready_cond.notify_all()  # the deliverer takes over
