"""``SessionReader``: the reader thread of one ``DeviceLink`` session.

Bytes -> protocol core -> the reply to the waiting command (through the ``CommandChannel``'s
waiter), events to the sequencer (the one judge of what is new), the IDENTITY handed to the
supervisor as soon as it arrives (the events right behind it belong to its epoch). In hand-off
mode the reader then delivers what is now in order itself, without the lock: one thread change
from the wire to the consumer. A damaged frame nudges the waiting command (maybe its reply was
lost) and asks the supervisor for a HEARTBEAT at once (maybe an event was). The reader ends when
its session is lost; a read error loses it.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from firmware_bridge.errors import LinkErrorKind, TransportError, UnreadableReply
from firmware_bridge.protocol import (
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
from firmware_bridge.protocol.connection_events import type_name
from firmware_bridge.transport.serial_sharing import MAX_READ

from .commands import CommandChannel
from .delivery import EventDeliverer
from .reporting import StateReporter
from .sequencer import BUFFERED, DUPLICATE, OVERFLOW, QUEUED, EventSequencer
from .session import Session

__all__ = ["READ_POLL", "SessionReader"]

READ_POLL = 0.1        # longest a reader read blocks (seconds): bounds stop() on USB
# Longest a reader waits on a shared serial line (seconds). Everything that needs the reader
# wakes it through the transport's cancel pipe (a lost session, a stop: the reader is joined
# before the line is closed; events a command's caller read for it), so this only sets how
# often an idle line wakes it: ten times a second at READ_POLL, once here.
SHARED_IDLE_WAIT = 1.0


class SessionReader:
    """Reads one session until it is lost (``run``, the thread's target).

    Args:
        session: the session to read (its transport and protocol state).
        lock: the link's lock (guards the protocol state, the sequencer, ``stats``);
            ``cond``: its condition, notified when the supervisor has work (a gap, a probe).
        sequencer: files every event that arrives.
        delivery: the link's deliverer (woken with ``auto_ack``; in hand-off mode the reader
            takes the delivery turn itself).
        commands: the command path: its waiter gets the replies, ``lose`` ends the session.
        identity_arrived_locked: ``(session, identity)``, with the lock held, when an IDENTITY
            arrives; ``probe_locked``: a damaged frame came (the supervisor sends a HEARTBEAT).
    """

    def __init__(self, session: Session, *, lock: threading.Lock, cond: threading.Condition,
                 sequencer: EventSequencer, delivery: EventDeliverer, commands: CommandChannel,
                 reporter: StateReporter, stats: dict[str, int], auto_ack: bool, read_poll: float,
                 name: Callable[[], str],
                 identity_arrived_locked: Callable[[Session, Identity], None],
                 probe_locked: Callable[[], None]) -> None:
        self._session = session
        self._lock = lock
        self._cond = cond
        self._sequencer = sequencer
        self._delivery = delivery
        self._commands = commands
        self._reporter = reporter
        self._stats = stats
        self._auto_ack = auto_ack
        self._read_poll = read_poll
        self._name = name
        self._identity_arrived_locked = identity_arrived_locked
        self._probe_locked = probe_locked
        self._handed_back = False  # a caller read events for the reader to hand over

    def run(self) -> None:
        session = self._session
        transport = session.transport
        shared = transport.shared_reading
        poll = self._read_poll
        try:
            while session.alive:
                try:
                    if shared is None:
                        data = transport.read(poll)
                        if not data:
                            continue
                        with self._lock:
                            if not session.alive:
                                return
                            session.conn.receive_data(data)
                            deliver = self._drain_locked(session, hand_off=True)
                    else:
                        readable = shared.wait_readable(max(poll, SHARED_IDLE_WAIT))
                        if self._handed_back and self._take_handed_back():
                            self._delivery.deliver_turn()
                        if not readable:
                            continue
                        with self._lock:  # read under the lock: a waiting caller may read too
                            if not session.alive:
                                return
                            data = shared.read_ready()
                            if not data:  # the caller took them
                                continue
                            session.conn.receive_data(data)
                            deliver = self._drain_locked(session, hand_off=True)
                except TransportError as exc:
                    self._commands.lose(session, f"read failed: {exc}")
                    return
                if deliver:
                    self._delivery.deliver_turn()
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the link silently
            self._reporter.log.exception("reader failed", error=repr(exc))
            self._commands.lose(session, f"reader failed: {exc!r}")

    def read_for_requester(self) -> None:
        """The reader's work, done by a command's caller woken by the line while it waits for its
        reply (``SharedReading``: one thread wake-up per reply instead of two): read what is
        there and file it, under the lock, as ``run`` does. Events that come with it are left to
        the deliverer thread, or in hand-off mode handed back to the reader (woken through
        ``cancel_read``), which hands them over: the caller never runs ``on_event``. A read error
        loses the session, as in ``run``."""
        session = self._session
        shared = session.transport.shared_reading
        try:
            with self._lock:
                while session.alive and shared is not None:
                    data = shared.read_ready()
                    if not data:
                        return
                    self._stats["caller_reads"] += 1
                    session.conn.receive_data(data)
                    self._drain_locked(session, hand_off=False)
                    if len(data) < MAX_READ:  # else more may wait, which nobody else is told of
                        return
        except TransportError as exc:
            self._commands.lose(session, f"read failed: {exc}")
        except Exception as exc:  # noqa: BLE001 - a bug must not kill the link silently
            self._reporter.log.exception("reader failed", error=repr(exc))
            self._commands.lose(session, f"reader failed: {exc!r}")

    def _drain_locked(self, session: Session, *, hand_off: bool) -> bool:
        """Take every decoded item from the protocol core. Returns True when the caller (the
        reader, in hand-off mode) now holds the delivery turn and must deliver, without the lock;
        ``hand_off=False`` (a command's caller read them): never; the deliverer thread, or in
        hand-off mode the reader, is woken instead."""
        conn = session.conn
        stats = self._stats
        queued = wake = False
        while True:
            try:
                ev = conn.next_event()
            except RemoteProtocolError as exc:
                stats["protocol_errors"] += 1
                if exc.event_counter is not None and exc.msg_type is not None:
                    self._sequencer.unreadable(exc.event_counter, type_name(exc.msg_type))
                    if exc.event_counter == 0:  # never asked for again: the table would wait for it unsaid
                        self._reporter.error(LinkErrorKind.EVENTS_STALLED, (
                            f"event 0 ({type_name(exc.msg_type)}) came: event counters start at 1 (docs/protocol.md "
                            "E1), so it cannot be taken: a device fault (its firmware numbers events from 0)"))
                waiter = self._commands.waiter
                if exc.command is not None and waiter is not None and not waiter.done:
                    waiter.set(UnreadableReply(f"{self._name()}: protocol violation in the reply to "
                                         f"{exc.command.TYPE.name}: {exc}"))  # type: ignore[attr-defined]
                self._reporter.log.warning("protocol violation", error=str(exc))
                continue
            kind = type(ev)
            if kind is NeedData:
                break
            if kind is EventReceived:
                verdict = self._file_event_locked(session, ev.event)  # type: ignore[union-attr]
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
                    waiter = self._commands.waiter
                    if waiter is not None:
                        waiter.nudge()
                    if session.epoch_confirmed:
                        self._probe_locked()
                        wake = True
            elif kind is StaleReply:
                stats["stale_replies"] += 1
        if wake:
            self._cond.notify_all()
        if queued:
            if self._auto_ack:
                self._delivery.ready.notify_all()
            elif not hand_off:  # read by a command's caller: the reader hands them over
                self._handed_back = True
                session.transport.cancel_read()
            elif self._delivery.take_turn_locked():
                return True
        return False

    def _take_handed_back(self) -> bool:
        """Woken by a caller that read events (``read_for_requester``): True when the reader now
        holds the delivery turn and must deliver."""
        with self._lock:
            self._handed_back = False
            return self._delivery.take_turn_locked()

    def _file_event_locked(self, session: Session, event: Any) -> str | None:
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
            self._identity_arrived_locked(session, reply)
        elif type(reply) is HeartbeatReply and session.epoch_confirmed:
            self._sequencer.note_highest(reply.last_event_counter)
        waiter = self._commands.waiter
        if waiter is not None and waiter.seq == received.seq:
            waiter.set(received)
