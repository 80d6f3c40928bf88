"""Bounded decimal numbers from files and clients.

A number from outside is checked for length, finiteness, range and decimal places *before* it is
used, so that no later arithmetic can be made to run for minutes or fill memory: ``Decimal`` takes
``"1e-999999999"`` at once, but ``Fraction`` of it computes ``10**999999999``. Inside its range
and its decimal places a value has few digits, so every later operation on it is cheap.

``bounded_decimal(value, lo, hi, ...)`` takes what TOML or JSON gives (a string such as
``"0.05"``, an integer, a finite float) and returns a ``Decimal`` or raises ``NumberError`` whose
message is the reason, in the user's words. Decimal text is ASCII digits, sign, point and exponent
only (no full-width or other Unicode digits, no ``_`` separators).
"""
from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

from .text import show, typename

__all__ = ["DEFAULT_PLACES", "MAX_DECIMAL_TEXT", "NumberError", "bounded_decimal", "whole_number_of"]

MAX_DECIMAL_TEXT = 40  # characters of a decimal string ("0.05" is 4)
DEFAULT_PLACES = 6     # decimal places (a rate of 0.000001 is one part in a million)
_MAX_INT = 10**40      # integers beyond this are refused before any conversion


class NumberError(ValueError):
    """A number is malformed or outside its bounds; the message is the reason."""


def bounded_decimal(value: object, lo: Decimal | int, hi: Decimal | int, *, lo_open: bool = False,
                    hi_open: bool = False, places: int = DEFAULT_PLACES, name: str = "value") -> Decimal:
    """``value`` as a finite ``Decimal`` with ``lo <= value <= hi`` (``<`` on an open side) and at
    most ``places`` decimal places (trailing zeros do not count). ``name`` is the quantity in
    the range of a message: ``out of range: 1 (allowed 0 <= rate < 1)``."""
    number = _decimal(value)
    low, high = Decimal(lo), Decimal(hi)
    if number < low or number > high or (lo_open and number == low) or (hi_open and number == high):
        allowed = f"{low} {'<' if lo_open else '<='} {name} {'<' if hi_open else '<='} {high}"
        raise NumberError(f"out of range: {_short(number)} (allowed {allowed})")
    if not number:
        return Decimal(0)  # "0E-999999999" is zero, not a billion decimal places
    if _places(number) > places:
        raise NumberError(f"too many decimal places: {show(value)} (at most {places})")
    return number


def _decimal(value: object) -> Decimal:
    if isinstance(value, bool):
        raise NumberError(f'expected a decimal string such as "0.05", got a boolean ({show(value)})')
    if isinstance(value, int):
        if abs(value) > _MAX_INT:
            raise NumberError("out of range: a very large integer")
        return Decimal(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NumberError(f"expected a finite number, got {show(value)}")
        return Decimal(repr(value))  # the decimal text TOML held, not the binary float
    if not isinstance(value, str):
        raise NumberError(f'expected a decimal string such as "0.05", got {typename(value)}')
    text = value.strip()
    if len(text) > MAX_DECIMAL_TEXT:
        raise NumberError(f"not a decimal number of at most {MAX_DECIMAL_TEXT} characters: {show(value)}")
    if not text.isascii() or "_" in text:  # Decimal() also takes "１" and "1_000"; a person's number is neither
        raise NumberError(f"not a decimal number: {show(value)}")
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise NumberError(f"not a decimal number: {show(value)}") from None
    if not number.is_finite():
        raise NumberError(f"expected a finite number, got {show(value)}")
    return number


def _places(number: Decimal) -> int:
    """Decimal places without trailing zeros (``0.050`` has 2); cheap for any exponent."""
    _, digits, exponent = number.as_tuple()
    assert isinstance(exponent, int)  # finite
    zeros = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    return max(0, -(exponent + zeros))


def _short(number: Decimal) -> str:
    text = str(number)
    return text if len(text) <= MAX_DECIMAL_TEXT else f"{text[:MAX_DECIMAL_TEXT - 3]}..."


def whole_number_of(value: object) -> int | None:
    """A whole number given as a JSON number or as ASCII decimal text (at most 16 digits, as many
    as the largest whole number a control request carries, 2**53 - 1, has; maybe a minus sign
    before them: ``seat=-1`` is then said to be no seat, not to be text), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = value.strip() if isinstance(value, str) else ""
    digits = text[1:] if text.startswith("-") else text
    if digits.isascii() and digits.isdigit() and len(digits) <= 16:
        return int(text)
    return None
