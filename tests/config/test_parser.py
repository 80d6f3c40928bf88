"""The parser base every loader uses (shoectl_config.parser) and bounded decimals
(shoectl_config.numbers): one vocabulary of messages, and no number without bounds."""
from __future__ import annotations

from datetime import date
from decimal import Decimal
from enum import Enum
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoectl_config.errors import ConfigError
from shoectl_config.numbers import MAX_DECIMAL_TEXT, NumberError, bounded_decimal
from shoectl_config.parser import DocumentParser


class Refused(ConfigError):
    pass


class Parser(DocumentParser):
    error = Refused


class Colour(str, Enum):
    RED = "red"
    BLUE = "blue"


def reason(call, *args, **kwargs) -> tuple[str, str]:
    with pytest.raises(Refused) as info:
        call(*args, **kwargs)
    err = info.value
    assert err.source == "f.toml" and "\n" not in str(err)
    return err.key, err.reason


P = Parser(None, "f.toml")


def test_the_document_and_its_sections() -> None:
    doc = {"a": {"x": 1}, "b": {}}
    p = Parser(doc, "f.toml")
    assert p.document(("a", "b", "c"), required=("a",)) is doc
    assert p.section("a", ("x", "y")) == {"x": 1} and p.section("c", ("z",)) == {}
    assert reason(Parser([1], "f.toml").document, ("a",)) == ("", "expected a table of sections, got an array")
    assert reason(p.document, ("a",)) == ("b", "unknown section; known sections: a")
    assert reason(Parser({1: {}}, "f.toml").document, ("a",)) == ("1", "unknown section; known sections: a")
    assert reason(p.document, ("a", "b", "c"), required=("c",)) == ("c", "required section [c] is missing")
    assert reason(p.section, "a", ("y",), {"x": " (x goes in [b])"}) == (
        "a.x", "unknown key (x goes in [b]); known keys: y")
    assert reason(Parser({"a": 3}, "f.toml").section, "a", ("x",)) == ("a", "expected a table ([a]), got an integer")
    assert reason(P.table, "t", {"a\nb": 1}, ("x",)) == ('t."a\\nb"', "unknown key; known keys: x")
    assert P.table("t", {"any": 1}) == {"any": 1}  # no key list: any keys
    assert str(P.missing("a.k", "; allowed: p, q")) == "f.toml: a.k: required key is missing; allowed: p, q"


def test_typed_values() -> None:
    assert P.integer("k", 8, 1, 8) == 8
    assert reason(P.integer, "k", 9, 1, 8) == ("k", "out of range: 9 (allowed 1..8)")
    assert reason(P.integer, "k", 9, 1, 8, hint=" for 1 deck") == ("k", "out of range: 9 (allowed 1..8 for 1 deck)")
    assert reason(P.integer, "k", 0x10000, 0, 0xFFFF, hex_=True) == ("k", "out of range: 0x10000 (allowed 0x0000..0xffff)")
    assert reason(P.integer, "k", 10**50, 0, 1) == ("k", "out of range: a very large integer (allowed 0..1)")
    assert reason(P.integer, "k", True, 0, 1) == ("k", "expected an integer, got a boolean (true)")
    assert reason(P.integer, "k", "8", 0, 9) == ("k", "expected an integer, got a string ('8')")
    assert reason(P.integer, "k", date(2024, 1, 1), 0, 9)[1].startswith("expected an integer, got a date")
    assert P.boolean("k", False) is False
    assert reason(P.boolean, "k", 1) == ("k", "expected a boolean (true or false), got an integer (1)")
    assert P.text("k", "  Dana  ", 10) == "Dana"
    assert P.text("k", " ", 10, empty_ok=True) == ""
    assert reason(P.text, "k", " ", 10) == ("k", "must not be empty")
    for bad in ("a\nb", "x" * 11, "\ud800", "a\x7fb"):
        assert reason(P.text, "k", bad, 10) == ("k", "must be one printable line of at most 10 characters")
    assert P.choice("k", "p", ("p", "q")) == "p"
    assert reason(P.choice, "k", "r", ("p", "q")) == ("k", "unknown value 'r'; allowed: p, q")
    assert reason(P.choice, "k", ["p"], ("p",)) == ("k", "expected a string, got an array")
    assert P.enum("k", "blue", Colour) is Colour.BLUE
    assert reason(P.enum, "k", "green", Colour) == ("k", "unknown value 'green'; allowed: red, blue")


