"""``Acknowledgements``: what a ``DeviceLink`` may acknowledge to its device, and what it has.

The device forgets an event once EVENT_ACK covers it, so the link never acknowledges beyond what
was delivered (with ``auto_ack``: ``on_event`` returned) or, in hand-off mode, beyond what the
consumer said it stored (``consumer_acknowledged``); and never past a counter still missing in
the sequencer. EVENT_ACK itself is the supervisor's to send: this object only knows the target
and wakes the supervisor when one is due. Every method named ``*_locked`` expects the link's
lock held; the counters restart with the device's event epoch.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from .sequencer import EventSequencer
from .session import Session
from .state import LinkEvent

__all__ = ["Acknowledgements"]


class Acknowledgements:
    """The acknowledgement state of one link.

    Args:
        cond: the link's condition; notified when an EVENT_ACK is due (the supervisor waits on it).
        sequencer: the link's sequencer (what was delivered, in which epoch).
        session: the current session, or ``None`` (nothing is acknowledged before this session's
            IDENTITY fixed the epoch).
        auto_ack: acknowledge what was delivered; ``False``: only what the consumer acknowledged.
        stored: the counter the consumer had stored before the link was made (the sequencer's
            seed, of its first epoch): acknowledged as if the consumer had said so. A device
            that still holds those events (a crash between the commit and EVENT_ACK) has them
            acknowledged; without it, in hand-off mode, they were resent at every connect and
            dropped as duplicates, never acknowledged.
    """

    def __init__(self, cond: threading.Condition, sequencer: EventSequencer,
                 session: Callable[[], Session | None], *, auto_ack: bool, stored: int = 0) -> None:
        self._cond = cond
        self._sequencer = sequencer
        self._session = session
        self.auto_ack = auto_ack
        self.confirmed = 0   # highest counter the device confirmed (EVENT_ACK answered), this epoch
        self.requested = stored  # hand-off mode: highest counter the consumer acknowledged, this epoch
        self.retry_at = float("-inf")  # an EVENT_ACK the device refused BUSY is sent again from then

    def restart_locked(self) -> None:
        """The device's counter restarted (a new event epoch): nothing is acknowledged in it yet."""
        self.confirmed = self.requested = 0
        self.retry_at = float("-inf")

    def target_locked(self) -> int:
        """The highest counter EVENT_ACK may cover now: delivered (and, in hand-off mode,
        acknowledged by the consumer), so never past a counter missing in the sequencer."""
        session = self._session()
        if session is None or not session.epoch_confirmed:
            return 0
        target = self._sequencer.delivered_in_epoch()
        if not self.auto_ack:
            target = min(self.requested, target)
        return target

    def due_locked(self) -> bool:
        """An EVENT_ACK would tell the device something new."""
        return self.target_locked() > self.confirmed

    def wake_if_due_locked(self) -> None:
        """Wake the supervisor when an EVENT_ACK is now due (after a delivery, an acknowledgement)."""
        if self.target_locked() > self.confirmed:
            self._cond.notify_all()

    def consumer_acknowledged_locked(self, counter: int, epoch: int | None,
                                     handing: LinkEvent | None, serial: str | None = None) -> bool:
        """The consumer stored every event up to ``counter`` (``DeviceLink.acknowledge``).
        ``handing``: the event inside ``on_event`` right now (it counts as handed over). False for
        another epoch than the current one, or another unit (``serial``, the event's: another unit
        has counters of its own under the same epoch number); ValueError for a counter not handed
        over yet."""
        if epoch is not None and epoch != self._sequencer.epoch:
            return False
        if serial is not None and self._sequencer.another_unit(serial):
            return False  # the unit that sent it is gone: it says nothing of this one's counters
        handed = self._sequencer.delivered_in_epoch()
        if handing is not None and handing.epoch == self._sequencer.epoch:
            handed = max(handed, handing.counter)
        if counter > handed:
            raise ValueError(f"event {counter} has not been delivered (last: {handed})")
        if counter > self.requested:
            self.requested = counter
            self.wake_if_due_locked()  # else the end of that delivery wakes the supervisor
        return True
