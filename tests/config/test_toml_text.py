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
