"""Atheris fuzz target for the protocol codec and both connection roles (not run in CI).

Run from the project root: ``pip install atheris`` then
``python -m tests.fuzz.fuzz_codec [corpus_dir] -max_len=4096``. ``test_protocol_properties.py`` runs
``test_one_input`` on generated inputs so the target cannot rot.

One input drives, in turn: the frame decoder fed in fuzzer-chosen pieces, the message decoder on
every frame, a host connection and a device connection. The invariants are those of
docs/protocol.md: the decoder never raises and accounts for every byte; a decoded message
re-encodes to a payload that decodes to the same message; the host raises nothing but
RemoteProtocolError; the device raises nothing at all when the application answers each command.
"""
from __future__ import annotations

import sys

from firmware_bridge.protocol import (
    NEED_DATA,
    Capability,
    CommandReceived,
    DeviceConnection,
    Dropped,
    Frame,
    FrameDecoder,
    HostConnection,
    Identity,
    MalformedPayloadError,
    Nak,
    NakCode,
    RemoteProtocolError,
    Sync,
    UnknownMessageTypeError,
    decode_message,
    encode_frame,
    encode_message,
)

_IDENTITY = Identity(1, Capability.CARD_RECOGNITION, 8, 1, "FUZZ", "0", "0")


def _pieces(data: bytes) -> list[bytes]:
    """Split the input using its first byte as the piece size (1..256)."""
    if not data:
        return []
    size = data[0] + 1
    body = data[1:]
    return [body[i:i + size] for i in range(0, len(body), size)]


def check_decoder(data: bytes) -> list[Frame]:
    decoder = FrameDecoder()
    frames: list[Frame] = []
    consumed = 0
    for piece in _pieces(data):
        decoder.receive_data(piece)
        for item in decoder:
            if type(item) is Frame:
                frames.append(item)
                consumed += len(encode_frame(item.msg_type, item.seq, item.payload, item.flags)) - 1
            else:
                assert type(item) is Dropped and item.nbytes > 0, item
                consumed += item.nbytes
    fed = data[1:]
    assert consumed + fed[:len(fed) - decoder.buffered].count(0) + decoder.buffered == len(fed)
    return frames


def check_messages(frames: list[Frame]) -> None:
    for frame in frames:
        try:
            message = decode_message(frame)
        except (MalformedPayloadError, UnknownMessageTypeError):
            continue
        again = decode_message(Frame(frame.msg_type, frame.seq, frame.flags, message.encode_payload()))
        assert again == message, (frame, message, again)
        assert encode_message(message, frame.seq, frame.flags)


def check_host(data: bytes) -> None:
    host = HostConnection()
    host.send(Sync())
    host.receive_data(data)
    while True:
        try:
            if host.next_event() is NEED_DATA:
                return
        except RemoteProtocolError:
            continue


def check_device(data: bytes) -> None:
    device = DeviceConnection(_IDENTITY)
    device.receive_data(data)
    while (event := device.next_event()) is not NEED_DATA:
        if isinstance(event, CommandReceived):
            device.send(Nak(NakCode.NOT_SUPPORTED))


def test_one_input(data: bytes) -> int:
    """The fuzzing entry point (also called by the ordinary tests); returns the frame count."""
    frames = check_decoder(data)
    check_messages(frames)
    check_host(data)
    check_device(data)
    return len(frames)


def main() -> None:
    import atheris  # imported here so that this module imports without atheris installed

    atheris.instrument_all()  # coverage feedback for the already-imported protocol modules
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
