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
from shoectl_config.documents import read_toml_file
from shoectl_config.errors import ConfigError

MAX_KEYS_FILE_BYTES = 1024 * 1024


class KeysError(ConfigError):
    """The keys file cannot be used."""


def load_keys(path: str | Path) -> dict[str, Hasher]:
    shown, doc, _mode = read_toml_file(path, MAX_KEYS_FILE_BYTES, KeysError)
    unknown = sorted(set(doc) - {"keys"})
    if unknown:
        raise KeysError(shown, unknown[0], "unknown key (the file holds one table, [keys])")
    keys = doc.get("keys", {})
    if not isinstance(keys, dict):
        raise KeysError(shown, "keys", "must be a table of TABLE_ID = \"KEY FILE\"")
    base = Path(path).parent
    out: dict[str, Hasher] = {}
    for table_id, key_path in keys.items():
        if not isinstance(key_path, str) or not key_path:
            raise KeysError(shown, f"keys.{table_id}", "must be the path of the table's HMAC key file")
        try:
            out[table_id] = Hasher(load_hmac_key(base / key_path))
        except JournalError as exc:
            raise KeysError(shown, f"keys.{table_id}", str(exc)) from None
    return out
