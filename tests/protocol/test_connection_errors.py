"""Local vs remote protocol errors: a local misuse raises and changes nothing, a remote error is
raised and the connection carries on (docs/protocol.md 5-7)."""
from __future__ import annotations

import struct

import pytest

from firmware_bridge.protocol import (
    NEED_DATA,
    Ack,
    CardRead,
    DeviceConnection,
    Dropped,
    DropReason,
    EventBufferFullError,
    EventReceived,
    GateLock,
    Heartbeat,
    HeartbeatReply,
    InvalidMessageError,
    LocalProtocolError,
    MalformedPayloadError,
    Nak,
    NakCode,
    ProtocolError,
    ProtocolStateError,
    RemoteProtocolError,
    ShoeEmpty,
    Shuffle,
    StatusRequest,
    Sync,
    UnexpectedMessageError,
    UnknownMessageTypeError,
    WrongRoleError,
    encode_message,
)

from .harness import IDENTITY, Pair, raw_frame, synced_host, drain


def test_local_errors_are_local_and_change_nothing() -> None:
    pair = Pair()
    pair.handshake()
    pair.host.send(StatusRequest())
    with pytest.raises(ProtocolStateError) as info:
        pair.host.send(GateLock())                    # one command at a time
    assert isinstance(info.value, LocalProtocolError) and isinstance(info.value, RuntimeError)
    assert pair.host.pending is not None and pair.host.pending.command == StatusRequest()
    with pytest.raises(WrongRoleError) as role:
        pair.host.send(CardRead(1, 0, False, 1, 0))  # type: ignore[arg-type]
    assert isinstance(role.value, TypeError)
    assert pair.host.abandon_command() == StatusRequest() and not pair.host.synced
    with pytest.raises(ProtocolStateError):
        pair.host.retransmit_bytes()

    device = pair.device
    with pytest.raises(ProtocolStateError):
        device.send(Ack())                            # nothing to reply to
    with pytest.raises(InvalidMessageError):
        device.send(ShoeEmpty(counter=5))             # the core assigns counters
    with pytest.raises(WrongRoleError):
        device.send(Sync())  # type: ignore[arg-type]
    drain(device, encode_message(StatusRequest(), 40))
    with pytest.raises(ProtocolStateError):
        device.next_event()                           # reply first
    with pytest.raises(ProtocolStateError):
        device.send(Ack())                            # STATUS wants STATUS_REPLY or NAK
    device.send(Nak(NakCode.BUSY))
    assert device.next_event() is NEED_DATA


def test_event_buffer_limit() -> None:
    device = DeviceConnection(IDENTITY, max_unacknowledged=2)
    device.send(ShoeEmpty())
    device.send(ShoeEmpty())
    with pytest.raises(EventBufferFullError) as info:
        device.send(ShoeEmpty())
    assert isinstance(info.value, ProtocolStateError)
    assert device.last_event_counter == 2


@pytest.mark.parametrize(("wire", "error", "builtin"), [
    (encode_message(Shuffle(3), 9), UnexpectedMessageError, RemoteProtocolError),
    (raw_frame(struct.pack("<BBBBH", 1, 0x8F, 1, 0, 0)), UnknownMessageTypeError, LookupError),
    (raw_frame(struct.pack("<BBBBH", 1, 0x80, 1, 0, 1) + b"\x01"), MalformedPayloadError, ValueError),
    (encode_message(ShoeEmpty(counter=0), 0), UnexpectedMessageError, RemoteProtocolError),
])
def test_remote_errors_are_raised_and_the_connection_continues(
        wire: bytes, error: type[Exception], builtin: type[Exception]) -> None:
    host = synced_host()
    host.receive_data(wire + encode_message(ShoeEmpty(counter=1), 1))
    with pytest.raises(error) as info:
        host.next_event()
    assert isinstance(info.value, RemoteProtocolError) and isinstance(info.value, builtin)
    assert isinstance(info.value, ProtocolError) and not isinstance(info.value, LocalProtocolError)
    event = host.next_event()
    assert isinstance(event, EventReceived) and event.event == ShoeEmpty(counter=1)


def test_wrong_reply_type_fails_the_pending_command() -> None:
    host = synced_host()
    host.send(StatusRequest())
    host.receive_data(encode_message(HeartbeatReply(1, 2, 3), 1))
    with pytest.raises(UnexpectedMessageError) as info:
        host.next_event()
    assert info.value.command == StatusRequest() and info.value.seq == 1
    assert host.pending is None


def test_heartbeat_token_must_be_echoed() -> None:
    host = synced_host()
    host.send(Heartbeat(5))
    host.receive_data(encode_message(HeartbeatReply(6, 0, 0), 1))
    with pytest.raises(UnexpectedMessageError):
        host.next_event()


def test_connection_lost_discards_the_partial_frame_and_requires_sync() -> None:
    host = synced_host()
    host.send(StatusRequest())
    host.receive_data(encode_message(Ack(), 1)[:4])
    assert host.connection_lost() == StatusRequest()
    assert host.next_event() == Dropped(DropReason.RESET, 4)
    assert not host.synced and host.pending is None
    assert host.next_event() is NEED_DATA
