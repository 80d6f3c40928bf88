"""Seeded adversarial inputs for the protocol core: what a hostile or broken peer could send.

``ProtocolInputs(seed).next()`` returns one input in the fuzz target's format (``fuzz_codec``):
the first byte chooses the piece size the bytes are fed in, the rest is wire bytes. The same seed
gives the same inputs, so a failure is reproduced from (seed, index) or from the bytes alone.

Kinds of input, each a share of the stream (``KINDS``):

- ``random``: random bytes, sometimes with 0x00 delimiters sprinkled in;
- ``frames``: valid frames of every message type (commands for the device, replies and events for
  the host, some of each for both), in realistic order, sequence numbers and event counters;
- ``mutated``: valid frames, then damaged: bits flipped (CRC then broken), payload bytes changed
  under a recomputed CRC (so they reach message decoding), random type, flags, version or length
  field under a valid CRC, oversize bodies, truncated, duplicated, reordered and dropped frames,
  noise and stray delimiters between them;
- ``gaps``: event floods whose counters skip (every other one, far ahead, backwards), the input
  that makes a host track many missing counters.
"""
from __future__ import annotations

import random
import struct
from binascii import crc_hqx
from collections import Counter
from collections.abc import Callable

from firmware_bridge.protocol import (
    CARD_UNREADABLE,
    MAX_ID_TEXT,
    MAX_PAYLOAD,
    MAX_TEXT,
    PROTOCOL_VERSION,
    Ack,
    ButtonId,
    ButtonPress,
    Capability,
    CardRead,
    CoverCard,
    Deliver,
    DeliverTarget,
    DeviceEvent,
    DeviceMode,
    DeviceState,
    Display,
    Door,
    EventAck,
    Fault,
    GateLock,
    GateUnlock,
    Heartbeat,
    HeartbeatReply,
    Hello,
    Identity,
    Jam,
    JamLocation,
    Message,
    Nak,
    NakCode,
    ResendEvents,
    Reset,
    ResetKind,
    SetMode,
    ShoeEmpty,
    ShoeLoaded,
    Shuffle,
    ShuffleDone,
    ShuffleProgress,
    StatusReply,
    StatusRequest,
    Sync,
    cobs_encode,
)

KINDS = (("random", 20), ("frames", 22), ("mutated", 55), ("gaps", 3))
MAX_FRAMES = 4  # frames per input (before duplication); the soak's stream supplies the depth

_HEADER = struct.Struct("<BBBBH")
_TEXTS = ("", "DRAW BANKER", "PLACE YOUR BETS", "é", "€uro", "\U0001d11e", "\u200b\ufeff",
          "a\x00b", "\ufffd")

# A few capability sets: every distinct value makes the enum cache one more flag combination,
# which would put the generator's own allocations into the soak's memory figures.
_CAPABILITIES = (0, 0x1, 0x7, 0x1F, 0xFF, 0xFFFF)

Build = Callable[[random.Random, int], Message]


