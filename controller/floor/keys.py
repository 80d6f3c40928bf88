"""The tables' HMAC keys on the floor (``--keys FILE``): which table's hashes the collector and
``floor verify`` can recompute.

The file is TOML with one table ``[keys]`` mapping a table id to the path of its journal's key
file (the very file ``shoectl run --hmac-key`` reads; a relative path is taken from the keys
file's directory)::

    [keys]
    T1 = "/etc/shoectl/keys/T1.key"
    T2 = "keys/T2.key"

Each key file is read with ``controller.journal.chain.load_hmac_key`` (mode 0600, at least 16
bytes). A table without a key has its chain checked link by link (``prev_hash``), its hashes not
recomputed. ``load_keys(path)`` returns ``{table_id: Hasher}``; ``KeysError`` says what is wrong
on one line.
"""
from __future__ import annotations

from pathlib import Path

from controller.journal.chain import Hasher, load_hmac_key
from controller.journal.errors import JournalError
from controller.table_ids import TABLE_ID, TABLE_ID_RULE
from shoectl_config.documents import read_toml_file
from shoectl_config.errors import ConfigError
from shoectl_config.parser import DocumentParser
from shoectl_config.text import key_part

MAX_KEYS_FILE_BYTES = 1024 * 1024
MAX_PATH_CHARS = 4096


class KeysError(ConfigError):
    """The keys file cannot be used."""


class _KeysParser(DocumentParser):
    """The keys file's one section, checked as every configuration file is (shoectl_config)."""

    error = KeysError

    def key_files(self) -> dict[str, str]:
        """``{table_id: key file path as written}``."""
        self.document(("keys",))
        out: dict[str, str] = {}
        for table_id, key_path in self.section("keys", None).items():
            key = f"keys.{key_part(table_id)}"
            if not TABLE_ID.fullmatch(table_id):
                raise self.fail(key, f"not a table id ({TABLE_ID_RULE})")
            out[table_id] = self.text(key, key_path, MAX_PATH_CHARS)
        return out


def load_keys(path: str | Path) -> dict[str, Hasher]:
    """``{table_id: Hasher}`` from the keys file at ``path``; ``KeysError`` (one line) when the file
    or a key file it names cannot be used."""
    shown, doc, _mode = read_toml_file(path, MAX_KEYS_FILE_BYTES, KeysError)
    parser = _KeysParser(doc, shown)
    base = Path(path).parent
    out: dict[str, Hasher] = {}
    for table_id, key_path in parser.key_files().items():
        try:
            out[table_id] = Hasher(load_hmac_key(base / key_path))
        except JournalError as exc:
            raise parser.fail(f"keys.{key_part(table_id)}", str(exc)) from None
    return out
