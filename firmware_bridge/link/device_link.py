"""``DeviceLink``: the I/O pump for one device (threads, timeouts, retries, heartbeat, reconnect).

The protocol core (``HostConnection``) decides nothing about time; the link does. ``DeviceLink``
holds no logic of its own beyond its public calls: it composes collaborators that each own their
state and are given what they need (the link's lock and condition, the transport, the sequencer,
callbacks), and starts their threads:

- ``StateReporter`` (``reporting``): the link's state, the outage in progress, ``on_state`` and
  the logger;
- ``CommandChannel`` (``commands``): the current ``Session`` (``session``: one connection), the
  one outstanding command and its reply slot (``Waiter``), retransmission, losing a session.
  **Callers** of ``request()`` write their command themselves and wait for the reply (on a
  serial port they read it off the line themselves: ``SessionReader.read_for_requester``); ``request()`` calls and the supervisor's own commands are serialized, so at
  most one command is outstanding (docs/protocol.md H1);
- ``Supervisor`` (``supervisor``), the **supervisor** thread (``shoectl-link-<name>``), started
  by ``start()``: opens the transport, runs the handshake, then serves the session: EVENT_ACK for
  what the consumer stored, RESEND_EVENTS when a gap shows, HEARTBEAT when idle; on a loss it
  tears the session down and reconnects with exponential backoff. ``on_state`` runs on this
  thread, except for consumer errors (reported by the thread that called ``on_event``) and the
  final ``CLOSED`` (reported by ``stop()``'s caller);
- ``SessionReader`` (``reader``), the **reader** thread (``shoectl-read-<name>``), one per
  session: ``transport.read`` -> protocol core -> replies to the waiting command, events to the
  sequencer (the one judge of what is new). In hand-off mode it then calls ``on_event`` itself,
  without the lock, for each event now in order: one thread change from the wire to the
  consumer. A damaged frame makes it ask the supervisor for a HEARTBEAT at once;
- ``EventDeliverer`` (``delivery``), the **deliverer** thread (``shoectl-events-<name>``),
  started with the supervisor when there is an ``on_event``: with ``auto_ack`` it calls
  ``on_event`` for each event, in order, one at a time, so a slow consumer delays neither
  heartbeats nor reconnects, and events already received are delivered even while the link is
  down. In hand-off mode (``auto_ack=False``) it only redelivers what the reader could not hand
  over (after a consumer error, or events released by ``accept_gap``);
- ``Acknowledgements`` (``acknowledgements``): what EVENT_ACK may cover, and what the device
  confirmed; ``EventSequencer`` (``sequencer``): order and de-duplication, pure.

Full rules (handshake, retries, acknowledgement, what happens at unplug): ``docs/link.md``.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from firmware_bridge.protocol import (Capability, Command, EventAck, Hello, Identity, Reply, ResendEvents, StatusReply,
                                     Sync)
from firmware_bridge.errors import LinkError
from firmware_bridge.transport import Transport

from .acknowledgements import Acknowledgements
from .backoff import Backoff
from .commands import CommandChannel
from .delivery import EventDeliverer
from .identity_check import expected_of, profile_problem
from .reader import READ_POLL, SessionReader
from .reporting import ErrorCallback, StateCallback, StateReporter
from .sequencer import EventSequencer
from .session import MAX_IDLE_WAIT, Session
from .state import LinkErrorKind, LinkEvent, LinkState
from .supervisor import Supervisor

__all__ = ["DeviceLink"]

EventCallback = Callable[[LinkEvent], None]

STAT_NAMES = ("sessions", "reconnects", "commands", "retransmissions", "timeouts", "frames_dropped",
              "stale_replies", "protocol_errors", "events_delivered", "events_duplicate",
              "events_early", "events_overflow", "resend_requests", "heartbeats", "acks",
              "callback_errors", "events_lost_epoch", "epoch_changes", "gaps_stalled", "probes",
              "early_retransmissions", "caller_reads", "resent_in_time", "connections")


class DeviceLink:
    """One device: the transport, the protocol state, and the threads that drive them.

    Args:
        transport: the device's transport, not opened (the link opens, closes and reopens it).
        timing: ``firmware_bridge.profiles.Timing`` (or any object with ``response_timeout_ms``,
            ``heartbeat_interval_ms``, ``retries``, ``reconnect_min_ms``, ``reconnect_max_ms``);
            default: the protocol's defaults (250 ms, 1 s, 3 retries = 4 attempts).
        profile_name: the device profile's name (``from_profile`` passes it): the link's ``name``
            in logs and ``LinkEvent.profile_name``; default: the device's serial number once known.
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
            A session's ``CONNECTED`` is reported before ``on_event`` gets any of its events.
            Called from the link's threads (supervisor, deliverer, reader), possibly concurrently:
            keep it short and thread-safe. Exceptions from either callback never stop the link.
        on_error: ``on_error(kind, reason)`` for every reported error instead of ``on_state``
            (``LinkErrorKind``: what it is about, e.g. ``EVENTS_STALLED``, which needs the owner
            to act). The same reason repeated before the state changes is reported once.
        auto_ack: acknowledge each event once ``on_event`` returned. ``False``: hand-off mode
            (see ``on_event``); the consumer calls ``acknowledge(counter, epoch)`` when its commit
            is durable, and the supervisor sends EVENT_ACK at once.
        last_delivered: ``(event_epoch, counter)`` of the last event already stored (from the
            journal): counters up to it are duplicates.
        last_delivered_serial: the serial of the device ``last_delivered`` came from. Another
            unit answering has counters of its own, even under the same epoch number: they start
            afresh, reported as an epoch change (``None``: the seed is taken for any unit's).
        expected_serial: refuse a device whose IDENTITY serial differs; ``None`` (what
            ``from_profile`` gives): any unit of the kind, another than the last said in the
            connect's report (``unit_change``).
        expected_kind, expected_capabilities, expected_decks: the profile's kind (``shoe``,
            ``shuffler``, ``shuffler-shoe``; ``None``: any), capability bits and decks
            (``from_profile`` gives all three): a device short of one is refused at the handshake.
        clock: monotonic seconds (``time.monotonic``) for heartbeat and resend scheduling.
        sleep: ``sleep(seconds)`` for the reconnect backoff; the default waits on the stop
            event so ``stop()`` interrupts it. An injected one should return promptly.
        read_poll: longest one transport read blocks (bounds ``stop()`` where reads cannot be
            cancelled, e.g. USB).
    """

    def __init__(self, transport: Transport, *, timing: Any = None, profile_name: str | None = None,
                 on_event: EventCallback | None = None, on_state: StateCallback | None = None,
                 on_error: ErrorCallback | None = None,
                 auto_ack: bool = True, last_delivered: tuple[int, int] | None = None,
                 last_delivered_serial: str | None = None, expected_serial: str | None = None,
                 expected_kind: str | None = None, expected_capabilities: Capability = Capability(0),
                 expected_decks: int = 0, clock: Callable[[], float] = time.monotonic,
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
        self.read_poll = read_poll
        self.auto_ack = auto_ack
        self._profile_name = profile_name
        self._on_event = on_event

        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)        # supervisor work, state changes
        self._stopping = threading.Event()
        self._started = False
        self._supervisor_thread: threading.Thread | None = None
        self._deliverer_thread: threading.Thread | None = None
        self._stats = dict.fromkeys(STAT_NAMES, 0)
        self._sequencer = EventSequencer(last_delivered, profile_name=profile_name or "",
                                         serial=last_delivered_serial or "")
        self._reporter = StateReporter(self._cond, on_state, profile_name or transport.describe(), on_error)
        self._commands = CommandChannel(
            self._lock, self._cond, stopping=self._stopping, reporter=self._reporter, name=lambda: self.name,
            reply_timeout=self.reply_timeout, attempts=self.attempts, clock=clock, stats=self._stats)
        self._acks = Acknowledgements(self._cond, self._sequencer, lambda: self._commands.session,
                                      auto_ack=auto_ack, stored=last_delivered[1] if last_delivered else 0)
        self._delivery = EventDeliverer(
            self._lock, self._sequencer, on_event, stopping=self._stopping, clock=clock,
            backoff=Backoff(self.reconnect_min, self.reconnect_max), stats=self._stats,
            report_error=partial(self._reporter.error, LinkErrorKind.CONSUMER_FAILED),
            delivered_locked=self._acks.wake_if_due_locked)
        self._supervisor = Supervisor(
            transport, lock=self._lock, cond=self._cond, stopping=self._stopping,
            commands=self._commands, acks=self._acks, sequencer=self._sequencer,
            reporter=self._reporter, delivery=self._delivery, stats=self._stats,
            reply_timeout=self.reply_timeout,
            heartbeat_interval=self.heartbeat_interval, reconnect_min=self.reconnect_min,
            reconnect_max=self.reconnect_max, profile_name=profile_name, name=lambda: self.name,
            expected_serial=expected_serial, expected_kind=expected_kind,
            expected_capabilities=expected_capabilities, expected_decks=expected_decks, clock=clock, sleep=sleep,
            reader_for=self._reader_for)

    def _reader_for(self, session: Session) -> Callable[[], None]:
        """The target of ``session``'s reader thread (the supervisor starts it per connection)."""
        reader = SessionReader(
            session, lock=self._lock, cond=self._cond, sequencer=self._sequencer,
            delivery=self._delivery, commands=self._commands, reporter=self._reporter,
            stats=self._stats, auto_ack=self.auto_ack, read_poll=self.read_poll,
            name=lambda: self.name, identity_arrived_locked=self._supervisor.identity_arrived_locked,
            probe_locked=self._supervisor.probe_locked)
        if session.transport.shared_reading is not None:
            session.read_for_requester = reader.read_for_requester
        return reader.run

    @classmethod
    def from_profile(cls, profile: Any, port: str | None = None, *, usb_backend: Any = None,
                     **kwargs: Any) -> DeviceLink:
        """A link for a device profile: its transport (``open_transport``), its timing, its
        name as ``profile_name`` and its kind (a device of another kind is refused). A USB
        profile's serial number picks the unit where the transport opens it (its ``iSerialNumber``
        string); the serial the firmware says in IDENTITY is not held to that text, which it may
        write otherwise, and at most 32 bytes long (an integrator review: such a unit, found, was
        refused for ever). A profile no link can serve (``profile_problem``: another protocol
        version) raises ``LinkError`` before anything is opened."""
        from firmware_bridge.transport import open_transport  # noqa: PLC0415

        if (problem := profile_problem(profile)) is not None:
            raise LinkError(problem)
        transport = open_transport(profile, port, usb_backend=usb_backend)
        kwargs.setdefault("timing", profile.timing)
        kwargs.setdefault("profile_name", profile.name)
        for name, value in expected_of(profile).items():
            kwargs.setdefault(name, value)
        return cls(transport, **kwargs)

    # --- public state -------------------------------------------------------------------------

    @property
    def state(self) -> LinkState:
        return self._reporter.state

    @property
    def identity(self) -> Identity | None:
        """The device's IDENTITY from the last successful handshake (``None`` before)."""
        return self._supervisor.identity

    @property
    def last_status(self) -> StatusReply | None:
        """The STATUS_REPLY of the last handshake."""
        return self._supervisor.status

    @property
    def name(self) -> str:
        """The link's name in logs and thread names: the profile name, else the device's serial
        number once known, else the transport's description."""
        if self._profile_name:
            return self._profile_name
        supervisor = getattr(self, "_supervisor", None)  # None while the link is being made
        if supervisor is not None and supervisor.identity is not None:
            return supervisor.identity.serial
        return self.transport.describe()

    @property
    def last_delivered(self) -> tuple[int, int] | None:
        """``(epoch, counter)`` of the last event whose ``on_event`` returned."""
        with self._lock:
            return self._sequencer.last_delivered

    @property
    def retransmit_timeout(self) -> float:
        """Seconds a command's first attempt waits for its reply now: learnt from the device's
        answers, at most the profile's reply timeout (``RetransmitTimer``)."""
        return self._commands.timer.first()

    @property
    def stats(self) -> dict[str, int]:
        """Counters since construction (a copy)."""
        with self._lock:
            out = dict(self._stats)
            out["events_ready"] = self._sequencer.ready_count
            out["events_buffered"] = self._sequencer.buffered_count
            return out

    # --- lifecycle ----------------------------------------------------------------------------

    def start(self) -> DeviceLink:
        """Start the supervisor thread (it connects in the background). Returns ``self``.

        Raises RuntimeError if already started or stopped."""
        with self._lock:
            if self._started or self._stopping.is_set():
                raise RuntimeError("a DeviceLink can be started once, and not after stop()")
            self._started = True
        self._supervisor_thread = threading.Thread(target=self._supervisor.run, daemon=True,
                                                   name=f"shoectl-link-{self.name}")
        if self._on_event is not None:
            self._deliverer_thread = threading.Thread(target=self._delivery.run, daemon=True,
                                                      name=f"shoectl-events-{self.name}")
            self._deliverer_thread.start()
        self._supervisor_thread.start()
        return self

    def stop(self) -> None:
        """Stop: fail an outstanding command (``CommandInterrupted``), end the session, join the
        threads, close the transport; state ``CLOSED``. Idempotent. Waits for a running
        ``on_event`` to return (no further one starts). Called from ``on_event``/``on_state``
        (a link thread) it only requests the stop and returns."""
        threads = [t for t in (self._supervisor_thread, self._deliverer_thread) if t is not None]
        current, session = threading.current_thread(), self._commands.session
        detached = current in threads or (session is not None and current is session.reader)
        with self._lock:
            if self._reporter.state is LinkState.CLOSED:
                return
            if detached:
                self._supervisor.stop_detached = True  # the supervisor finishes the job when it exits
            self._stopping.set()
            if self._commands.session is not None:
                self._commands.lose_locked(self._commands.session, "stopped")
            self._cond.notify_all()
            self._delivery.ready.notify_all()
        if detached:
            return
        for thread in threads:
            thread.join()
        self._supervisor.teardown()
        self._reporter.set(LinkState.CLOSED, "stopped")

    def __enter__(self) -> DeviceLink:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def wait_connected(self, timeout: float | None = None) -> bool:
        """Block until the link is ``CONNECTED`` (True) or ``timeout`` s passed / it closed
        (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        reporter = self._reporter
        with self._cond:
            while reporter.state is not LinkState.CONNECTED:
                if reporter.state is LinkState.CLOSED or self._stopping.is_set():
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
        ``timeout`` seconds (default: as long as the device's answers so far say, at most the
        profile's reply timeout: ``retransmit_timeout``) and is retransmitted with the same
        sequence number; the link gives up after the profile's attempts and, by default, as long
        as that many reply timeouts. The device replays its reply to a retransmission and never
        executes a command twice.

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
        return self._commands.transact(command, timeout, internal=False)

    def acknowledge(self, counter: int, epoch: int | None = None, serial: str | None = None) -> bool:
        """``auto_ack=False`` only: every event handed to ``on_event`` up to ``counter`` is
        durably stored; the link sends EVENT_ACK at once, from its supervisor (any thread may
        call this; it never blocks on the device). ``epoch`` and ``serial``: the event's
        (``LinkEvent.epoch``, ``LinkEvent.serial``); an acknowledgement for another epoch than the
        device's current one, or for another unit than the one answering now, is ignored (returns
        False): a late acknowledgement of a replaced unit's event would otherwise acknowledge the
        new unit's events of the same numbers, which it would forget unstored. Raises ValueError
        for a counter not handed over yet, RuntimeError with auto_ack."""
        if self.auto_ack:
            raise RuntimeError("acknowledge() is for links made with auto_ack=False")
        with self._lock:
            return self._acks.consumer_acknowledged_locked(counter, epoch, self._delivery.handing, serial)

    def accept_stalled_gap(self) -> tuple[str, int, int, int] | None:
        """Give up the missing events of the gap stalled now, and nothing else (the sequencer's
        ``accept_stalled_gap``, under the lock: resent events or a new epoch cannot come between
        the look and the act): ``(serial, epoch, first, last)`` for the owner to record, or None
        when no gap is stalled. For an owner acting on an earlier ``EVENTS_STALLED`` report."""
        with self._cond:
            serial, epoch = self._sequencer.serial, self._sequencer.epoch
            given = self._sequencer.accept_stalled_gap()
            self._released_locked()
        if given is None:
            return None
        first, last, lost = given
        self._report_given_up(lost, last)
        return serial, epoch, first, last

    def accept_gap(self, up_to: int | None = None) -> int:
        """Declare missing event counters up to ``up_to`` (default: all known) lost for good
        (docs/protocol.md E7: a host decision, recorded as an irregularity by the caller), so
        later events can be delivered and acknowledged. Returns how many were given up."""
        with self._cond:
            lost = self._sequencer.accept_gap(up_to)
            self._released_locked()
        self._report_given_up(lost, up_to)
        return lost

    def _released_locked(self) -> None:
        self._cond.notify_all()
        self._delivery.ready.notify_all()

    def _report_given_up(self, lost: int, up_to: int | None) -> None:
        if lost:
            self._reporter.error(LinkErrorKind.EVENTS_GIVEN_UP, f"{lost} missing event(s) accepted as lost"
                                 + (f" (up to event {up_to})" if up_to is not None else ""))
