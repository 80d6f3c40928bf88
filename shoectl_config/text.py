"""Values in one-line messages: ``safe`` escapes control characters, ``quoted`` quotes a user's
text, ``readable`` makes a whole message readable, ``typename`` names a parsed TOML value's type
in words, ``show`` renders a bad value briefly, ``key_part`` writes one part of a dotted key as
TOML would (quoted when it is not a bare key).

A value from a file is shown as the file would hold it, never as Python writes it: ``true``, not
``True``; ``1979-05-27``, not ``datetime.date(1979, 5, 27)``; ``2020-01-01T00:00:00Z``; ``nan``,
``inf``; a string as a TOML literal string (``'8'``) or, when it holds a quote or a character
that does not print, as a basic string with TOML's escapes (``"a\\nb"``). Whatever ``show`` and
``key_part`` write is at most ``MAX_SHOWN`` characters: a longer value or key is cut, an ellipsis
(``...``) marking the cut, so a 100 KB key in a file makes a short message.

A byte that is not UTF-8 in a command line or a file name reaches Python as a lone surrogate
(U+DC80-U+DCFF, "surrogateescape"); every message shows it as the byte, ``\xff``, never as
Python's ``\\udcff``."""
from __future__ import annotations

import codecs
import os
import math
import re
import shlex
from collections.abc import Mapping
from datetime import date, datetime, time, timedelta

__all__ = ["MAX_SHOWN", "described", "is_utf8", "key_part", "quoted", "readable", "safe", "show", "toml_key", "toml_string",
           "typename"]

MAX_SHOWN = 60  # characters at most of a value or a key from a file shown in a message
_ELLIPSIS = "..."
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


def is_utf8(encoding: str | None) -> bool:
    """Whether a stream's ``encoding`` (any spelling: ``UTF-8``, ``utf8``, ``u8``) is UTF-8; an
    unknown name or none is not."""
    try:
        return encoding is not None and codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def writes_utf8(encoding: str | None) -> bool:
    """``is_utf8(encoding)`` for a terminal's stream, unless the person asked for the C locale
    (``LC_ALL``, ``LC_CTYPE`` or ``LANG`` set to ``C`` or ``POSIX``): Python writes UTF-8 under it
    all the same (PEP 538 turns ``LANG=C`` into ``LC_CTYPE=C.UTF-8``, PEP 540's UTF-8 mode
    ``LC_ALL=C`` into a UTF-8 stream), which a terminal of that locale shows as ``Â·`` (a review of
    terminals). Nothing set says nothing: the stream's encoding decides."""
    if not is_utf8(encoding):
        return False
    env = os.environ
    c_locale = ("C", "POSIX")
    if env.get("LC_ALL"):
        return env["LC_ALL"] not in c_locale
    ctype, lang = env.get("LC_CTYPE"), env.get("LANG")
    if ctype and ctype not in ("C.UTF-8", "C.utf8"):
        return ctype not in c_locale
    return lang not in c_locale  # also under C.UTF-8: Python's own, over a LANG of the C locale


def safe(text: str) -> str:
    """``text`` printable on one line: control characters escaped (``\n``, ``\x00``), a byte that
    was not UTF-8 shown as that byte (``\\xff``), any other lone surrogate as ``\\ud800``."""
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


def shell_word(text: str) -> str:
    """``text`` (a path) as one word of a command a message suggests, to paste: quoted where a
    shell would split it (``shlex.quote``: a space); a text that cannot be printed as it is (a line
    break, a byte that was not UTF-8) in bash's ``$'...'``, its escapes naming the very bytes (quoted
    and then escaped, ``'a\nb'`` named another file: a review)."""
    if text.isprintable():
        return shlex.quote(text)
    # safe's escapes (\n, \xe9) are bash's too, inside $'...'; its backslashes and quotes escaped first
    return "$'" + "".join("\\" + c if c in "\\'" else c if c.isprintable() else _escaped(c) for c in text) + "'"


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
    """The type of a parsed TOML value in words: ``"an integer"``, ``"a table"``, ``"a local
    date-time"`` (one without an offset), ...; anything TOML never gives is ``"a value of
    another kind"`` (no Python type name in a message)."""
    if isinstance(value, datetime) and value.utcoffset() is None:
        return "a local date-time"
    return next((name for kinds, name in _TYPE_NAMES if isinstance(value, kinds)), "a value of another kind")


def described(value: object) -> str:
    """A bad value's type and the value: ``"a string ('8')"``, ``"a boolean (true)"``,
    ``"a date (1979-05-27)"``; a table or an array by its type alone (``show`` would only say the
    type again)."""
    kind = typename(value)
    shown = show(value)
    return kind if shown == kind else f"{kind} ({shown})"


