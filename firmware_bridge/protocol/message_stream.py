"""Bytes -> typed messages in one pass: the receiving half of the codec, for the host.

``MessageDecoder`` is a ``FrameDecoder`` followed by ``decode_message``, with the same results
item for item (a property test compares the two on random streams, damaged ones included), and
one hand-written path for the frame that dominates a shoe's traffic, CARD_READ: COBS, CRC, header
and payload checked in one pass over the chunk, the ``CardRead`` built without the generic codec.
Any chunk the fast path does not accept in full goes through the generic path from its original
bytes, so the fast path never decides anything the generic one would decide differently.

Items, in wire order:

- ``Decoded(message, msg_type, seq, flags)``: a frame and its typed message;
- ``Dropped``: bytes the frame layer discarded (docs/protocol.md 3.4);
- a ``RemoteProtocolError`` (``UnknownMessageTypeError`` / ``MalformedPayloadError``, ``seq``
  and ``msg_type`` set): a CRC-valid frame that does not decode. It is handed back, not raised,
  so that one bad frame does not stop a batch; ``HostConnection`` raises it in its turn.
"""
from __future__ import annotations

from binascii import crc_hqx
from collections import deque
from struct import Struct
from typing import NamedTuple

from .device_events import VALID_CARD, CardRead, CardReadUnderConstruction
from .errors import RemoteProtocolError
from .framing import CRC_INIT_BEFORE_ZERO, Dropped, Frame, FrameDecoder, parse_chunk
from .messages import decode_message

__all__ = ["Decoded", "MessageDecoder"]


class Decoded(NamedTuple):
    """A frame's header fields and its typed message."""

    message: object
    msg_type: int
    seq: int
    flags: int


Item = Decoded | Dropped | RemoteProtocolError

# A CARD_READ body is 21 bytes (header 6, payload 13, CRC 2); with no 0xFF block possible its
# COBS encoding is always 22 bytes. Read from the chunk decoded in place (offset 1, after the
# zeroed first code byte): version and type as one u16, seq, flags, length, then the payload.
_CARD_ENCODED = 22
_CARD_FRAME = Struct("<HBBHIBBBHI")
_CARD_VERSION_TYPE = 0x80 << 8 | 1
_CARD_PAYLOAD = 13
_CARD_TYPE = 0x80

_new_tuple = tuple.__new__
_new_object = object.__new__


def _as_received(chunk: bytearray, last_code: int) -> bytearray:
    """A chunk the fast path decoded in place, put back as it was received: its zeros are exactly
    the code bytes it visited (a chunk has no 0x00 of its own), each the distance to the next;
    ``last_code`` is the code byte read last."""
    zeros = [j for j, byte in enumerate(chunk) if not byte]
    for here, following in zip(zeros, zeros[1:]):
        chunk[here] = following - here
    chunk[zeros[-1]] = last_code
    return chunk


def _decode_frames(items: list[Frame | Dropped], out: list[Item]) -> None:
    """The generic path: each frame through ``decode_message``."""
    for item in items:
        if type(item) is Frame:
            try:
                message = decode_message(item)
            except RemoteProtocolError as exc:
                out.append(exc)
                continue
            out.append(_new_tuple(Decoded, (message, item.msg_type, item.seq, item.flags)))
        else:
            out.append(item)


class MessageDecoder:
    """Feed bytes with ``receive_data``; take items with ``next_item`` (one) or ``take_items``
    (every complete one). Never raises on input bytes."""

    __slots__ = ("_frames", "_ready")

    def __init__(self) -> None:
        self._frames = FrameDecoder()
        self._ready: deque[Item] = deque()

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Append received bytes (any amount, any split)."""
        self._frames.receive_data(data)

    @property
    def buffered(self) -> int:
        """Bytes received but not yet terminated by a delimiter."""
        return self._frames.buffered

    def reset(self) -> Dropped | None:
        """Discard any partial frame and everything not yet taken; report the bytes discarded."""
        self._ready.clear()
        return self._frames.reset()

    def next_item(self) -> Item | None:
        """The next item, or ``None`` when more bytes are needed."""
        ready = self._ready
        if not ready:
            if not self._frames.has_chunks():  # the common end of a read: nothing more is complete
                return None
            ready.extend(self.take_items())
            if not ready:
                return None
        return ready.popleft()

    def take_items(self) -> list[Item]:
        """Every item complete so far, in order (after those ``next_item`` still holds)."""
        out: list[Item] = list(self._ready)
        self._ready.clear()
        append = out.append
        for chunk in self._frames.take_chunks():
            if type(chunk) is not bytearray:
                append(chunk)  # type: ignore[arg-type]  # rule 4's report
                continue
            n = len(chunk)
            if n == _CARD_ENCODED:
                # The CARD_READ path. COBS in place: each code byte (< 0xFF in a chunk this short)
                # becomes the 0x00 it stands for and points at the next one.
                body = chunk
                i = code = 0
                while i < n:
                    code = body[i]
                    body[i] = 0
                    i += code
                if i == n and not crc_hqx(body, CRC_INIT_BEFORE_ZERO):
                    (version_type, seq, flags, length, counter, rank, suit, card_flags, position,
                     timestamp) = _CARD_FRAME.unpack_from(body, 1)
                    if (version_type == _CARD_VERSION_TYPE and length == _CARD_PAYLOAD
                            and VALID_CARD[rank << 8 | suit]):
                        # Every field is checked (the Struct bounds the rest): the slots are
                        # filled directly, then the card is frozen as a CardRead.
                        card = _new_object(CardReadUnderConstruction)
                        card.rank = rank
                        card.suit = suit
                        card.face_up = card_flags & 1 == 1
                        card.position = position
                        card.timestamp_ms = timestamp
                        card.counter = counter
                        card.__class__ = CardRead
                        append(_new_tuple(Decoded, (card, _CARD_TYPE, seq, flags)))
                        continue
                chunk = _as_received(body, code)
            if n:  # an empty chunk is idle fill
                _decode_frames(parse_chunk(chunk), out)
        return out
