"""``DocumentParser``: the base of every configuration loader's validation pass.

A loader subclasses it, sets ``error`` to its ``ConfigError`` subclass and writes its pass with
the typed getters below. Each getter takes the dotted key (for the message) and the parsed value,
and returns the checked value or raises ``self.fail(key, reason)``: the first problem ends the
pass. Messages share one vocabulary across loaders ("expected an integer, got a string ('8')",
"out of range: 9 (allowed 1..8)", "unknown key; known keys: ...").
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from decimal import Decimal
from enum import Enum
from typing import Any, ClassVar, TypeVar

from .errors import ConfigError
from .files import ErrorFactory
from .numbers import DEFAULT_PLACES, NumberError, bounded_decimal
from .text import described, key_part, show, typename

__all__ = ["DocumentParser"]

E = TypeVar("E", bound=Enum)


class DocumentParser:
    """One validation pass over ``data`` (a parsed document) from ``source`` (shown in errors)."""

    error: ClassVar[ErrorFactory] = ConfigError

    def __init__(self, data: object, source: str) -> None:
        self.data = data
        self.source = source

    def fail(self, key: str, reason: str) -> Exception:
        """The loader's error for ``key`` (``""``: the whole document); raise it."""
        return type(self).error(self.source, key, reason)

    # -- structure ------------------------------------------------------------------------------

    def document(self, sections: Collection[str], required: Collection[str] = ()) -> Mapping[str, Any]:
        """The document itself: a table whose keys are all in ``sections``, with every one of
        ``required`` present."""
        data = self.data
        if not isinstance(data, Mapping):
            raise self.fail("", f"expected a table of sections, got {typename(data)}")
        for name in data:
            if not isinstance(name, str) or name not in sections:
                raise self.fail(key_part(name), f"unknown section; known sections: {', '.join(sections)}")
        for name in required:
            if name not in data:
                raise self.fail(name, f"required section [{name}] is missing")
        return data

    def section(self, name: str, known: Collection[str], hints: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The top-level table ``name`` (empty if absent), checked by ``table``."""
        assert isinstance(self.data, Mapping)
        return self.table(name, self.data.get(name, {}), known, hints)

    def table(self, key: str, value: object, known: Collection[str] | None = None,
              hints: Mapping[str, str] | None = None) -> dict[str, Any]:
        """``value`` as a table; with ``known``, every key must be one of them (``hints`` adds
        a word to the error for a key that belongs elsewhere)."""
        if not isinstance(value, Mapping):
            raise self.fail(key, f"expected a table ([{key}]), got {typename(value)}")
        if known is not None:
            for name in value:
                if not isinstance(name, str) or name not in known:
                    hint = (hints or {}).get(name, "") if isinstance(name, str) else ""
                    raise self.fail(f"{key}.{key_part(name)}", f"unknown key{hint}; known keys: {', '.join(known)}")
        return dict(value)

    def missing(self, key: str, extra: str = "") -> Exception:
        """The error for a required key that is absent; raise it."""
        return self.fail(key, f"required key is missing{extra}")

    # -- values ---------------------------------------------------------------------------------

    def whole(self, key: str, value: object) -> int:
        """An integer (not a boolean), any size."""
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected an integer, got {described(value)}")
        return value

    def integer(self, key: str, value: object, lo: int, hi: int, *, hint: str = "", hex_: bool = False) -> int:
        """An integer in ``lo..hi``; ``hex_`` shows the range (and a bad value) in hexadecimal."""
        number = self.whole(key, value)
        if not lo <= number <= hi:
            shown = f"0x{number:x}" if hex_ and 0 <= number <= 0xFFFFFFFF else show(number)
            allowed = f"0x{lo:04x}..0x{hi:04x}" if hex_ else f"{lo}..{hi}"
            raise self.fail(key, f"out of range: {shown} (allowed {allowed}{hint})")
        return number

    def boolean(self, key: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise self.fail(key, f"expected a boolean (true or false), got {described(value)}")
        return value

    def string(self, key: str, value: object) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {described(value)}")
        return value

    def text(self, key: str, value: object, max_len: int, *, empty_ok: bool = False) -> str:
        """A string stripped of surrounding blanks: one printable line of at most ``max_len``
        characters (no control characters, no lone surrogates), not empty unless ``empty_ok``."""
        text = self.string(key, value).strip()
        if not text and not empty_ok:
            raise self.fail(key, "must not be empty")
        if len(text) > max_len or not text.isprintable():
            raise self.fail(key, f"must be one printable line of at most {max_len} characters")
        return text

    def choice(self, key: str, value: object, allowed: Collection[str]) -> str:
        text = self.string(key, value)
        if text not in allowed:
            raise self.fail(key, f"unknown value {show(text)}; allowed: {', '.join(allowed)}")
        return text

    def enum(self, key: str, value: object, enum: type[E]) -> E:
        """A member of a ``str`` enum, by value."""
        return enum(self.choice(key, value, tuple(m.value for m in enum)))

    def decimal(self, key: str, value: object, lo: Decimal | int, hi: Decimal | int, *, lo_open: bool = False,
                hi_open: bool = False, places: int = DEFAULT_PLACES, name: str = "value") -> Decimal:
        """A bounded decimal (``numbers.bounded_decimal``): a string such as ``"0.05"``, an
        integer or a finite float, in range, with at most ``places`` decimal places."""
        try:
            return bounded_decimal(value, lo, hi, lo_open=lo_open, hi_open=hi_open, places=places, name=name)
        except NumberError as exc:
            raise self.fail(key, str(exc)) from None
