"""Changing a journal file the way someone with access to it would: editing, deleting and
inserting rows, and re-chaining them with recomputed hashes (with or without the HMAC key)."""
from __future__ import annotations

import sqlite3
from pathlib import Path

from controller.journal import GENESIS_HASH
from controller.journal.chain import Hasher, entry_body


def tamper(path: Path, *statements: str, params: tuple = ()) -> None:
    """Drop the append-only triggers, run SQL, commit."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN")
        conn.execute("DROP TRIGGER IF EXISTS entries_no_update")
        conn.execute("DROP TRIGGER IF EXISTS entries_no_delete")
        for s in statements:
            conn.execute(s, params if "?" in s else ())
        conn.execute("COMMIT")
    finally:
        conn.close()


def rows(path: Path) -> list[tuple]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT * FROM entries ORDER BY seq").fetchall()
    finally:
        conn.close()


def rewrite(path: Path, new_rows: list[tuple], *, meta: dict[str, str] | None = None) -> None:
    """Replace every entry, and set ``meta`` keys (a value None deletes the key)."""
    tamper(path, "DELETE FROM entries")
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", new_rows)
        for k, v in (meta or {}).items():
            if v is None:
                conn.execute("DELETE FROM meta WHERE key = ?", (k,))
            else:
                conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (k, v))
        conn.execute("COMMIT")
    finally:
        conn.close()


def rechain(entries: list[tuple], *, from_seq: int = 1, key: bytes | None = None) -> list[tuple]:
    """Recompute prev_hash/hash from ``from_seq`` on, as a forger would, with ``key`` (None: plain
    SHA-256, i.e. a forger who does not have the HMAC key)."""
    hasher = Hasher(key)
    out = []
    prev = GENESIS_HASH
    for r in entries:
        r = tuple(r)
        if r[0] >= from_seq:
            digest = hasher.digest(prev, entry_body(*r[:11]))
            r = (*r[:11], prev, digest)
        out.append(r)
        prev = r[12]
    return out


def renumber(entries: list[tuple]) -> list[tuple]:
    return [(i, *r[1:]) for i, r in enumerate(entries, start=1)]


def delete_and_rechain(path: Path, seq: int) -> None:
    """Remove entry ``seq``, renumber the later ones and recompute every hash with plain SHA-256:
    a journal consistent in itself, relabelled ``sha256`` if it was an HMAC journal."""
    kept = renumber([r for r in rows(path) if r[0] != seq])
    rewrite(path, rechain(kept, from_seq=seq), meta={"hash_algorithm": "sha256", "key_id": None})


def reference_verdict(path: Path, key: bytes | None, table_id: str = "T1") -> tuple:
    """What the reference check (``ChainCheck.feed`` row by row, then ``finish``) says of the
    journal at ``path``: ``(ok, first_bad_seq, reason, good, last_hash)``, for the fast paths'
    tests to compare ``verify``'s report with."""
    from controller.journal.chaincheck import ChainCheck

    check = ChainCheck(table_id, Hasher(key))
    for row in rows(path):
        if not check.feed(row):
            break
    check.finish()
    return check.ok, check.first_bad_seq, check.reason, check.good, check.last_hash
