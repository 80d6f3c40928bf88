"""``DocumentParser``: the base of every configuration loader's validation pass.

A loader subclasses it, sets ``error`` to its ``ConfigError`` subclass and writes its pass with
the typed getters below. Each getter takes the dotted key (for the message) and the parsed value,
and returns the checked value or raises ``self.fail(key, reason)``: the first problem ends the
pass. Messages share one vocabulary across loaders ("expected an integer, got a string ('8')",
"out of range: 9 (allowed 1..8)", "unknown key; known keys: ...", "unknown key (it belongs in
[transport]); known keys: ...").
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
        self.keys_of: Mapping[str, Collection[str]] = {}  # section -> its keys, when ``document`` was told them

    def fail(self, key: str, reason: str) -> Exception:
        """The loader's error for ``key`` (``""``: the whole document); raise it."""
        return type(self).error(self.source, key, reason)

    # -- structure ------------------------------------------------------------------------------

    def document(self, sections: Collection[str], required: Collection[str] = ()) -> Mapping[str, Any]:
        """The document itself: a table whose keys are all in ``sections``, with every one of
        ``required`` present.

        ``sections`` may map each section to its keys; then a key written outside its section is
        named as such: one before any ``[section]`` header is "a key before any [section]; it
        belongs in [device]", and ``section`` adds "(it belongs in [transport])" to an unknown
        key that is a key of another section."""
        data = self.data
        if not isinstance(data, Mapping):
            raise self.fail("", f"expected a table of sections, got {typename(data)}")
        if isinstance(sections, Mapping):
            self.keys_of = sections
        known = f"known sections: {', '.join(sections)}"
        for name in data:
            if not isinstance(name, str) or name not in sections:
                homes = self._homes(name)
                if homes and isinstance(data[name], Mapping):
                    # a [game] header (an integrator review was told "a key before any [section]" of it),
                    # or an inline table written before any header (limits' banker = { ... })
                    raise self.fail(key_part(name), f"not a section of this file; {key_part(name)} is a key of {homes}")
                if homes:
                    raise self.fail(key_part(name), f"a key before any [section]; it belongs in {homes}")
                if isinstance(data[name], Mapping):
                    raise self.fail(key_part(name), f"unknown section; {known}")
                raise self.fail(key_part(name), f"a key before any [section]; {known}")
        for name in required:
            if name not in data:
                self._misplaced(name)
                raise self.fail(name, f"required section [{name}] is missing")
        return data

    def _misplaced(self, missing: str) -> None:
        """Raise the unknown-key error for a key of the absent section ``missing`` written under
        another section (its header line was left out), if there is one."""
        assert isinstance(self.data, Mapping)
        for section, value in self.data.items():
            own = self.keys_of.get(section)
            if own is None or not isinstance(value, Mapping):
                continue
            for key in value:
                if key not in own and isinstance(key, str) and key in self.keys_of.get(missing, ()):
                    self.section(section, own)

    def section(self, name: str, known: Collection[str] | None,
                hints: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The top-level table ``name`` (empty if absent), checked by ``table``. An unknown key
        that is a key of another section (as ``document`` was told) gets "(it belongs in [other])"
        unless ``hints`` has a word for it."""
        assert isinstance(self.data, Mapping)
        value = self.data.get(name, {})
        if isinstance(value, Mapping) and known is not None:
            own = self.keys_of.get(name, known)
            elsewhere = {key: f" (it belongs in {homes})" for key in value
                         if key not in known and key not in own and (homes := self._homes(key, name))}
            hints = {**elsewhere, **(hints or {})}
        return self.table(name, value, known, hints)

    def _homes(self, key: object, besides: str = "") -> str:
        """The sections other than ``besides`` that have the key ``key``: "[device]",
        "[paytable] or [limits]"; "" if none."""
        homes = [f"[{section}]" for section, keys in self.keys_of.items()
                 if section != besides and isinstance(key, str) and key in keys]
        return " or ".join(homes)

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
        """An integer in ``lo..hi``; ``hex_`` shows the range (and a bad value) in hexadecimal;
        ``hint`` follows the range for a value above ``hi`` (why the highest is the highest)."""
        number = self.whole(key, value)
        if not lo <= number <= hi:
            shown = f"0x{number:x}" if hex_ and 0 <= number <= 0xFFFFFFFF else show(number)
            allowed = f"0x{lo:04x}..0x{hi:04x}" if hex_ else f"{lo}..{hi}"
            raise self.fail(key, f"out of range: {shown} (allowed {allowed}{hint if number > hi else ''})")
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
