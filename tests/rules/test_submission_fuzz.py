"""Fuzz tests for the Rules Submission loader (controller/rules/submission.py): random bytes, text,
TOML documents and mutated presets only ever raise SubmissionError, and what loads round-trips."""
from __future__ import annotations

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from submission_helpers import PRESETS, no_floats, roundtrip, write

from controller.rules import submission_parser as sub_parser
from controller.rules.errors import SubmissionError
from controller.rules.submission import load_preset, load_submission, parse_submission

# Fuzzing ------------------------------------------------------------------------------------

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

_KEYS = sorted({k for keys in sub_parser._SECTIONS.values() for k in keys} | {"x", "none", "house_money"})
_SECTION_NAMES = sorted(sub_parser._SECTIONS) + ["extra"]
_LITERALS = st.sampled_from([
    '"punto-banco"', '"ez-baccarat"', '"21-baccarat"', '"face-down"', '"face-up"', '"8:1"', '"0:1"', '"1 to 1"',
    '"0.05"', '"0"', '"1"', '"NaN"', "0.05", "1e400", "-0.0", "nan", "inf", "true", "false", "0", "1", "8", "17",
    "-1", "99999999999999999999", "[1, 2, 3]", "[1, 1]", "[]", '["player", "banker"]',
    '["player", "banker", "house_money"]', '["player", "banker", "player_bonus"]', "{}", "{ a = 1 }",
    "1979-05-27", "07:32:00", "1979-05-27T07:32:00Z", '"discard"', '"each"', '"push"', '""',
])


@st.composite
def toml_documents(draw):
    """Mostly well-formed documents: real sections and keys with plausible or wrong values."""
    game = draw(st.sampled_from(['"punto-banco"', '"ez-baccarat"', '"21-baccarat"']) | _LITERALS)
    lines = ["[submission]", f"game = {game}"]
    sections = draw(st.lists(st.sampled_from(_SECTION_NAMES), max_size=4, unique=True))
    for section in sections:
        if section != "submission":
            lines.append(f"[{section}]")
        known = sorted(sub_parser._SECTIONS.get(section, ()))
        keys = draw(st.lists(st.sampled_from(known or _KEYS) | st.sampled_from(_KEYS), max_size=3, unique=True))
        for key in keys:
            if section == "submission" and key == "game":
                continue
            lines.append(f"{key} = {draw(_LITERALS)}")
    return "\n".join(lines) + "\n"


@FUZZ
@given(data=st.binary(max_size=400))
def test_fuzz_bytes_only_raise_submission_error(tmp_path, data):
    path = write(tmp_path, data, "fuzz.toml")
    try:
        s = load_submission(path)
    except SubmissionError as err:
        assert str(err).startswith(str(path)) and "\n" not in str(err)
    else:
        assert roundtrip(s) == s


@FUZZ
@given(text=st.text(alphabet=string.printable + "é\u2028\x00\x7f[]=\"'", max_size=300))
def test_fuzz_text_only_raises_submission_error(tmp_path, text):
    path = write(tmp_path, text, "fuzz.toml")
    try:
        load_submission(path)
    except SubmissionError as err:
        assert "\n" not in str(err)


@FUZZ
@given(doc=toml_documents())
def test_fuzz_toml_documents_only_raise_submission_error(tmp_path, doc):
    path = write(tmp_path, doc, "fuzz.toml")
    try:
        s = load_submission(path)
    except SubmissionError as err:
        assert str(err).startswith(str(path) + ": ") and "\n" not in str(err)
    else:
        assert roundtrip(s) == s and no_floats(s.to_dict())


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12)
    | st.sampled_from(["8:1", "0.05", "player", "face-down", "push", "first-only", "simulated-round"]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4),
    max_leaves=10,
)


@settings(max_examples=300, deadline=None)
@given(preset=st.sampled_from(PRESETS), data=st.data())
def test_fuzz_mutated_presets_only_raise_submission_error(preset, data):
    d = load_preset(preset).to_dict()
    d.pop("source")
    section = data.draw(st.sampled_from(sorted(d) + ["extra"]))
    if section in d and d[section] and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(d[section]) + ["extra"]))
        d[section][key] = data.draw(_json_values)
    else:
        d[section] = data.draw(_json_values)
    try:
        s = parse_submission(d, "mutant")
    except SubmissionError as err:
        assert str(err).startswith("mutant") and "\n" not in str(err)
    else:
        assert roundtrip(s) == s and no_floats(s.to_dict())
