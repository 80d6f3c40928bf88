"""The journal store at the SQLite edge: disk full, locked, read-only, changed behind the writer's
back, interrupted; nothing committed is lost and the next append works, on real SQLite files."""
from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest

from controller.journal import Journal, JournalBusyError, JournalError, JournalReader, JournalWriteError, verify
from unprivileged import said_unprivileged

from .conftest import fill

# --- failures at the SQLite edge: nothing committed is lost, the next append works -----------------


def _fail_on(journal: Journal, mocker, prefix: str, message: str) -> None:
    for method in ("execute", "executemany"):  # the entries go in with one executemany
        real = getattr(journal._conn, method)

        def failing(sql, *args, real=real):
            if sql.startswith(prefix):
                raise sqlite3.OperationalError(message)
            return real(sql, *args)
        mocker.patch.object(journal._conn, method, side_effect=failing)


@pytest.mark.parametrize("stage", ["BEGIN", "INSERT", "COMMIT"])
def test_disk_full_is_clear_and_harmless(journal: Journal, mocker, stage: str) -> None:
    kept = [journal.append("keep", {"i": i}) for i in range(3)]
    _fail_on(journal, mocker, stage, "database or disk is full")
    with pytest.raises(JournalWriteError, match="database or disk is full; nothing was stored") as info:
        journal.append("lost", {"i": 99})
    assert isinstance(info.value, OSError) and "\n" not in str(info.value)
    mocker.stopall()
    assert list(journal.entries()) == kept
    assert journal.append("after", {}).seq == 4
    report = verify(journal.path)
    assert report.ok and report.entries == 4


def test_really_full_database(journal: Journal) -> None:
    """A real SQLITE_FULL from SQLite: the database is capped at its current size."""
    kept = [journal.append("keep", {"i": i}) for i in range(3)]
    pages = journal._conn.execute("PRAGMA page_count").fetchone()[0]
    journal._conn.execute(f"PRAGMA max_page_count = {pages}")
    with pytest.raises(JournalWriteError, match="database or disk is full"):
        for i in range(200):  # fills the last page, then needs a new one
            journal.append("filler", {"text": "x" * 500, "i": i})
    journal._conn.execute("PRAGMA max_page_count = 1073741823")
    stored = list(journal.entries())
    assert stored[:3] == kept and all(e.kind == "filler" for e in stored[3:])
    assert journal.append("after", {}).seq == len(stored) + 1
    assert verify(journal.path).ok


