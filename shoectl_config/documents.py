"""TOML documents from bytes or files, with one-line errors.

``parse_toml(raw, source, error)`` decodes UTF-8 (a leading byte-order mark is dropped) and parses
TOML; ``read_toml_file(path, max_bytes, error)`` reads a regular file first
(``files.read_regular_file``). Every problem raises ``error(source, "", reason)``: not UTF-8 (with
the offset of the bad byte), a TOML syntax error (tomllib's message, with line and column), a
value Python refuses (an integer beyond its digit limit), nesting too deep.
"""
from __future__ import annotations

import os
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
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(source, "", f"TOML syntax error: {safe(str(exc))}") from None
    except RecursionError:
        raise error(source, "", "TOML syntax error: arrays or tables nested too deeply") from None
    except ValueError as exc:  # e.g. an integer longer than Python's digit limit
        raise error(source, "", f"TOML value error: {safe(str(exc))}") from None


def read_toml_file(path: str | os.PathLike[str], max_bytes: int,
                   error: ErrorFactory) -> tuple[str, dict[str, Any], int]:
    """Read and parse the TOML file ``path``: ``(shown path, document, st_mode)``."""
    shown, raw, mode = read_regular_file(path, max_bytes, error)
    return shown, parse_toml(raw, shown, error), mode