@pytest.mark.parametrize("value, result", [
    ("0.05", Decimal("0.05")), (" 0.025 ", Decimal("0.025")), ("4e-2", Decimal("0.04")), (0, Decimal(0)),
    (0.1, Decimal("0.1")), ("0.050000000", Decimal("0.05")), ("0E-999999999", Decimal(0)), ("-0", Decimal(0)),
])
def test_decimals_in_bounds(value: object, result: Decimal) -> None:
    got = P.decimal("rate", value, 0, 1, hi_open=True, name="rate")
    assert got == result and type(got) is Decimal


@pytest.mark.parametrize("value, message", [
    ("1e-999999999", "too many decimal places: '1e-999999999' (at most 6)"),
    ("1e999999999", "out of range: 1E+999999999 (allowed 0 <= rate < 1)"),
    ("-1e999999999", "out of range: -1E+999999999 (allowed 0 <= rate < 1)"),
    ("0.0000001", "too many decimal places: '0.0000001' (at most 6)"),
    (1e-300, "too many decimal places: 1e-300 (at most 6)"),
    ("1", "out of range: 1 (allowed 0 <= rate < 1)"),
    (10**4000, "out of range: a very large integer"),
    ("0." + "0" * 60 + "1", f"not a decimal number of at most {MAX_DECIMAL_TEXT} characters"),
    ("five", "not a decimal number: 'five'"),
    ("NaN", "expected a finite number, got 'NaN'"),
    ("-Infinity", "expected a finite number, got '-Infinity'"),
    (float("inf"), "expected a finite number, got inf"),
    (True, 'expected a decimal string such as "0.05", got a boolean (true)'),
    ([0.05], 'expected a decimal string such as "0.05", got an array'),
])
def test_decimals_out_of_bounds(value: object, message: str) -> None:
    key, why = reason(P.decimal, "commission.rate", value, 0, 1, hi_open=True, name="rate")
    assert key == "commission.rate" and why.startswith(message)


def test_open_and_closed_ends_and_places() -> None:
    assert bounded_decimal("1", 0, 1, lo_open=True, name="portion") == 1
    with pytest.raises(NumberError, match=r"^out of range: 0 \(allowed 0 < portion <= 1\)$"):
        bounded_decimal("0", 0, 1, lo_open=True, name="portion")
    assert bounded_decimal("0.125", 0, 1, places=3) == Decimal("0.125")
    with pytest.raises(NumberError, match="at most 2"):
        bounded_decimal("0.125", 0, 1, places=2)


@settings(max_examples=500, deadline=1000)
@given(st.one_of(st.text(max_size=60), st.floats(), st.integers(),
                 st.from_regex(r"[-+]?[0-9]{0,20}(\.[0-9]{0,20})?([eE][-+]?[0-9]{1,12})?", fullmatch=True)))
def test_any_accepted_value_is_cheap_exact_arithmetic(value: object) -> None:
    """Whatever comes in, the answer is at once: a refusal, or a Decimal whose exact fraction has
    a small numerator and denominator (Fraction of it never computes a huge power of ten)."""
    try:
        d = bounded_decimal(value, -1000, 1000, places=6)
    except NumberError as exc:
        assert "\n" not in str(exc)
        return
    f = Fraction(d)
    assert abs(f) <= 1000 and f.denominator <= 10**6
