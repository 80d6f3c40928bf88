"""``Supervisor``: the supervisor thread of a ``DeviceLink``.

Connect and handshake (0x00, SYNC, HELLO, STATUS, RESEND_EVENTS), then serve the session:
EVENT_ACK when ``Acknowledgements`` says one is due, RESEND_EVENTS while the sequencer knows of a
gap, HEARTBEAT when idle or at once after a damaged frame; on a loss tear the session down (its
reader joined, the transport closed) and reconnect with exponential backoff.

It owns what the handshake learns (the device's IDENTITY and STATUS, the serial the link is bound
to, the event epoch accepted by ``identity_arrived_locked``) and the schedule of its own commands
(last resend, last heartbeat, a probe wanted). It sends through the ``CommandChannel``, which owns
the session it ``attach``es; ``reader_for(session)`` gives the target of each session's reader
thread. Every method named ``*_locked`` expects the link's lock held.
"""
from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from firmware_bridge.errors import (CommandFailed, CommandOutcomeUnknown, CommandTimeout, HandshakeFailed, LinkError,
                                   TransportError, os_error_words)
from firmware_bridge.protocol import (PROTOCOL_VERSION, Ack, Capability, EventAck, Heartbeat, HeartbeatReply, Hello, Identity, NakCode,
                                     ProtocolError, ResendEvents, StatusReply, StatusRequest, Sync)
from firmware_bridge.transport import Transport

from .acknowledgements import Acknowledgements
from .backoff import Backoff
from .commands import CommandChannel
from .delivery import EventDeliverer
from .identity_check import identity_problem
from .quality import LineQuality, unanswered_sync
from .reporting import StateReporter
from .sequencer import EventSequencer
from .session import MAX_IDLE_WAIT, Session
from .state import LinkErrorKind, LinkState

__all__ = ["Supervisor"]

STALLED_RESEND_FACTOR = 20  # a stalled gap is asked about this many times less often
# Probes (a HEARTBEAT after a damaged frame) at most this many per reply timeout: each damaged
# event then costs a few milliseconds, not a reply timeout, and a noise burst on the line still
# gets a bounded number of small round trips (each waits for its reply before the next).
PROBES_PER_REPLY_TIMEOUT = 10


