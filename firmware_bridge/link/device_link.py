"""``DeviceLink``: the I/O pump for one device (threads, timeouts, retries, heartbeat, reconnect).

The protocol core (``HostConnection``) decides nothing about time; this module does. Threads:

- the **supervisor** (``shoectl-link-<id>``), started by ``start()``: opens the transport, runs
  the handshake, then serves the session: EVENT_ACK for what the consumer stored, RESEND_EVENTS
  when a gap shows, HEARTBEAT when idle; on a loss it tears the session down and reconnects
  with exponential backoff. ``on_state`` runs on this thread, except for consumer errors
  (reported by the thread that called ``on_event``) and the final ``CLOSED`` (reported by ``stop()``'s caller);
- the **deliverer** (``shoectl-events-<id>``), started with the supervisor when there is an
  ``on_event``: with ``auto_ack`` it calls ``on_event`` for each event, in order, one at a time,
  and tells the supervisor what may now be acknowledged, so a slow consumer delays neither
  heartbeats nor reconnects, and events already received are delivered even while the link is
  down. In hand-off mode (``auto_ack=False``) it only redelivers what the reader could not hand
  over (after a consumer error, or events released by ``accept_gap``);
- the **reader** (``shoectl-read-<id>``), one per session: ``transport.read`` -> protocol core ->
  replies to the waiting command, events to the sequencer (the one judge of what is new). In
  hand-off mode it then calls ``on_event`` itself, without the lock, for each event now in
  order: one thread change from the wire to the consumer. A damaged frame makes it ask the
  supervisor for a HEARTBEAT at once (what was lost shows in its reply);
- **callers** of ``request()`` write their command themselves and wait for the reader to hand
  them the reply; ``request()`` calls (and the supervisor's own commands) are serialized by one
  lock, so at most one command is outstanding (docs/protocol.md H1).

Full rules (handshake, retries, acknowledgement, what happens at unplug): ``docs/link.md``.
"""
from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

import structlog

from firmware_bridge.errors import (
    CommandFailed,
    CommandInterrupted,
    CommandTimeout,
    HandshakeFailed,
    LinkError,
    NotConnected,
    TransportError,
)
from firmware_bridge.protocol import (
    PROTOCOL_VERSION,
    Command,
    Dropped,
    DropReason,
    EventAck,
    EventReceived,
    Heartbeat,
    HeartbeatReply,
    Hello,
    HostConnection,
    Identity,
    Nak,
    NakCode,
    NeedData,
    ProtocolError,
    ProtocolStateError,
    RemoteProtocolError,
    Reply,
    ReplyReceived,
    ResendEvents,
    StaleReply,
    StatusReply,
    StatusRequest,
    Sync,
)
from firmware_bridge.transport import Transport

from .backoff import Backoff
from .sequencer import BUFFERED, DUPLICATE, OVERFLOW, QUEUED, EventSequencer
from .state import LinkEvent, LinkState

__all__ = ["DeviceLink"]

EventCallback = Callable[[LinkEvent], None]
StateCallback = Callable[[LinkState, "str | None"], None]

MAX_IDLE_WAIT = 0.5    # longest the supervisor sleeps without re-checking its work (seconds)
READ_POLL = 0.1        # longest a reader read blocks (seconds): bounds stop() on USB
STALLED_RESEND_FACTOR = 20  # a stalled gap is asked about this many times less often


class _Waiter:
    """The reply slot of the one outstanding command. ``set``, ``nudge`` and ``rearm`` are called
    with the link's lock held (so at most one ``set`` takes effect); ``wait`` blocks on a plain
    lock, the cheapest wake-up."""

    __slots__ = ("seq", "result", "done", "nudged", "_gate", "_open")

    def __init__(self, seq: int) -> None:
        self.seq = seq
        self.result: ReplyReceived | BaseException | None = None
        self.done = False
        self.nudged = False  # a damaged frame woke the caller during this attempt
        self._gate = threading.Lock()
        self._gate.acquire()
        self._open = False

    def set(self, result: ReplyReceived | BaseException) -> None:
        if not self.done:
            self.result = result
            self.done = True
            self._open_gate()

    def nudge(self) -> None:
        """A frame arrived damaged: it may have been the reply. Wakes the caller once per attempt."""
        if not self.done and not self.nudged:
            self.nudged = True
            self._open_gate()

    def rearm(self) -> None:
        """After a nudge (not done): close the gate again, so ``wait`` waits for the reply."""
        if self._open and not self.done:
            self._gate.acquire()
            self._open = False

    def _open_gate(self) -> None:
        if not self._open:
            self._open = True
            self._gate.release()

    def wait(self, timeout: float) -> bool:
        """True when set or nudged, False after ``timeout`` seconds. The gate stays open: a later
        ``wait`` returns at once until ``rearm``."""
        if self._gate.acquire(timeout=max(timeout, 0.0)):
            self._gate.release()
            return True
        return False


