"""Protocol state for each role, sans-I/O: ``HostConnection`` and ``DeviceConnection``.

Both objects take received bytes with ``receive_data(data)`` and hand back typed events from
``next_event()``; ``send(message)`` returns the bytes to write. They never touch a port, a clock or
a thread: timeouts, retries and reconnects are the link layer's decisions, made with the state
these objects expose. The rules (``docs/protocol.md`` is normative) in short:

- Every frame has a sequence number. The host sends one command at a time, numbering each new
  command (previous + 1) mod 256; a reply carries its command's number. On a timeout the host
  resends the *same* bytes (``retransmit_bytes()``), with the same number.
- The device remembers its last command (number and content) and its reply. The same number with
  the same content again is a retransmission: the cached reply is replayed and the command is NOT
  executed again. The same number with different content is refused (NAK SEQUENCE_REUSED).
- SYNC starts a session: the device forgets the cached command. Until its first SYNC the device
  refuses everything else (NAK NOT_SYNCED), so a stale cache can never answer a new host.
- Events carry a u32 counter (1, 2, 3, ...). The device keeps each event until the host
  acknowledges its counter (EVENT_ACK acknowledges everything up to and including it) and sends
  them again on RESEND_EVENTS. The host side here only decodes them (``EventReceived``, every
  time one arrives): which counters are new, duplicated or missing is decided once, by the
  consumer of the event stream across sessions (the link's ``EventSequencer``, docs/link.md
  section 6), because only it knows what was stored before this session.

Events returned by ``next_event()``:

- both roles: ``NeedData`` (``NEED_DATA``: feed more bytes), ``Dropped`` (from the frame layer);
- host: ``ReplyReceived``, ``StaleReply``, ``EventReceived``;
- device: ``CommandReceived`` (the application must ``send()`` exactly one reply before calling
  ``next_event()`` again) and ``AutoReply`` (the protocol core answered by itself: replays,
  SYNC, HELLO, EVENT_ACK, RESEND_EVENTS and protocol NAKs; write ``data`` to the link).

Errors: misuse of these objects raises a ``LocalProtocolError`` subclass and changes nothing. On
the host, a CRC-valid frame that breaks the protocol makes ``next_event()`` raise a
``RemoteProtocolError`` subclass after consuming that frame; the connection stays usable and the
next call continues with the following frame. The device never raises for its input: it answers
with a NAK instead (an ``AutoReply``).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, replace

from .errors import (
    EventBufferFullError,
    InvalidMessageError,
    NakCode,
    ProtocolStateError,
    RemoteProtocolError,
    UnexpectedMessageError,
    UnknownMessageTypeError,
    WrongRoleError,
)
from .framing import FLAG_RETRANSMISSION, Dropped, DropReason, Frame, FrameDecoder
from .message_base import clip_text
from .messages import (
    EXPECTED_REPLY,
    Ack,
    Command,
    DeviceEvent,
    EventAck,
    Heartbeat,
    Hello,
    MAX_TEXT,
    Identity,
    MessageType,
    Nak,
    Reply,
    ResendEvents,
    Sync,
    decode_message,
    encode_message,
)

__all__ = [
    "NEED_DATA",
    "AutoReply",
    "CommandReceived",
    "DeviceConnection",
    "EventReceived",
    "HostConnection",
    "NeedData",
    "PendingCommand",
    "ReplyReceived",
    "StaleReply",
]

_U32 = 0xFFFF_FFFF
_EVENT_BITS = 0x80   # top two bits of the type byte: 10 = event, 01 = reply, 00 = command
_REPLY_BITS = 0x40
_KIND_MASK = 0xC0


# --- events --------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class NeedData:
    """No complete frame is buffered: call ``receive_data()`` with more bytes."""


NEED_DATA = NeedData()


@dataclass(frozen=True, slots=True)
class ReplyReceived:
    """Host: the reply to the pending command arrived; the command is finished (even if NAK)."""

    seq: int
    command: Command
    reply: Reply
    attempts: int


@dataclass(frozen=True, slots=True)
class StaleReply:
    """Host: a reply for no pending command (e.g. the original and a replayed reply both came)."""

    seq: int
    reply: Reply


@dataclass(frozen=True, slots=True)
class EventReceived:
    """Host: a device event arrived (a first sending or a resend: the counter says which, to the
    consumer that knows what it already stored). ``retransmitted``: the device flagged it as
    sent again (RESEND_EVENTS)."""

    event: DeviceEvent
    retransmitted: bool = False


@dataclass(frozen=True, slots=True)
class CommandReceived:
    """Device: a new command to execute. Reply with exactly one ``send(reply)`` before the next
    ``next_event()``."""

    seq: int
    command: Command


@dataclass(frozen=True, slots=True)
class AutoReply:
    """Device: the protocol core answered a frame by itself; write ``data`` to the link.

    ``command`` is the command answered (``None`` if the frame did not decode to one), ``reply``
    the reply sent, ``replayed`` true when this is the cached reply of a retransmitted command.
    For RESEND_EVENTS, ``data`` holds the ACK followed by the resent events.
    """

    seq: int
    command: Command | None
    reply: Reply
    data: bytes
    replayed: bool = False


@dataclass(frozen=True, slots=True)
class PendingCommand:
    """Host: the command awaiting its reply. ``data`` is its first transmission; ``attempts``
    counts transmissions so far (1 after ``send``, +1 per ``retransmit_bytes``)."""

    seq: int
    command: Command
    data: bytes
    attempts: int


HostEvent = NeedData | Dropped | ReplyReceived | StaleReply | EventReceived
DeviceSideEvent = NeedData | Dropped | CommandReceived | AutoReply


# --- host ----------------------------------------------------------------------------------------

class HostConnection:
    """The controller's side of one device link, for one session (a new one after a reconnect).

    Args:
        first_seq: sequence number of the first command (0-255).
    """

    def __init__(self, *, first_seq: int = 0) -> None:
        self._decoder = FrameDecoder()
        self._queue: deque[HostEvent] = deque()
        self._next_seq = first_seq & 0xFF
        self._pending: PendingCommand | None = None
        self._synced = False
        self._epoch: int | None = None   # from the last IDENTITY
        self._acknowledged = 0           # highest counter the device confirmed as acked

    # state for the link layer

    @property
    def pending(self) -> PendingCommand | None:
        """The command awaiting a reply, if any."""
        return self._pending

    @property
    def synced(self) -> bool:
        """True once SYNC was acknowledged; False again after abandon/connection_lost/NOT_SYNCED."""
        return self._synced

    @property
    def event_epoch(self) -> int | None:
        """The event epoch of the device's last IDENTITY reply (``None`` before one)."""
        return self._epoch

    @property
    def acknowledged_event_counter(self) -> int:
        """The highest counter whose EVENT_ACK the device accepted (in its current epoch)."""
        return self._acknowledged

    # sending

    def send(self, command: Command) -> bytes:
        """Encode a new command and make it the pending one; return the bytes to write.

        Raises:
            WrongRoleError: ``command`` is not a host command.
            ProtocolStateError: a command is already pending; or the session is not synced and
                this is not SYNC.
        """
        if not isinstance(command, Command):
            raise WrongRoleError(f"the host sends commands, not {type(command).__name__}")
        if self._pending is not None:
            raise ProtocolStateError(
                f"{self._pending.command.TYPE.name} (seq {self._pending.seq}) is still pending; "
                "wait for its reply, retransmit it, or abandon it")
        if not self._synced and type(command) is not Sync:
            raise ProtocolStateError(f"send SYNC before {command.TYPE.name}: no session")
        seq = self._next_seq
        self._next_seq = (seq + 1) & 0xFF
        data = encode_message(command, seq)
        self._pending = PendingCommand(seq, command, data, 1)
        return data

    def retransmit_bytes(self) -> bytes:
        """The pending command again, same sequence number (flagged as a retransmission).

        Raises ProtocolStateError if nothing is pending.
        """
        pending = self._pending
        if pending is None:
            raise ProtocolStateError("no command is pending")
        self._pending = replace(pending, attempts=pending.attempts + 1)
        return encode_message(pending.command, pending.seq, FLAG_RETRANSMISSION)

    def abandon_command(self) -> Command | None:
        """Give up on the pending command (its outcome is unknown) and require a new SYNC."""
        pending, self._pending = self._pending, None
        self._synced = False
        return pending.command if pending else None

    def connection_lost(self) -> Command | None:
        """The link went down: abandon the pending command and discard any partial frame."""
        command = self.abandon_command()
        dropped = self._decoder.reset()
        if dropped is not None:
            self._queue.append(dropped)
        return command

    # receiving

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Feed bytes read from the link (any amount, any split)."""
        self._decoder.receive_data(data)

    def next_event(self) -> HostEvent:
        """Return the next event, or ``NEED_DATA``.

        Raises:
            RemoteProtocolError: the next frame was CRC-valid but broke the protocol (it is
                consumed; call again to continue). If it was the reply to the pending command, that
                command is finished and the error's ``command`` names it.
        """
        if self._queue:
            return self._queue.popleft()
        item = self._decoder.next_frame()
        if item is None:
            return NEED_DATA
        if type(item) is Dropped:
            return item
        kind = item.msg_type & _KIND_MASK
        if kind == _EVENT_BITS:
            return self._on_event(item)
        if kind == _REPLY_BITS:
            return self._on_reply(item)
        if item.msg_type not in _DEFINED_TYPES:
            raise UnknownMessageTypeError(f"unknown message type {item.msg_type:#04x}",
                                          seq=item.seq, msg_type=item.msg_type)
        raise UnexpectedMessageError(f"device sent {_type_name(item.msg_type)}, a host command",
                                     seq=item.seq, msg_type=item.msg_type)

    def _on_event(self, frame: Frame) -> HostEvent:
        event = decode_message(frame)
        if event.counter == 0:  # type: ignore[attr-defined]
            raise UnexpectedMessageError(f"{event.TYPE.name} with event counter 0 (counters start "
                                         "at 1)", seq=frame.seq, msg_type=frame.msg_type)
        return EventReceived(event, bool(frame.flags & FLAG_RETRANSMISSION))  # type: ignore[arg-type]

    def _on_reply(self, frame: Frame) -> HostEvent:
        pending = self._pending
        if pending is None or frame.seq != pending.seq:
            return StaleReply(frame.seq, decode_message(frame))  # type: ignore[arg-type]
        self._pending = None
        command = pending.command
        try:
            reply = decode_message(frame)
        except RemoteProtocolError as exc:
            exc.command = command
            raise
        expected = EXPECTED_REPLY[type(command)]
        if type(reply) is not expected and type(reply) is not Nak:
            raise UnexpectedMessageError(
                f"{command.TYPE.name} was answered with {reply.TYPE.name}",
                seq=frame.seq, msg_type=frame.msg_type, command=command)
        result = ReplyReceived(frame.seq, command, reply, pending.attempts)  # type: ignore[arg-type]
        if type(reply) is Nak:
            if reply.code == NakCode.NOT_SYNCED:
                self._synced = False
            return result
        if type(command) is Sync:
            self._synced = True
        elif type(command) is EventAck:
            self._acknowledged = max(self._acknowledged, command.counter)
        elif type(command) is Heartbeat:
            if reply.token != command.token:  # type: ignore[attr-defined]
                raise UnexpectedMessageError(
                    f"HEARTBEAT token {command.token:#x} echoed as {reply.token:#x}",  # type: ignore[attr-defined]
                    seq=frame.seq, msg_type=MessageType.HEARTBEAT_REPLY, command=command)
        elif type(command) is Hello:
            if reply.event_epoch != self._epoch:  # type: ignore[attr-defined]
                self._epoch = reply.event_epoch  # type: ignore[attr-defined]
                self._acknowledged = 0  # the device's counter restarted
        return result


# --- device --------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Cached:
    """The device's last command (as received) and its reply, for replays."""

    seq: int
    msg_type: int
    payload: bytes
    reply: Reply


