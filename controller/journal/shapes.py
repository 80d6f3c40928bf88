"""Knowing that a payload text is canonical JSON without decoding it: the chain check's fast path
(``chaincheck.ChainCheck.feed_rows``).

The reference test, ``canonical_json(decode_payload_strict(text)) == text`` for a text that is a
JSON object (``is_canonical_reference``; every payload the writer stores is one), decodes and encodes
every payload again: most of the time a verification spends on an entry. A journal's payloads come
in few *shapes*, so ``PayloadShapes`` remembers the shapes of payloads the reference test found
canonical, and tells a payload of a known shape canonical by looking at a few of its bytes:

- the *digit shape*: the UTF-8 bytes with every digit made ``0``. Payloads that differ only in
  their numbers (a card read's rank, position and timestamp) share one; it is remembered on its
  third sighting;
- the *run shape*: the bytes between the *runs* (the longest stretches of digits and capital
  letters), each run made one ``0``. Payloads that also differ in card codes (``"7H"``, ``"AS"``)
  and in the lengths of their numbers and strings of digits (a round's result, the edge monitor's
  exact fractions, a count going from 9 to 10) share one; it is remembered on its second sighting.
  Most shapes seen once are never seen again; remembering costs a pass over the payload;
- the *type shape* (``controller.journal.type_shapes``): the keys in their places and each value's
  JSON type, an array of elements of one type shape any number of them: a regular expression that
  a payload must match in full. Payloads that differ in the length of their lists and in the
  letters of their strings share one (a round's wagers, its result, the edge monitor's figures).
  It is kept per group of payloads (the entries' kind), at most ``MAX_TYPE_SHAPES`` of each.
  Compiling one costs 70-450 microseconds (the reference test of 20-50 payloads like it), so a
  group remembers the type shape of every ``TYPE_SHAPE_EVERY``-th payload that no digit or type
  shape vouched for: the groups of payloads that keep missing them, and only those, pay it (16,
  not 64: the groups that miss, a round's result, its wagers, the edge figures, miss all along,
  and each later match saves more than a reference test).

Why that gives the reference test's answer: a shape is remembered only for a payload with no
backslash (so no escape), no run in an object key (other characters there could unsort or
duplicate the keys) and, for a run shape, no run at either end. Outside strings, canonical JSON
holds digits and capitals only in integers (``true``, ``false`` and ``null`` are lower case, and
there are no exponents). A text of the same shape has every other byte equal and in the same
order, so it reads as the same tokens: the same keys in the same order, string values with other
digits and capitals (still canonical: they are never escaped), and in the integers' places other
bytes — which make canonical integers when they are all digits, no more of them than ``int``
reads (``sys.get_int_max_str_digits()``; a run shape's check) and none of more than one digit
starts with ``0``, nor a negative one is ``-0`` (the digit shape's ``lead`` bytes must not be
``0``). Why a type shape's match is canonical: ``controller.journal.type_shapes``. Anything else
goes to the reference test.
"""
from __future__ import annotations

import functools
import operator
import re
import sys
from collections.abc import Callable
from typing import Any

from controller.journal.chain import canonical_json, decode_canonical, decode_payload_strict
from controller.journal.type_shapes import type_pattern

DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"0" * 9)  # ``data.translate(DIGITS_AS_ZERO)``: its digit shape
_BLURRED_DIGITS = b"0123456789"
_BLURRED_RUNS = _BLURRED_DIGITS + b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# ``data.translate(_RUNS_AS_SPACE).split()``: the bytes between the runs (the ASCII whitespace in
# them, which ``split`` would split at too, made bytes UTF-8 never holds); and
# ``data.translate(_RUNS_ONLY).split()``: the runs.
_RUNS_AS_SPACE = bytes.maketrans(_BLURRED_RUNS + b" \t\n\x0b\x0c\r", b" " * len(_BLURRED_RUNS) + b"\xff\xf9\xfa\xfb\xfc\xfd")
_RUNS_ONLY = bytes(b if b in _BLURRED_RUNS else ord(" ") for b in range(256))
ZERO = ord("0")
UNKNOWN = object()
_NOT_CANONICAL = object()
MAX_SHAPES = 4096  # of each kind; beyond it, payloads of new shapes take the reference test every time
MAX_TYPE_SHAPES = 16  # of each group (the entries' kinds: 1 to 7 each in a table's journal)
MAX_TYPE_PATTERN = 16384  # characters of a type shape's regular expression (a table's: 40-750)
TYPE_SHAPE_EVERY = 16  # payloads of a group missing its digit and type shapes, a type shape learned

