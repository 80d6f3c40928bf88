"""Verify a journal file: SQLite integrity, the hash chain (and HMAC), and external anchors.

``verify(path)`` opens the file read-only and never modifies it. It reports the first bad entry:

- an edited entry (any column, the payload included): its hash does not match;
- a deleted entry: a gap in ``seq``, or (deleted and renumbered) a ``prev_hash`` that does not
  link to the entry before;
- an inserted or reordered entry: a broken ``prev_hash`` link, or a hash that does not match;
- with HMAC: an entry forged with a recomputed hash by someone without the key.

A chain alone cannot detect a truncated tail (the last entries removed) nor, without HMAC, a
journal rewritten from some entry on with recomputed hashes. For those, compare with an anchor
kept outside the journal (``Journal.anchor()``, printed at each shoe end): ``expect_count``,
``expect_last_hash``, or ``anchors=[(seq, hash), ...]`` (an entry that must have that hash).
"""
from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from controller.journal.chain import GENESIS_HASH, HMAC_SHA256, Hasher, canonical_json, decode_payload_strict, entry_body
from controller.journal.errors import NotAJournalError
from controller.journal.connection import open_readonly_connection, translate
from controller.journal.entry import parse_ts
from controller.journal.schema import SELECT, inspect_meta

_HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class VerifyReport:
    """The outcome of ``verify``.

    ok: everything checked is intact.
    entries: entries found good (all of them when ok; those before the first bad one otherwise).
    first_bad_seq: the seq of the first bad (or missing) entry; None when ok or when the failure
        is not about one entry (integrity check, key).
    reason: why it failed, one line; None when ok.
    last_seq, last_hash: the last good entry (0 and the genesis hash when none).
    total: rows in the entries table.
    algorithm, key_id: the journal's hash algorithm and HMAC key id (from its meta table).
    needs_key: the journal is HMAC-protected and no key was given (nothing was verified).
    """

    ok: bool
    entries: int
    first_bad_seq: int | None
    reason: str | None
    last_seq: int = 0
    last_hash: str = GENESIS_HASH
    total: int = 0
    algorithm: str = ""
    key_id: str | None = None
    needs_key: bool = False
    path: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def is_hash(text: str) -> bool:
    return isinstance(text, str) and len(text) == 64 and set(text) <= _HEX


def verify(path: str | os.PathLike[str], *, hmac_key: bytes | None = None, expect_count: int | None = None,
           expect_last_hash: str | None = None, anchors: Iterable[tuple[int, str]] = (),
           integrity_check: bool = True) -> VerifyReport:
    """Verify the journal at ``path`` (read-only). Raises JournalError when the file is missing,
    unreadable, locked or not a journal; returns a VerifyReport otherwise."""
    p = Path(path)
    hasher = Hasher(hmac_key)
    conn = open_readonly_connection(p)
    try:
        try:
            conn.execute("BEGIN")  # one consistent snapshot, even while the writer appends
            meta = inspect_meta(conn, p)
            if meta is None:
                raise NotAJournalError(f"{p}: not a journal: an empty SQLite database")
            total = conn.execute("SELECT count(*) FROM entries").fetchone()[0]
            base = {"total": total, "algorithm": meta["hash_algorithm"], "key_id": meta.get("key_id"), "path": str(p)}
            if integrity_check:
                problems = [r[0] for r in conn.execute("PRAGMA quick_check(5)")]
                if problems != ["ok"]:
                    return VerifyReport(False, 0, None, "SQLite integrity check failed: " + "; ".join(map(str, problems)), **base)
            failure, needs_key = _check_key(meta, hasher)
            if failure is not None:
                return VerifyReport(False, 0, None, failure, needs_key=needs_key, **base)
            return _check_chain(conn, meta, hasher, total, expect_count, expect_last_hash, dict(anchors), base)
        except sqlite3.Error as exc:
            raise translate(exc, p, "read the journal") from None
    finally:
        conn.close()


def _check_key(meta: dict[str, str], hasher: Hasher) -> tuple[str | None, bool]:
    """(why the key does not fit, whether a key is missing); (None, False) when it fits."""
    algorithm = meta["hash_algorithm"]
    if algorithm == HMAC_SHA256 and hasher.algorithm != HMAC_SHA256:
        return f"HMAC key required: the journal is HMAC-protected (key id {meta.get('key_id')}); give its key", True
    if algorithm != HMAC_SHA256 and hasher.algorithm == HMAC_SHA256:
        return ("an HMAC key was given but the journal is not HMAC-protected (plain sha256): "
                "it was created without a key, or re-chained without it"), False
    if algorithm == HMAC_SHA256 and meta.get("key_id") is not None and meta.get("key_id") != hasher.key_id:
        return f"wrong HMAC key: its key id is {hasher.key_id}, the journal's is {meta.get('key_id')}", False
    return None, False


