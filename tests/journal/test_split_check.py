"""``verify`` in two processes (``controller.journal.split_check``) gives the verdict of one pass:
the same report, field by field, on intact and tampered journals, wherever the damage lies
(before, at, just after and far after the split); a second process that fails costs time, never
the verdict; and the split is made only where it pays and is safe."""
from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.journal import Journal, Record, verify
from controller.journal.verification import checked_read
from controller.journal.split_check import FIRST_SHARE_WITH_INTEGRITY, MIN_ROWS, LaterHalf, split_point

from tampering import rechain, renumber, rewrite, rows, tamper

from .conftest import KEY, FakeClock, fill

N = 400
K = int(N * FIRST_SHARE_WITH_INTEGRITY)  # where verify splits a journal of N entries (it runs the quick_check too)


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("split") / "plain.db"
    fill(path, N)
    return path


@pytest.fixture(scope="module")
def hmac(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("split") / "hmac.db"
    fill(path, N, hmac_key=KEY)
    return path


def _copy(source: Path, tmp_path: Path) -> Path:
    target = tmp_path / "journal.db"
    shutil.copyfile(source, target)
    return target


def _swap(a: int, b: int) -> Callable[[Path], None]:
    def change(path: Path) -> None:
        entries = rows(path)
        entries[a - 1], entries[b - 1] = entries[b - 1], entries[a - 1]
        rewrite(path, renumber(entries))
    return change


def _sql(statement: str, *params: object) -> Callable[[Path], None]:
    return lambda path: tamper(path, statement, params=params)


def _rechained_from(seq: int) -> Callable[[Path], None]:
    return lambda path: rewrite(path, rechain(rows(path), from_seq=seq))


def _tamperings(k: int) -> dict[str, Callable[[Path], None]]:
    """Damage before, at, just after and far after a split at entry ``k``."""
    return {
        "intact": lambda path: None,
        "edited before the split": _sql("UPDATE entries SET payload = ? WHERE seq = 17", '{"amount":1,"i":16,"who":"p1"}'),
        "edited at the split": _sql("UPDATE entries SET kind = ? WHERE seq = ?", "e99", k),
        "edited just after the split": _sql("UPDATE entries SET round_no = ? WHERE seq = ?", 999, k + 1),
        "hash of the split entry": _sql("UPDATE entries SET hash = ? WHERE seq = ?", "f" * 64, k),
        "edited far after the split": _sql("UPDATE entries SET operator = ? WHERE seq = ?", "mallory", N - 3),
        "last entry edited": _sql("UPDATE entries SET ts = ? WHERE seq = ?", "2025-01-31T21:00:00.000000Z", N),
        "split entry deleted": _sql("DELETE FROM entries WHERE seq = ?", k),
        "entry after the split deleted": _sql("DELETE FROM entries WHERE seq = ?", k + 1),
        "range across the split deleted": _sql("DELETE FROM entries WHERE seq BETWEEN ? AND ?", k - 5, k + 5),
        "tail deleted": _sql("DELETE FROM entries WHERE seq > ?", N - 10),
        "swapped across the split": _swap(k - 1, k + 2),
        "swapped after the split": _swap(k + 50, k + 60),
        "re-chained after the split": _rechained_from(k + 30),
        "wrong table after the split": _sql("UPDATE entries SET table_id = 'T9' WHERE seq = ?", k + 7),
        "link edited after the split": _sql("UPDATE entries SET prev_hash = ? WHERE seq = ?", "0" * 64, k + 9),
    }


TAMPERINGS = _tamperings(K)


def _report_pair(path: Path, **options) -> tuple:
    return verify(path, processes=1, **options), verify(path, processes=2, **options)


@pytest.mark.parametrize("name", list(TAMPERINGS))
def test_two_processes_give_the_verdict_of_one_pass(plain: Path, tmp_path: Path, name: str) -> None:
    path = _copy(plain, tmp_path)
    TAMPERINGS[name](path)
    one, two = _report_pair(path)
    assert two == one
    # a removed tail or a re-chained part shows only against an anchor (the next test)
    assert one.ok == (name in ("intact", "tail deleted", "re-chained after the split"))


@pytest.mark.parametrize("name", ["intact", "edited just after the split", "re-chained after the split"])
def test_two_processes_with_hmac_anchors_and_expectations(hmac: Path, tmp_path: Path, name: str) -> None:
    path = _copy(hmac, tmp_path)
    hashes = [r[12] for r in rows(path)]
    TAMPERINGS[name](path)
    for options in ({"hmac_key": KEY}, {"hmac_key": KEY, "anchors": [(K + 40, hashes[K + 39])], "expect_count": N},
                    {"hmac_key": KEY, "anchors": [(K + 40, "0" * 64)]}, {"hmac_key": KEY, "expect_count": N + 1},
                    # the last anchor that holds before one that does not: in the first half, in the later one
                    {"hmac_key": KEY, "anchors": [(K - 10, hashes[K - 11]), (K + 40, "0" * 64)]},
                    {"hmac_key": KEY, "anchors": [(K + 20, hashes[K + 19]), (K + 40, "0" * 64)]},
                    {"hmac_key": KEY, "expect_last_hash": hashes[-1]}, {}):
        one, two = _report_pair(path, **options)
        assert two == one, options


@pytest.mark.parametrize("options", [{"hmac_key": KEY}, {}, {"hmac_key": b"another key of 32 bytes, not it!"}])
def test_a_failed_integrity_check_is_the_verdict_of_two_processes_too(hmac: Path, tmp_path: Path, options) -> None:
    """With two processes SQLite's quick_check runs after the second one started; its failure is
    still the verdict before the chain's, the key's or the anchors', as in one pass."""
    path = _copy(hmac, tmp_path)
    conn = sqlite3.connect(path)
    page = conn.execute("SELECT pageno FROM dbstat WHERE name = 'entries_shoe_seq' ORDER BY pageno DESC").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(path, "r+b") as f:
        f.seek((page - 1) * size + 100)
        f.write(b"\x13" * 200)
    one, two = _report_pair(path, **options)
    assert two == one
    assert not two.ok and not two.needs_key and two.reason.startswith("SQLite integrity check failed")


def test_the_second_process_checks_the_later_half(plain: Path, tmp_path: Path, mocker) -> None:
    """The split is real: the second process's verdict is what the report joins."""
    path = _copy(plain, tmp_path)
    spy = mocker.spy(LaterHalf, "result")
    report = verify(path, processes=2)
    assert report.ok and report.entries == N and report.total == N
    found = spy.spy_return
    assert found is not None and found.good == N - K and found.rows == N - K and found.last_seq == N


def test_a_failed_second_process_costs_time_not_the_verdict(plain: Path, tmp_path: Path, mocker) -> None:
    path = _copy(plain, tmp_path)
    TAMPERINGS["edited far after the split"](path)
    expected = verify(path, processes=1)
    mocker.patch.object(LaterHalf, "_check", side_effect=sqlite3.OperationalError("disk I/O error"))
    spy = mocker.spy(LaterHalf, "result")
    assert verify(path, processes=2) == expected
    assert spy.spy_return is None  # the child failed; this process checked its half


_KILLED_PARENT = """
import os, signal, sys, time
from controller.journal import split_check
signal.signal(signal.SIGTERM, lambda *_: None)  # held, as `run` holds it while it starts up
from controller.journal.verification import verify
def slow(self):
    print(os.getpid(), flush=True)  # the child's
    time.sleep(60)
split_check.LaterHalf._check = slow
verify(sys.argv[1], processes=2)
"""


def _stat(pid: int) -> tuple[str, str] | None:
    """The process's state letter and start time (clock ticks after boot), None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(") ", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):  # gone before the open, or between it and the read
        return None
    return fields[0], fields[19]


def _gone(pid: int, started: str) -> bool:
    """Ended: no such process, a zombie waiting for its reaper, or another process that took its
    pid since (this machine's pid_max is 32,768, and a busy test run goes through pids quickly)."""
    now = _stat(pid)
    return now is None or now[0] == "Z" or now[1] != started


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_the_second_process_ends_with_the_first(plain: Path, tmp_path: Path, sig: signal.Signals) -> None:
    """A review of signals: the second process kept checking for as long as its half took after
    `journal verify` (or `run` starting up) was killed, the journal open, its WAL checkpoints
    waiting; and kept the first's SIGTERM handler, so a SIGTERM to both left it running."""
    path = _copy(plain, tmp_path)
    parent = subprocess.Popen([sys.executable, "-c", _KILLED_PARENT, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        known = _stat(child)
        assert known is not None and known[0] != "Z"  # it checks its half, sleeping
        os.kill(child if sig == signal.SIGTERM else parent.pid, sig)  # SIGTERM: the child alone, its parent alive
        deadline = time.monotonic() + 10
        while not _gone(child, known[1]):
            assert time.monotonic() < deadline, f"the second process outlived {sig.name}"
            time.sleep(0.05)
    finally:
        parent.kill()
        parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()


def test_split_only_where_it_pays_and_is_safe(tmp_path: Path) -> None:
    path = tmp_path / "long.db"
    with Journal.open(path, table_id="T1", clock=FakeClock()) as j:
        for start in range(0, MIN_ROWS, 1000):
            j.append_batch([Record(kind="e", payload={"i": i}) for i in range(start, start + 1000)])
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        assert split_point(conn, 1) is None
        assert split_point(conn, 2)[0] == MIN_ROWS // 2
        stop = threading.Event()
        other = threading.Thread(target=stop.wait)
        other.start()
        try:  # another thread: a fork would copy only this one, with whatever locks the other held
            assert split_point(conn, None) is None
        finally:
            stop.set()
            other.join()
        short = tmp_path / "short.db"
        fill(short, 50)
        with sqlite3.connect(f"file:{short}?mode=ro", uri=True) as short_conn:
            assert split_point(short_conn, None) is None
    finally:
        conn.close()


READ_SPLIT = N // 2  # where a reader splits a journal of N entries (its quick_check runs before the split)
READ_TAMPERINGS = _tamperings(READ_SPLIT)


def _read_all(path: Path, processes: int, **options) -> tuple:
    with checked_read(path, **options) as read:
        entries = list(read.entries(processes=processes))
        return entries, read.report()


@pytest.mark.parametrize("name", list(READ_TAMPERINGS))
def test_a_reader_in_two_processes_is_given_what_one_pass_gives(plain: Path, tmp_path: Path, name: str) -> None:
    """A reader's check split in two (the later half checked by a second process while this one
    reads the first): every entry, in order, and the verdict, as in one pass."""
    path = _copy(plain, tmp_path)
    READ_TAMPERINGS[name](path)
    one, two = _read_all(path, 1), _read_all(path, 2)
    assert two == one
    assert one[1].ok == (name in ("intact", "tail deleted", "re-chained after the split"))


def test_a_reader_is_given_the_later_half_only_once_it_is_judged(plain: Path, tmp_path: Path, mocker) -> None:
    """The split is real, and no entry of the later half reaches the reader before the second
    process's verdict is joined: a reader never holds an entry the check has not judged while
    the check still says the journal holds."""
    path = _copy(plain, tmp_path)
    READ_TAMPERINGS["edited far after the split"](path)
    spy = mocker.spy(LaterHalf, "result")
    with checked_read(path) as read:
        seen = []
        for entry in read.entries(processes=2):
            if entry.seq > READ_SPLIT:
                assert spy.call_count == 1 and not read.check.ok  # judged, and found bad
            seen.append(entry.seq)
        report = read.report()
    assert seen == list(range(1, N + 1))
    assert spy.spy_return is not None and spy.spy_return.rows == N - READ_SPLIT
    assert not report.ok and report.first_bad_seq == N - 3 and report.total == N


def test_a_reader_whose_second_process_fails_is_given_what_one_pass_gives(plain: Path, tmp_path: Path,
                                                                          mocker) -> None:
    """The second process failing costs a reader time, never an entry or the verdict: this
    process then checks and hands over the later half itself."""
    path = _copy(plain, tmp_path)
    READ_TAMPERINGS["edited far after the split"](path)
    expected = _read_all(path, 1)
    mocker.patch.object(LaterHalf, "_check", side_effect=sqlite3.OperationalError("disk I/O error"))
    spy = mocker.spy(LaterHalf, "result")
    assert _read_all(path, 2) == expected
    assert spy.spy_return is None


def test_a_reader_that_stops_early_leaves_no_second_process(plain: Path, tmp_path: Path) -> None:
    path = _copy(plain, tmp_path)
    before = _children()
    with checked_read(path) as read:
        entries = read.entries(processes=2)
        assert [next(entries).seq for _ in range(3)] == [1, 2, 3]
        assert len(_children() - before) == 1  # the second process, checking the later half
        entries.close()
    assert _children() <= before


def _children() -> set[str]:
    """This process's child processes still there (zombies included)."""
    me = os.getpid()
    return {p for p in os.listdir("/proc") if p.isdigit() and _parent_of(p) == me}


def _parent_of(pid: str) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def test_the_command_splits_a_long_journal_and_finds_the_damage(tmp_path: Path) -> None:
    """``shoectl journal verify`` and ``journal export`` (processes of one thread) on a journal
    long enough to split: every entry exported in order; the damage far in the later half is
    reported as one pass reports it, and the export then writes nothing."""
    path = tmp_path / "long.db"
    with Journal.open(path, table_id="T1", clock=FakeClock()) as j:
        for start in range(0, MIN_ROWS + 2000, 2000):
            j.append_batch([Record(kind="e", payload={"i": i}, shoe="S1") for i in range(start, start + 2000)])
    exported = subprocess.run([sys.executable, "-m", "controller.cli.main", "journal", "export", str(path)],
                              capture_output=True, text=True, timeout=120)
    assert exported.returncode == 0, exported.stderr
    assert [json.loads(line)["payload"]["i"] for line in exported.stdout.splitlines()] == list(range(MIN_ROWS + 2000))
    tamper(path, "UPDATE entries SET payload = '{\"i\":1}' WHERE seq = ?", params=(MIN_ROWS + 1500,))
    exported = subprocess.run([sys.executable, "-m", "controller.cli.main", "journal", "export", str(path)],
                              capture_output=True, text=True, timeout=120)
    assert (exported.returncode, exported.stdout) == (1, ""), exported.stderr
    assert f"FAILED at entry {MIN_ROWS + 1500}: entry {MIN_ROWS + 1500}: hash mismatch" in exported.stderr
    done = subprocess.run([sys.executable, "-m", "controller.cli.main", "journal", "verify", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert f"FAILED at entry {MIN_ROWS + 1500}: entry {MIN_ROWS + 1500}: hash mismatch" in done.stdout
    assert f"({MIN_ROWS + 1499} entries good before it" in done.stdout
