"""Helpers for the journal tests: a fixed clock, journals with known content (tampering with them:
``tests/tampering.py``)."""
from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from controller.journal import Journal

KEY = b"k" * 32
OTHER_KEY = b"x" * 32


class FakeClock:
    """Advances one millisecond per reading, from a fixed instant."""

    def __init__(self) -> None:
        self.now = datetime(2025, 1, 31, 20, 15, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=1)
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def fill(path: Path, n: int, *, hmac_key: bytes | None = None, table_id: str = "T1") -> list[str]:
    """A journal of n entries (kinds e0..), returns their hashes (index 0 = seq 1)."""
    with Journal.open(path, table_id=table_id, hmac_key=hmac_key, clock=FakeClock()) as j:
        return [j.append(f"e{i}", {"i": i, "amount": 100 * i, "who": f"p{i % 3}"},
                         shoe="S1", round=i // 3).hash for i in range(n)]


@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.db"


@pytest.fixture
def key_file(tmp_path: Path) -> Callable[..., Path]:
    def make(data: bytes = KEY, mode: int = 0o600, name: str = "journal.key") -> Path:
        p = tmp_path / name
        p.write_bytes(data)
        os.chmod(p, mode)
        return p
    return make


@pytest.fixture
def journal(journal_path: Path, clock: FakeClock) -> Iterator[Journal]:
    j = Journal.open(journal_path, table_id="T1", clock=clock)
    yield j
    j.close()