def _text(rng: random.Random, limit: int) -> str:
    """An edge-case text of at most ``limit`` UTF-8 bytes."""
    if rng.random() < 0.2:
        return "x" * limit if rng.random() < 0.5 else "\u00e9" * (limit // 2)
    text = rng.choice(_TEXTS)
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def _u32(rng: random.Random) -> int:
    return rng.choice((0, 1, 0xFFFF_FFFF, rng.getrandbits(32), rng.randrange(64)))


def _card(rng: random.Random, counter: int) -> CardRead:
    if rng.random() < 0.1:
        rank = suit = CARD_UNREADABLE
    else:
        rank, suit = rng.randint(1, 13), rng.randrange(4)
    return CardRead(rank, suit, rng.random() < 0.1, rng.randrange(1, 417), _u32(rng), counter)


# Every message type with fields drawn at random; events take the counter they are given.
COMMANDS: tuple[Callable[[random.Random], Message], ...] = (
    lambda r: Sync(), lambda r: Sync(), lambda r: Hello(r.choice((0, 1, 2, 255))),
    lambda r: Heartbeat(r.choice((0, _u32(r)))), lambda r: Reset(r.choice(list(ResetKind))),
    lambda r: StatusRequest(), lambda r: Shuffle(r.randint(1, 255)),
    lambda r: Deliver(r.choice(list(DeliverTarget))), lambda r: GateLock(), lambda r: GateUnlock(),
    lambda r: Display(_text(r, MAX_TEXT)), lambda r: SetMode(r.choice(list(DeviceMode))),
    lambda r: EventAck(r.choice((0, 1, r.randrange(8), _u32(r)))), lambda r: ResendEvents(),
)
REPLIES: tuple[Callable[[random.Random], Message], ...] = (
    lambda r: Ack(), lambda r: Ack(r.randbytes(r.randrange(MAX_PAYLOAD + 1))),
    lambda r: Nak(r.choice(list(NakCode)), _text(r, MAX_TEXT)),
    lambda r: Identity(PROTOCOL_VERSION, Capability(r.choice(_CAPABILITIES)), 8,
                       r.choice((1, 2, _u32(r))), _text(r, MAX_ID_TEXT), _text(r, MAX_ID_TEXT),
                       _text(r, MAX_ID_TEXT)),
    lambda r: HeartbeatReply(0, _u32(r), r.choice((0, r.randrange(16), _u32(r)))),
    lambda r: StatusReply(r.choice(list(DeviceState)), r.choice(list(DeviceMode)), r.random() < .5,
                          r.random() < .5, r.random() < .5, r.randrange(417), r.randrange(9), _u32(r)),
)
EVENTS: tuple[Build, ...] = (
    _card, _card, _card, lambda r, c: CoverCard(r.randrange(417), c),
    lambda r, c: ButtonPress(r.choice(list(ButtonId)), c),
    lambda r, c: ShuffleProgress(r.randint(0, 100), c),
    lambda r, c: ShuffleDone(r.randrange(417), 416, c), lambda r, c: ShoeLoaded(r.randrange(417), c),
    lambda r, c: ShoeEmpty(c), lambda r, c: Door(r.random() < 0.5, c),
    lambda r, c: Jam(r.choice(list(JamLocation)), c),
    lambda r, c: Fault(r.getrandbits(16), _text(r, MAX_TEXT), c),
)


def raw_frame(msg_type: int, seq: int, payload: bytes, flags: int = 0,
              version: int = PROTOCOL_VERSION, length: int | None = None) -> bytes:
    """Wire bytes of a frame with a valid CRC and any header, even one the encoder refuses."""
    size = len(payload) if length is None else length
    body = _HEADER.pack(version, msg_type, seq, flags, size & 0xFFFF) + payload
    return cobs_encode(body + struct.pack(">H", crc_hqx(body, 0xFFFF))) + b"\x00"


Header = tuple[int, int, bytes, int]  # raw_frame's msg_type, seq, payload, flags


def _frame(message: Message, seq: int, flags: int = 0) -> Header:
    return (message.TYPE, seq, message.encode_payload(), flags)


class ProtocolInputs:
    """An endless, seeded stream of adversarial inputs (see the module docstring)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self._kinds = [name for name, weight in KINDS for _ in range(weight)]
        self._counter = 0  # a running event counter, so counters look like a real device's
        self.counts: Counter[str] = Counter()  # inputs drawn, by kind

    def next(self) -> bytes:
        """The next input: one piece-size byte, then the bytes to feed."""
        rng = self.rng
        kind = rng.choice(self._kinds)
        self.counts[kind] += 1
        split = rng.random()  # byte at a time (costly, so rare), small pieces, whole reads
        piece = 0 if split < 0.01 else rng.choice((3, 15, 63)) if split < 0.08 else rng.choice((255, rng.randrange(256)))
        if kind == "random":
            body = self._random_bytes()
        elif kind == "gaps":
            body = b"".join(raw_frame(*f) for f in self._gap_flood())
        else:
            frames = self._frames()
            body = (self._mutate(frames) if kind == "mutated"
                    else b"".join(raw_frame(*f) for f in frames))
        return bytes((piece,)) + body

    # --- valid content ---------------------------------------------------------------------------

    def _event(self) -> Message:
        rng = self.rng
        step = rng.choice((1, 1, 1, 1, 0, 2, -3))
        self._counter = min(max(1, self._counter + step), 0xFFFF_FFFF) if rng.random() < 0.99 else _u32(rng)
        if rng.random() < 0.01:
            self._counter = 0
        return rng.choice(EVENTS)(rng, self._counter)

    def _frames(self) -> list[Header]:
        """Valid frames: to the device, to the host, or both; sequence numbers mostly 0..7 so
        replies meet the host's pending command."""
        rng = self.rng
        audience = rng.random()
        out = []
        seq = rng.randrange(8) if rng.random() < 0.9 else rng.randrange(256)
        for _ in range(rng.randint(1, MAX_FRAMES)):
            pick = rng.random()
            if (audience < 0.45 and pick < 0.9) or (audience >= 0.9 and pick < 0.5):
                message = rng.choice(COMMANDS)(rng)
            elif pick < 0.5:
                message = rng.choice(REPLIES)(rng)
            else:
                message = self._event()
            if isinstance(message, DeviceEvent):
                out.append(_frame(message, message.counter & 0xFF, rng.choice((0, 0, 1))))  # type: ignore[attr-defined]
            else:
                out.append(_frame(message, seq, rng.choice((0, 0, 0, 1, 0xFE))))
                seq = (seq + rng.choice((1, 1, 1, 0, 2))) & 0xFF
        return out

    def _gap_flood(self) -> list[Header]:
        rng = self.rng
        start = rng.choice((1, 2, self._counter + 2, self._counter + 1000, _u32(rng) or 1))
        step = rng.choice((2, 2, 3, 1000, -1))
        counters = [start + i * step for i in range(rng.randint(8, 40))]
        return [_frame(ShoeLoaded(52, c), c & 0xFF) for c in counters if 0 < c <= 0xFFFF_FFFF]

    def _random_bytes(self) -> bytes:
        rng = self.rng
        data = bytearray(rng.randbytes(rng.choice((0, 1, 8, 16, 30, 60, 100, 300))))
        for _ in range(rng.randrange(4)):
            if data:
                data[rng.randrange(len(data))] = 0
        return bytes(data)

    # --- damage ----------------------------------------------------------------------------------

    def _mutate(self, frames: list[Header]) -> bytes:
        rng = self.rng
        wires = []
        for msg_type, seq, payload, flags in frames:
            if rng.random() < 0.5:
                wires.append(self._mutate_under_crc(msg_type, seq, flags, payload))
            else:
                wires.append(raw_frame(msg_type, seq, payload, flags))
        for _ in range(rng.randint(1, 3)):
            self._damage_stream(wires)
        return b"".join(wires)

    def _mutate_under_crc(self, msg_type: int, seq: int, flags: int, payload: bytes) -> bytes:
        """A changed frame that still passes the CRC: it reaches the message layer."""
        rng = self.rng
        data = bytearray(payload)
        choice = rng.randrange(9)
        if choice == 0 and data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif choice == 1 and data:
            data[rng.randrange(len(data))] = rng.choice((0, 0xFF, 0x80, 0x7F, rng.randrange(256)))
        elif choice == 2:
            del data[rng.randrange(len(data) + 1):]
        elif choice == 3:
            data += rng.randbytes(rng.randint(1, 8))
        elif choice == 4:
            msg_type = rng.randrange(256)
        elif choice == 5:
            flags = rng.randrange(256)
        elif choice == 6:
            return raw_frame(msg_type, seq, bytes(data), flags, version=rng.choice((0, 2, 255)))
        elif choice == 7:
            return raw_frame(msg_type, seq, bytes(data), flags, length=rng.randrange(0x1_0000))
        else:
            data = bytearray(rng.randbytes(rng.choice((MAX_PAYLOAD + 1, 300, rng.randrange(64)))))
        return raw_frame(msg_type, seq, bytes(data), flags)

    def _damage_stream(self, wires: list[bytes]) -> None:
        """Damage the frame sequence in place: wire-level faults a line or a peer produce."""
        rng = self.rng
        i = rng.randrange(len(wires))
        wire = wires[i]
        if len(wire) < 2:
            return
        action = rng.randrange(8)
        if action == 0:  # bit flip anywhere (CRC, COBS or delimiter)
            flipped = bytearray(wire)
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
            wires[i] = bytes(flipped)
        elif action == 1:  # truncated: the rest merges with the next frame
            wires[i] = wire[:rng.randrange(1, len(wire))]
        elif action == 2:  # duplicated
            wires.insert(i, wire)
        elif action == 3:  # reordered
            j = rng.randrange(len(wires))
            wires[i], wires[j] = wires[j], wires[i]
        elif action == 4 and len(wires) > 1:  # lost
            del wires[i]
        elif action == 5:  # noise before a frame
            wires.insert(i, rng.randbytes(rng.choice((1, 3, 20, 300))))
        elif action == 6:  # stray delimiter inside a frame
            cut = rng.randrange(len(wire))
            wires[i] = wire[:cut] + b"\x00" + wire[cut:]
        else:  # missing delimiter: two frames run together
            wires[i] = wire[:-1]
