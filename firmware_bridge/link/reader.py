"""The reader thread of a ``DeviceLink`` session: bytes -> protocol core -> replies to the waiting
command, events to the sequencer (the one judge of what is new), the IDENTITY's epoch accepted
as soon as it arrives; in hand-off mode it delivers what is now in order itself.

A mixin of ``DeviceLink`` (``device_link``): it works on the link's lock, sequencer and stats.
"""
from __future__ import annotations

from typing import Any


from firmware_bridge.errors import LinkError, TransportError
from firmware_bridge.protocol import (
    PROTOCOL_VERSION,
    Dropped,
    DropReason,
    EventReceived,
    HeartbeatReply,
    Identity,
    NeedData,
    RemoteProtocolError,
    ReplyReceived,
    StaleReply,
)

from .sequencer import BUFFERED, DUPLICATE, OVERFLOW, QUEUED
from .session import Session

__all__ = ["READ_POLL", "SessionReader"]

READ_POLL = 0.1        # longest a reader read blocks (seconds): bounds stop() on USB


class SessionReader:
    """The reader thread of a ``DeviceLink`` session (see the module docstring)."""

    def _read_loop(self, session: Session) -> None:
        transport = session.transport
        poll = self.read_poll
        try:
            while session.alive:
                try:
                    data = transport.read(poll)
                except TransportError as exc:
                    self._lose(session, f"read failed: {exc}")
                    return
                if not data:
                    continue
                with self._lock:
                    if not session.alive:
                        return
                    session.conn.receive_data(data)
                    deliver = self._drain_locked(session)
                if deliver:
                    self._delivery.deliver_turn()
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the link silently
            self._log.exception("reader failed", error=repr(exc))
            self._lose(session, f"reader failed: {exc!r}")

    def _drain_locked(self, session: Session) -> bool:
        """Take every decoded item from the protocol core. Returns True when the caller (the
        reader, in hand-off mode) now holds the delivery turn and must deliver, without the lock."""
        conn = session.conn
        stats = self._stats
        queued = wake = False
        while True:
            try:
                ev = conn.next_event()
            except RemoteProtocolError as exc:
                stats["protocol_errors"] += 1
                waiter = self._waiter
                if exc.command is not None and waiter is not None and not waiter.done:
                    waiter.set(LinkError(f"{self.name}: protocol violation in the reply to "
                                         f"{type(exc.command).__name__}: {exc}"))
                self._log.warning("protocol violation", error=str(exc))
                continue
            kind = type(ev)
            if kind is NeedData:
                break
            if kind is EventReceived:
                verdict = self._on_device_event_locked(session, ev.event)  # type: ignore[union-attr]
                if verdict is QUEUED:
                    queued = True
                elif verdict is BUFFERED:
                    wake = True  # a gap: the supervisor asks for RESEND_EVENTS
            elif kind is ReplyReceived:
                self._on_reply_locked(session, ev)  # type: ignore[arg-type]
            elif kind is Dropped:
                stats["frames_dropped"] += 1
                if ev.reason is not DropReason.RESET:  # type: ignore[union-attr]
                    # A damaged frame may have been the awaited reply, or an event: ask now, not
                    # after the reply timeout or at the next idle heartbeat.
                    if self._waiter is not None:
                        self._waiter.nudge()
                    if session.epoch_confirmed:
                        self._probe_wanted = wake = True
            elif kind is StaleReply:
                stats["stale_replies"] += 1
        if wake:
            self._cond.notify_all()
        if queued:
            if self.auto_ack:
                self._delivery.ready.notify_all()
            elif self._delivery.take_turn_locked():
                return True
        return False

    def _on_device_event_locked(self, session: Session, event: Any) -> str | None:
        """File an arriving event with the sequencer, the one judge of what is new (docs/link.md
        section 6); returns its verdict (``None``: arrived before this session's IDENTITY)."""
        if not session.epoch_confirmed:
            # Before this session's IDENTITY the epoch is unknown; RESEND_EVENTS brings it back.
            self._stats["events_early"] += 1
            return None
        verdict = self._sequencer.offer(event)
        if verdict is DUPLICATE:
            self._stats["events_duplicate"] += 1
        elif verdict is OVERFLOW:
            self._stats["events_overflow"] += 1
        return verdict

    def _on_reply_locked(self, session: Session, received: ReplyReceived) -> None:
        reply = received.reply
        if type(reply) is Identity:
            self._accept_identity_locked(session, reply)
        elif type(reply) is HeartbeatReply and session.epoch_confirmed:
            self._sequencer.note_highest(reply.last_event_counter)
        waiter = self._waiter
        if waiter is not None and waiter.seq == received.seq:
            waiter.set(received)

    def _accept_identity_locked(self, session: Session, identity: Identity) -> None:
        """Runs in the reader as soon as IDENTITY arrives, so that the events right behind it
        are filed under the right epoch. The supervisor reports refusals."""
        if identity.protocol_version != PROTOCOL_VERSION:
            return
        if self._bound_serial is not None and identity.serial != self._bound_serial:
            return
        old = self._sequencer.epoch
        if old is not None and old != identity.event_epoch:
            # The device's counter restarted: acknowledgements start again from nothing.
            self._acked = self._ack_requested = 0
            self._stats["epoch_changes"] += 1
            session.epoch_change = (old, identity.event_epoch)
            self._log.warning("event epoch changed", old=old, new=identity.event_epoch)
        lost = self._sequencer.set_epoch(identity.event_epoch)
        self._sequencer.serial = identity.serial
        self._sequencer.profile_name = self._profile_name or identity.serial
        session.epoch_confirmed = True
        if lost:
            self._stats["events_lost_epoch"] += sum(b - a + 1 for a, b in lost)
            session.lost_at_epoch_change = lost  # reported by the supervisor after the handshake