def _check_chain(conn: sqlite3.Connection, meta: dict[str, str], hasher: Hasher, total: int,
                 expect_count: int | None, expect_last_hash: str | None, anchors: dict[int, str],
                 base: dict[str, Any]) -> VerifyReport:
    table_id = meta["table_id"]
    expected = 1
    prev = GENESIS_HASH
    good = 0

    def fail(seq: int | None, reason: str) -> VerifyReport:
        return VerifyReport(False, good, seq, reason, last_seq=expected - 1, last_hash=prev, **base)

    cur = conn.execute(f"{SELECT} ORDER BY seq")
    while True:
        rows = cur.fetchmany(2000)
        if not rows:
            break
        for row in rows:
            seq = row[0]
            if not isinstance(seq, int) or seq < expected:
                return fail(seq if isinstance(seq, int) else expected, f"unexpected seq {seq!r} (expected {expected})")
            if seq > expected:
                missing = f"entry {expected} is missing" if seq == expected + 1 else f"entries {expected}-{seq - 1} are missing"
                return fail(expected, f"{missing} (the next entry is {seq}): deleted?")
            reason = _check_row(row, prev, hasher, table_id)
            if reason is not None:
                return fail(seq, f"entry {seq}: {reason}")
            anchored = anchors.get(seq)
            if anchored is not None and anchored != row[12]:
                return fail(seq, f"entry {seq}: hash {row[12]} differs from the anchor {anchored}: "
                                 "the journal was rewritten from this entry or before")
            prev = row[12]
            expected += 1
            good += 1
    last = expected - 1
    beyond = sorted(s for s in anchors if s > last)
    if beyond:
        return fail(beyond[0], f"entry {beyond[0]} of an anchor is missing: the journal ends at {last} (truncated?)")
    if expect_count is not None and last != expect_count:
        if last < expect_count:
            return fail(last + 1, f"the journal has {last} entries, {expect_count} expected: truncated?")
        return fail(expect_count + 1, f"the journal has {last} entries, {expect_count} expected")
    if expect_last_hash is not None and prev != expect_last_hash.lower():
        return fail(last or None, f"the last hash is {prev}, {expect_last_hash} expected")
    return VerifyReport(True, good, None, None, last_seq=last, last_hash=prev, **base)


def _check_row(row: tuple[Any, ...], prev: str, hasher: Hasher, table_id: str) -> str | None:
    (seq, ts, kind, row_table, shoe_id, round_no, device_id, device_epoch, device_counter, operator,
     payload, prev_hash, digest) = row
    if prev_hash != prev:
        where = "the genesis hash" if seq == 1 else f"the hash of entry {seq - 1}"
        return (f"prev_hash does not match {where}: an entry before it was deleted, inserted or moved, "
                "or this one was")
    if not (type(ts) is str and type(kind) is str and type(row_table) is str and type(payload) is str
            and type(digest) is str and _opt(shoe_id, str) and _opt(round_no, int) and _opt(device_id, str)
            and _opt(device_epoch, int) and _opt(device_counter, int) and _opt(operator, str)):
        for name, value, kind_of, optional in (
            ("ts", ts, str, False), ("kind", kind, str, False), ("table_id", row_table, str, False),
            ("shoe_id", shoe_id, str, True), ("round_no", round_no, int, True), ("device_id", device_id, str, True),
            ("device_epoch", device_epoch, int, True), ("device_counter", device_counter, int, True),
            ("operator", operator, str, True), ("payload", payload, str, False), ("hash", digest, str, False),
        ):
            if not (value is None and optional) and type(value) is not kind_of:
                return f"column {name} holds a {type(value).__name__}, not a {kind_of.__name__}"
    expect = hasher.digest(prev, entry_body(seq, ts, kind, row_table, shoe_id, round_no, device_id, device_epoch,
                                            device_counter, operator, payload))
    if expect != digest:
        forged = " or forged without the HMAC key" if hasher.algorithm == HMAC_SHA256 else ""
        return f"hash mismatch: the entry was edited{forged}"
    # The hash is right, so what follows was written with a valid hash: a bug, or a forger.
    try:
        if canonical_json(decode_payload_strict(payload)) != payload:
            return "payload is not canonical JSON"
    except (ValueError, RecursionError) as exc:  # PayloadError is a ValueError
        return f"bad payload: {exc}"
    try:
        parse_ts(ts)
    except ValueError:
        return f"bad timestamp {ts!r}"
    if not kind:
        return "empty kind"
    if row_table != table_id:
        return f"table_id {row_table!r} differs from the journal's {table_id!r}"
    if device_counter is not None and (device_id is None or device_epoch is None):
        return "device_counter without device_id and device_epoch"
    return None


def _opt(value: Any, kind_of: type) -> bool:
    return value is None or type(value) is kind_of
