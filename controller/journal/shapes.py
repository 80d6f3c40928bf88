"""Knowing that a payload text is canonical JSON without decoding it: the chain check's fast path
(``chaincheck.ChainCheck.feed_rows``).

The reference test, ``canonical_json(decode_payload_strict(text)) == text``, decodes and encodes
every payload again: most of the time a verification spends on an entry. A journal's payloads come
in few *shapes*, so ``PayloadShapes`` remembers the shapes of payloads the reference test found
canonical, and tells a payload of a known shape canonical by looking at a few of its bytes:

- the *digit shape*: the UTF-8 bytes with every digit made ``0``. Payloads that differ only in
  their numbers (a card read's rank, position and timestamp) share one;
- the *letter shape*: every digit and capital letter made ``0``. Payloads that also differ in
  card codes (``"7H"``, ``"AS"``: a round's result, its discard rack) share one. A shape is
  remembered on its second sighting: one seen once is most likely never seen again.

Why that gives the reference test's answer: a shape is remembered only when each byte it blurs
(a digit; a digit or capital) is either in an integer or a plain character of a string value —
never in an object key (other characters there could unsort or duplicate the keys) and never in
a ``\\u`` escape (they could make an escape canonical JSON does not use). Outside strings,
canonical JSON holds such bytes only in integers (``true``, ``false`` and ``null`` are lower case,
and there are no exponents). A text of the same shape has the blurred bytes in the same places and
every other byte equal, so it reads as the same tokens: the same keys in the same order, string
values with other characters (still canonical: digits and capitals are never escaped), and in the
integers' places, other bytes — which make canonical integers when they are all digits (a letter
shape's check) and none of more than one digit starts with ``0``, nor a negative one is ``-0`` (the
``lead`` bytes must not be ``0``). Anything else goes to the reference test.
"""
from __future__ import annotations

import operator
import re
from collections.abc import Callable

from controller.journal.chain import canonical_json, decode_payload_strict

DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"0" * 9)  # ``data.translate(DIGITS_AS_ZERO)``: its digit shape
_BLURRED_DIGITS = b"0123456789"
_BLURRED_LETTERS = _BLURRED_DIGITS + b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_LETTERS_AS_ZERO = bytes.maketrans(_BLURRED_LETTERS[1:], b"0" * (len(_BLURRED_LETTERS) - 1))
# In canonical JSON, outside strings only integers hold digits or a minus sign.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|(-?)([0-9]+)', re.DOTALL)
ZERO = ord("0")
UNKNOWN = object()
MAX_SHAPES = 4096  # of each kind; beyond it, payloads of new shapes take the reference test every time

LeadDigits = Callable[[bytes], tuple[int, ...]]
Canonical = Callable[[bytes], bool]


def is_canonical_reference(text: str) -> bool:
    """The reference test: ``text`` is the canonical JSON of what it decodes to, without floats."""
    try:
        return canonical_json(decode_payload_strict(text)) == text
    except (ValueError, RecursionError):  # PayloadError is a ValueError
        return False


class PayloadShapes:
    """The shapes of canonical payloads seen so far (see the module docstring).

    ``is_canonical(text, data)`` answers; a caller in a hot loop may look a digit shape up itself:
    ``known.get(data.translate(DIGITS_AS_ZERO), UNKNOWN)`` is None when every text of that shape is
    canonical, a function of ``data`` giving the bytes that must not be ``ZERO``, or ``UNKNOWN``
    (then ask ``is_canonical``)."""

    __slots__ = ("known", "_by_letters", "_sightings")

    def __init__(self) -> None:
        self.known: dict[bytes, LeadDigits | None] = {}
        self._by_letters: dict[bytes, Canonical] = {}
        self._sightings: set[bytes] = set()  # canonical shapes seen once

    def is_canonical(self, text: str, data: bytes) -> bool:
        """Whether ``text`` (whose UTF-8 is ``data``) is canonical JSON: what
        ``is_canonical_reference(text)`` says."""
        shape = data.translate(DIGITS_AS_ZERO)
        lead = self.known.get(shape, UNKNOWN)
        if lead is None:
            return True
        if lead is not UNKNOWN:
            return ZERO not in lead(data)  # type: ignore[operator]
        letter_shape = data.translate(_LETTERS_AS_ZERO)
        canonical = self._by_letters.get(letter_shape)
        if canonical is not None:
            return canonical(data)
        if not is_canonical_reference(text):
            return False
        if self._second_sighting(shape) and len(self.known) < MAX_SHAPES:
            found = _integers(data, _BLURRED_DIGITS)
            if found is not None:
                # itemgetter of one index returns the item, not a tuple: ask for it twice.
                self.known[shape] = operator.itemgetter(*found[0], found[0][0]) if found[0] else None
        if self._second_sighting(b"L" + letter_shape) and len(self._by_letters) < MAX_SHAPES:
            found = _integers(data, _BLURRED_LETTERS)
            if found is not None:
                self._by_letters[letter_shape] = _integers_check(*found)
        return True

    def _second_sighting(self, shape: bytes) -> bool:
        if shape in self._sightings:
            return True
        if len(self._sightings) >= 2 * MAX_SHAPES:
            self._sightings.clear()
        self._sightings.add(shape)
        return False


def _integers(data: bytes, blurred: bytes) -> tuple[list[int], list[int]] | None:
    """In the canonical ``data``: where the first digit of each integer of more than one digit, or
    negative, is, and where every digit of its integers is; None when a ``blurred`` byte is in a
    key or in a string with a ``\\u`` escape (no shape to remember)."""
    leads, digits = [], []
    for m in _TOKEN.finditer(data):
        number = m.group(2)
        if number is None:  # a string
            text = m.group(0)
            if text.translate(None, blurred) != text and (data[m.end():m.end() + 1] == b":" or b"\\u" in text):
                return None
        else:
            start = m.start(2)
            if m.group(1) or len(number) > 1:
                leads.append(start)
            digits.extend(range(start, start + len(number)))
    return leads, digits


def _integers_check(leads: list[int], digits: list[int]) -> Canonical:
    """Whether a text of a letter shape has canonical integers where its first text had them."""
    if not digits:
        return lambda data: True
    count = len(leads)
    pick = operator.itemgetter(*leads, *digits, digits[0])  # always a tuple (see above)

    def canonical(data: bytes) -> bool:
        picked = bytes(pick(data))
        return picked.isdigit() and ZERO not in picked[:count]
    return canonical