def show(value: object) -> str:
    """A bad value for a message as TOML writes it, short (at most ``MAX_SHOWN`` characters), on
    one line: ``true``, ``8``, ``-inf``, ``nan``, ``1979-05-27``, ``2020-01-01T00:00:00Z``,
    ``'8'``, ``"a\\nb"``; a table or an array by its type, an integer of more than 30 digits as
    ``a very large integer``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return "a very large integer" if abs(value) > _HUGE else str(value)  # str() of 4,300+ digits raises
    if isinstance(value, float):
        return _toml_float(value)
    if isinstance(value, str):
        return _shown_string(value)
    if isinstance(value, (datetime, date, time)):
        return _toml_datetime(value)
    return typename(value)


def _toml_float(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)  # "0.5", "1e-300", "1e+16": TOML floats as they are


def _toml_datetime(value: date | time) -> str:
    """A date, a time or a date-time as TOML writes it; an offset of zero is ``Z``."""
    text = value.isoformat()
    if isinstance(value, (datetime, time)) and value.utcoffset() == timedelta(0) and text.endswith("+00:00"):
        text = text[: -len("+00:00")] + "Z"
    return text


def _shown_string(text: str) -> str:
    """A string of a file: a TOML literal string (``'8'``) when it can be one, else a basic string
    with escapes (``"it's"``, ``"a\\nb"``); cut to ``MAX_SHOWN`` characters."""
    head = text[:MAX_SHOWN]  # nothing beyond this can be shown: long values cost nothing more
    if "'" not in head and head.isprintable():
        return _quoted_pieces("'", list(head), len(text) > len(head))
    return _quoted_pieces('"', [_escaped_in_basic(c) for c in head], len(text) > len(head))


def _escaped_in_basic(c: str) -> str:
    """One character in a basic string of a message: TOML's escapes, a byte that was not UTF-8
    as that byte (``\\xff``)."""
    if "\udc80" <= c <= "\udcff":
        return _escaped(c)
    return _toml_char(c)


def _quoted_pieces(quote: str, pieces: list[str], longer: bool) -> str:
    """``pieces`` (characters or whole escapes) between quotes, at most ``MAX_SHOWN`` characters
    in all (``_cut``)."""
    return quote + _cut(pieces, MAX_SHOWN - 2 * len(quote), longer) + quote


def _kept(pieces: list[str], room: int) -> str:
    """The leading pieces whose length fits in ``room`` (an escape is never cut in two)."""
    kept: list[str] = []
    used = 0
    for piece in pieces:
        if used + len(piece) > room:
            break
        kept.append(piece)
        used += len(piece)
    return "".join(kept)


def _cut(pieces: list[str], limit: int, longer: bool = False) -> str:
    """``pieces`` joined, or as many as fit with ``...`` when all of them take more than ``limit``
    or ``longer`` (the text goes on beyond them)."""
    if not longer and sum(map(len, pieces)) <= limit:
        return "".join(pieces)
    return _kept(pieces, limit - len(_ELLIPSIS)) + _ELLIPSIS


_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_char(c: str) -> str:
    """One character in a TOML basic string: ``"``, ``\\``, control characters, DEL and anything
    else that does not print escaped (``\\n``, ``\\u0007``), anything else as it is."""
    if c in _TOML_ESCAPES:
        return _TOML_ESCAPES[c]
    if c.isprintable() and c != "\x7f":
        return c
    return f"\\u{ord(c):04X}" if ord(c) <= 0xFFFF else f"\\U{ord(c):08X}"


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: ``"``, ``\\``, control characters, DEL and anything else
    that does not print (a lone surrogate, a line separator) escaped as TOML escapes them
    (``\\n``, ``\\u0007``); printable non-ASCII characters stay as they are. Whole: for TOML
    text (``toml_text``); a message uses ``key_part`` or ``show``, which are cut short."""
    return '"' + "".join(map(_toml_char, text)) + '"'


def toml_key(text: str) -> str:
    """A key as TOML writes it, whole: bare if it can be, else a basic string."""
    return text if _BARE_KEY.fullmatch(text) else toml_string(text)


def key_part(part: object) -> str:
    """One part of a dotted key in a message as TOML writes it: bare if it can be, else a basic
    string (``"a\\nb"``, ``"café"``); a key of more than ``MAX_SHOWN`` characters is cut
    (``kkkk...``, ``"k\\nk..."``), so a huge unknown key makes a short message."""
    text = str(part)
    head = text[:MAX_SHOWN]  # nothing beyond this can be shown
    if _BARE_KEY.fullmatch(text):
        return _cut(list(head), MAX_SHOWN, len(text) > len(head))
    return _quoted_pieces('"', [_toml_char(c) for c in head], len(text) > len(head))