def test_locked_database(journal: Journal, journal_path: Path) -> None:
    journal.append("keep", {})
    journal._conn.execute("PRAGMA busy_timeout = 50")
    other = sqlite3.connect(journal_path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(JournalBusyError, match="locked"):
            journal.append("blocked", {})
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert journal.append("after", {}).seq == 2
    assert verify(journal_path).ok


def test_exclusively_locked_at_open(journal_path: Path) -> None:
    fill(journal_path, 2)
    other = sqlite3.connect(journal_path, isolation_level=None, timeout=0.05)
    other.execute("PRAGMA locking_mode = EXCLUSIVE")
    other.execute("BEGIN EXCLUSIVE")
    other.execute("COMMIT")  # keeps the exclusive lock in this locking mode
    try:
        with pytest.raises(JournalBusyError, match="locked"):
            Journal.open(journal_path, table_id="T1", busy_timeout=0.05)
        with pytest.raises(JournalBusyError, match="locked"):
            JournalReader.open(journal_path, busy_timeout=0.05)
    finally:
        other.close()
    with Journal.open(journal_path, table_id="T1") as j:
        assert j.append("after", {}).seq == 3


def test_unable_to_open_is_one_line(journal_path: Path, mocker) -> None:
    """A read-only directory as SQLite reports it (simulated: the tests may run as root)."""
    mocker.patch("controller.journal.store.sqlite3.connect",
                 side_effect=sqlite3.OperationalError("unable to open database file"))
    mocker.patch("controller.journal.store.os.access", return_value=False)
    with pytest.raises(JournalError, match="is read-only") as info:
        Journal.open(journal_path, table_id="T1")
    assert "\n" not in str(info.value)


def _open_as_nobody(path: Path) -> str:
    """What ``Journal.open(path)`` says in a child process of the ``nobody`` account (forked, so the
    interpreter and this package need not be readable by that account): the error's text, or ""."""
    def open_it() -> str:
        try:
            Journal.open(path, table_id="T1").close()
        except JournalError as exc:
            return str(exc)
        return ""

    return said_unprivileged(open_it)


def test_read_only_directory() -> None:
    """A directory the table's account may not write: refused in one line saying it is read-only,
    and nothing is created there. Root writes anywhere, so as root the journal is opened by a
    process of the ``nobody`` account (the real permission check, not a simulation)."""
    base = Path(tempfile.mkdtemp(prefix="shoectl-ro-"))
    d = base / "ro"
    try:
        os.chmod(base, 0o755)
        d.mkdir()
        os.chmod(d, 0o555)
        if os.geteuid() == 0:
            said = _open_as_nobody(d / "j.db")
        else:
            with pytest.raises(JournalError) as info:
                Journal.open(d / "j.db", table_id="T1")
            said = str(info.value)
        assert "read-only" in said and "\n" not in said, said
        assert list(d.iterdir()) == []
    finally:
        if d.exists():
            os.chmod(d, 0o755)
        shutil.rmtree(base)


def test_changed_behind_the_writers_back_is_refused(journal: Journal, journal_path: Path) -> None:
    journal.append("a", {})
    other = sqlite3.connect(journal_path, isolation_level=None)
    other.execute("INSERT INTO entries VALUES (2, ?, 'forged', 'T1', NULL, NULL, NULL, NULL, NULL, NULL, '{}', ?, ?)",
                  ("2025-01-01T00:00:00.000000Z", journal.last().hash, "0" * 64))
    other.close()
    with pytest.raises(JournalBusyError, match="changed by another writer"):
        journal.append("b", {})


def test_entries_are_append_only_in_sqlite(journal: Journal) -> None:
    journal.append("a", {})
    for sql in ("UPDATE entries SET kind = 'b'", "DELETE FROM entries"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            journal._conn.execute(sql)


def test_interrupted_append_rolls_back(journal: Journal, mocker) -> None:
    journal.append("keep", {})
    execute = journal._conn.execute

    def interrupt(sql, *args):
        if sql.startswith("COMMIT"):
            raise KeyboardInterrupt
        return execute(sql, *args)
    mocker.patch.object(journal._conn, "execute", side_effect=interrupt)
    with pytest.raises(KeyboardInterrupt):
        journal.append("half", {})
    mocker.stopall()
    assert [e.kind for e in journal.entries()] == ["keep"]
    assert journal.append("next", {}).seq == 2


def test_a_commit_that_landed_but_reported_an_error_leaves_the_next_append_working(journal: Journal, mocker) -> None:
    """A COMMIT whose error comes late (an I/O error reported after the data was written) may have
    landed: the writer re-reads the journal's tail at its next append instead of trusting its
    memory ("re-read the tail"), so the table journals on, chained onto what is stored."""
    journal.append("keep", {})
    execute = journal._conn.execute
    failed = []

    def late_failure(sql, *args):
        if sql == "COMMIT" and not failed:
            failed.append(execute(sql, *args))
            raise sqlite3.OperationalError("disk I/O error")
        return execute(sql, *args)
    mocker.patch.object(journal._conn, "execute", side_effect=late_failure)
    with pytest.raises(JournalError):
        journal.append("landed", {})
    mocker.stopall()
    assert journal.append("next", {}).seq == 3
    assert [e.kind for e in journal.entries()] == ["keep", "landed", "next"]
    assert verify(journal.path).ok
