"""TOML text from plain data (shoectl_config.toml_text): what it writes, tomllib reads back equal,
whatever the strings hold (quotes, backslashes, control characters, DEL, any Unicode)."""
from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shoectl_config.toml_text import toml_document, toml_value

TEXT = st.text(st.characters(exclude_categories=("Cs",)))  # a TOML string holds no lone surrogate
KEYS = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12)
SCALARS = st.one_of(TEXT, st.integers(-(2**63), 2**63 - 1), st.booleans())
VALUES = st.one_of(SCALARS, st.lists(TEXT, max_size=4), st.lists(st.integers(-99, 99), max_size=4))


@given(st.dictionaries(KEYS, st.dictionaries(KEYS, VALUES, max_size=5), max_size=4))
def test_a_document_reads_back_as_it_was_written(tables: dict) -> None:
    assert tomllib.loads(toml_document(tables)) == tables


def test_the_characters_toml_refuses_in_a_string_are_escaped() -> None:
    assert toml_value('a"b\\c\td\x7fe\x00\u00e9') == '"a\\"b\\\\c\\td\\u007Fe\\u0000\u00e9"'


def test_anything_but_plain_data_is_refused() -> None:
    with pytest.raises(TypeError, match="no TOML text for a float"):
        toml_value(0.5)


@pytest.mark.parametrize("key", ["a\nb", "café", 'say "hi"', "back\\slash", "bell\x07", "tab\there", "del\x7f", "a.b", "庄"])
def test_a_quoted_key_in_a_message_is_the_key_as_toml_writes_it(key: str) -> None:
    """An unknown key named in an error message is written as TOML writes it, so the operator can
    find it in the file: TOML escapes (``\\n``, ``\\u0007``), printable non-ASCII kept as is, never
    Python's escape forms (``\\xe9``)."""
    from shoectl_config.text import key_part

    shown = key_part(key)
    assert "\\x" not in shown
    assert tomllib.loads(f"{shown} = 1") == {key: 1}
    assert shown.isprintable()


def test_an_unknown_key_with_a_newline_is_named_in_toml_form() -> None:
    from shoectl_config.parser import DocumentParser

    doc = tomllib.loads('[table]\n"caf\\u00e9\\n" = 1\n')
    with pytest.raises(Exception) as caught:
        DocumentParser(doc, "the file").section("table", ("known",))
    assert 'table."café\\n"' in str(caught.value)
