"""Values in one-line messages: ``safe`` escapes control characters, ``quoted`` quotes a user's
text, ``readable`` makes a whole message readable, ``typename`` names a parsed TOML value's type
in words, ``show`` renders a bad value briefly, ``key_part`` writes one part of a dotted key as
TOML would (quoted when it is not a bare key).

A byte that is not UTF-8 in a command line or a file name reaches Python as a lone surrogate
(U+DC80-U+DCFF, "surrogateescape"); every message shows it as the byte, ``\xff``, never as
Python's ``\udcff``."""
from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime, time

__all__ = ["key_part", "quoted", "readable", "safe", "show", "toml_string", "typename"]

MAX_SHOWN = 60  # characters of a bad value quoted in a message
_HUGE = 10**30  # integers beyond this are named, not printed (a TOML integer may have 4,000 digits)
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPED_BYTE = re.compile(r"(?<!\\)\\udc([89a-f][0-9a-f])")  # repr's spelling of a byte that was not UTF-8


def is_unicode_text(text: str) -> bool:
    """Whether ``text`` is valid Unicode (encodes as UTF-8: no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def safe(text: str) -> str:
    """``text`` printable on one line: control characters escaped (``\n``, ``\x00``), a byte that
    was not UTF-8 shown as that byte (``\xff``), any other lone surrogate as ``\ud800``."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escaped(c) for c in text)


def _escaped(c: str) -> str:
    if "\udc80" <= c <= "\udcff":
        return f"\\x{ord(c) - 0xDC00:02x}"
    return c.encode("unicode_escape").decode("ascii")


def quoted(text: str) -> str:
    """A user's ``text`` quoted in a message, as ``repr`` quotes it but with ``safe``'s escapes:
    ``'T1'``, ``"it's"``, ``'\xff'`` for a byte that was not UTF-8."""
    quote = '"' if "'" in text and '"' not in text else "'"
    return f"{quote}{safe(text)}{quote}"


def readable(message: str) -> str:
    """A whole message as printed: ``safe``, and a byte that was not UTF-8 that some code quoted
    with ``repr`` (argparse's ``invalid choice: '\\udcff'``) shown as ``\xff`` too."""
    return _ESCAPED_BYTE.sub(r"\\x\1", safe(message))


# First match wins: a bool is an int and a datetime a date to isinstance, so they come first.
_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "a boolean"), (int, "an integer"), (float, "a float"), (str, "a string"),
    ((list, tuple), "an array"), (Mapping, "a table"), (datetime, "a date-time"), (date, "a date"),
    (time, "a time"),
)


def typename(value: object) -> str:
    """The type of a parsed TOML value in words: ``"an integer"``, ``"a table"``, ..."""
    return next((name for kinds, name in _TYPE_NAMES if isinstance(value, kinds)), f"a {type(value).__name__}")


def described(value: object) -> str:
    """A bad value's type and the value: ``"a string ('8')"``; a table or an array by its type
    alone (``show`` would only say the type again)."""
    kind = typename(value)
    return kind if isinstance(value, (Mapping, list, tuple)) else f"{kind} ({show(value)})"


def show(value: object) -> str:
    """A bad value for a message: short, on one line (tables and arrays by their type)."""
    if isinstance(value, (Mapping, list, tuple)):
        return typename(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > _HUGE:
        return "a very large integer"
    text = quoted(value) if isinstance(value, str) else repr(value)
    if len(text) > MAX_SHOWN:
        text = text[: MAX_SHOWN - 3] + "..."
    return safe(text)


_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: ``"``, ``\\``, control characters, DEL and anything else
    that does not print (a lone surrogate, a line separator) escaped as TOML escapes them
    (``\\n``, ``\\u0007``); printable non-ASCII characters stay as they are."""
    def escaped(c: str) -> str:
        if c in _TOML_ESCAPES:
            return _TOML_ESCAPES[c]
        if c.isprintable() and c != "\x7f":
            return c
        return f"\\u{ord(c):04X}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08X}"
    return '"' + "".join(escaped(c) for c in text) + '"'


def key_part(part: object) -> str:
    """One part of a dotted key as TOML writes it: bare if it can be, else a basic string
    (``"a\\nb"``, ``"café"``)."""
    text = str(part)
    if _BARE_KEY.fullmatch(text):
        return text
    return toml_string(text)
