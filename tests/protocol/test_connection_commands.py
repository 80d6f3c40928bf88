"""Unit tests of the connection rules for commands: handshake, retransmission and replay, sequence
numbers, SYNC, and the device's NAKs for bad frames (docs/protocol.md 5, 7)."""
from __future__ import annotations

import struct

import pytest

from firmware_bridge.protocol import (
    FLAG_RETRANSMISSION,
    NEED_DATA,
    Ack,
    AutoReply,
    CommandReceived,
    DeviceConnection,
    DropReason,
    GateLock,
    GateUnlock,
    MessageType,
    Nak,
    NakCode,
    ProtocolStateError,
    ReplyReceived,
    ShoeEmpty,
    Shuffle,
    StaleReply,
    StatusRequest,
    Sync,
    cobs_decode,
    encode_message,
)

from .harness import IDENTITY, Pair, decode_all, raw_frame, drain


def test_handshake_then_commands() -> None:
    pair = Pair()
    pair.handshake()
    assert pair.host.synced and pair.device.synced and pair.host.event_epoch == 1
    [event] = pair.command(Shuffle(8))
    assert event == ReplyReceived(2, Shuffle(8), Ack(), 1)
    assert pair.executed == [Shuffle(8)]


def test_retransmitted_command_gets_the_replayed_reply_and_runs_once() -> None:
    pair = Pair()
    pair.handshake()
    first = pair.host.send(Shuffle(6))
    lost_reply, _ = pair.to_device(first)          # executed; the reply is lost on the wire
    assert pair.host.pending is not None and pair.host.pending.attempts == 1
    again = pair.host.retransmit_bytes()
    assert pair.host.pending.attempts == 2 and pair.host.pending.data == first
    [resent] = decode_all(again)
    assert resent.seq == 2 and resent.flags == FLAG_RETRANSMISSION  # type: ignore[union-attr]
    replayed, events = pair.to_device(again)
    assert pair.executed == [Shuffle(6)]           # not executed a second time
    assert isinstance(events[0], AutoReply) and events[0].replayed
    assert decode_all(replayed)[0].flags == FLAG_RETRANSMISSION  # type: ignore[union-attr]
    [event] = drain(pair.host, replayed)
    assert event == ReplyReceived(2, Shuffle(6), Ack(), 2)
    assert pair.host.pending is None
    # The late original reply is now stale and ignored.
    assert drain(pair.host, lost_reply) == [StaleReply(2, Ack())]


def test_same_sequence_with_different_content_is_refused() -> None:
    pair = Pair()
    pair.handshake()
    pair.command(GateLock())                          # seq 2 (SYNC was 0, HELLO 1)
    _, events = pair.to_device(encode_message(GateUnlock(), 2))
    assert isinstance(events[0], AutoReply)
    assert events[0].reply.code is NakCode.SEQUENCE_REUSED  # type: ignore[attr-defined]
    assert pair.executed == [GateLock()]


def test_device_refuses_commands_before_sync_and_sync_is_never_replayed() -> None:
    device = DeviceConnection(IDENTITY)
    [event] = drain(device, encode_message(StatusRequest(), 0))
    assert isinstance(event, AutoReply) and event.reply == Nak(NakCode.NOT_SYNCED, "send SYNC first")
    for _ in range(2):  # the same SYNC twice: executed both times, no SEQUENCE_REUSED
        [event] = drain(device, encode_message(Sync(), 0))
        assert isinstance(event, AutoReply) and event.reply == Ack() and not event.replayed
    [event] = drain(device, encode_message(StatusRequest(), 0))
    assert event == CommandReceived(0, StatusRequest())


