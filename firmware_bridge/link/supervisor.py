"""The supervisor thread of a ``DeviceLink``: connect and handshake, then serve the session
(EVENT_ACK, RESEND_EVENTS, HEARTBEAT when idle or after a damaged frame), and on a loss tear it
down and reconnect with exponential backoff.

A mixin of ``DeviceLink`` (``device_link``): it works on the link's lock, session and sequencer.
"""
from __future__ import annotations

import threading

import structlog

from firmware_bridge.errors import HandshakeFailed, LinkError, TransportError
from firmware_bridge.protocol import (
    PROTOCOL_VERSION,
    EventAck,
    Heartbeat,
    Hello,
    HostConnection,
    Identity,
    ProtocolError,
    ResendEvents,
    StatusReply,
    StatusRequest,
    Sync,
)

from .backoff import Backoff
from .reporting import ranges_text
from .session import MAX_IDLE_WAIT, Session
from .state import LinkState

__all__ = ["Supervisor"]

STALLED_RESEND_FACTOR = 20  # a stalled gap is asked about this many times less often


class Supervisor:
    """The supervisor thread of a ``DeviceLink`` (see the module docstring)."""

    def _supervise(self) -> None:
        backoff = Backoff(self.reconnect_min, self.reconnect_max)
        first = True
        while not self._stopping.is_set():
            if not first:
                self._wait(backoff.next())
                if self._stopping.is_set():
                    break
                with self._lock:
                    self._stats["reconnects"] += 1
            first = False
            self._set_state(LinkState.CONNECTING, None)
            try:
                note = self._connect()
            except (TransportError, LinkError, ProtocolError) as exc:
                reason = f"connect failed: {exc}"
                self._teardown()
                if self._stopping.is_set():
                    break
                self._set_state(LinkState.DISCONNECTED, reason)
                continue
            except Exception as exc:  # noqa: BLE001 - a bug must not kill the link silently
                self._log.exception("connect crashed", error=repr(exc))
                reason = f"connect crashed: {exc!r}"
                self._teardown()
                self._set_state(LinkState.DISCONNECTED, reason)
                continue
            backoff.reset()
            self._set_state(LinkState.CONNECTED, note)
            try:
                reason = self._serve()
            except Exception as exc:  # noqa: BLE001
                self._log.exception("session crashed", error=repr(exc))
                reason = f"session crashed: {exc!r}"
            self._teardown()
            if self._stopping.is_set():
                break
            self._set_state(LinkState.DISCONNECTED, reason)
        if self._stop_detached:  # stop() was called from on_event/on_state
            self._teardown()
            self._set_state(LinkState.CLOSED, "stopped")

    def _wait(self, seconds: float) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._stopping.wait(seconds)

    def _connect(self) -> str | None:
        """Open the transport and run the handshake: 0x00, SYNC, HELLO, STATUS, RESEND_EVENTS.
        Returns what to say with ``CONNECTED``: that the event epoch changed, else ``None``."""
        self.transport.open()
        with self._lock:
            conn = HostConnection(first_seq=self._next_seq)
            session = Session(next(self._session_numbers), self.transport, conn)
            self._session = session
            self._stats["sessions"] += 1
            if self._stopping.is_set():
                self._lose_locked(session, "stopped")
        reader = threading.Thread(target=self._read_loop, args=(session,), daemon=True,
                                  name=f"shoectl-read-{self.name}")
        session.reader = reader
        reader.start()
        try:
            session.transport.write(b"\x00")  # the device drops any partial frame it holds
        except TransportError as exc:
            self._lose(session, f"write failed: {exc}")
            raise
        self._transact(Sync(), None, internal=True)
        identity = self._transact(Hello(PROTOCOL_VERSION), None, internal=True)
        assert isinstance(identity, Identity)
        self._check_identity(identity, session)
        status = self._transact(StatusRequest(), None, internal=True)
        assert isinstance(status, StatusReply)
        with self._lock:
            self._identity = identity
            self._status = status
            if self._bound_serial is None:
                self._bound_serial = identity.serial
            if self._profile_name is None:
                self._log = structlog.get_logger().bind(device=self.name)
            self._acked = status.last_acked_event
            delivered = self._sequencer.delivered_in_epoch()
            need_resend = status.pending_events > 0 or self._sequencer.gap
        self._log.info("handshake done", serial=identity.serial, model=identity.model,
                       firmware=identity.firmware, epoch=identity.event_epoch,
                       pending_events=status.pending_events,
                       last_acked_event=status.last_acked_event, last_delivered=delivered)
        if status.last_acked_event > delivered:
            self._report_error(f"the device acknowledged events up to {status.last_acked_event}"
                               f" but this host delivered only up to {delivered} in epoch "
                               f"{identity.event_epoch}: events in between are not recoverable "
                               "(seed last_delivered from the journal)")
        if session.lost_at_epoch_change:
            old_epoch = session.epoch_change[0] if session.epoch_change else None
            self._report_error(f"events {ranges_text(session.lost_at_epoch_change)} of event epoch "
                               f"{old_epoch} never arrived and are lost with it")
        if need_resend:
            self._request_resend()
        if session.epoch_change is None:
            return None
        old_epoch, new_epoch = session.epoch_change
        return (f"event epoch changed from {old_epoch} to {new_epoch}: the device restarted its event "
                "counter (a reset that lost its memory, or another unit)")

    def _check_identity(self, identity: Identity, session: Session) -> None:
        problem = None
        if identity.protocol_version != PROTOCOL_VERSION:
            problem = (f"device speaks protocol version {identity.protocol_version}, this host "
                       f"speaks {PROTOCOL_VERSION}")
        elif self._bound_serial is not None and identity.serial != self._bound_serial:
            problem = (f"device serial {identity.serial!r} is not this link's device "
                       f"{self._bound_serial!r}: refused")
        if problem is None and not session.epoch_confirmed:
            problem = "identity not accepted"  # pragma: no cover - reader accepts it first
        if problem is not None:
            self._lose(session, problem)
            raise HandshakeFailed(f"{self.name}: {problem}")

    def _teardown(self) -> None:
        """End the current session (if any): reader joined, transport closed."""
        with self._lock:
            session = self._session
            if session is not None:
                self._lose_locked(session, "closed")
        if session is not None and session.reader is not None:
            if session.reader is not threading.current_thread():
                session.reader.join()
        try:
            self.transport.close()
        except Exception:  # noqa: BLE001 - close never raises by contract; be safe
            pass

    # the session's work

    def _serve(self) -> str:
        """Serve the session until it is lost or the link stops; returns why it ended."""
        while True:
            with self._cond:
                while True:
                    session = self._session
                    assert session is not None
                    if self._stopping.is_set():
                        return "stopped"
                    if not session.alive:
                        return session.lost_reason or "link lost"
                    now = self._clock()
                    work, wait = self._due_locked(now)
                    if work:
                        break
                    self._cond.wait(min(wait, MAX_IDLE_WAIT))
            ack, resend, heartbeat = work
            if ack:
                self._acknowledge()
            if resend:
                self._request_resend()
            if heartbeat:
                self._heartbeat()

    def _due_locked(self, now: float) -> tuple[tuple[bool, bool, bool] | None, float]:
        """What the supervisor should do now, or how long it may sleep."""
        wait = MAX_IDLE_WAIT
        ack = self._ack_target_locked() > self._acked
        resend = False
        if self._sequencer.gap and not self._sequencer.full:
            due = self._last_resend + self.resend_interval * (STALLED_RESEND_FACTOR if self._sequencer.stalled else 1)
            if now >= due:
                resend = True
            else:
                wait = min(wait, due - now)
        heartbeat_due = self._last_tx + self.heartbeat_interval
        if self._probe_wanted:  # a damaged frame: a HEARTBEAT now, at most one per reply timeout
            heartbeat_due = min(heartbeat_due, self._last_heartbeat + self.reply_timeout)
        heartbeat = now >= heartbeat_due
        if not heartbeat:
            wait = min(wait, heartbeat_due - now)
        if ack or resend or heartbeat:
            return (ack, resend, heartbeat), 0.0
        return None, max(wait, 0.001)

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

    def _wake_for_ack_locked(self) -> None:
        """Wake the supervisor when an EVENT_ACK is now due (after a delivery, an acknowledge())."""
        if self._ack_target_locked() > self._acked:
            self._cond.notify_all()

    def _acknowledge(self) -> None:
        with self._lock:
            target = self._ack_target_locked()
            if target <= self._acked:
                return
        reply = self._internal(EventAck(target))
        with self._lock:
            if reply is not None:
                self._stats["acks"] += 1
            # After a NAK (BAD_EVENT_ACK: the device never issued it, a device fault) there is
            # nothing to keep: do not ask again. After a loss, the handshake re-reads the state.
            if reply is not None or (self._session is not None and self._session.alive):
                self._acked = max(self._acked, target)

    def _request_resend(self) -> None:
        with self._lock:
            self._last_resend = self._clock()
            self._stats["resend_requests"] += 1
            missing = self._sequencer.missing(limit=9)  # eight shown, and whether there are more
            stalled = self._sequencer.resend_requested()
            if stalled:
                self._stats["gaps_stalled"] += 1
        if missing:
            self._log.debug("asking the device to resend events", missing=missing)
        if stalled:
            self._report_error(f"events {ranges_text(missing)} never arrived although the device was asked "
                               f"{self._sequencer.stall_resends} times to resend them: a device fault; the events "
                               "after them wait (accept_gap() gives them up, docs/protocol.md E7)")
        if self._internal(ResendEvents()) is not None:
            with self._lock:
                self._last_resend = self._clock()

    def _heartbeat(self) -> None:
        """HEARTBEAT: its reply's ``last_event_counter`` shows events lost at the tail (noted by
        the reader, which makes a gap for ``_request_resend``)."""
        with self._lock:
            self._last_heartbeat = self._clock()
            if self._probe_wanted:
                self._probe_wanted = False
                self._stats["probes"] += 1
        token = next(self._tokens) & 0xFFFF_FFFF
        if self._internal(Heartbeat(token)) is not None:
            with self._lock:
                self._stats["heartbeats"] += 1
