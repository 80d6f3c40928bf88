"""The frame layer: bytes on the wire <-> ``Frame`` objects, with resynchronisation.

Frame layout (all multi-byte header fields little-endian; the CRC big-endian, see below)::

    wire   = COBS(body) 0x00
    body   = header payload crc
    header = version:u8  type:u8  seq:u8  flags:u8  length:u16le       (6 bytes)
    crc    = CRC-16/CCITT-FALSE(header payload), sent high byte first  (2 bytes)

- ``version`` is ``PROTOCOL_VERSION`` (1). ``length`` is the payload length, 0..``MAX_PAYLOAD``
  (256); it must equal the decoded body length minus 8.
- ``flags`` bit 0 is ``FLAG_RETRANSMISSION`` (informational: a retransmitted command, a replayed
  reply, a resent event). Other bits are reserved: send 0, ignore on receipt.
- CRC-16/CCITT-FALSE: poly 0x1021, init 0xFFFF, no reflection, no final XOR (check value
  ``crc16(b"123456789") == 0x29B1``); it is ``binascii.crc_hqx(data, 0xFFFF)``. Sending it high byte
  first gives the residue property: the CRC of a whole valid body (crc included) is 0, which is
  what the decoder checks.
- COBS (Consistent Overhead Byte Stuffing) removes every 0x00 from the body, so 0x00 only ever
  appears as the frame delimiter. Encoding is canonical: a 0xFF block at the very end is not
  followed by an empty 0x01 block (decoders accept both). A body of at most ``MAX_FRAME`` (264)
  bytes encodes to at most ``MAX_ENCODED`` (266) bytes plus the delimiter.

Resync rules (``FrameDecoder``); the decoder never raises on input bytes:

1. Bytes are split at every 0x00. Empty frames (consecutive 0x00) are idle fill and ignored, so a
   sender may send 0x00 at any time, e.g. one after opening a port to flush the receiver.
2. Each chunk is COBS-decoded and checked in this order: COBS structure (``BAD_COBS``), at least
   8 bytes (``TOO_SHORT``), CRC (``BAD_CRC``), version (``BAD_VERSION``), length field
   (``BAD_LENGTH``), length <= ``MAX_PAYLOAD`` (``OVERSIZE``). A failure is reported as one
   ``Dropped(reason, nbytes)`` covering the whole chunk; after a CRC-valid failure ``seq`` and
   ``msg_type`` are filled in (the peer really sent it, so a device can NAK it).
3. Recovery: noise just before a frame (with no 0x00 after it) merges with that frame's chunk.
   When a chunk fails before the CRC check (BAD_COBS, TOO_SHORT, BAD_CRC) or is longer than
   ``MAX_ENCODED``, the decoder looks for a valid frame that is a suffix of the chunk (candidate
   starts are the bytes followed by the version byte 0x01, leftmost first, within the last
   ``MAX_ENCODED`` bytes). If one is found, the bytes before it are reported as
   ``Dropped(GARBAGE or OVERSIZE, n)`` and the frame is returned intact.
4. A run of more than 2 x ``MAX_ENCODED`` bytes without 0x00 is trimmed to its last
   ``MAX_ENCODED`` bytes and the trimmed bytes reported as ``Dropped(OVERSIZE, n)``, so memory is
   bounded and a frame at the end of a long run of noise is still found.

Byte accounting: every input byte ends up in exactly one of: a returned frame's chunk, a
``Dropped.nbytes``, a delimiter, or the ``buffered`` tail not yet terminated.
"""
from __future__ import annotations

import enum
import struct
from binascii import crc_hqx
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from .errors import InvalidMessageError

__all__ = [
    "CRC_INIT",
    "DELIMITER",
    "FLAG_RETRANSMISSION",
    "HEADER",
    "MAX_ENCODED",
    "MAX_FRAME",
    "MAX_PAYLOAD",
    "PROTOCOL_VERSION",
    "DropReason",
    "Dropped",
    "Frame",
    "FrameDecoder",
    "cobs_decode",
    "cobs_encode",
    "crc16",
    "encode_frame",
    "parse_chunk",
    "parse_frame",
]

