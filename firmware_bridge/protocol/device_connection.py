"""``DeviceConnection``: the device's protocol state, sans-I/O: replays, SYNC, HELLO, EVENT_ACK,
RESEND_EVENTS and protocol NAKs answered by itself (see ``connection`` for the contract)."""
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
from .connection_events import (
    AutoReply,
    CommandReceived,
    DeviceSideEvent,
    NEED_DATA,
    _KIND_MASK,
    _U32,
    type_name,
)

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
                             f"{type_name(msg_type)} is not a command", cache)
        if not self._synced and msg_type != MessageType.SYNC:
            # D6: every command but SYNC, well formed or not, and never remembered (D7); a payload
            # this device would refuse was NAKed BAD_PAYLOAD and cached (a device review)
            return self._nak(seq, None, NakCode.NOT_SYNCED, "send SYNC first", cache=None)
        try:
            command = decode_message(frame)
        except RemoteProtocolError as exc:
            return self._nak(seq, None, exc.nak_code, str(exc), cache)
        assert isinstance(command, Command)
        handler = _AUTO_HANDLERS.get(type(command))
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


_AUTO_HANDLERS = {
    Sync: DeviceConnection._on_sync,
    Hello: DeviceConnection._on_hello,
    EventAck: DeviceConnection._on_event_ack,
    ResendEvents: DeviceConnection._on_resend,
}
