"""``HostConnection``: the host's protocol state, sans-I/O (see ``connection`` for the contract)."""
from __future__ import annotations

from collections import deque

from dataclasses import replace

from .errors import (
    NakCode,
    ProtocolStateError,
    RemoteProtocolError,
    UnexpectedMessageError,
    WrongRoleError,
)
from .framing import FLAG_RETRANSMISSION, Dropped
from .message_stream import Decoded, MessageDecoder

from .messages import (
    EXPECTED_REPLY,
    Command,
    EventAck,
    Heartbeat,
    Hello,
    MessageType,
    Nak,
    Sync,
    encode_message,
)
from .connection_events import (
    EventReceived,
    HostEvent,
    NEED_DATA,
    PendingCommand,
    ReplyReceived,
    StaleReply,
    _DEFINED_TYPES,
    _EVENT_BITS,
    _KIND_MASK,
    _REPLY_BITS,
    type_name,
)

class HostConnection:
    """The controller's side of one device link, for one session (a new one after a reconnect).

    Args:
        first_seq: sequence number of the first command (0-255).
    """

    def __init__(self, *, first_seq: int = 0) -> None:
        self._decoder = MessageDecoder()
        self.bytes_received = 0  # whatever they were: a line that only ever brings noise is told from a silent one
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
        """Feed bytes read from the link (any amount, any split); ``bytes_received`` counts them."""
        self.bytes_received += len(data)
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
        item = self._decoder.next_item()
        if item is None:
            return NEED_DATA
        if type(item) is Decoded:
            kind = item.msg_type & _KIND_MASK
            if kind == _EVENT_BITS:
                return self._on_event(item)
            if kind == _REPLY_BITS:
                return self._on_reply(item)
            raise UnexpectedMessageError(f"device sent {type_name(item.msg_type)}, a host command",
                                         seq=item.seq, msg_type=item.msg_type)
        if type(item) is Dropped:
            return item
        raise self._undecodable(item)  # type: ignore[arg-type]

    def _undecodable(self, exc: RemoteProtocolError) -> RemoteProtocolError:
        """A CRC-valid frame that did not decode: the error to raise. If it carried the pending
        command's sequence number in a reply's type, that command is finished by it."""
        msg_type = exc.msg_type if exc.msg_type is not None else 0
        kind = msg_type & _KIND_MASK
        if kind == 0 and msg_type in _DEFINED_TYPES:
            return UnexpectedMessageError(f"device sent {type_name(msg_type)}, a host command",
                                          seq=exc.seq, msg_type=msg_type)
        pending = self._pending
        if kind == _REPLY_BITS and pending is not None and exc.seq == pending.seq:
            self._pending = None
            exc.command = pending.command
        return exc

    def _on_event(self, item: Decoded) -> HostEvent:
        event = item.message
        if event.counter == 0:  # type: ignore[attr-defined]
            exc = UnexpectedMessageError(f"{event.TYPE.name} with event counter 0 (counters start "  # type: ignore[attr-defined]
                                         "at 1)", seq=item.seq, msg_type=item.msg_type)
            exc.event_counter = 0
            raise exc
        return EventReceived(event, bool(item.flags & FLAG_RETRANSMISSION))  # type: ignore[arg-type]

    def _on_reply(self, item: Decoded) -> HostEvent:
        pending = self._pending
        reply = item.message
        if pending is None or item.seq != pending.seq:
            return StaleReply(item.seq, reply)  # type: ignore[arg-type]
        self._pending = None
        command = pending.command
        expected = EXPECTED_REPLY[type(command)]
        if type(reply) is not expected and type(reply) is not Nak:
            raise UnexpectedMessageError(
                f"{command.TYPE.name} was answered with {reply.TYPE.name}",  # type: ignore[attr-defined]
                seq=item.seq, msg_type=item.msg_type, command=command)
        result = ReplyReceived(item.seq, command, reply, pending.attempts)  # type: ignore[arg-type]
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
                    seq=item.seq, msg_type=MessageType.HEARTBEAT_REPLY, command=command)
        elif type(command) is Hello:
            if reply.event_epoch != self._epoch:  # type: ignore[attr-defined]
                self._epoch = reply.event_epoch  # type: ignore[attr-defined]
                self._acknowledged = 0  # the device's counter restarted
        return result


# --- device --------------------------------------------------------------------------------------
