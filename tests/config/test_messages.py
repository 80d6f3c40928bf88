"""What a malformed file's message shows (shoectl_config.text, shoectl_config.documents): one short
line in the user's words. A value is written as TOML writes it (``true``, ``1979-05-27``,
``2020-01-01T00:00:00Z``, ``nan``), never as Python does (``True``, ``datetime.date(...)``); a value
or a key from the file is cut to ``MAX_SHOWN`` characters, however long it is; an integer too long
for Python is named with its line, without Python's advice (``sys.set_int_max_str_digits``)."""
from __future__ import annotations

import math
import sys
import tomllib
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shoectl_config.documents import parse_toml
from shoectl_config.errors import ConfigError
from shoectl_config.parser import DocumentParser
from shoectl_config.text import MAX_SHOWN, described, key_part, show, typename
from shoectl_config.toml_text import toml_document


class Refused(ConfigError):
    pass


class Parser(DocumentParser):
    error = Refused


PYTHON_WORDS = ("datetime", "tzinfo", "True", "False", "None", "sys.", "set_int_max_str_digits", "\\x0", "\\udc")


def in_users_words(message: str) -> bool:
    return "\n" not in message and message.isprintable() and not any(w in message for w in PYTHON_WORDS)


def refusal(raw: bytes) -> str:
    with pytest.raises(Refused) as info:
        parse_toml(raw, "f.toml", Refused)
    assert info.value.source == "f.toml" and info.value.key == ""
    return info.value.reason


# -- 1. an integer of more digits than Python converts ------------------------------------------

DIGITS = sys.get_int_max_str_digits()  # 4300 unless someone changed it
LONG = "1" + "0" * 5000


@pytest.mark.parametrize("text, line", [
    (f'[submission]\ngame = "punto-banco"\ndecks = {LONG}\n', 3),
    (f"a = -{'1_2' * 2200}\n", 1),                              # underscores do not count as digits
    (f'a = "{LONG}"\nb = 1\nc = [\n  1,\n  {LONG},\n]\n', 5),    # digits in a string are no integer
    (f'a = """\n{LONG}\n"""\nb = {{ c = {LONG} }}\n', 4),       # nor in a multi-line string
    (f"{LONG} = 1\nz = {LONG}\n", 2),                           # nor in a key
    (f"a = 1\r\nb = 2\r\nc = +{LONG}\r\n", 3),
    ("\ufeff" + f"[t]\nk = {LONG}\n", 2),
    ("".join(f's{i} = "{LONG}"\n' for i in range(40)) + f"z = {LONG}\n", 41),
], ids=["rules", "underscores", "after-a-string", "after-a-multi-line-string", "after-a-key", "crlf", "bom",
        "after-forty-strings"])
def test_an_integer_too_long_for_python_is_named_with_its_line(text: str, line: int) -> None:
    why = refusal(text.encode())
    assert why == f"TOML value error: an integer with more than {DIGITS} digits (at line {line})"
    assert in_users_words(why)


def test_an_integer_just_within_the_limit_is_read() -> None:
    assert parse_toml(f"a = {'9' * DIGITS}\n".encode(), "f.toml", Refused)["a"] == 10**DIGITS - 1


# -- 2. values as TOML writes them --------------------------------------------------------------

@pytest.mark.parametrize("value, text", [
    (True, "a boolean (true)"),
    (False, "a boolean (false)"),
    (8, "an integer (8)"),
    (-3, "an integer (-3)"),
    (10**40, "an integer (a very large integer)"),
    pytest.param(10**5000, "an integer (a very large integer)", id="5000-digits"),  # str() of it would raise
    (0.5, "a float (0.5)"),
    (1e-300, "a float (1e-300)"),
    (float("nan"), "a float (nan)"),
    (float("inf"), "a float (inf)"),
    (float("-inf"), "a float (-inf)"),
    ("8", "a string ('8')"),
    ("it's", "a string (\"it's\")"),
    ('say "hi"', "a string ('say \"hi\"')"),
    ("a\nb", 'a string ("a\\nb")'),
    ("bell\x07", 'a string ("bell\\u0007")'),
    ("tab\there", 'a string ("tab\\there")'),
    ("\udcff", 'a string ("\\xff")'),  # a byte that was not UTF-8, as the byte
    (date(1979, 5, 27), "a date (1979-05-27)"),
    (time(7, 32), "a time (07:32:00)"),
    (time(0, 32, 0, 999999), "a time (00:32:00.999999)"),
    (datetime(1979, 5, 27, 7, 32), "a local date-time (1979-05-27T07:32:00)"),
    (datetime(2020, 1, 1, tzinfo=timezone.utc), "a date-time (2020-01-01T00:00:00Z)"),
    (datetime(1979, 5, 27, 0, 32, 0, 999999, tzinfo=timezone(timedelta(hours=-7))),
     "a date-time (1979-05-27T00:32:00.999999-07:00)"),
    ([1, 2], "an array"),
    ({"a": 1}, "a table"),
    (None, "a value of another kind"),
])
def test_a_value_is_described_as_toml_writes_it(value: object, text: str) -> None:
    assert described(value) == text
    assert in_users_words(text)


