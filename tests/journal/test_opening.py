"""Opening the journal store: the SQLite settings, what open refuses (one writer, no WAL, files that
are not journals, a newer schema), one writer thread, HMAC at open, all on real SQLite files."""
from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import threading
from pathlib import Path

import pytest

from controller.journal import (
    GENESIS_HASH,
    Journal,
    JournalBusyError,
    JournalError,
    JournalReader,
    NotAJournalError,
    PayloadError,
    load_hmac_key,
    verify,
)
from controller.journal.store import SCHEMA_VERSION

from tests.unprivileged import UNPRIVILEGED_USER, said_unprivileged

from .conftest import KEY, OTHER_KEY, fill

# --- opening and the settings ------------------------------------------------------------------


def test_new_journal_uses_wal_full_and_schema(journal: Journal, journal_path: Path) -> None:
    conn = journal._conn
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 2
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert journal.meta["format"] == "shoectl-journal" and journal.meta["table_id"] == "T1"
    assert journal.hash_algorithm == "sha256" and journal.key_id is None
    assert journal.last() is None and journal.last_seq == 0
    assert journal.anchor() == "0:" + GENESIS_HASH


def test_open_refusals(tmp_path: Path, journal_path: Path) -> None:
    with pytest.raises(JournalError, match="no such journal"):
        Journal.open(journal_path, table_id="T1", create=False)
    with pytest.raises(JournalError, match="does not exist"):
        Journal.open(tmp_path / "nope" / "j.db", table_id="T1")
    with pytest.raises(JournalError, match="is a directory"):
        Journal.open(tmp_path, table_id="T1")
    with pytest.raises(JournalError, match="must be a file"):
        Journal.open(":memory:", table_id="T1")
    with pytest.raises(PayloadError, match="table_id"):
        Journal.open(journal_path, table_id="")
    fill(journal_path, 1)
    with pytest.raises(JournalError, match="belongs to table 'T1'"):
        Journal.open(journal_path, table_id="T2")


def test_second_writer_is_refused(journal: Journal, journal_path: Path) -> None:
    with pytest.raises(JournalBusyError, match="already open for writing"):
        Journal.open(journal_path, table_id="T1")
    journal.append("still", {})
    journal.close()
    with Journal.open(journal_path, table_id="T1") as again:  # released on close
        assert again.last_seq == 1


def test_a_writer_starting_while_a_probe_looks_is_not_refused(journal_path: Path) -> None:
    """A review of the floor's threads: the scoreboard asks once a second whether the table runs
    (``lock_state``: a shared lock on the journal's lock file, let go at once), and a table starting
    in that moment was refused, "the journal is already open for writing" (59 of 300 starts beside
    a busy prober). The writer now waits a probe's moment out (``LOCK_GRACE_S``); a real writer it
    does not wait for."""
    import fcntl

    from controller.locks import LOCK_GRACE_S, lock_state

    fill(journal_path, 1)
    lock = f"{journal_path}.lock"
    probe = os.open(lock, os.O_RDONLY)
    fcntl.flock(probe, fcntl.LOCK_SH | fcntl.LOCK_NB)  # a probe, caught in its moment
    threading.Timer(LOCK_GRACE_S / 5, os.close, (probe,)).start()
    with Journal.open(journal_path, table_id="T1") as journal:
        assert journal.last_seq == 1
        assert lock_state(lock) is True  # and the probe then says the table runs
        with pytest.raises(JournalBusyError, match="already open for writing"):
            Journal.open(journal_path, table_id="T1")  # a writer is not waited for: after the grace


def test_wal_refused_is_a_clear_error(journal_path: Path, mocker) -> None:
    """A filesystem where WAL cannot be used: SQLite keeps the old journal mode."""
    real = sqlite3.connect

    def connect(*a, **kw):
        conn = real(*a, **kw)
        execute = conn.execute

        def fake(sql, *args):
            if sql.replace(" ", "").upper() == "PRAGMAJOURNAL_MODE=WAL":
                return execute("PRAGMA journal_mode")  # 'delete': what SQLite answers when WAL is impossible
            return execute(sql, *args)
        conn.execute = fake
        return conn
    mocker.patch("controller.journal.store.sqlite3.connect", side_effect=connect)
    with pytest.raises(JournalError, match="cannot use WAL"):
        Journal.open(journal_path, table_id="T1")
    assert not journal_path.exists()  # no empty file left behind
    # and the lock was released
    mocker.stopall()
    with Journal.open(journal_path, table_id="T1") as j:
        assert j.append("ok", {}).seq == 1


# --- files that are not journals ---------------------------------------------------------------


def test_not_sqlite(tmp_path: Path) -> None:
    p = tmp_path / "notes.db"
    p.write_bytes(b"these are not the pages you are looking for\n" * 100)
    before = p.read_bytes()
    with pytest.raises(NotAJournalError, match="not an SQLite database"):
        Journal.open(p, table_id="T1")
    with pytest.raises(NotAJournalError, match="not an SQLite database"):
        JournalReader.open(p)
    with pytest.raises(NotAJournalError):
        verify(p)
    assert p.read_bytes() == before


def test_foreign_sqlite_is_refused_and_untouched(tmp_path: Path) -> None:
    p = tmp_path / "other.db"
    conn = sqlite3.connect(p)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    before = p.read_bytes()
    with pytest.raises(NotAJournalError, match="without the journal's tables"):
        Journal.open(p, table_id="T1")
    assert p.read_bytes() == before  # not even switched to WAL
    with pytest.raises(NotAJournalError):
        verify(p)