class Supervisor:
    """The supervisor (see the module docstring); ``run`` is its thread's target.

    Args:
        transport: the device's transport (opened per session, closed at its end).
        lock, cond: the link's lock and its condition (the supervisor sleeps on it until work is
            due: woken by ``lose``, an acknowledgement due, a gap, a probe, ``stop``).
        stopping: set when the link stops.
        commands, acks, sequencer, reporter, delivery, stats: the link's collaborators and
            counters (``delivery`` is held from a session's IDENTITY until its outcome is
            reported, so ``on_state(CONNECTED)`` comes before any event of the session).
        reply_timeout, heartbeat_interval, reconnect_min, reconnect_max: seconds, as the link
            took them from its timing (a RESEND_EVENTS at most once per ``resend_interval``).
        profile_name: the link's profile name (``None``: the serial names it once known);
            ``name``: the link's name now.
        expected_serial: the only IDENTITY serial accepted (``None``: any unit of the kind; another
            than the last is said, ``unit_change``).
        expected_kind: the profile's kind (``None``: any device); another kind is refused
            (``identity_check``); so is a device without ``expected_capabilities`` (IDENTITY
            bits) or holding fewer than ``expected_decks``.
        clock, sleep: monotonic seconds; the reconnect wait (``None``: wait on ``stopping``).
        reader_for: ``reader_for(session)`` -> the target of that session's reader thread.
    """

    def __init__(self, transport: Transport, *, lock: threading.Lock, cond: threading.Condition,
                 stopping: threading.Event, commands: CommandChannel, acks: Acknowledgements,
                 sequencer: EventSequencer, reporter: StateReporter, delivery: EventDeliverer,
                 stats: dict[str, int],
                 reply_timeout: float, heartbeat_interval: float, reconnect_min: float,
                 reconnect_max: float, profile_name: str | None, name: Callable[[], str],
                 expected_serial: str | None, expected_kind: str | None, clock: Callable[[], float],
                 expected_capabilities: Capability = Capability(0), expected_decks: int = 0,
                 sleep: Callable[[float], object] | None,
                 reader_for: Callable[[Session], Callable[[], None]]) -> None:
        self.transport = transport
        self._lock = lock
        self._cond = cond
        self._stopping = stopping
        self._commands = commands
        self._acks = acks
        self._sequencer = sequencer
        self._reporter = reporter
        self._delivery = delivery
        self._stats = stats
        self.reply_timeout = reply_timeout
        self.heartbeat_interval = heartbeat_interval
        self.reconnect_min = reconnect_min
        self.reconnect_max = reconnect_max
        self._profile_name = profile_name
        self._name = name
        self._clock = clock
        self._sleep = sleep
        self._reader_for = reader_for
        self.identity: Identity | None = None
        self.status: StatusReply | None = None
        # The one serial the link takes (``expected_serial``, given by its owner), else any: another unit of
        # the profile's kind on the port is said (``unit_change``), and the table journals it and
        # gives up the shoe in play, as at a restart (a device review: a unit swapped under a
        # running table was refused until the controller was restarted).
        self.pinned_serial = expected_serial
        self._expected = {"expected_kind": expected_kind, "expected_capabilities": expected_capabilities,
                          "expected_decks": expected_decks}
        self.stop_detached = False  # stop() was called from a link thread: finish it on exit
        self._session_numbers = itertools.count(1)
        self._tokens = itertools.count(1)
        self._last_resend = float("-inf")
        self._last_heartbeat = float("-inf")
        self._probe_wanted = False  # a damaged frame came: ask what was missed
        self._device_heard = False  # the connect under way got an answer: the device is there
        self._quality = LineQuality(clock())  # across sessions: the line, not the connection

    def run(self) -> None:
        backoff = Backoff(self.reconnect_min, self.reconnect_max)
        first = True
        report = self._reporter.set
        while not self._stopping.is_set():
            if not first:
                self._wait(backoff.next())
                if self._stopping.is_set():
                    break
                with self._lock:
                    self._stats["reconnects"] += 1
            first = False
            report(LinkState.CONNECTING, None)
            try:
                note = self._connect()
            except (TransportError, LinkError, ProtocolError, OSError) as exc:
                # Any other OSError is the machine's (no descriptor left, say), not a bug: in words.
                known = isinstance(exc, (TransportError, LinkError, ProtocolError))
                reason = f"connect failed: {exc if known else os_error_words(exc)}"
                if self._device_heard and isinstance(exc, CommandOutcomeUnknown):
                    # The device answered, then the line lost the handshake (noise, a drop): it is
                    # there, so the next try comes soon, not after the backoff of a device away.
                    backoff.reset()
                self.teardown()
                if self._stopping.is_set():
                    break
                report(LinkState.DISCONNECTED, reason)
                self._delivery.release()  # what earlier sessions received is delivered while down
                continue
            except Exception as exc:  # noqa: BLE001 - a bug must not kill the link silently
                self._reporter.log.exception("connect crashed", error=repr(exc))
                reason = f"connect crashed: {exc!r}"
                self.teardown()
                report(LinkState.DISCONNECTED, reason)
                self._delivery.release()
                continue
            backoff.reset()
            with self._lock:
                self._stats["connections"] += 1  # ``reconnects`` counts the tries, these the successes
            report(LinkState.CONNECTED, note)
            self._delivery.release()  # the owner has heard CONNECTED: now the session's events
            try:
                reason = self._serve()
            except Exception as exc:  # noqa: BLE001
                self._reporter.log.exception("session crashed", error=repr(exc))
                reason = f"session crashed: {exc!r}"
            self.teardown()
            if self._stopping.is_set():
                break
            report(LinkState.DISCONNECTED, reason)
        if self.stop_detached:  # stop() was called from on_event/on_state
            self.teardown()
            report(LinkState.CLOSED, "stopped")

    def _wait(self, seconds: float) -> None:
        if self._sleep is not None:
            self._sleep(seconds)
        else:
            self._stopping.wait(seconds)

    def _connect(self) -> str | None:
        """Open the transport and run the handshake: 0x00, SYNC, HELLO, STATUS, RESEND_EVENTS.
        Returns what to say with ``CONNECTED`` (the event epoch changed; events acknowledged to
        another host were given up), else ``None``."""
        self._device_heard = False
        self.transport.open()
        commands = self._commands
        with self._lock:
            session = Session(next(self._session_numbers), self.transport, commands.connection())
            commands.session = session
            self._stats["sessions"] += 1
            if self._stopping.is_set():
                commands.lose_locked(session, "stopped")
        reader = threading.Thread(target=self._reader_for(session), daemon=True,
                                  name=f"shoectl-read-{self._name()}")
        session.reader = reader
        reader.start()
        try:
            session.transport.write(b"\x00")  # the device drops any partial frame it holds
        except TransportError as exc:
            commands.lose(session, f"write failed: {exc}")
            raise
        try:
            commands.transact(Sync(), None, internal=True)
        except CommandTimeout as exc:
            why = unanswered_sync(exc.attempts, session.conn.bytes_received, self.transport.line_settings())
            raise CommandTimeout(f"{self._name()}: {why}", command=exc.command, attempts=exc.attempts) from None
        self._device_heard = True
        identity = commands.transact(Hello(PROTOCOL_VERSION), None, internal=True)
        assert isinstance(identity, Identity)
        self._check_identity(identity, session)
        status = commands.transact(StatusRequest(), None, internal=True)
        assert isinstance(status, StatusReply)
        with self._lock:
            self.identity = identity
            self.status = status
            if self._profile_name is None:
                self._reporter.rename(self._name())
            self._acks.confirmed, self._acks.retry_at = status.last_acked_event, float("-inf")  # a new session
            delivered = self._sequencer.delivered_in_epoch()
            need_resend = status.pending_events > 0 or self._sequencer.gap
        self._reporter.log.info("handshake done", serial=identity.serial, model=identity.model,
                                firmware=identity.firmware, epoch=identity.event_epoch,
                                deck_capacity=identity.deck_capacity, capabilities=int(identity.capabilities),
                                pending_events=status.pending_events,
                                last_acked_event=status.last_acked_event, last_delivered=delivered)
        said = []  # the CONNECTED report's reason: what the owner journals about this connect
        if status.last_acked_event > delivered:  # no resend brings them: a gap would hold every later event
            with self._lock:
                self._sequencer.start_after(status.last_acked_event)
            said.append(self._reporter.acknowledged_elsewhere(identity.event_epoch, delivered, status.last_acked_event))
        said[:0] = self._reporter.epoch_changed(session.epoch_change, session.unit_change,
                                                session.lost_at_epoch_change)
        if need_resend:
            self._request_resend()
        return "; ".join(said) or None

    def _check_identity(self, identity: Identity, session: Session) -> None:
        problem = identity_problem(identity, bound_serial=self.pinned_serial, **self._expected)
        if problem is None and not session.epoch_confirmed:
            problem = "identity not accepted"  # pragma: no cover - reader accepts it first
        if problem is not None:
            self._commands.lose(session, problem)
            raise HandshakeFailed(f"{self._name()}: {problem}")

    def identity_arrived_locked(self, session: Session, identity: Identity) -> None:
        """The reader got an IDENTITY: accept its event epoch at once, so that the events right
        behind it are filed under the right epoch. Refusals are reported by the handshake."""
        if identity_problem(identity, bound_serial=self.pinned_serial, **self._expected):
            return
        old, old_serial = self._sequencer.epoch, self._sequencer.serial
        another_unit = self._sequencer.another_unit(identity.serial)
        if old is not None and (old != identity.event_epoch or another_unit):
            # The device's counter restarted, or another unit (counters of its own) answers:
            # acknowledgements start again from nothing.
            self._acks.restart_locked()
            self._stats["epoch_changes"] += 1
            session.epoch_change = (old, identity.event_epoch)
            session.unit_change = (old_serial, identity.serial) if another_unit else None
            self._reporter.log.warning("event epoch changed", old=old, new=identity.event_epoch,
                                       **({"old_serial": old_serial} if another_unit else {}))
        if not session.epoch_confirmed:  # the handshake's HELLO, not one sent later by a caller
            self._delivery.hold_locked()  # until CONNECTED is reported (run)
        lost = self._sequencer.set_epoch(identity.event_epoch, identity.serial)
        self._sequencer.profile_name = self._profile_name or identity.serial
        session.epoch_confirmed = True
        if lost:
            self._stats["events_lost_epoch"] += sum(b - a + 1 for a, b in lost)
            session.lost_at_epoch_change = lost  # reported after the handshake

    def probe_locked(self) -> None:
        """A damaged frame came (maybe an event): send a HEARTBEAT soon (the caller wakes us)."""
        self._probe_wanted = True

    def teardown(self) -> None:
        """End the current session (if any): reader joined, transport closed."""
        with self._lock:
            session = self._commands.session
            if session is not None:
                self._commands.lose_locked(session, "closed")
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
                    session = self._commands.session
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
            self._quality.check(self._clock(), self._stats, self._lock, self._reporter.log)  # noisy? clean again?

    @property
    def resend_interval(self) -> float:
        """How long a gap waits before it is asked about again: the wait the link has learnt
        for a reply (``RetransmitTimer``; the reply timeout before any was timed). The events a
        RESEND_EVENTS brings back come one round trip after its ACK; one damaged again on a
        noisy line is asked for that soon, not a whole reply timeout later."""
        return self._commands.timer.first()

    def _due_locked(self, now: float) -> tuple[tuple[bool, bool, bool] | None, float]:
        """What the supervisor should do now, or how long it may sleep."""
        wait = MAX_IDLE_WAIT
        ack = self._acks.due_locked()
        if ack and now < self._acks.retry_at:  # refused BUSY: asked again later, not in a loop
            ack, wait = False, self._acks.retry_at - now
        resend = False
        if self._sequencer.gap and not self._sequencer.full:
            due = self._last_resend + self.resend_interval * (STALLED_RESEND_FACTOR if self._sequencer.stalled else 1)
            if now >= due or self._sequencer.unasked_gap:  # a new gap is asked about at once
                resend = True
            else:
                wait = min(wait, due - now)
        heartbeat_due = self._commands.last_tx + self.heartbeat_interval
        if self._probe_wanted:  # a damaged frame: a HEARTBEAT now, spaced while damage goes on
            heartbeat_due = min(heartbeat_due, self._last_heartbeat + self.reply_timeout / PROBES_PER_REPLY_TIMEOUT)
        heartbeat = now >= heartbeat_due
        if not heartbeat:
            wait = min(wait, heartbeat_due - now)
        if ack or resend or heartbeat:
            return (ack, resend, heartbeat), 0.0
        return None, max(wait, 0.001)

    def _acknowledge(self) -> None:
        acks = self._acks
        with self._lock:
            target = acks.target_locked()
            if target <= acks.confirmed:
                return
        reply = self._commands.internal(EventAck(target))
        with self._lock:
            if isinstance(reply, CommandFailed) and reply.code == NakCode.BUSY:
                self._acks.retry_at = self._clock() + self.reply_timeout
                return
            if isinstance(reply, Ack):
                self._stats["acks"] += 1
            # After another NAK (BAD_EVENT_ACK: the device never issued it, a device fault) there
            # is nothing to keep: do not ask again. After a loss, the handshake re-reads the state.
            session = self._commands.session
            if reply is not None or (session is not None and session.alive):
                acks.confirmed = max(acks.confirmed, target)

    def _request_resend(self) -> None:
        """RESEND_EVENTS. Only a request the device took (ACK) counts towards a stall; one it
        refused (BUSY: ask again later) is asked again a reply timeout later (a device busy for
        a moment was asked eight times in 0.2 s and declared stalled: a review of this code)."""
        with self._lock:
            self._stats["resend_requests"] += 1
            missing = self._sequencer.missing(limit=9)  # eight shown, and whether there are more
            self._sequencer.asking()
        if missing:
            self._reporter.log.debug("asking the device to resend events", missing=missing)
        reply = self._commands.internal(ResendEvents())
        with self._lock:
            self._last_resend = self._clock() + (0.0 if isinstance(reply, Ack) else self.reply_timeout)
            stalled = isinstance(reply, Ack) and self._sequencer.resend_requested(self._stats["frames_dropped"])
            if stalled:
                self._stats["gaps_stalled"] += 1
                stall = self._sequencer.stall_words()
        if stalled:
            self._reporter.error(LinkErrorKind.EVENTS_STALLED, f"{stall}; the events after them wait "
                                 "until this host gives them up (docs/protocol.md E7)")

    def _heartbeat(self) -> None:
        """HEARTBEAT: its reply's ``last_event_counter`` shows events lost at the tail (noted by
        the reader, which makes a gap for ``_request_resend``)."""
        with self._lock:
            self._last_heartbeat = self._clock()
            if self._probe_wanted:
                self._probe_wanted = False
                self._stats["probes"] += 1
        token = next(self._tokens) & 0xFFFF_FFFF
        if isinstance(self._commands.internal(Heartbeat(token)), HeartbeatReply):
            with self._lock:
                self._stats["heartbeats"] += 1