@pytest.mark.parametrize("toml, shown", [
    ("true", "true"), ("false", "false"), ("nan", "nan"), ("+inf", "inf"), ("-inf", "-inf"),
    ("1979-05-27", "1979-05-27"),
    ("07:32:00", "07:32:00"), ("1979-05-27T07:32:00", "1979-05-27T07:32:00"),
    ("2020-01-01T00:00:00Z", "2020-01-01T00:00:00Z"), ("2020-01-01 00:00:00+00:00", "2020-01-01T00:00:00Z"),
    ("1979-05-27T00:32:00.5-07:00", "1979-05-27T00:32:00.500000-07:00"), ("'C:\\dir'", "'C:\\dir'"),
])
def test_a_parsed_value_is_shown_as_toml(toml: str, shown: str) -> None:
    value = tomllib.loads(f"a = {toml}")["a"]
    assert show(value) == shown


def test_the_loaders_messages_show_toml_values() -> None:
    p = Parser({"submission": {"decks": date(1979, 5, 27)}}, "f.toml")
    cases = [
        (date(1979, 5, 27), "expected an integer, got a date (1979-05-27)"),
        (tomllib.loads("a = 2020-01-01T00:00:00Z")["a"], "expected an integer, got a date-time (2020-01-01T00:00:00Z)"),
        (True, "expected an integer, got a boolean (true)"),
        (time(12, 0), "expected an integer, got a time (12:00:00)"),
        (float("nan"), "expected an integer, got a float (nan)"),
    ]
    for value, reason in cases:
        with pytest.raises(Refused) as info:
            p.integer("submission.decks", value, 1, 8)
        assert info.value.reason == reason
    with pytest.raises(Refused) as info:
        p.decimal("commission.rate", False, 0, 1)
    assert info.value.reason == 'expected a decimal string such as "0.05", got a boolean (false)'
    with pytest.raises(Refused) as info:
        p.boolean("k", date(2024, 1, 1))
    assert info.value.reason == "expected a boolean (true or false), got a date (2024-01-01)"


_OFFSETS = st.sampled_from([None, timezone.utc, timezone(timedelta(hours=5, minutes=30)),
                            timezone(-timedelta(hours=7))])
_VALUES = st.one_of(
    st.booleans(), st.integers(-10**30, 10**30), st.floats(), st.dates(), st.times(),
    st.datetimes(timezones=_OFFSETS), st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40),
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_a_shown_value_reads_back_as_toml(value: object) -> None:
    """Whatever TOML can hold, ``show`` writes it as TOML: the text read back is the value, or
    for a string too long to show, how it begins and ``...``."""
    shown = show(value)
    assert len(shown) <= MAX_SHOWN and shown.isprintable()
    assert isinstance(value, str) or in_users_words(shown)  # a string may say "True" itself
    back = tomllib.loads(f"a = {shown}")["a"]
    if isinstance(value, str) and back != value:  # cut: what is shown is how the value begins
        assert back.endswith("...") and value.startswith(back[:-3])
    elif isinstance(value, float) and math.isnan(value):
        assert math.isnan(back)
    else:
        assert back == value and type(back) is type(value)


# -- 3. long values and keys are cut ------------------------------------------------------------

