"""Values in one-line messages: ``safe`` escapes control characters, ``typename`` names a parsed
TOML value's type in words, ``show`` renders a bad value briefly, ``key_part`` writes one part of
a dotted key as TOML would (quoted when it is not a bare key)."""
from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime, time

__all__ = ["key_part", "safe", "show", "typename"]

MAX_SHOWN = 60  # characters of a bad value quoted in a message
_HUGE = 10**30  # integers beyond this are named, not printed (a TOML integer may have 4,000 digits)
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")


def safe(text: str) -> str:
    """``text`` printable on one line: control characters (and lone surrogates) escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def typename(value: object) -> str:
    """The type of a parsed TOML value in words: ``"an integer"``, ``"a table"``, ..."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, datetime):
        return "a date-time"
    if isinstance(value, date):
        return "a date"
    if isinstance(value, time):
        return "a time"
    return f"a {type(value).__name__}"


def show(value: object) -> str:
    """A bad value for a message: short, on one line (tables and arrays by their type)."""
    if isinstance(value, (Mapping, list, tuple)):
        return typename(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _HUGE:
        return "a very large integer"
    text = repr(value)
    if len(text) > MAX_SHOWN:
        text = text[: MAX_SHOWN - 3] + "..."
    return safe(text)


def key_part(part: object) -> str:
    """One part of a dotted key: bare if it can be, else quoted with escapes (``"a\\nb"``)."""
    text = str(part)
    if _BARE_KEY.fullmatch(text):
        return text
    return '"' + text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'