def test_newer_schema_is_refused(journal_path: Path) -> None:
    fill(journal_path, 1)
    conn = sqlite3.connect(journal_path)
    conn.execute("PRAGMA user_version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(NotAJournalError, match="newer shoectl"):
        Journal.open(journal_path, table_id="T1")


def test_empty_file_becomes_a_journal(journal_path: Path) -> None:
    journal_path.touch()
    with Journal.open(journal_path, table_id="T1") as j:
        assert j.append("first", {}).seq == 1
    empty = journal_path.parent / "e.db"
    empty.touch()
    with pytest.raises(NotAJournalError, match="empty"):
        JournalReader.open(empty)
    with pytest.raises(NotAJournalError, match="empty"):
        verify(empty)


# --- threads -------------------------------------------------------------------------------------


def test_one_writer_thread(journal: Journal) -> None:
    journal.append("owner", {})
    errors: list[BaseException] = []

    def other() -> None:
        try:
            journal.append("intruder", {})
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert len(errors) == 1 and isinstance(errors[0], RuntimeError) and "one thread" in str(errors[0])
    assert journal.last_seq == 1


def test_closed_journal(journal_path: Path) -> None:
    j = Journal.open(journal_path, table_id="T1")
    j.close()
    j.close()
    with pytest.raises(JournalError, match="closed"):
        j.append("x", {})


# --- HMAC at open ------------------------------------------------------------------------------


def test_hmac_journal_needs_its_key_to_continue(journal_path: Path) -> None:
    fill(journal_path, 2, hmac_key=KEY)
    with pytest.raises(JournalError, match="HMAC key is required"):
        Journal.open(journal_path, table_id="T1")
    with pytest.raises(JournalError, match="wrong HMAC key"):
        Journal.open(journal_path, table_id="T1", hmac_key=OTHER_KEY)
    with Journal.open(journal_path, table_id="T1", hmac_key=KEY) as j:
        assert j.hash_algorithm == "hmac-sha256" and j.key_id and j.append("x", {}).seq == 3
    assert KEY.hex() not in journal_path.read_bytes().hex()  # the key itself is never stored


def test_plain_journal_cannot_be_continued_with_a_key(journal_path: Path) -> None:
    fill(journal_path, 1)
    with pytest.raises(JournalError, match="without an HMAC key"):
        Journal.open(journal_path, table_id="T1", hmac_key=KEY)


def test_load_hmac_key(key_file, tmp_path: Path) -> None:
    assert load_hmac_key(key_file()) == KEY
    assert load_hmac_key(key_file(b"z" * 16 + b"\n", name="nl.key")) == b"z" * 16 + b"\n"  # exact bytes
    with pytest.raises(JournalError, match="not found"):
        load_hmac_key(tmp_path / "missing.key")
    with pytest.raises(JournalError, match="empty"):
        load_hmac_key(key_file(b"", name="empty.key"))
    with pytest.raises(JournalError, match="too short"):
        load_hmac_key(key_file(b"short", name="short.key"))
    for mode in (0o640, 0o604, 0o644):
        with pytest.raises(JournalError, match="readable by group or others"):
            load_hmac_key(key_file(mode=mode, name=f"open{mode:o}.key"))
    # Others who may write the key, but not read it, replace it with one they know: the next
    # journal is keyed with it, and they can forge its hashes (a security review)
    for mode in (0o620, 0o602, 0o622):
        with pytest.raises(JournalError, match="writable by group or others .* could put a key of their own"):
            load_hmac_key(key_file(mode=mode, name=f"writable{mode:o}.key"))
    assert load_hmac_key(key_file(mode=0o400, name="read-only.key")) == KEY
    with pytest.raises(JournalError, match="not a regular file"):
        load_hmac_key(tmp_path)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a key another user cannot read")
@pytest.mark.parametrize("blocked", ["file", "folder"])
def test_a_key_this_user_may_not_read_says_whom_the_program_runs_as_and_what_keeps_it_out(blocked: str) -> None:
    """A key made by root, read by the service's user: "permission denied" said nothing to do (an
    integrator review); it names the user and what keeps it out, the file's permissions or a
    folder on the way (where a chown of the file would change nothing)."""
    folder = Path(tempfile.mkdtemp(prefix="shoectl-key-"))  # outside pytest's private folders: nobody reaches it
    try:
        inner = folder / "keys"
        inner.mkdir()
        key = inner / "journal.key"
        key.write_bytes(KEY)
        key.chmod(0o600 if blocked == "file" else 0o644)
        os.chmod(folder, 0o755)
        inner.chmod(0o755 if blocked == "file" else 0o700)

        def refusal() -> str:
            try:
                load_hmac_key(key)
            except JournalError as exc:
                return str(exc)
            return "read"

        said = said_unprivileged(refusal)
    finally:
        shutil.rmtree(folder)
    why = (f"let it read the file (its owner or group, e.g. chown {UNPRIVILEGED_USER} '{key}')" if blocked == "file"
           else f"who may not enter the folder '{inner}'")
    assert said == (f"{key}: cannot read the HMAC key file: permission denied (this program runs as "
                    f"{UNPRIVILEGED_USER}{':' if blocked == 'file' else ','} {why})")
