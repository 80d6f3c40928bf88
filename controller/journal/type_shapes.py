"""A canonical payload's *type shape*: the regular expression of every canonical JSON text of a
value with the same keys, in the same places, holding values of the same JSON types (one of the
chain check's payload shapes, ``controller.journal.shapes``).

``type_pattern(value, digits)`` writes it for ``value`` (what a canonical payload text decodes to),
``digits`` being the most digits an integer may have (``sys.get_int_max_str_digits()``, 0: no
limit):

- an object: ``{``, its keys in its (sorted) order, each as canonical JSON writes it, a colon and
  its value's pattern, separated by commas, ``}``;
- an array whose elements all have one pattern E: ``[E(,E)*]`` (any number of them, at least
  one; written with E once, so that its length is the value's); another array: its elements'
  patterns in order;
- an integer: a canonical integer (``0``, or an optional ``-`` and a digit 1-9 followed by digits,
  at most ``digits`` of them); a string: a quote, any characters but a quote, a backslash and the
  control characters U+0000-U+001F, a quote; ``true`` or ``false``; ``null``.

Why a text it matches in full is canonical JSON (``canonical_json(decode_payload_strict(text)) ==
text``): it holds no whitespace, every integer in the form ``repr`` writes and within the digits
``int`` reads, every string value in the form ``encode_basestring`` writes it (nothing in it is
escaped, as nothing needs to be), and every object the keys of a canonical text: sorted, once
each, spelled as canonical JSON spells them. The patterns are deterministic (the next character
always tells which way a match goes): their repetitions are possessive (what one took is never
given back, which would not have helped a match), and a match takes time in proportion to the text.
"""
from __future__ import annotations

import re
from json.encoder import encode_basestring
from typing import Any

_STRING = r'"[^"\\\x00-\x1f]*+"'
_BOOLEAN = "(?:true|false)"
_ESCAPED = re.compile(r'["\\\x00-\x1f]')  # what canonical JSON escapes in a string


def integer_pattern(digits: int) -> str:
    """A canonical integer of at most ``digits`` digits (0: any number of them)."""
    more = "*+" if digits <= 0 else "{0,%d}+" % (digits - 1)
    return f"(?:0|-?[1-9][0-9]{more})"


def type_pattern(value: Any, digits: int) -> str | None:
    """The type shape of ``value`` (module docstring) as a regular expression's source; None when
    ``value`` holds a string that canonical JSON escapes, a float or a type JSON does not have
    (no shape worth remembering)."""
    return _pattern(value, integer_pattern(digits))


def _pattern(value: Any, integer: str) -> str | None:
    if value is True or value is False:
        return _BOOLEAN
    if value is None:
        return "null"
    if type(value) is int:
        return integer
    if type(value) is str:
        return None if _ESCAPED.search(value) else _STRING
    if type(value) is dict:
        items = []
        for key in sorted(value):
            inner = _pattern(value[key], integer)
            if inner is None:
                return None
            items.append(f"{re.escape(encode_basestring(key))}:{inner}")
        return r"\{" + ",".join(items) + r"\}"
    if type(value) is list and value:
        elements = [_pattern(item, integer) for item in value]
        if None in elements:
            return None
        if elements.count(elements[0]) == len(elements):
            # E once, not ``E(?:,E)*`` (which lists nested in lists would double at every level):
            # an element, then a comma another element follows, or the closing bracket.
            return rf"\[(?:{elements[0]}(?:,(?!\])|(?=\])))++\]"
        return r"\[" + ",".join(elements) + r"\]"  # type: ignore[arg-type]
    if type(value) is list:
        return r"\[\]"
    return None