_FRAME_NAKS = {  # CRC-valid frames the frame layer dropped: answered when the seq is known
    DropReason.BAD_VERSION: NakCode.UNSUPPORTED_VERSION,
    DropReason.BAD_LENGTH: NakCode.BAD_FRAME,
    DropReason.OVERSIZE: NakCode.BAD_FRAME,
}


class DeviceConnection:
    """A shuffler's or shoe's side of the link.

    The core answers the protocol commands itself (SYNC, HELLO, EVENT_ACK, RESEND_EVENTS, replays
    and protocol NAKs, as ``AutoReply``) and hands the application commands to the caller as
    ``CommandReceived``.

    Args:
        identity: the IDENTITY reply to HELLO.
        next_event_counter: the counter the next event gets (1 on a fresh device; restore it from
            non-volatile storage after a restart, or change ``identity.event_epoch``).
        unacknowledged: events restored from storage that the host has not acknowledged yet.
        last_acknowledged_event: the highest counter acknowledged so far.
        max_unacknowledged: how many unacknowledged events may be held before ``send`` refuses.
    """

    def __init__(self, identity: Identity, *, next_event_counter: int = 1,
                 unacknowledged: Iterable[DeviceEvent] = (), last_acknowledged_event: int = 0,
                 max_unacknowledged: int = 4096) -> None:
        if not isinstance(identity, Identity):
            raise WrongRoleError("identity must be an Identity message")
        events = tuple(unacknowledged)
        counters = [e.counter for e in events]  # type: ignore[attr-defined]
        if (counters != sorted(set(counters)) or not 1 <= next_event_counter <= _U32 + 1
                or (counters and (counters[0] <= last_acknowledged_event
                                  or counters[-1] >= next_event_counter))):
            raise InvalidMessageError(
                "unacknowledged events need strictly increasing counters above "
                "last_acknowledged_event and below next_event_counter")
        self._identity = identity
        self._decoder = FrameDecoder()
        self._queue: deque[DeviceSideEvent] = deque()
        self._synced = False
        self._last: _Cached | None = None
        self._awaiting: tuple[int, Command, int, bytes] | None = None
        self._events: deque[DeviceEvent] = deque(events)
        self._next_counter = next_event_counter
        self._last_acked = last_acknowledged_event
        self._max_unacked = max_unacknowledged

    # state for the application

    @property
    def identity(self) -> Identity:
        return self._identity

    @property
    def synced(self) -> bool:
        return self._synced

    @property
    def awaiting_reply(self) -> Command | None:
        """The command handed out by ``CommandReceived`` that still needs its reply."""
        return self._awaiting[1] if self._awaiting else None

    @property
    def last_acknowledged_event(self) -> int:
        return self._last_acked

    @property
    def last_event_counter(self) -> int:
        """The highest counter issued so far (0 if none)."""
        return self._next_counter - 1

    @property
    def unacknowledged_count(self) -> int:
        return len(self._events)

    def unacknowledged_events(self) -> tuple[DeviceEvent, ...]:
        """Every event not yet acknowledged, oldest first (persist these to survive a restart)."""
        return tuple(self._events)

    def resend_bytes(self) -> bytes:
        """All unacknowledged events encoded again (flagged as retransmissions), oldest first."""
        return b"".join(encode_message(e, e.counter & 0xFF, FLAG_RETRANSMISSION)  # type: ignore[attr-defined]
                        for e in self._events)

    # sending

    def send(self, message: Reply | DeviceEvent) -> bytes:
        """Encode a reply to the awaited command, or a new event; return the bytes to write.

        An event must be built with ``counter=0``; the core assigns the next counter and keeps the
        event until acknowledged (``unacknowledged_events()`` shows the stored copy).

        Raises:
            WrongRoleError: ``message`` is a command.
            ProtocolStateError: a reply with no command awaiting one, or of the wrong type.
            InvalidMessageError: an event with a non-zero counter.
            EventBufferFullError: ``max_unacknowledged`` events are already held.
        """
        if isinstance(message, Reply):
            return self._send_reply(message)
        if isinstance(message, DeviceEvent):
            return self._send_event(message)
        raise WrongRoleError(f"the device sends replies and events, not {type(message).__name__}")

    def _send_reply(self, reply: Reply) -> bytes:
        if self._awaiting is None:
            raise ProtocolStateError(f"no command is awaiting a reply ({reply.TYPE.name})")
        seq, command, msg_type, payload = self._awaiting
        expected = EXPECTED_REPLY[type(command)]
        if type(reply) is not expected and type(reply) is not Nak:
            raise ProtocolStateError(
                f"{command.TYPE.name} must be answered with {expected.TYPE.name} or NAK, "
                f"not {reply.TYPE.name}")
        self._awaiting = None
        self._last = _Cached(seq, msg_type, payload, reply)
        return encode_message(reply, seq)

    def _send_event(self, event: DeviceEvent) -> bytes:
        if event.counter != 0:  # type: ignore[attr-defined]
            raise InvalidMessageError("build events with counter=0; the connection assigns it")
        if len(self._events) >= self._max_unacked:
            raise EventBufferFullError(
                f"{len(self._events)} events are unacknowledged (max {self._max_unacked})")
        counter = self._next_counter
        if counter > _U32:
            raise ProtocolStateError("event counter exhausted: start a new event epoch")
        stored = replace(event, counter=counter)  # type: ignore[type-var]
        self._next_counter = counter + 1
        self._events.append(stored)
        return encode_message(stored, counter & 0xFF)

    # receiving

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Feed bytes read from the link (any amount, any split)."""
        self._decoder.receive_data(data)

    def next_event(self) -> DeviceSideEvent:
        """Return the next event, or ``NEED_DATA``. Never raises for received bytes.

        Raises:
            ProtocolStateError: the last ``CommandReceived`` has not been answered yet.
        """
        if self._awaiting is not None:
            raise ProtocolStateError(
                f"reply to {self._awaiting[1].TYPE.name} (seq {self._awaiting[0]}) first")
        if self._queue:
            return self._queue.popleft()
        item = self._decoder.next_frame()
        if item is None:
            return NEED_DATA
        if type(item) is Dropped:
            code = _FRAME_NAKS.get(item.reason)
            if code is not None and item.seq is not None:
                text = f"frame dropped: {item.reason.value}"
                self._queue.append(self._nak(item.seq, None, code, text, cache=None))
            return item
        return self._on_frame(item)

    def _on_frame(self, frame: Frame) -> DeviceSideEvent:
        seq, msg_type, payload = frame.seq, frame.msg_type, frame.payload
        last = self._last
        if last is not None and seq == last.seq and msg_type != MessageType.SYNC:
            if msg_type == last.msg_type and payload == last.payload:
                data = encode_message(last.reply, seq, FLAG_RETRANSMISSION)
                return AutoReply(seq, None, last.reply, data, replayed=True)
            return self._nak(seq, None, NakCode.SEQUENCE_REUSED,
                             f"seq {seq} was used by the previous command", cache=None)
        cache = (msg_type, payload)
        if msg_type & _KIND_MASK:
            return self._nak(seq, None, NakCode.UNKNOWN_COMMAND,
                             f"{_type_name(msg_type)} is not a command", cache)
        try:
            command = decode_message(frame)
        except RemoteProtocolError as exc:
            return self._nak(seq, None, exc.nak_code, str(exc), cache)
        assert isinstance(command, Command)
        handler = _AUTO_HANDLERS.get(type(command))
        if not self._synced and handler is not DeviceConnection._on_sync:
            return self._nak(seq, command, NakCode.NOT_SYNCED, "send SYNC first", cache=None)
        if handler is not None:
            return handler(self, seq, command, cache)
        self._awaiting = (seq, command, msg_type, payload)
        return CommandReceived(seq, command)

    def _answer(self, seq: int, command: Command | None, reply: Reply,
                cache: tuple[int, bytes] | None, extra: bytes = b"") -> AutoReply:
        if cache is not None:
            self._last = _Cached(seq, cache[0], cache[1], reply)
        return AutoReply(seq, command, reply, encode_message(reply, seq) + extra)

    def _nak(self, seq: int, command: Command | None, code: NakCode, text: str,
             cache: tuple[int, bytes] | None) -> AutoReply:
        return self._answer(seq, command, Nak(code, clip_text(text, MAX_TEXT)), cache)

    def _on_sync(self, seq: int, command: Command, cache: tuple[int, bytes]) -> AutoReply:
        # SYNC is not remembered: it clears the cache, and a retransmitted SYNC simply runs again.
        self._synced = True
        self._last = None
        return self._answer(seq, command, Ack(), None)

    def _on_hello(self, seq: int, command: Command, cache: tuple[int, bytes]) -> AutoReply:
        return self._answer(seq, command, self._identity, cache)

    def _on_event_ack(self, seq: int, command: Command, cache: tuple[int, bytes]) -> AutoReply:
        counter = command.counter  # type: ignore[attr-defined]
        if counter >= self._next_counter:
            return self._nak(seq, command, NakCode.BAD_EVENT_ACK,
                             f"event {counter} was never issued", cache)
        events = self._events
        while events and events[0].counter <= counter:  # type: ignore[attr-defined]
            events.popleft()
        self._last_acked = max(self._last_acked, counter)
        return self._answer(seq, command, Ack(), cache)

    def _on_resend(self, seq: int, command: Command, cache: tuple[int, bytes]) -> AutoReply:
        return self._answer(seq, command, Ack(), cache, self.resend_bytes())


_DEFINED_TYPES = frozenset(MessageType)


def _type_name(msg_type: int) -> str:
    return MessageType(msg_type).name if msg_type in _DEFINED_TYPES else f"type {msg_type:#04x}"


_AUTO_HANDLERS = {
    Sync: DeviceConnection._on_sync,
    Hello: DeviceConnection._on_hello,
    EventAck: DeviceConnection._on_event_ack,
    ResendEvents: DeviceConnection._on_resend,
}