@pytest.mark.parametrize("value", [
    "x" * 100_000, "\x00" * 100_000, "'" * 100_000, "é" * 1000, "a\n" * 1000, "\udcff" * 100, "x" * 58 + "\x00",
], ids=["plain", "nul", "quotes", "accents", "lines", "bytes", "escape-at-the-end"])
def test_a_long_value_is_cut(value: str) -> None:
    shown = show(value)
    assert len(shown) <= MAX_SHOWN and shown.endswith(("...'", '..."'))
    assert in_users_words(shown)
    inner = shown[1:-4]  # every escape is whole: the text before the cut reads back as a prefix of the value
    if shown[0] == '"' and "\\x" not in inner:
        assert value.startswith(tomllib.loads(f'a = "{inner}"')["a"])


def test_a_value_that_fits_is_not_cut() -> None:
    assert show("x" * (MAX_SHOWN - 2)) == "'" + "x" * (MAX_SHOWN - 2) + "'"
    assert show("x" * (MAX_SHOWN - 1)).endswith("...'")


@pytest.mark.parametrize("key", ["k" * 100_000, "k\n" * 50_000, "é" * 100_000, "k" * 59 + "\n", "\x07" * 1000],
                         ids=["bare", "lines", "accents", "newline-at-the-end", "bells"])
def test_a_long_key_is_cut(key: str) -> None:
    shown = key_part(key)
    assert len(shown) <= MAX_SHOWN and "..." in shown and shown.isprintable()


def test_a_key_that_fits_is_whole() -> None:
    assert key_part("k" * MAX_SHOWN) == "k" * MAX_SHOWN
    assert key_part("k" * (MAX_SHOWN + 1)) == "k" * (MAX_SHOWN - 3) + "..."
    assert key_part("a\nb") == '"a\\nb"'


def test_toml_text_keeps_a_long_key_whole() -> None:
    """Only messages cut: TOML text written for a person keeps every key (toml_text)."""
    key = "k" * 500
    assert tomllib.loads(toml_document({key: {key + "\n": 1}})) == {key: {key + "\n": 1}}


@pytest.mark.parametrize("doc, call", [
    ({"s": {"k" * 100_000: 1}}, lambda p: p.section("s", ("a", "b"))),
    ({"s": {"k\x00" * 50_000: 1}}, lambda p: p.section("s", ("a", "b"))),
    ({"k" * 100_000: {}}, lambda p: p.document(("s",))),
    ({"s": {"a": "z" * 100_000}}, lambda p: p.choice("s.a", p.data["s"]["a"], ("x", "y"))),
    ({"s": {"a": "z" * 100_000}}, lambda p: p.integer("s.a", p.data["s"]["a"], 1, 8)),
], ids=["unknown-key", "unknown-key-with-nuls", "unknown-section", "unknown-value", "not-an-integer"])
def test_an_unknown_key_or_a_bad_value_makes_a_short_message(doc: dict, call) -> None:
    with pytest.raises(Refused) as info:
        call(Parser(doc, "f.toml"))
    message = str(info.value)
    assert len(message) < 200 and in_users_words(message)


def test_a_huge_key_in_each_loader_makes_a_short_line(tmp_path: Path) -> None:
    from controller.operators.store import OperatorsError, load_operators
    from controller.rules.submission import SubmissionError, load_submission
    from firmware_bridge.profiles import ProfileError, load_profile

    huge = "k" * 100_000
    rules = tmp_path / "rules.toml"
    rules.write_text(f'[submission]\ngame = "punto-banco"\n{huge} = 1\n')
    profile = tmp_path / "shoe.toml"
    profile.write_text(f"{huge} = 1\n")
    operators = tmp_path / "operators.toml"
    operators.write_text(f'[operators."{huge}\\n"]\nrole = "dealer"\n')
    operators.chmod(0o600)
    for load, path, error in ((load_submission, rules, SubmissionError), (load_profile, profile, ProfileError),
                              (load_operators, operators, OperatorsError)):
        with pytest.raises(error) as info:
            load(path)
        message = str(info.value)
        assert len(message) < len(str(path)) + 400 and in_users_words(message), message


def test_the_type_names_are_words() -> None:
    assert typename(datetime(2020, 1, 1)) == "a local date-time"
    assert typename(datetime(2020, 1, 1, tzinfo=timezone.utc)) == "a date-time"
    assert typename(b"x") == "a value of another kind"
