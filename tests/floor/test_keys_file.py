"""The floor's keys file (``--keys FILE``, controller/floor/keys.py) read by the one configuration
parser every file goes through (shoectl_config): one line naming the file, the key and the reason.
A developer's review: it was checked by hand, and a table id no table can have was taken."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.floor.keys import KeysError, load_keys


@pytest.fixture()
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "T1.key"
    path.write_bytes(os.urandom(32))
    path.chmod(0o600)
    return path


def test_a_good_file_gives_each_tables_hasher(tmp_path: Path, key_file: Path) -> None:
    keys = tmp_path / "keys.toml"
    keys.write_text(f'[keys]\nT1 = "{key_file.name}"\n')
    assert set(load_keys(keys)) == {"T1"}


@pytest.mark.parametrize("text, key, reason", [
    ('[keys]\n"T 1" = "T1.key"\n', 'keys."T 1"', "not a table id (1-32 letters, digits"),
    ('[keys]\nT1 = ""\n', "keys.T1", "must not be empty"),
    ('[keys]\nT1 = 5\n', "keys.T1", "expected a string"),
    ('[keys]\nT1 = "missing.key"\n', "keys.T1", "missing.key"),
    ('keys = "T1.key"\n', "keys", "expected a table"),
    ('[tables]\nT1 = "T1.key"\n', "tables", "known sections: keys"),
])
def test_a_bad_file_is_one_line_naming_the_key(tmp_path: Path, key_file: Path, text: str, key: str,
                                                reason: str) -> None:
    keys = tmp_path / "keys.toml"
    keys.write_text(text)
    with pytest.raises(KeysError) as caught:
        load_keys(keys)
    said = str(caught.value)
    assert "\n" not in said and said.startswith(f"{keys}: {key}: ") and reason in said, said