def test_a_malformed_command_before_sync_is_not_synced_and_not_remembered() -> None:
    """A device review: before its first SYNC the device decoded the payload first, answered a
    malformed SHUFFLE (decks 0) BAD_PAYLOAD and remembered that answer. D6: every command but SYNC
    is answered NOT_SYNCED; D7: that answer is never remembered (the same bytes after SYNC are a
    command of the session, decided then)."""
    device = DeviceConnection(IDENTITY)
    malformed = raw_frame(struct.pack("<BBBBH", 1, MessageType.SHUFFLE, 3, 0, 1) + b"\x00")  # decks 0
    [event] = drain(device, malformed)
    assert isinstance(event, AutoReply) and event.reply == Nak(NakCode.NOT_SYNCED, "send SYNC first")
    drain(device, encode_message(Sync(), 0))
    [event] = drain(device, malformed)  # now looked at: its payload refused
    assert isinstance(event, AutoReply) and event.reply.code is NakCode.BAD_PAYLOAD and not event.replayed


def test_host_learns_not_synced_and_must_sync_again() -> None:
    pair = Pair()
    pair.handshake()
    pair.device = DeviceConnection(IDENTITY)  # the device rebooted
    [event] = pair.command(StatusRequest())
    assert event.reply.code is NakCode.NOT_SYNCED  # type: ignore[attr-defined]
    assert not pair.host.synced
    with pytest.raises(ProtocolStateError):
        pair.host.send(StatusRequest())
    pair.handshake()


def test_device_answers_bad_frames_with_protocol_naks() -> None:
    device = DeviceConnection(IDENTITY)
    drain(device, encode_message(Sync(), 0))
    cases = [  # (frame, expected NAK code, events before the AutoReply)
        (raw_frame(struct.pack("<BBBBH", 1, 0x11, 5, 0, 1) + b"\x00"), NakCode.BAD_PAYLOAD, []),
        (raw_frame(struct.pack("<BBBBH", 1, 0x3F, 6, 0, 0)), NakCode.UNKNOWN_COMMAND, []),
        (encode_message(ShoeEmpty(counter=1), 7), NakCode.UNKNOWN_COMMAND, []),
        (raw_frame(struct.pack("<BBBBH", 9, 0x10, 8, 0, 0)), NakCode.UNSUPPORTED_VERSION,
         [DropReason.BAD_VERSION]),
        (raw_frame(struct.pack("<BBBBH", 1, 0x10, 9, 0, 3)), NakCode.BAD_FRAME,
         [DropReason.BAD_LENGTH]),
    ]
    for wire, code, drops in cases:
        *dropped, auto = drain(device, wire)
        assert [d.reason for d in dropped] == drops  # type: ignore[attr-defined]
        assert isinstance(auto, AutoReply) and auto.reply.code is code  # type: ignore[attr-defined]
        [frame] = decode_all(auto.data)
        assert frame.seq == auto.seq == _wire_seq(wire)  # type: ignore[union-attr]
        assert _device_is_idle(device)


@pytest.mark.parametrize("version", [1, 2])
def test_a_crc_valid_frame_too_long_to_hold_is_dropped_unanswered(version: int) -> None:
    """docs/protocol.md 3.4 rule 2, as a device review asked it to say: a chunk longer than 266
    bytes (a receiver holds 267) is not decoded, so its CRC and sequence number are never looked
    at: `oversize`, and no NAK, of this version or a later one (its sender learns by timeout)."""
    device = DeviceConnection(IDENTITY)
    drain(device, encode_message(Sync(), 0))
    payload = bytes(range(1, 256)) + b"\x01\x02"  # 257 bytes, one past the largest payload
    wire = raw_frame(struct.pack("<BBBBH", version, 0x10, 5, 0, len(payload)) + payload)
    assert len(wire) - 1 > 266
    events = drain(device, wire)
    assert [type(e).__name__ for e in events] == ["Dropped"] and events[0].reason is DropReason.OVERSIZE  # type: ignore[attr-defined]
    assert _device_is_idle(device)


def _wire_seq(wire: bytes) -> int:
    return cobs_decode(wire[:-1])[2]


def _device_is_idle(device: DeviceConnection) -> bool:
    return device.awaiting_reply is None and device.next_event() is NEED_DATA
