"""TOML text from plain data, for a person to copy into a configuration file.

``toml_document(tables)`` writes a document of tables whose values are strings, integers,
booleans, arrays of them and inline tables of them (what the Rules Submission holds: its
``[limits]`` are ``banker = { min = 2500, max = 500000 }``), one ``[table]`` after another,
keys in the mapping's order; ``tomllib.loads`` of the text gives the same mapping back.
``toml_value(value)`` writes one value: a string as a basic string, with every character TOML
does not allow there (``"``, ``\\``, control characters, DEL) escaped.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .text import toml_key, toml_string, typename

__all__ = ["toml_document", "toml_value"]


def toml_value(value: Any) -> str:
    """One TOML value; ``TypeError`` for anything but a string, integer, boolean, or an array or
    inline table of them."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items()) + " }" if value else "{}"
    raise TypeError(f"no TOML text for {typename(value)}")


def toml_document(tables: Mapping[str, Mapping[str, Any]]) -> str:
    """The tables as TOML text, a blank line between them, ending with a newline."""
    blocks = []
    for name, table in tables.items():
        lines = [f"[{toml_key(name)}]", *(f"{toml_key(key)} = {toml_value(value)}" for key, value in table.items())]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)