PROTOCOL_VERSION = 1
HEADER = struct.Struct("<BBBBH")
HEADER_SIZE = HEADER.size  # 6
CRC_SIZE = 2
MIN_FRAME = HEADER_SIZE + CRC_SIZE  # 8
MAX_PAYLOAD = 256
MAX_FRAME = HEADER_SIZE + MAX_PAYLOAD + CRC_SIZE  # 264: largest decoded body
MAX_ENCODED = MAX_FRAME + -(-MAX_FRAME // 254)  # 266: largest COBS encoding, delimiter excluded
DELIMITER = b"\x00"
CRC_INIT = 0xFFFF
# The CRC register that becomes CRC_INIT after one 0x00 byte: a COBS chunk decoded in place
# keeps its first code byte, zeroed, in front of the body, and crc_hqx(chunk, this) is the
# body's CRC without slicing it off (a test checks the constant).
CRC_INIT_BEFORE_ZERO = 0x1E0C
FLAG_RETRANSMISSION = 0x01

_CRC = struct.Struct(">H")
_VERSION_BYTE = bytes((PROTOCOL_VERSION,))
_BLOCK_PREFIX = tuple(bytes((n + 1,)) for n in range(254))  # COBS code byte for a block of n bytes


class DropReason(enum.Enum):
    """Why bytes were discarded by the frame decoder."""

    GARBAGE = "garbage"          # bytes before a recovered frame in the same chunk
    BAD_COBS = "bad_cobs"        # chunk is not a valid COBS encoding
    TOO_SHORT = "too_short"      # decoded body shorter than header + CRC
    BAD_CRC = "bad_crc"          # CRC mismatch
    BAD_VERSION = "bad_version"  # CRC-valid, but the version byte is not PROTOCOL_VERSION
    BAD_LENGTH = "bad_length"    # CRC-valid, but the length field disagrees with the body
    OVERSIZE = "oversize"        # longer than the maximum frame
    RESET = "reset"              # partial frame discarded by FrameDecoder.reset()


class Frame(NamedTuple):
    """One valid frame: header fields and the raw payload (version is always PROTOCOL_VERSION).

    A NamedTuple rather than a dataclass: it is built once per received frame on the hot path.
    """

    msg_type: int
    seq: int
    flags: int
    payload: bytes


_new_frame = tuple.__new__  # skips NamedTuple's Python-level __new__ (about half the cost)


@dataclass(frozen=True, slots=True)
class Dropped:
    """Bytes the decoder discarded.

    ``nbytes`` counts the discarded bytes, excluding the 0x00 delimiter. ``seq`` and ``msg_type``
    are set only when the frame passed its CRC (BAD_VERSION, BAD_LENGTH, OVERSIZE of a CRC-valid
    frame): the peer really sent it and may be told so.
    """

    reason: DropReason
    nbytes: int
    seq: int | None = None
    msg_type: int | None = None


def crc16(data: bytes | bytearray | memoryview, crc: int = CRC_INIT) -> int:
    """CRC-16/CCITT-FALSE of ``data`` (poly 0x1021, init 0xFFFF); ``crc16(b"123456789") == 0x29B1``."""
    return crc_hqx(data, crc)


def cobs_encode(data: bytes | bytearray) -> bytes:
    """COBS-encode ``data`` (canonical form). The result contains no 0x00 and no delimiter."""
    chunks = bytes(data).split(b"\x00")
    if len(data) < 254:  # no block can reach 254 bytes: one code byte per zero-delimited chunk
        return b"".join([_BLOCK_PREFIX[len(c)] + c for c in chunks])
    out = bytearray()
    last = len(chunks) - 1
    for k, chunk in enumerate(chunks):
        while len(chunk) >= 254:
            out.append(0xFF)
            out += chunk[:254]
            chunk = chunk[254:]
            if not chunk and k == last:
                return bytes(out)
        out += _BLOCK_PREFIX[len(chunk)]
        out += chunk
    return bytes(out)


def _cobs_decode_blocks(enc: bytes | bytearray) -> bytearray | None:
    """General COBS decoder (any block codes); ``None`` if the structure is invalid."""
    n = len(enc)
    out = bytearray()
    i = 0
    while i < n:
        code = enc[i]
        j = i + code
        if code == 0 or j > n:
            return None
        out += enc[i + 1:j]
        if code != 0xFF and j < n:
            out.append(0)
        i = j
    return out


def cobs_decode(data: bytes | bytearray) -> bytes:
    """Decode one COBS-encoded frame (without its delimiter).

    Raises:
        ValueError: ``data`` is empty, contains 0x00, or its block structure is inconsistent.
    """
    if not data or 0 in data:
        raise ValueError("COBS data must be non-empty and free of 0x00")
    out = _cobs_decode_blocks(data)
    if out is None:
        raise ValueError("invalid COBS block structure")
    return bytes(out)


def encode_frame(msg_type: int, seq: int, payload: bytes = b"", flags: int = 0) -> bytes:
    """Build the wire bytes of one frame: ``COBS(header payload crc) 0x00``.

    Raises:
        InvalidMessageError: a header field is out of u8 range or the payload exceeds MAX_PAYLOAD.
    """
    n = len(payload)
    if n > MAX_PAYLOAD:
        raise InvalidMessageError(f"payload of {n} bytes exceeds MAX_PAYLOAD ({MAX_PAYLOAD})")
    try:
        body = HEADER.pack(PROTOCOL_VERSION, msg_type, seq, flags, n) + payload
    except struct.error as exc:
        raise InvalidMessageError(f"bad frame header field: {exc}") from None
    return cobs_encode(body + _CRC.pack(crc_hqx(body, CRC_INIT))) + DELIMITER


def _check_body(body: bytearray | bytes, nbytes: int) -> Frame | Dropped:
    """Validate a COBS-decoded body (steps 2-6 of the resync rules)."""
    size = len(body)
    if size < MIN_FRAME:
        return Dropped(DropReason.TOO_SHORT, nbytes)
    if crc_hqx(body, CRC_INIT):
        return Dropped(DropReason.BAD_CRC, nbytes)
    version, msg_type, seq, flags, length = HEADER.unpack_from(body)
    if version != PROTOCOL_VERSION:
        return Dropped(DropReason.BAD_VERSION, nbytes, seq, msg_type)
    if length != size - MIN_FRAME:
        return Dropped(DropReason.BAD_LENGTH, nbytes, seq, msg_type)
    if length > MAX_PAYLOAD:
        return Dropped(DropReason.OVERSIZE, nbytes, seq, msg_type)
    return _new_frame(Frame, (msg_type, seq, flags, bytes(body[HEADER_SIZE:-CRC_SIZE])))


def _parse_owned(chunk: bytearray) -> Frame | Dropped:
    """Parse one delimiter-free chunk that the caller gives away (it is decoded in place)."""
    n = len(chunk)
    if n >= 0xFF:  # only a chunk this long can hold a 0xFF code (a run of 254 non-zero bytes)
        body = _cobs_decode_blocks(chunk)
        if body is None:
            return Dropped(DropReason.BAD_COBS, n)
        return _check_body(body, n)
    # Fast COBS decode: each code byte (< 0xFF here) points at the next; the code byte's own
    # position becomes the 0x00 of the decoded data, and the first code byte is removed.
    i = 0
    while i < n:
        code = chunk[i]
        chunk[i] = 0
        i += code
    if i != n:
        return Dropped(DropReason.BAD_COBS, n)
    del chunk[0]
    return _check_body(chunk, n)


def parse_frame(encoded: bytes | bytearray) -> Frame | Dropped:
    """Parse one COBS-encoded frame given *without* its 0x00 delimiter.

    Returns the ``Frame``, or a ``Dropped`` saying why it is not one (never raises). No garbage
    recovery is attempted: that is ``FrameDecoder``'s job.
    """
    if not encoded or 0 in encoded:
        return Dropped(DropReason.BAD_COBS, len(encoded))
    if len(encoded) > MAX_ENCODED:
        return Dropped(DropReason.OVERSIZE, len(encoded))
    return _parse_owned(bytearray(encoded))


def _recover(chunk: bytes) -> tuple[int, Frame] | None:
    """Find the leftmost valid frame that is a proper suffix of ``chunk`` (resync rule 3)."""
    n = len(chunk)
    first = 1 if n <= MAX_ENCODED else n - MAX_ENCODED
    q = chunk.find(_VERSION_BYTE, first + 1)  # q = start + 1: the version byte after the code byte
    while q != -1 and n - q >= MIN_FRAME:
        start = q - 1
        if chunk[start] >= 2:
            result = _parse_owned(bytearray(chunk[start:]))
            if type(result) is Frame:
                return start, result
        q = chunk.find(_VERSION_BYTE, q + 1)
    return None


def parse_chunk(chunk: bytes | bytearray) -> list[Frame | Dropped]:
    """Parse one complete chunk (the bytes between two delimiters, not empty; left unchanged) by
    rules 2 and 3: ``[frame]``, ``[drop]``, or ``[drop of the garbage, frame recovered after it]``."""
    if len(chunk) <= MAX_ENCODED:
        result = _parse_owned(bytearray(chunk))
        if type(result) is Frame or result.seq is not None:
            return [result]
    else:
        result = Dropped(DropReason.OVERSIZE, len(chunk))
    found = _recover(chunk)
    if found is None:
        return [result]
    start, frame = found
    reason = DropReason.OVERSIZE if len(chunk) > MAX_ENCODED else DropReason.GARBAGE
    return [Dropped(reason, start), frame]


class FrameDecoder:
    """Incremental frame decoder: feed bytes with ``receive_data``, pull with ``next_frame``.

    ``next_frame()`` returns a ``Frame``, a ``Dropped`` report, or ``None`` when it needs more data.
    Iterating the decoder yields frames and reports until it needs more data. It never raises on
    any input; see the module docstring for the resync rules.

    Batch use (``MessageDecoder``): ``take_chunks()`` hands over every complete chunk at once, for
    the caller to parse with ``parse_chunk`` (or a faster path of its own giving the same results).
    """

    __slots__ = ("_tail", "_chunks", "_queue")

    def __init__(self) -> None:
        self._tail = bytearray()     # received bytes after the last delimiter
        self._chunks: deque[bytearray | Dropped] = deque()  # complete chunks not parsed yet; rule 4's report last
        self._queue: deque[Frame | Dropped] = deque()   # the frame recovered behind a garbage report

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Append received bytes (any amount, any split)."""
        self._tail += data

    @property
    def buffered(self) -> int:
        """Bytes received but not yet terminated by a delimiter."""
        return len(self._tail)

    def reset(self) -> Dropped | None:
        """Discard any partial frame (e.g. after a reconnect); report it if there was one."""
        pending = len(self._tail) + sum(len(c) + 1 if type(c) is bytearray else c.nbytes  # type: ignore[union-attr]
                                        for c in self._chunks)
        self._tail.clear()
        self._chunks.clear()
        self._queue.clear()
        return Dropped(DropReason.RESET, pending) if pending else None

    def __iter__(self) -> Iterator[Frame | Dropped]:
        while (item := self.next_frame()) is not None:
            yield item

    def next_frame(self) -> Frame | Dropped | None:
        """Return the next frame or drop report, or ``None`` if more data is needed."""
        if self._queue:
            return self._queue.popleft()
        chunks = self._chunks
        while True:
            if not chunks:
                if not self.has_chunks():  # the common end of a read: nothing more is complete
                    return None
                self._split()
                if not chunks:
                    return None
            chunk = chunks.popleft()
            if type(chunk) is not bytearray:
                return chunk  # type: ignore[return-value]  # rule 4's report
            if chunk:  # an empty chunk is idle fill between delimiters
                items = parse_chunk(chunk)
                if len(items) > 1:
                    self._queue.append(items[1])
                return items[0]

    def has_chunks(self) -> bool:
        """True when ``take_chunks`` has something to hand out: a delimiter arrived since it last
        did, or the unterminated tail is long enough for rule 4's report."""
        tail = self._tail
        return bool(self._chunks) or 0 in tail or len(tail) > 2 * MAX_ENCODED

    def take_chunks(self) -> list[bytearray | Dropped]:
        """Every complete chunk not handed out yet, in order and without its delimiter (empty
        ones are idle fill), for the caller to parse (it owns them: a fresh ``bytearray`` each);
        the last item may be rule 4's ``Dropped`` report for the unterminated bytes. Do not mix with ``next_frame`` in the middle of a
        recovered frame (``next_frame`` first returns what it holds)."""
        self._split()
        chunks = list(self._chunks)
        self._chunks.clear()
        return chunks

    def _split(self) -> None:
        """Move the complete chunks from the tail to ``_chunks``; trim the tail by rule 4."""
        tail = self._tail
        end = tail.rfind(0)
        if end >= 0:
            self._chunks.extend(tail[:end].split(b"\x00"))
            del tail[:end + 1]
        if len(tail) > 2 * MAX_ENCODED:
            excess = len(tail) - MAX_ENCODED
            del tail[:excess]
            self._chunks.append(Dropped(DropReason.OVERSIZE, excess))
