"""Knowing that a payload text is canonical JSON without decoding it: the chain check's fast path
(``chaincheck.ChainCheck.feed_rows``).

The reference test, ``canonical_json(decode_payload_strict(text)) == text``, decodes and encodes
every payload again: most of the time a verification spends on an entry. A journal's payloads come
in few *shapes* that differ only in their digits (a card read's rank, position and timestamp), so
``PayloadShapes`` remembers the shape of each payload the reference test found canonical — its UTF-8
bytes with every digit made ``0`` — and tells a payload of a known shape canonical by looking at
the first digit of its number tokens only.

Why that gives the reference test's answer: a shape is remembered only when every digit of its
text is either in a number token or a plain character of a string value — never in an object key
(other digits there could unsort or duplicate the keys) and never in a ``\\u`` escape (other digits
there could make an escape that canonical JSON does not use). A text of the same shape has digits
in the same places and every other byte equal, so it reads as the same tokens: the same keys in
the same order, string values with other digits (still canonical: digits are never escaped), and
integers with other digits, which are canonical unless one of more than one digit starts with
``0``, or a negative one is ``-0``: the bytes the remembered ``lead`` picks out must not be ``0``.
Anything else (an unknown shape, a leading zero) goes to the reference test.
"""
from __future__ import annotations

import operator
import re
from collections.abc import Callable

from controller.journal.chain import canonical_json, decode_payload_strict

DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")  # ``data.translate(DIGITS_AS_ZERO)``: its shape
# In canonical JSON, outside strings only integers hold digits or a minus sign.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|(-?)([0-9]+)', re.DOTALL)
ZERO = ord("0")
UNKNOWN = object()
MAX_SHAPES = 4096  # beyond it, payloads of new shapes take the reference test every time

LeadDigits = Callable[[bytes], tuple[int, ...]]


def is_canonical_reference(text: str) -> bool:
    """The reference test: ``text`` is the canonical JSON of what it decodes to, without floats."""
    try:
        return canonical_json(decode_payload_strict(text)) == text
    except (ValueError, RecursionError):  # PayloadError is a ValueError
        return False


class PayloadShapes:
    """The shapes of canonical payloads seen so far (see the module docstring).

    ``is_canonical(text, data)`` answers; a caller in a hot loop may look a shape up itself:
    ``known.get(data.translate(DIGITS_AS_ZERO), UNKNOWN)`` is None when every text of that shape is
    canonical, a function of ``data`` giving the bytes that must not be ``ZERO``, or ``UNKNOWN``
    (then ask ``is_canonical``, which learns it)."""

    __slots__ = ("known",)

    def __init__(self) -> None:
        self.known: dict[bytes, LeadDigits | None] = {}

    def is_canonical(self, text: str, data: bytes) -> bool:
        """Whether ``text`` (whose UTF-8 is ``data``) is canonical JSON: what
        ``is_canonical_reference(text)`` says."""
        shape = data.translate(DIGITS_AS_ZERO)
        lead = self.known.get(shape, UNKNOWN)
        if lead is None:
            return True
        if lead is UNKNOWN:
            return self._learn(text, data, shape)
        return ZERO not in lead(data)  # type: ignore[operator]

    def _learn(self, text: str, data: bytes, shape: bytes) -> bool:
        if not is_canonical_reference(text):
            return False
        if len(self.known) < MAX_SHAPES:
            positions = _lead_positions(data)
            if positions is not None:
                # itemgetter of one index returns the item, not a tuple: ask for it twice.
                self.known[shape] = operator.itemgetter(*positions, positions[0]) if positions else None
        return True


def _lead_positions(data: bytes) -> list[int] | None:
    """Where the first digit of each integer of more than one digit, or negative, is in the
    canonical ``data``; None when a digit is in a key or a ``\\u`` escape (no shape to remember)."""
    positions = []
    for m in _TOKEN.finditer(data):
        digits = m.group(2)
        if digits is None:  # a string
            text = m.group(0)
            if any(48 <= b <= 57 for b in text) and (data[m.end():m.end() + 1] == b":" or b"\\u" in text):
                return None
        elif m.group(1) or len(digits) > 1:
            positions.append(m.start(2))
    return positions