LeadDigits = Callable[[bytes], tuple[int, ...]]
CanonicalRuns = Callable[[list[bytes]], bool]
Match = Callable[[str], Any]  # a compiled type shape's ``fullmatch``


@functools.lru_cache(maxsize=4)
def _integer_runs_patterns(digits: int) -> tuple[re.Pattern[bytes], re.Pattern[bytes]]:
    """Canonical integers of at most ``digits`` digits (0: any number), the runs joined with
    spaces: all of them, and the digits of negative ones (after the minus)."""
    more = b"*" if digits <= 0 else b"{0,%d}" % (digits - 1)
    positive = b"[1-9][0-9]" + more
    return (re.compile(b"(?:0|%s)(?: (?:0|%s))*" % (positive, positive)),
            re.compile(b"%s(?: %s)*" % (positive, positive)))


def is_canonical_reference(text: str) -> bool:
    """The reference test: ``text`` is a JSON object (every payload the writer stores is one) and
    the canonical JSON of what it decodes to, without floats."""
    try:
        return text[:1] == "{" and canonical_json(decode_payload_strict(text)) == text
    except (ValueError, RecursionError):  # PayloadError is a ValueError
        return False


def _reference_value(text: str) -> Any:
    """What ``text`` decodes to when the reference test finds it canonical, else ``_NOT_CANONICAL``
    (``chain.decode_canonical``: the reference test's answer, faster)."""
    canonical, value = decode_canonical(text)
    return value if canonical else _NOT_CANONICAL


class PayloadShapes:
    """The shapes of canonical payloads seen so far (see the module docstring).

    ``is_canonical(text, data)`` answers; a caller in a hot loop may look a digit shape up itself:
    ``known.get(shape, UNKNOWN)``, ``shape`` being ``data.translate(DIGITS_AS_ZERO)``, is None when
    every text of that shape is canonical, a function of ``data`` giving the bytes that must not be
    ``ZERO``, or ``UNKNOWN`` (then ask ``unknown_digits(text, data, group, shape)``)."""

    __slots__ = ("known", "_by_runs", "_by_types", "_misses", "_sightings", "_digits")

    def __init__(self) -> None:
        self.known: dict[bytes, LeadDigits | None] = {}
        self._by_runs: dict[bytes, CanonicalRuns | None] = {}  # None: no integers to check
        self._by_types: dict[str, list[Match]] = {}  # by group
        self._misses: dict[str, int] = {}  # by group: canonical payloads no digit or type shape vouched for
        self._sightings: dict[bytes, int] = {}  # canonical shapes seen, not yet remembered: how often
        self._digits = sys.get_int_max_str_digits()  # the most digits ``int`` reads (0: no limit)

    def is_canonical(self, text: str, data: bytes, group: str = "") -> bool:
        """Whether ``text`` (whose UTF-8 is ``data``) is canonical JSON: what
        ``is_canonical_reference(text)`` says. ``group``: which payloads it is one of (a journal
        entry's kind), whose type shapes are tried."""
        shape = data.translate(DIGITS_AS_ZERO)
        lead = self.known.get(shape, UNKNOWN)
        if lead is None:
            return True
        if lead is not UNKNOWN:
            return ZERO not in lead(data)  # type: ignore[operator]
        return self.unknown_digits(text, data, group, shape)

    def unknown_digits(self, text: str, data: bytes, group: str, shape: bytes) -> bool:
        """``is_canonical(text, data, group)`` for a ``text`` whose digit shape ``shape`` is not
        known."""
        for match in self._by_types.get(group, ()):
            if match(text) is not None:
                seen = self._sightings.get(shape, 0)
                if seen >= 2 or (not seen and len(self._sightings) >= 2 * MAX_SHAPES):
                    self._learn(shape, data, None, None)
                else:  # what ``_learn`` would do: count a sighting, no more
                    self._sightings[shape] = seen + 1
                return True
        between = data.translate(_RUNS_AS_SPACE)
        run_shape = b" ".join(between.split())
        bracketed = between[:1] != b" " and between[-1:] != b" "  # no run at either end
        canonical = self._by_runs.get(run_shape, UNKNOWN)
        value = UNKNOWN
        if canonical is not UNKNOWN and bracketed:
            if canonical is not None and not canonical(data.translate(_RUNS_ONLY).split()):  # type: ignore[operator]
                return False
        else:
            value = _reference_value(text)
            if value is _NOT_CANONICAL:
                return False
        misses = self._misses.get(group)
        if misses is None and len(self._misses) >= MAX_SHAPES:
            misses = 1  # too many groups to count: none learned
        else:
            misses = self._misses[group] = (misses or 0) + 1
        if not misses % TYPE_SHAPE_EVERY:
            self._learn_type(group, value, text)
        self._learn(shape, data, between, run_shape if canonical is UNKNOWN else None)
        return True

    def _learn(self, shape: bytes, data: bytes, between: bytes | None, run_shape: bytes | None) -> None:
        """After the canonical ``data`` (digit shape ``shape``; ``between`` its bytes between the
        runs, when known): remember its digit shape on its third sighting, and its run shape
        ``run_shape`` (None: known already) on its second."""
        learn_runs = run_shape is not None and self._sighted(b"R" + run_shape, 2) and len(self._by_runs) < MAX_SHAPES
        learn_digits = self._sighted(shape, 3) and len(self.known) < MAX_SHAPES
        if not (learn_runs or learn_digits):
            return
        if between is None:
            between = data.translate(_RUNS_AS_SPACE)
        if between[:1] == b" " or between[-1:] == b" ":  # a run at either end
            return
        integers = _integer_runs(data, between)
        if integers is not None and learn_runs:
            self._by_runs[run_shape] = _runs_check(integers, self._digits)  # type: ignore[index]
        if integers is not None and learn_digits:
            leads = [start for _, start, length, negative in integers if negative or length > 1]
            # itemgetter of one index returns the item, not a tuple: ask for it twice.
            self.known[shape] = operator.itemgetter(*leads, leads[0]) if leads else None

    def _learn_type(self, group: str, value: Any, text: str) -> None:
        """Remember the type shape of the canonical ``text`` (decoded: ``value``, or ``UNKNOWN``)
        in ``group``."""
        types = self._by_types.get(group)
        if types is None:
            if len(self._by_types) >= MAX_SHAPES:
                return
            types = self._by_types[group] = []
        if len(types) >= MAX_TYPE_SHAPES:
            return
        try:
            pattern = type_pattern(decode_payload_strict(text) if value is UNKNOWN else value, self._digits)
            if pattern is None or len(pattern) > MAX_TYPE_PATTERN:
                return
            match = re.compile(pattern).fullmatch
        except (RecursionError, ValueError, re.error):  # nested too deeply to write or compile: no shape
            return
        if match(text) is not None:
            types.append(match)

    def _sighted(self, shape: bytes, times: int) -> bool:
        """Whether ``shape`` was now seen ``times`` times (or more)."""
        seen = self._sightings.get(shape, 0) + 1
        if seen == 1 and len(self._sightings) >= 2 * MAX_SHAPES:
            self._sightings.clear()
        self._sightings[shape] = seen
        return seen >= times


