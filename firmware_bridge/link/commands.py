"""``CommandChannel``: the command path of a ``DeviceLink``, and the session it talks to.

One command at a time, written by its caller, retransmitted with the same sequence number on a
timeout or at once after a damaged frame (early retransmission); the reader hands the reply over
through the ``Waiter``, or the caller of ``request()`` reads it off a shared line itself
(``SharedReading``: one thread wake-up instead of two). The channel owns the current ``Session`` (the supervisor ``attach``es a
new one per connection), the reply slot of the outstanding command, the next sequence number and
the time of the last write (the heartbeat is due after a quiet ``heartbeat_interval``); and it is
where a session is marked lost (``lose``): the outstanding command fails, every link thread wakes.

A session whose last command was written about the device's host-loss timeout ago or longer
(``HOST_LOSS_TIMEOUT_S`` less ``HOST_LOSS_MARGIN_S``; this host paused: stopped, frozen, starved)
is lost before the next command is written: the device may have considered its host gone since
(a shoe locked its gate) and nothing on the wire says so; the reconnect's handshake and the table's resume put back what the
session had set up (a device review: the table waited for ever at a DRAW prompt).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

from firmware_bridge.errors import (
    CommandFailed,
    CommandInterrupted,
    CommandTimeout,
    LinkError,
    NotConnected,
    TransportError,
)
from firmware_bridge.protocol import (
    HOST_LOSS_TIMEOUT_S,
    Command,
    HostConnection,
    Nak,
    NakCode,
    ProtocolStateError,
    Reply,
    ReplyReceived,
)

from .reporting import StateReporter
from .rto import DEVICE_REPLY_DEADLINE, RetransmitTimer
from .session import Session, Waiter
from .state import LinkErrorKind, LinkState

__all__ = ["CommandChannel"]

# The device times its host-loss timeout from a command's arrival, this host from its writing, and
# the device may have gone by ">=": a silence this close to it is taken for one past it (a review
# found the link keeping a session at exactly 5 s that the device had given up). A link that is
# well never comes near: a heartbeat goes at least every 2.5 s (docs/device-profiles.md).
HOST_LOSS_MARGIN_S = 0.5


class CommandChannel:
    """The command path (see the module docstring).

    Args:
        lock: the link's lock (guards the session, the waiter and ``stats``); ``cond``: its
            condition, which ``lose`` notifies (every link thread waiting wakes).
        stopping: set when the link stops: no command is sent any more.
        reporter: the link's state (a caller's command needs ``CONNECTED``) and its reports.
        name: the link's name, for messages (a callable: it may become the serial).
        reply_timeout: the most seconds an attempt waits (the profile's reply timeout); how
            long each waits is learnt from the device's answers (``RetransmitTimer``).
            ``attempts``: how many at least; the link gives up once it has made them and waited
            ``attempts * reply_timeout`` in all.
        clock: monotonic seconds (``last_tx``, for the heartbeat schedule).
        stats: the link's counters.
    """

    def __init__(self, lock: threading.Lock, cond: threading.Condition, *, stopping: threading.Event,
                 reporter: StateReporter, name: Callable[[], str], reply_timeout: float,
                 attempts: int, clock: Callable[[], float], stats: dict[str, int]) -> None:
        self._lock = lock
        self._cond = cond
        self._cmd_lock = threading.Lock()  # one command outstanding (docs/protocol.md H1)
        self._stopping = stopping
        self._reporter = reporter
        self._name = name
        self.attempts = attempts
        self.timer = RetransmitTimer(reply_timeout)  # kept across sessions: the same device, mostly
        self._clock = clock
        self._stats = stats
        self.session: Session | None = None  # the current connection (the supervisor's)
        self.waiter: Waiter | None = None     # the outstanding command's reply slot
        self.last_tx = clock()                # when a command was last written (``Session.last_tx``: on it)
        self._next_seq = 0

    def connection(self) -> HostConnection:
        """A fresh protocol state for a new session, numbering on from the last command."""
        return HostConnection(first_seq=self._next_seq)

    def transact(self, command: Command, timeout: float | None, *, internal: bool) -> Reply:
        """Send ``command`` and return its reply; raises as ``DeviceLink.request`` says.
        ``internal``: one of the link's own commands (allowed before ``CONNECTED``). ``timeout``:
        each attempt waits that long (None: as long as the ``timer`` says)."""
        timer = self.timer if timeout is None else None
        with self._cmd_lock:
            with self._lock:
                session = self.session
                why = None
                if self._stopping.is_set():
                    why = "link is stopping"
                elif session is None or not session.alive:
                    lost = session.lost_reason if session is not None else None
                    why = f"link is down ({lost})" if lost else "link is down"
                elif not internal and self._reporter.state is not LinkState.CONNECTED:
                    why = f"link is {self._reporter.state.value}"
                if why is not None:
                    raise NotConnected(f"{self._name()}: {why}; {command.TYPE.name} not sent")
                reason = self._host_lost_locked(session)
                if reason is not None:
                    raise NotConnected(f"{self._name()}: {reason}; {command.TYPE.name} not sent")
                conn = session.conn
                try:
                    data = conn.send(command)
                except ProtocolStateError as exc:
                    raise LinkError(f"{self._name()}: cannot send {command.TYPE.name}: {exc}") from exc
                pending = conn.pending
                assert pending is not None
                self._next_seq = (pending.seq + 1) & 0xFF
                # A caller's command reads its reply off the line itself where it can; the
                # link's own (EVENT_ACK, HEARTBEAT) leave the line to the reader, so that the
                # events flowing meanwhile are handed over by the reader as usual.
                read = None if internal else session.read_for_requester
                shared = session.transport.shared_reading if read is not None else None
                waiter = Waiter(pending.seq, shared.wake_requester if shared is not None else None)
                self.waiter = waiter
                self._stats["commands"] += 1
            try:
                result = self._exchange(session, command, data, waiter, timer, timeout, read)
            finally:
                with self._lock:
                    if self.waiter is waiter:
                        self.waiter = None
        if isinstance(result, BaseException):
            raise result
        reply = result.reply
        if isinstance(reply, Nak):
            if reply.code == NakCode.NOT_SYNCED:
                # Not the device's answer to the command: it restarted, lost the session and did not
                # look at it. An earlier transmission may have run before the restart.
                reason = "device lost its session (NAK NOT_SYNCED): it restarted"
                self.lose(session, reason)
                raise CommandInterrupted(f"{self._name()}: {command.TYPE.name}: {reason}; outcome unknown "
                                         "(not resent)", command=command, attempts=result.attempts)
            raise CommandFailed(command, reply.code, reply.text)
        return reply

    def _host_lost_locked(self, session: Session) -> str | None:
        """Why ``session`` is lost before another write (and it is marked lost), or None: this host
        wrote nothing on it for about the device's host-loss timeout or longer (the module docstring)."""
        if session.last_tx is None:  # nothing written on it yet: the handshake's SYNC starts it
            return None
        quiet = self._clock() - session.last_tx
        if quiet < HOST_LOSS_TIMEOUT_S - HOST_LOSS_MARGIN_S:
            return None
        reason = (f"this host sent the device nothing for {quiet:.1f} s, about its host-loss timeout "
                  f"({HOST_LOSS_TIMEOUT_S:g} s) or more: the device may count it as gone (a shoe locks its gate), so "
                  "the session starts again")
        self.lose_locked(session, reason)
        return reason

    def internal(self, command: Command) -> Reply | CommandFailed | None:
        """Send one of the link's own commands: its reply; a NAK is returned (the
        ``CommandFailed``), reported unless it is BUSY (the device asks to be asked again: the
        caller does, later); any other failure ends the session (``None``: a lost reply, a
        protocol violation; the next session starts clean), so the supervisor never retries in
        a tight loop."""
        session = self.session
        try:
            return self.transact(command, None, internal=True)
        except CommandFailed as exc:
            if exc.code == NakCode.BUSY:
                self._reporter.log.info("device busy", command=command.TYPE.name, reason=exc.text)
            else:
                self._reporter.error(LinkErrorKind.DEVICE_REFUSED, f"the device said: {exc}")
            return exc
        except LinkError as exc:
            if session is not None:
                self.lose(session, f"{command.TYPE.name} failed: {exc}")
        return None

    def _exchange(self, session: Session, command: Command, data: bytes, waiter: Waiter,
                  timer: RetransmitTimer | None, timeout: float | None, read: Callable[[], None] | None
                  ) -> ReplyReceived | BaseException:
        """Write ``data`` and wait for the reply, retransmitting; returns the result or the
        exception to raise. Each attempt waits what ``timer`` says (or ``timeout``); the command
        is given up once ``attempts`` were made and ``attempts`` times the longest wait has
        passed in waiting. A damaged frame during an attempt (maybe the reply) sends the same
        bytes once more at once, which the device answers with its cached reply
        (docs/protocol.md D3), without counting as an attempt. A reply to a command sent once
        times the device for ``timer``."""
        wait = timer.first() if timer is not None else timeout
        assert wait is not None
        patience = self.attempts * (timer.ceiling if timer is not None else wait)
        waited = 0.0
        resent = False
        attempts = timed_out = 0
        first_sent = time.monotonic()
        while True:
            attempts += 1
            sent = time.monotonic()
            lost = self._write(session, data, command, attempts)
            while lost is None:
                woke = self._wait(session, waiter, wait - (time.monotonic() - sent), read)
                if woke and waiter.done:  # the reader filled the slot: nothing left to decide
                    break
                with self._lock:
                    if waiter.done:
                        break
                    if not session.alive:
                        waiter.set(self._interrupted(command, attempts, session))
                        break
                    if woke:  # nudged by a damaged frame: ask again now, not after the timeout
                        resent = True
                        waiter.rearm()
                        data = session.conn.retransmit_bytes()
                        self._stats["retransmissions"] += 1
                        self._stats["early_retransmissions"] += 1
                    else:
                        self._stats["timeouts"] += 1
                        waited += wait
                        if attempts >= self.attempts and waited >= patience - 1e-9:
                            session.conn.abandon_command()
                            reason = f"{command.TYPE.name} got no reply after {attempts} attempt(s)"
                            self.lose_locked(session, reason)
                            return CommandTimeout(f"{self._name()}: {reason}; outcome unknown",
                                                  command=command, attempts=attempts)
                        if self._host_lost_locked(session) is not None:  # a retry as late as that: the session is over
                            session.conn.abandon_command()
                            return self._interrupted(command, attempts, session)
                        data = session.conn.retransmit_bytes()
                        self._stats["retransmissions"] += 1
                        timed_out += 1
                        waiter.nudged = False  # a new attempt may be nudged again
                        resent = True
                        if timer is not None:
                            wait = timer.after(wait)
                        break
                lost = self._write(session, data, command, attempts)
            if lost is not None:
                return lost
            if waiter.done:
                break
        result = waiter.result
        assert result is not None
        if isinstance(result, CommandInterrupted):
            result.attempts = attempts
        elif timer is not None and not resent and isinstance(result, ReplyReceived):
            timer.sample(time.monotonic() - sent)
        elif timed_out and isinstance(result, ReplyReceived) and time.monotonic() - first_sent <= DEVICE_REPLY_DEADLINE:
            # the device kept the protocol's time: the estimate asked early (LineQuality leaves these out)
            self._stats["resent_in_time"] += timed_out
        return result

    @staticmethod
    def _wait(session: Session, waiter: Waiter, timeout: float, read: Callable[[], None] | None
              ) -> bool:
        """Wait for the reply: True when ``waiter`` was set or nudged, False after ``timeout``.
        With ``read`` (``session.read_for_requester``: the line is shared), the caller is woken
        by the line itself and reads the reply (one thread wake-up, not the reader's and then
        ours)."""
        shared = session.transport.shared_reading
        if read is None or shared is None:
            return waiter.wait(timeout)
        deadline = time.monotonic() + timeout
        while not waiter.woken:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                readable = shared.wait_first(left)
            except TransportError:  # closed: the session is over, the waiter set
                return waiter.wait(left)
            if readable:
                read()
        return True

    def _write(self, session: Session, data: bytes, command: Command,
               attempts: int) -> CommandInterrupted | None:
        """Write a command's bytes; on a transport error the session is lost and the command's
        outcome unknown (returned, to raise). Every write stamps ``last_tx``, an early retransmission's
        too (the device heard the host then: it was left out, and the host-loss check could count
        the session quiet while it was not)."""
        self.last_tx = session.last_tx = self._clock()
        try:
            session.transport.write(data)
        except TransportError as exc:
            self.lose(session, f"write failed: {exc}")
            return CommandInterrupted(f"{self._name()}: {command.TYPE.name}: link lost while "
                                      f"sending ({exc}); outcome unknown", command=command,
                                      attempts=attempts)
        return None

    def _interrupted(self, command: Command, attempts: int, session: Session) -> CommandInterrupted:
        reason = session.lost_reason or "link lost"
        return CommandInterrupted(f"{self._name()}: {command.TYPE.name}: {reason} before the "
                                  "reply; outcome unknown (not resent)", command=command,
                                  attempts=attempts)

    def lose(self, session: Session, reason: str) -> None:
        """Mark ``session`` lost (see ``lose_locked``)."""
        with self._lock:
            self.lose_locked(session, reason)

    def lose_locked(self, session: Session, reason: str) -> None:
        """Mark ``session`` lost (once): fail the outstanding command, cancel the reader's read,
        wake everyone."""
        if not session.alive:
            return
        session.alive = False
        session.lost_reason = reason
        waiter = self.waiter
        if waiter is not None and session.conn.pending is not None:
            pending = session.conn.pending
            waiter.set(self._interrupted(pending.command, pending.attempts, session))
        session.transport.cancel_read()
        self._cond.notify_all()
