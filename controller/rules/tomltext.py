"""Shared pieces of the project's TOML loaders (Rules Submission, operators file): parse text into
a dict with one-line errors, and describe bad values in messages.

``decode_utf8(raw, fail)`` decodes a file's bytes (read by ``submission.read_config_bytes``, the
one place in the rules core that reads files). ``load_toml(text, fail)`` returns the parsed mapping; on any syntax problem it raises
``fail(reason)`` (the caller's own error type, which names the file). ``safe``, ``typename`` and
``show`` make values printable on one line. (The device-profile loader in firmware_bridge keeps
its own copy: the bridge does not import the controller.)
"""
from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from datetime import date, datetime, time
from typing import Any


def safe(text: str) -> str:
    """Make ``text`` printable on one line (escape control characters)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def typename(value: object) -> str:
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
    """A short one-line rendering of a bad value for a message."""
    if isinstance(value, (Mapping, list, tuple)):
        return typename(value)
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return safe(text)


def decode_utf8(raw: bytes, fail: Callable[[str], Exception]) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"not UTF-8 text (bad byte at offset {exc.start})") from None


def load_toml(text: str, fail: Callable[[str], Exception]) -> dict[str, Any]:
    if text.startswith("\ufeff"):  # a byte-order mark some editors add
        text = text[1:]
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise fail(f"TOML syntax error: {safe(str(exc))}") from None
    except RecursionError:
        raise fail("TOML syntax error: arrays or tables nested too deeply") from None
    except ValueError as exc:  # e.g. an integer longer than Python's digit limit
        raise fail(f"TOML value error: {safe(str(exc))}") from None