def _integer_runs(data: bytes, between: bytes) -> list[tuple[int, int, int, bool]] | None:
    """In the canonical ``data`` (``between`` its bytes between the runs; no run at either end):
    each integer as (which run it is, where it starts, its length, whether it is negative); None
    when a run is in a key, or ``data`` holds a backslash (no shape to remember)."""
    if b"\\" in data:
        return None
    pieces, runs = between.split(), data.translate(_RUNS_ONLY).split()
    integers, offset, quotes = [], 0, 0
    for i, run in enumerate(runs):
        piece = pieces[i]
        offset += len(piece)
        quotes += piece.count(b'"')
        if not quotes % 2:
            integers.append((i, offset, len(run), piece[-1:] == b"-"))
        else:  # in a string: a key when a colon follows the quote that ends it
            after = pieces[i + 1]
            end = after.find(b'"')
            if end >= 0 and after[end + 1:end + 2] == b":":
                return None
        offset += len(run)
    return integers


def _runs_check(integers: list[tuple[int, int, int, bool]], digits: int) -> CanonicalRuns | None:
    """Whether the runs of a text of a run shape are canonical integers where the runs of its first
    text were ``integers`` (``_integer_runs``): digits, no more than ``digits`` of them (0: any
    number), no leading zero, and no ``-0``. None when there are none."""
    if not integers:
        return None
    integers_pattern, negative_pattern = _integer_runs_patterns(digits)
    plain = [i for i, _, _, negative in integers if not negative]
    negative = [i for i, _, _, minus in integers if minus]
    # itemgetter of one index returns the item, not a tuple: ask for it twice
    pick_plain = operator.itemgetter(*plain, plain[0]) if plain else None
    pick_negative = operator.itemgetter(*negative, negative[0]) if negative else None

    def canonical(runs: list[bytes]) -> bool:
        return ((pick_plain is None or integers_pattern.fullmatch(b" ".join(pick_plain(runs))) is not None)
                and (pick_negative is None or negative_pattern.fullmatch(b" ".join(pick_negative(runs))) is not None))
    return canonical
