"""Durability: a writer killed with SIGKILL at random points never leaves a broken chain, never
loses an entry whose append had returned, and keeps batches whole; a restarted writer resumes from
``last_device_counter`` and resent device events are dropped, so each is stored exactly once.

(A process kill leaves the OS page cache intact; surviving power loss additionally rests on
synchronous=FULL, i.e. an fsync of the WAL at each commit, which these tests cannot cut.)
"""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.journal import JournalReader, verify

CHILD = r"""
import sys
from controller.journal import Journal, Record

path, mode, n, resend = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
with Journal.open(path, table_id="T1") as j:
    have = j.last_device_counter("shoe-1")
    start = have[1] if have else 0
    print(f"ready {start}", flush=True)
    first = max(0, start - resend)  # a device resends what it thinks is unacknowledged
    if mode == "single":
        for i in range(first, n):
            e = j.append("card.read", {"i": i, "card": i % 52}, shoe="S1", round=i // 6,
                         device_serial="shoe-1", epoch=1, counter=i + 1)
            print(f"{i} {e.seq if e else 'dup'}", flush=True)
    else:
        for b in range(first, n, 10):
            out = j.append_batch([Record("card.read", {"i": i, "card": i % 52}, device_serial="shoe-1", epoch=1,
                                         counter=i + 1) for i in range(b, min(b + 10, n))])
            print(" ".join(str(e.seq) if e else "dup" for e in out), flush=True)
print("done", flush=True)
"""


def _spawn(path: Path, mode: str, n: int, resend: int = 0) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(path), mode, str(n), str(resend)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2])
    ready = proc.stdout.readline()
    if not ready.startswith("ready"):
        proc.kill()
        raise AssertionError(f"child did not start: {ready!r} {proc.stderr.read()}")
    return proc


def _kill_after(proc: subprocess.Popen, delay: float) -> list[str]:
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    out = proc.stdout.read()
    proc.wait()
    proc.stdout.close()
    proc.stderr.close()
    return [line for line in out.splitlines() if line and line != "done"]


def _finish(proc: subprocess.Popen, timeout: float = 120) -> list[str]:
    """Let the child run to the end. (Not communicate(): it would skip what readline() buffered.)"""
    out = proc.stdout.read()
    err = proc.stderr.read()
    assert proc.wait(timeout=timeout) == 0, err
    proc.stdout.close()
    proc.stderr.close()
    return out.splitlines()


def _stored(path: Path) -> list:
    with JournalReader.open(path) as r:
        return list(r.entries())


def _check_prefix(path: Path) -> list:
    report = verify(path)
    assert report.ok, report
    stored = _stored(path)
    assert [e.payload["i"] for e in stored] == list(range(len(stored))), "not a prefix of the intended entries"
    assert [e.device_counter for e in stored] == [i + 1 for i in range(len(stored))]
    return stored


@pytest.fixture
def rng() -> random.Random:
    seed = int.from_bytes(os.urandom(4), "big")
    print(f"durability seed {seed}")
    return random.Random(seed)


@pytest.mark.slow
def test_sigkill_single_appends(tmp_path: Path, rng: random.Random) -> None:
    path = tmp_path / "j.db"
    n = 100_000
    for attempt in range(5):
        before = len(_stored(path)) if path.exists() else 0
        proc = _spawn(path, "single", n)
        lines = _kill_after(proc, rng.uniform(0.0, 0.25))
        stored = _check_prefix(path)
        returned = [int(line.split()[1]) for line in lines]
        # every append that returned is stored; at most one more (committed, killed before printing)
        assert returned == list(range(before + 1, before + 1 + len(returned))), (attempt, returned[:5])
        assert before + len(returned) <= len(stored) <= before + len(returned) + 1, (attempt, len(stored), len(returned))


@pytest.mark.slow
def test_sigkill_batches_stay_whole(tmp_path: Path, rng: random.Random) -> None:
    path = tmp_path / "j.db"
    for attempt in range(4):
        before = len(_stored(path)) if path.exists() else 0
        proc = _spawn(path, "batch", 100_000)
        lines = _kill_after(proc, rng.uniform(0.0, 0.25))
        stored = _check_prefix(path)
        returned = [int(s) for line in lines for s in line.split()]
        assert len(stored) % 10 == 0, f"a batch was cut: {len(stored)} entries"
        assert returned == list(range(before + 1, before + 1 + len(returned)))
        assert before + len(returned) <= len(stored) <= before + len(returned) + 10, attempt


def test_restart_resumes_and_drops_resent_events(tmp_path: Path, rng: random.Random) -> None:
    """Kill, restart, resend the last few events, kill again...: each device event is stored once."""
    path = tmp_path / "j.db"
    n = 600
    for _ in range(4):
        before = len(_stored(path)) if path.exists() else 0
        proc = _spawn(path, "single", n, resend=5)
        lines = _kill_after(proc, rng.uniform(0.0, 0.1))
        if before and lines:
            assert lines[0].endswith("dup"), lines[:3]  # the resent event was not stored again
        _check_prefix(path)
    before = len(_stored(path))
    lines = _finish(_spawn(path, "single", n, resend=5))
    assert lines[-1] == "done"
    assert sum(line.endswith("dup") for line in lines) == min(5, before)
    stored = _check_prefix(path)
    assert len(stored) == n  # every counter exactly once, in order, despite the resends


def test_resent_batch_after_kill(tmp_path: Path, rng: random.Random) -> None:
    path = tmp_path / "j.db"
    proc = _spawn(path, "batch", 100_000)
    _kill_after(proc, rng.uniform(0.02, 0.2))
    stored = _check_prefix(path)
    lines = _finish(_spawn(path, "batch", len(stored) + 35, resend=10))
    first = lines[0].split()
    if stored:
        assert first == ["dup"] * 10  # the resent batch was already there
    assert len(_check_prefix(path)) == len(stored) + 35
