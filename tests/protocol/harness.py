"""Shared helpers of the protocol tests: decoding a byte stream, building raw frames, and a host
and a device connection wired back to back (``Pair``)."""
from __future__ import annotations

import struct
from collections.abc import Callable

from firmware_bridge.protocol import (
    NEED_DATA,
    Ack,
    AutoReply,
    Capability,
    CommandReceived,
    DeviceConnection,
    Dropped,
    Frame,
    FrameDecoder,
    Hello,
    HostConnection,
    Identity,
    RemoteProtocolError,
    ReplyReceived,
    Sync,
    cobs_encode,
    encode_message,
)
from firmware_bridge.protocol.message_stream import Decoded


def decode_all(data: bytes, chunks: list[int] | None = None) -> list[Frame | Dropped]:
    """Feed ``data`` (optionally split at the ``chunks`` sizes) and collect everything out."""
    decoder = FrameDecoder()
    out: list[Frame | Dropped] = []
    pos = 0
    for size in chunks or []:
        decoder.receive_data(data[pos:pos + size])
        pos += size
        out.extend(decoder)
    decoder.receive_data(data[pos:])
    out.extend(decoder)
    return out


def raw_frame(header_and_payload: bytes) -> bytes:
    crc = struct.pack(">H", __import__("binascii").crc_hqx(header_and_payload, 0xFFFF))
    return cobs_encode(header_and_payload + crc) + b"\x00"


IDENTITY = Identity(1, Capability.CARD_RECOGNITION | Capability.COVER_CARD_SENSOR, 8, 1,
                    "SHOE-1", "SN1", "1.0")


def drain(conn: HostConnection | DeviceConnection, data: bytes = b"") -> list[object]:
    """Feed ``data`` and return every event up to NEED_DATA (device: stops at a command)."""
    conn.receive_data(data)
    events: list[object] = []
    while (event := conn.next_event()) is not NEED_DATA:
        events.append(event)
        if isinstance(event, CommandReceived):
            break
    return events


class Pair:
    """A host and a device wired back to back; ``app`` answers the device's commands."""

    def __init__(self, app: Callable[[object], object] | None = None, **device_args: object) -> None:
        self.host = HostConnection()
        self.device = DeviceConnection(IDENTITY, **device_args)  # type: ignore[arg-type]
        self.executed: list[object] = []
        self.app = app or (lambda command: Ack())

    def to_device(self, data: bytes) -> tuple[bytes, list[object]]:
        """Deliver host bytes to the device; return the device's answer bytes and its events."""
        out = b""
        events: list[object] = []
        self.device.receive_data(data)
        while (event := self.device.next_event()) is not NEED_DATA:
            events.append(event)
            if isinstance(event, AutoReply):
                out += event.data
            elif isinstance(event, CommandReceived):
                self.executed.append(event.command)
                out += self.device.send(self.app(event.command))  # type: ignore[arg-type]
        return out, events

    def command(self, command: object) -> list[object]:
        reply, _ = self.to_device(self.host.send(command))  # type: ignore[arg-type]
        return drain(self.host, reply)

    def handshake(self) -> None:
        self.handshake_with(IDENTITY)

    def handshake_with(self, identity: Identity) -> None:
        assert isinstance(self.command(Sync())[0], ReplyReceived)
        assert self.command(Hello())[0].reply == identity  # type: ignore[attr-defined]


def synced_host() -> HostConnection:
    host = HostConnection()
    host.send(Sync())
    drain(host, encode_message(Ack(), 0))
    assert host.synced
    return host


def comparable(item: object) -> object:
    """What two decoders' items are compared by: an error by its type, text and header fields, a
    decoded message with its class (a NamedTuple equals any tuple of the same fields)."""
    if isinstance(item, RemoteProtocolError):
        return (type(item), str(item), item.seq, item.msg_type)
    if type(item) is Decoded:
        return (type(item.message), item)
    return item
