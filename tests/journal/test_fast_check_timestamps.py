"""The chain check's fast path spares an entry the timestamp check when its timestamp is the text of
the one the entry before it passed (``ChainCheck.feed_rows``: a transaction's records share it): the
reference's verdict all the same (``ChainCheck.feed`` row by row), on journals whose entries share
timestamps and in which a forger edited one, or two in a row, and recomputed the hashes."""
from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from controller.journal import Journal, verify
from controller.journal.chain import Hasher, entry_body

from tampering import rechain, reference_verdict, rewrite, rows, tamper

from .conftest import KEY


class SharedClock:
    """Each instant read three times (the records of one transaction), then one millisecond on."""

    def __init__(self) -> None:
        self.now, self.reads = datetime(2025, 1, 31, 20, 15, 0, tzinfo=timezone.utc), 0

    def __call__(self) -> datetime:
        self.reads += 1
        if self.reads % 3 == 0:
            self.now += timedelta(milliseconds=1)
        return self.now


def _forged_timestamps(ts: str) -> list[str]:
    """Timestamps a forger might write where ``ts`` was (valid or not, as ``parse_ts`` says)."""
    return [ts, ts[:20] + "12345x" + "Z", ts[:20] + "1234567", ts[:20] + "1234\u0665" + "6Z", ts[:-1] + "z",
            ts[:10] + " " + ts[11:], ts[:10] + '"' + ts[11:], ts[:10] + "\\" + ts[11:], ts[:10] + "\u00e9" + ts[11:],
            ts[:26] + "ZZ", ts[:25] + "Z", ts.replace("-01-", "-13-"), ts[:20] + "999999Z"]


@pytest.mark.parametrize("key", [None, KEY], ids=["sha256", "hmac"])
def test_fast_path_and_reference_agree_on_forged_shared_timestamps(tmp_path: Path, key: bytes | None) -> None:
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1", hmac_key=key, clock=SharedClock()) as j:
        for i in range(60):
            j.append(f"k{i % 3}", {"i": i, "seat": i % 7}, shoe="S1", round=i // 6)
    entries = [list(r) for r in rows(path)]
    assert entries[10][1] == entries[11][1]  # shared: what the fast path spares
    rng = random.Random(5)
    failures = 0
    for forged in _forged_timestamps(entries[10][1]):
        for at in (11, 12, 13):  # the second or the third of a transaction, or the first of the next
            tampered = [list(r) for r in entries]
            for row in tampered[at:at + rng.choice([1, 2])]:
                row[1] = forged
            rewrite(path, rechain([tuple(r) for r in tampered], from_seq=at + 1, key=key))
            report = verify(path, hmac_key=key, integrity_check=False, anchor_files=[])
            expected = reference_verdict(path, key)
            assert (report.ok, report.first_bad_seq, report.reason, report.entries, report.last_hash) == expected, forged
            failures += not report.ok
    assert failures >= 20  # the forgeries were found, not only agreed on


_UNTYPED_ENTRIES = ("CREATE TABLE entries (seq INTEGER PRIMARY KEY, ts, kind, table_id, shoe_id, round_no, device_serial, "
                    "device_epoch, device_counter, operator, payload, prev_hash, hash)")


@pytest.mark.parametrize(("at", "processes"), [(1, 1), (1, 2), (6, 2)])
@pytest.mark.parametrize("key", [None, KEY], ids=["sha256", "hmac"])
def test_no_timestamp_at_the_first_row_a_check_reads_is_found(tmp_path: Path, key: bytes | None, at: int,
                                                               processes: int) -> None:
    """A check's first row (the journal's first entry; the first of a split verify's second half,
    entry 6 of 10) has no timestamp before it to be equal to: an entry with no ``ts`` at all
    (NULL, in an entries table a forger made without types), hashed over the empty text the fast
    path would splice, is found there for the reference's reason (a review: it verified)."""
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1", hmac_key=key) as j:
        for i in range(10):
            j.append("note", {"i": i}, shoe="S1", round=i)
    forged = [list(r) for r in rows(path)]
    hasher = Hasher(key)
    body = entry_body(at, "@", *forged[at - 1][2:11]).replace(b'[%d,"@",' % at, b"[%d,," % at)
    forged[at - 1][1], forged[at - 1][12] = None, hasher.digest(forged[at - 1][11], body)
    forged = [list(r) for r in rechain([tuple(r) for r in forged], from_seq=at + 1, key=key)]
    tamper(path, "ALTER TABLE entries RENAME TO old", _UNTYPED_ENTRIES, "INSERT INTO entries SELECT * FROM old",
           "DROP TABLE old")
    rewrite(path, [tuple(r) for r in forged])
    assert rows(path)[at - 1][1] is None
    report = verify(path, hmac_key=key, integrity_check=False, anchor_files=[], processes=processes)
    assert (report.ok, report.first_bad_seq, report.reason, report.entries, report.last_hash) == reference_verdict(path, key)
    assert not report.ok and report.first_bad_seq == at and "ts" in report.reason, report.reason
