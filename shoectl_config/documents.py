"""TOML documents from bytes or files, with one-line errors.

``parse_toml(raw, source, error)`` decodes UTF-8 (a leading byte-order mark is dropped) and parses
TOML; ``read_toml_file(path, max_bytes, error)`` reads a regular file first
(``files.read_regular_file``). Every problem raises ``error(source, "", reason)``: not UTF-8 (with
the offset of the bad byte), a TOML syntax error (tomllib's message, with line and column), a
value Python refuses (an integer of more digits than Python converts: "TOML value error: an
integer with more than 4300 digits (at line 3)"), nesting too deep, a dotted key of more than
``MAX_KEY_PARTS`` parts (tomllib takes time and memory in the square of its length: a 30 KB key
took 1.3 GB, a configuration review). No message holds a word of
Python's own (``sys.set_int_max_str_digits``), nor a key written as a Python tuple (``operators.a``,
not ``('operators', 'a')``).
"""
from __future__ import annotations

import ast
import os
import re
import sys
import tomllib
from typing import Any

from .files import ErrorFactory, read_regular_file
from .text import safe

__all__ = ["parse_toml", "read_toml_file"]


def parse_toml(raw: bytes, source: str, error: ErrorFactory) -> dict[str, Any]:
    """The TOML document in ``raw`` (UTF-8) as a dict; ``source`` names it in errors."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(source, "", f"not UTF-8 text (bad byte at offset {exc.start})") from None
    if text.startswith("\ufeff"):  # a byte-order mark some editors add
        text = text[1:]
    if (line := _long_dotted_key(text)) is not None:
        raise error(source, "", f"a dotted key of more than {MAX_KEY_PARTS} parts (at line {line}): not a configuration "
                                "of shoectl")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(source, "", f"TOML syntax error: {safe(_dotted_keys(str(exc)))}") from None
    except RecursionError:
        raise error(source, "", "TOML syntax error: arrays or tables nested too deeply") from None
    except ValueError as exc:  # an integer longer than Python's digit limit (tomllib's int() refuses it)
        raise error(source, "", f"TOML value error: {_value_problem(text, str(exc))}") from None


MAX_KEY_PARTS = 64  # shoectl's own keys have at most three
# A string's text (multi-line first) or a comment, whose dots are no key's, found left to right
# (a quote in a comment is the comment's, a # in a string the string's); then a run of dots with
# nothing between them but what a bare key, a space or a quoted key (its string taken out) holds.
_STRING = re.compile(r'"""(?:[^\\]|\\[\s\S])*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*')
_DOTTED_RUN = re.compile(r"(?:\.[ \tA-Za-z0-9_-]*){%d}" % (MAX_KEY_PARTS,))


def _long_dotted_key(text: str) -> int | None:
    """The line of a key of more than ``MAX_KEY_PARTS`` parts in the TOML ``text``, or None. (A
    quoted part is a string here, taken out with the others and the comments.)"""
    bare = _STRING.sub(lambda m: "\n" * m.group().count("\n"), text)  # lines kept, for the line number
    found = _DOTTED_RUN.search(bare)
    return None if found is None else bare.count("\n", 0, found.start()) + 1


_DIGITS = re.compile(r"[0-9][0-9_]*")
# tomllib names a key as a Python tuple of its parts: "Cannot declare ('operators', 'a') twice"
_KEY_TUPLE = re.compile(r"""\((?:(?:'[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*"),? ?)+\)""")


def _dotted_keys(message: str) -> str:
    """tomllib's ``message`` with each key written as in TOML (``operators.a``), not as a tuple."""
    def dotted(match: re.Match[str]) -> str:
        try:
            parts = ast.literal_eval(match.group())
        except (ValueError, SyntaxError):
            return match.group()
        parts = parts if isinstance(parts, tuple) else (parts,)
        return ".".join(str(part) for part in parts)
    return _KEY_TUPLE.sub(dotted, message)


def _value_problem(text: str, message: str) -> str:
    """The reason, in words, for the ``ValueError`` (``message``) tomllib let out of ``text``.

    The only one it lets out is ``int()`` refusing an integer of more digits than
    ``sys.get_int_max_str_digits()``; the line is the first one holding such a run of digits whose
    document, cut after that line, fails the same way (tomllib reads in order, so a cut document
    fails so from that line on; a long run of digits in a string does not)."""
    limit = sys.get_int_max_str_digits()
    candidates = [m for m in _DIGITS.finditer(text) if limit and m.end() - m.start() - m.group().count("_") > limit]
    found = None
    low, high = 0, len(candidates)  # binary search for the first candidate whose cut document fails
    while low < high:
        middle = (low + high) // 2
        if _fails_on_digits(text, candidates[middle].end(), message):
            found, high = candidates[middle], middle
        else:
            low = middle + 1
    if found is None:
        return f"an integer with more than {limit} digits" if limit else "a value that cannot be read"
    line = text.count("\n", 0, found.start()) + 1
    return f"an integer with more than {limit} digits (at line {line})"


def _fails_on_digits(text: str, end: int, message: str) -> bool:
    """Whether ``text``, cut at the end of the line holding ``end``, fails with ``message``."""
    cut = text.find("\n", end)
    try:
        tomllib.loads(text if cut < 0 else text[:cut + 1])
    except ValueError as exc:
        return not isinstance(exc, tomllib.TOMLDecodeError) and str(exc) == message
    except RecursionError:
        return False
    return False


def read_toml_file(path: str | os.PathLike[str], max_bytes: int,
                   error: ErrorFactory) -> tuple[str, dict[str, Any], int]:
    """Read and parse the TOML file ``path``: ``(shown path, document, st_mode)``."""
    shown, raw, mode = read_regular_file(path, max_bytes, error)
    return shown, parse_toml(raw, shown, error), mode