class _Session:
    """One connection: an open transport, a fresh protocol state and its reader thread."""

    def __init__(self, number: int, transport: Transport, conn: HostConnection) -> None:
        self.number = number
        self.transport = transport
        self.conn = conn
        self.alive = True
        self.lost_reason: str | None = None
        self.epoch_confirmed = False  # this session's IDENTITY was accepted
        self.epoch_change: tuple[int, int] | None = None  # (old, new) when IDENTITY changed it
        self.lost_at_epoch_change: list[tuple[int, int]] = []  # old-epoch counters never received
        self.reader: threading.Thread | None = None


class DeviceLink:
    """One device: the transport, the protocol state, and the threads that drive them.

    Args:
        transport: the device's transport, not opened (the link opens, closes and reopens it).
        timing: ``firmware_bridge.profiles.Timing`` (or any object with ``response_timeout_ms``,
            ``heartbeat_interval_ms``, ``retries``, ``reconnect_min_ms``, ``reconnect_max_ms``);
            default: the protocol's defaults (250 ms, 1 s, 3 retries = 4 attempts).
        device_id: name in logs and ``LinkEvent.device_id`` (a profile name); default: the
            device's serial number once known.
        on_event: ``on_event(LinkEvent)``, called in order, exactly once per (epoch, counter)
            that returns normally. With ``auto_ack`` it runs on the link's deliverer thread: commit
            the event durably inside it; the link acknowledges it to the device only after it
            returned. With ``auto_ack=False`` it is a hand-off, called on the reader thread as
            soon as the event is in order: it must return promptly (put the event on a queue),
            and the consumer calls ``acknowledge`` once it stored it. If it raises, nothing is
            acknowledged, the error is reported and the same event is offered again after a
            backoff (``reconnect_min_ms`` doubling up to ``reconnect_max_ms``), later ones behind
            it. ``None``: events are neither delivered nor acknowledged (the device keeps them).
        on_state: ``on_state(state, reason)`` for every state change and every reported error
            (then ``state`` is the unchanged current state and ``reason`` says what failed).
            ``identity`` is already the new device's when ``CONNECTED`` is reported; the
            reason of that report says whether the event epoch changed (``None`` if not).
            Called from the link's threads (supervisor, deliverer, reader), possibly concurrently:
            keep it short and thread-safe. Exceptions from either callback never stop the link.
        auto_ack: acknowledge each event once ``on_event`` returned. ``False``: hand-off mode
            (see ``on_event``); the consumer calls ``acknowledge(counter, epoch)`` when its commit
            is durable, and the supervisor sends EVENT_ACK at once.
        last_delivered: ``(event_epoch, counter)`` of the last event already stored (from the
            journal): counters up to it are duplicates.
        expected_serial: refuse a device whose IDENTITY serial differs (otherwise the first
            serial seen binds the link: a changed serial after a replug is refused).
        clock: monotonic seconds (``time.monotonic``) for heartbeat and resend scheduling.
        sleep: ``sleep(seconds)`` for the reconnect backoff; the default waits on the stop
            event so ``stop()`` interrupts it. An injected one should return promptly.
        read_poll: longest one transport read blocks (bounds ``stop()`` where reads cannot be
            cancelled, e.g. USB).
    """

    def __init__(self, transport: Transport, *, timing: Any = None, device_id: str | None = None,
                 on_event: EventCallback | None = None, on_state: StateCallback | None = None,
                 auto_ack: bool = True, last_delivered: tuple[int, int] | None = None,
                 expected_serial: str | None = None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], object] | None = None,
                 read_poll: float = READ_POLL) -> None:
        if timing is None:
            from firmware_bridge.profiles import Timing  # noqa: PLC0415 - data only

            timing = Timing()
        self.transport = transport
        self.reply_timeout = timing.response_timeout_ms / 1000
        self.attempts = int(timing.retries) + 1
        self.heartbeat_interval = timing.heartbeat_interval_ms / 1000
        self.reconnect_min = timing.reconnect_min_ms / 1000
        self.reconnect_max = max(timing.reconnect_max_ms / 1000, self.reconnect_min)
        self.resend_interval = self.reply_timeout
        self.read_poll = read_poll
        self.auto_ack = auto_ack
        self._device_id = device_id
        self._on_event = on_event
        self._on_state = on_state
        self._outage: str | None = None  # the reason of the outage in progress (logged once, not per retry)
        self._clock = clock
        self._sleep = sleep

        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)        # supervisor work, state changes
        self._ready_cond = threading.Condition(self._lock)  # events for the deliverer
        self._cmd_lock = threading.Lock()
        self._stopping = threading.Event()
        self._state = LinkState.DISCONNECTED
        self._started = False
        self._stop_detached = False
        self._supervisor: threading.Thread | None = None
        self._deliverer: threading.Thread | None = None
        self._session: _Session | None = None
        self._session_numbers = itertools.count(1)
        self._next_seq = 0
        self._waiter: _Waiter | None = None
        self._last_tx = clock()
        self._last_resend = float("-inf")
        self._tokens = itertools.count(1)
        self._identity: Identity | None = None
        self._bound_serial = expected_serial
        self._status: StatusReply | None = None
        self._seq = EventSequencer(last_delivered, device_id=device_id or "")
        self._acked = 0              # highest counter the device confirmed, current epoch
        self._ack_requested = 0      # manual mode: highest counter the consumer acknowledged
        self._deliver_backoff = Backoff(self.reconnect_min, self.reconnect_max)
        self._deliver_retry_at: float | None = None
        self._delivering = False                 # the delivery turn is held (reader or deliverer)
        self._handing: LinkEvent | None = None   # the event inside on_event right now
        self._probe_wanted = False               # a damaged frame came: ask what was missed
        self._last_heartbeat = float("-inf")
        self._stats = dict.fromkeys(
            ("sessions", "reconnects", "commands", "retransmissions", "timeouts", "frames_dropped",
             "stale_replies", "protocol_errors", "events_delivered", "events_duplicate",
             "events_early", "events_overflow", "resend_requests", "heartbeats", "acks",
             "callback_errors", "events_lost_epoch", "epoch_changes", "gaps_stalled", "probes",
             "early_retransmissions"), 0)
        self._log = structlog.get_logger().bind(device=self.device_id)

    @classmethod
    def from_profile(cls, profile: Any, port: str | None = None, *, usb_backend: Any = None,
                     **kwargs: Any) -> DeviceLink:
        """A link for a device profile: its transport (``open_transport``), its timing, its
        name as ``device_id`` and, for a USB profile naming one, its serial number."""
        from firmware_bridge.transport import open_transport  # noqa: PLC0415

        transport = open_transport(profile, port, usb_backend=usb_backend)
        kwargs.setdefault("timing", profile.timing)
        kwargs.setdefault("device_id", profile.name)
        serial = getattr(profile.transport, "serial_number", None)
        if serial:
            kwargs.setdefault("expected_serial", serial)
        return cls(transport, **kwargs)

    # --- public state -------------------------------------------------------------------------

    @property
    def state(self) -> LinkState:
        return self._state

    @property
    def identity(self) -> Identity | None:
        """The device's IDENTITY from the last successful handshake (``None`` before)."""
        return self._identity

    @property
    def last_status(self) -> StatusReply | None:
        """The STATUS_REPLY of the last handshake."""
        return self._status

    @property
    def device_id(self) -> str:
        if self._device_id:
            return self._device_id
        if self._identity is not None:
            return self._identity.serial
        return self.transport.describe()

    @property
    def last_delivered(self) -> tuple[int, int] | None:
        """``(epoch, counter)`` of the last event whose ``on_event`` returned."""
        with self._lock:
            return self._seq.last_delivered

    @property
    def stats(self) -> dict[str, int]:
        """Counters since construction (a copy)."""
        with self._lock:
            out = dict(self._stats)
            out["events_ready"] = self._seq.ready_count
            out["events_buffered"] = self._seq.buffered_count
            return out

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> DeviceLink:
        """Start the supervisor thread (it connects in the background). Returns ``self``.

        Raises RuntimeError if already started or stopped."""
        with self._lock:
            if self._started or self._stopping.is_set():
                raise RuntimeError("a DeviceLink can be started once, and not after stop()")
            self._started = True
        self._supervisor = threading.Thread(target=self._supervise, daemon=True,
                                            name=f"shoectl-link-{self.device_id}")
        if self._on_event is not None:
            self._deliverer = threading.Thread(target=self._deliver_loop, daemon=True,
                                               name=f"shoectl-events-{self.device_id}")
            self._deliverer.start()
        self._supervisor.start()
        return self

    def stop(self) -> None:
        """Stop: fail an outstanding command (``CommandInterrupted``), end the session, join the
        threads, close the transport; state ``CLOSED``. Idempotent. Waits for a running
        ``on_event`` to return (no further one starts). Called from ``on_event``/``on_state``
        (a link thread) it only requests the stop and returns."""
        threads = [t for t in (self._supervisor, self._deliverer) if t is not None]
        current, session = threading.current_thread(), self._session
        detached = current in threads or (session is not None and current is session.reader)
        with self._lock:
            if self._state is LinkState.CLOSED:
                return
            if detached:
                self._stop_detached = True  # the supervisor finishes the job when it exits
            self._stopping.set()
            if self._session is not None:
                self._lose_locked(self._session, "stopped")
            self._cond.notify_all()
            self._ready_cond.notify_all()
        if detached:
            return
        for thread in threads:
            thread.join()
        self._teardown()
        self._set_state(LinkState.CLOSED, "stopped")

    def __enter__(self) -> DeviceLink:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def wait_connected(self, timeout: float | None = None) -> bool:
        """Block until the link is ``CONNECTED`` (True) or ``timeout`` s passed / it closed
        (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while self._state is not LinkState.CONNECTED:
                if self._state is LinkState.CLOSED or self._stopping.is_set():
                    return False
                left = MAX_IDLE_WAIT if deadline is None else deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(min(left, MAX_IDLE_WAIT))
            return True

    # --- requests -----------------------------------------------------------------------------

    def request(self, command: Command, timeout: float | None = None) -> Reply:
        """Send ``command`` and return its reply (ACK, IDENTITY, STATUS_REPLY, ...).

        One command at a time: concurrent callers wait their turn. Each attempt waits
        ``timeout`` seconds (default: the profile's reply timeout) and is retransmitted with the
        same sequence number, up to the profile's attempts; the device replays its reply to a
        retransmission and never executes a command twice.

        Raises:
            NotConnected: the link is not connected; the command was not sent.
            CommandFailed: the device answered NAK (``code``, ``text``); it did not execute it.
            CommandTimeout: every attempt timed out; outcome unknown; the link reconnects.
            CommandInterrupted: the link went down (unplug, stop) before the reply; outcome
                unknown. The command is NOT resent after the reconnect (a new session could
                execute it a second time); check STATUS / events and decide.
            LinkError: the reply broke the protocol (wrong type, undecodable).
        """
        if not isinstance(command, Command):
            raise TypeError(f"request() takes a command, not {type(command).__name__}")
        if isinstance(command, (Sync, Hello, EventAck, ResendEvents)):
            raise ValueError(f"{command.TYPE.name} belongs to the link (handshake and "
                             "acknowledgements); use acknowledge() for EVENT_ACK")
        return self._transact(command, timeout, internal=False)

    def acknowledge(self, counter: int, epoch: int | None = None) -> bool:
        """``auto_ack=False`` only: every event handed to ``on_event`` up to ``counter`` is
        durably stored; the link sends EVENT_ACK at once, from its supervisor (any thread may
        call this; it never blocks on the device). ``epoch``: the event's epoch; an
        acknowledgement for another epoch than the device's current one is ignored (returns
        False). Raises ValueError for a counter not handed over yet, RuntimeError with auto_ack."""
        if self.auto_ack:
            raise RuntimeError("acknowledge() is for links made with auto_ack=False")
        with self._cond:
            if epoch is not None and epoch != self._seq.epoch:
                return False
            handed = self._seq.delivered_in_epoch()
            handing = self._handing  # on_event may not have returned yet: it counts
            if handing is not None and handing.epoch == self._seq.epoch:
                handed = max(handed, handing.counter)
            if counter > handed:
                raise ValueError(f"event {counter} has not been delivered (last: {handed})")
            if counter > self._ack_requested:
                self._ack_requested = counter
                if self._ack_target_locked() > self._acked:
                    self._cond.notify_all()  # else the end of that delivery wakes the supervisor
            return True

    def accept_gap(self, up_to: int | None = None) -> int:
        """Declare missing event counters up to ``up_to`` (default: all known) lost for good
        (docs/protocol.md E7: a host decision, recorded as an irregularity by the caller), so
        later events can be delivered and acknowledged. Returns how many were given up."""
        with self._cond:
            lost = self._seq.accept_gap(up_to)
            self._cond.notify_all()
            self._ready_cond.notify_all()
        if lost:
            self._report_error(f"{lost} missing event(s) accepted as lost (up to {up_to})")
        return lost

    # --- the command path ---------------------------------------------------------------------

    def _transact(self, command: Command, timeout: float | None, *, internal: bool) -> Reply:
        reply_timeout = self.reply_timeout if timeout is None else timeout
        with self._cmd_lock:
            with self._lock:
                session = self._session
                why = None
                if self._stopping.is_set():
                    why = "link is stopping"
                elif session is None or not session.alive:
                    lost = session.lost_reason if session is not None else None
                    why = f"link is down ({lost})" if lost else "link is down"
                elif not internal and self._state is not LinkState.CONNECTED:
                    why = f"link is {self._state.value}"
                if why is not None:
                    raise NotConnected(f"{self.device_id}: {why}; {command.TYPE.name} not sent")
                conn = session.conn
                try:
                    data = conn.send(command)
                except ProtocolStateError as exc:
                    raise LinkError(f"{self.device_id}: cannot send {command.TYPE.name}: {exc}") from exc
                pending = conn.pending
                assert pending is not None
                self._next_seq = (pending.seq + 1) & 0xFF
                waiter = _Waiter(pending.seq)
                self._waiter = waiter
                self._stats["commands"] += 1
            try:
                result = self._exchange(session, command, data, waiter, reply_timeout)
            finally:
                with self._lock:
                    if self._waiter is waiter:
                        self._waiter = None
        if isinstance(result, BaseException):
            raise result
        reply = result.reply
        if isinstance(reply, Nak):
            if reply.code == NakCode.NOT_SYNCED:
                self._lose(session, "device lost its session (NAK NOT_SYNCED): it restarted")
            raise CommandFailed(command, reply.code, reply.text)
        return reply

    def _exchange(self, session: _Session, command: Command, data: bytes, waiter: _Waiter,
                  reply_timeout: float) -> ReplyReceived | BaseException:
        """Write ``data`` and wait for the reply, retransmitting; returns the result or the
        exception to raise. Each attempt waits ``reply_timeout``; a damaged frame during an
        attempt (maybe the reply) sends the same bytes once more at once, which the device answers
        with its cached reply (docs/protocol.md D3), without counting as an attempt."""
        attempts = 0
        name = command.TYPE.name
        while True:
            attempts += 1
            self._last_tx = self._clock()
            sent = time.monotonic()
            lost = self._write_command(session, data, command, attempts)
            while lost is None:
                woke = waiter.wait(reply_timeout - (time.monotonic() - sent))
                with self._lock:
                    if waiter.done:
                        break
                    if not session.alive:
                        waiter.set(self._interrupted(command, attempts, session))
                        break
                    if woke:  # nudged by a damaged frame: ask again now, not after the timeout
                        waiter.rearm()
                        data = session.conn.retransmit_bytes()
                        self._stats["retransmissions"] += 1
                        self._stats["early_retransmissions"] += 1
                    else:
                        self._stats["timeouts"] += 1
                        if attempts >= self.attempts:
                            session.conn.abandon_command()
                            reason = f"{name} got no reply after {attempts} attempt(s)"
                            self._lose_locked(session, reason)
                            return CommandTimeout(f"{self.device_id}: {reason}; outcome unknown",
                                                  command=command, attempts=attempts)
                        data = session.conn.retransmit_bytes()
                        self._stats["retransmissions"] += 1
                        waiter.nudged = False  # a new attempt may be nudged again
                        break
                lost = self._write_command(session, data, command, attempts)
            if lost is not None:
                return lost
            if waiter.done:
                break
        result = waiter.result
        assert result is not None
        if isinstance(result, CommandInterrupted):
            result.attempts = attempts
        return result

    def _write_command(self, session: _Session, data: bytes, command: Command,
                       attempts: int) -> CommandInterrupted | None:
        """Write a command's bytes; on a transport error the session is lost and the command's
        outcome unknown (returned, to raise)."""
        try:
            session.transport.write(data)
        except TransportError as exc:
            self._lose(session, f"write failed: {exc}")
            return CommandInterrupted(f"{self.device_id}: {command.TYPE.name}: link lost while "
                                      f"sending ({exc}); outcome unknown", command=command,
                                      attempts=attempts)
        return None

    def _interrupted(self, command: Command, attempts: int, session: _Session) -> CommandInterrupted:
        reason = session.lost_reason or "link lost"
        return CommandInterrupted(f"{self.device_id}: {command.TYPE.name}: {reason} before the "
                                  "reply; outcome unknown (not resent)", command=command,
                                  attempts=attempts)

    def _lose(self, session: _Session, reason: str) -> None:
        with self._lock:
            self._lose_locked(session, reason)

    def _lose_locked(self, session: _Session, reason: str) -> None:
        """Mark ``session`` lost (once): fail the outstanding command, wake everyone."""
        if not session.alive:
            return
        session.alive = False
        session.lost_reason = reason
        waiter = self._waiter
        if waiter is not None and session.conn.pending is not None:
            pending = session.conn.pending
            waiter.set(self._interrupted(pending.command, pending.attempts, session))
        session.transport.cancel_read()
        self._cond.notify_all()

    # --- the reader thread --------------------------------------------------------------------

    def _read_loop(self, session: _Session) -> None:
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
                    self._deliver_turn()
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the link silently
            self._log.exception("reader failed", error=repr(exc))
            self._lose(session, f"reader failed: {exc!r}")

    def _drain_locked(self, session: _Session) -> bool:
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
                    waiter.set(LinkError(f"{self.device_id}: protocol violation in the reply to "
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
                self._ready_cond.notify_all()
            elif self._take_turn_locked():
                return True
        return False

    def _on_device_event_locked(self, session: _Session, event: Any) -> str | None:
        """File an arriving event with the sequencer, the one judge of what is new (docs/link.md
        section 6); returns its verdict (``None``: arrived before this session's IDENTITY)."""
        if not session.epoch_confirmed:
            # Before this session's IDENTITY the epoch is unknown; RESEND_EVENTS brings it back.
            self._stats["events_early"] += 1
            return None
        verdict = self._seq.offer(event)
        if verdict is DUPLICATE:
            self._stats["events_duplicate"] += 1
        elif verdict is OVERFLOW:
            self._stats["events_overflow"] += 1
        return verdict

    def _on_reply_locked(self, session: _Session, received: ReplyReceived) -> None:
        reply = received.reply
        if type(reply) is Identity:
            self._accept_identity_locked(session, reply)
        elif type(reply) is HeartbeatReply and session.epoch_confirmed:
            self._seq.note_highest(reply.last_event_counter)
        waiter = self._waiter
        if waiter is not None and waiter.seq == received.seq:
            waiter.set(received)

    def _accept_identity_locked(self, session: _Session, identity: Identity) -> None:
        """Runs in the reader as soon as IDENTITY arrives, so that the events right behind it
        are filed under the right epoch. The supervisor reports refusals."""
        if identity.protocol_version != PROTOCOL_VERSION:
            return
        if self._bound_serial is not None and identity.serial != self._bound_serial:
            return
        old = self._seq.epoch
        if old is not None and old != identity.event_epoch:
            # The device's counter restarted: acknowledgements start again from nothing.
            self._acked = self._ack_requested = 0
            self._stats["epoch_changes"] += 1
            session.epoch_change = (old, identity.event_epoch)
            self._log.warning("event epoch changed", old=old, new=identity.event_epoch)
        lost = self._seq.set_epoch(identity.event_epoch)
        self._seq.serial = identity.serial
        self._seq.device_id = self._device_id or identity.serial
        session.epoch_confirmed = True
        if lost:
            self._stats["events_lost_epoch"] += sum(b - a + 1 for a, b in lost)
            session.lost_at_epoch_change = lost  # reported by the supervisor after the handshake

    # --- the supervisor thread ----------------------------------------------------------------

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
            session = _Session(next(self._session_numbers), self.transport, conn)
            self._session = session
            self._stats["sessions"] += 1
            if self._stopping.is_set():
                self._lose_locked(session, "stopped")
        reader = threading.Thread(target=self._read_loop, args=(session,), daemon=True,
                                  name=f"shoectl-read-{self.device_id}")
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
            if self._device_id is None:
                self._log = structlog.get_logger().bind(device=self.device_id)
            self._acked = status.last_acked_event
            delivered = self._seq.delivered_in_epoch()
            need_resend = status.pending_events > 0 or self._seq.gap
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
            self._report_error(f"events {_ranges_text(session.lost_at_epoch_change)} of event epoch "
                               f"{old_epoch} never arrived and are lost with it")
        if need_resend:
            self._request_resend()
        if session.epoch_change is None:
            return None
        old_epoch, new_epoch = session.epoch_change
        return (f"event epoch changed from {old_epoch} to {new_epoch}: the device restarted its event "
                "counter (a reset that lost its memory, or another unit)")

    def _check_identity(self, identity: Identity, session: _Session) -> None:
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
            raise HandshakeFailed(f"{self.device_id}: {problem}")

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
        if self._seq.gap and not self._seq.full:
            due = self._last_resend + self.resend_interval * (STALLED_RESEND_FACTOR if self._seq.stalled else 1)
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
        target = self._seq.delivered_in_epoch()
        if not self.auto_ack:
            target = min(self._ack_requested, target)
        return target

    # --- the deliverer thread -----------------------------------------------------------------

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
        if self._delivering or self._stopping.is_set() or self._seq.peek() is None:
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
                    event = self._seq.peek()
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
                    self._seq.commit(event)
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
                if self._seq.peek() is not None:
                    self._ready_cond.notify_all()  # the deliverer takes over

    def _internal(self, command: Command) -> Reply | None:
        """Send one of the link's own commands. A NAK is reported (``None``); any other failure
        ends the session (a lost reply, a protocol violation: the next session starts clean),
        so the supervisor never retries in a tight loop."""
        session = self._session
        try:
            return self._transact(command, None, internal=True)
        except CommandFailed as exc:
            self._report_error(f"device refused {command.TYPE.name}: {exc}")
        except LinkError as exc:
            if session is not None:
                self._lose(session, f"{command.TYPE.name} failed: {exc}")
        return None

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
            missing = self._seq.missing(limit=9)  # eight shown, and whether there are more
            stalled = self._seq.resend_requested()
            if stalled:
                self._stats["gaps_stalled"] += 1
        if missing:
            self._log.debug("asking the device to resend events", missing=missing)
        if stalled:
            self._report_error(f"events {_ranges_text(missing)} never arrived although the device was asked "
                               f"{self._seq.stall_resends} times to resend them: a device fault; the events "
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

    # --- reporting ----------------------------------------------------------------------------

    def _set_state(self, state: LinkState, reason: str | None) -> None:
        with self._cond:
            if self._state is LinkState.CLOSED or (self._state is state and reason is None):
                return
            retry = self._outage is not None and (state is LinkState.CONNECTING or reason == self._outage)
            if state is LinkState.DISCONNECTED:
                self._outage = reason
            elif state is not LinkState.CONNECTING:
                self._outage = None
            self._state = state
            self._cond.notify_all()
        # Info, once per outage and cause: the link's owner tells people (shoectl run: one line).
        (self._log.debug if retry else self._log.info)("link state", state=state.value, reason=reason)
        self._notify_state(state, reason)

    def _report_error(self, reason: str) -> None:
        self._log.error("link error", state=self._state.value, reason=reason)
        self._notify_state(self._state, reason)

    def _notify_state(self, state: LinkState, reason: str | None) -> None:
        callback = self._on_state
        if callback is None:
            return
        try:
            callback(state, reason)
        except Exception as exc:  # noqa: BLE001 - a broken observer must not break the link
            self._log.exception("on_state raised", error=repr(exc))


def _ranges_text(ranges: list[tuple[int, int]], most: int = 8) -> str:
    """``[(3, 5), (9, 9)]`` -> ``"3-5, 9"``; past ``most`` ranges, ``", ..."`` (one line)."""
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges[:most])
    return text + (", ..." if len(ranges) > most else "")
