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

from tampering import rechain, reference_verdict, rewrite, rows

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
