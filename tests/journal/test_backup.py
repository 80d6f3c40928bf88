"""``shoectl journal backup``: a copy of a journal that verifies, also of one its table is writing
(a review of operations: the file and its ``-wal`` copied two seconds apart from a running table
verified as "malformed" eight times of eight; the anchors copied after a ``.backup`` named entries
the copy lacked, "truncated?"; a copy of the main file alone said ``ok`` without its newest entries)."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_run import run
from controller.journal import Journal, verify
from controller.journal.anchors import AnchorFile, anchors_path

SHOECTL = [sys.executable, "-m", "controller.cli.main"]


def _anchored_journal(path: Path, entries: int) -> None:
    with Journal.open(path, table_id="T1") as journal:
        witness = AnchorFile.beside(path)
        for i in range(entries):
            journal.append("note", {"i": i})
            if i % 10 == 9:
                witness.record(journal.take_anchor())


@pytest.mark.slow
def test_copies_taken_while_the_table_deals_each_verify_with_their_anchors(tmp_path: Path) -> None:
    live = tmp_path / "live.db"
    table = subprocess.Popen([*SHOECTL, "run", "--journal", str(live), "--shoes", "40", "--speed", "max",
                              "--display", "lines"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    heads = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (  # a shoe ended: an anchor of an entry, not only the opening's
                anchors_path(live).exists() and anchors_path(live).read_bytes().count(b"\n") >= 2):
            time.sleep(0.05)
        for i in range(3):
            time.sleep(0.3)
            copy = tmp_path / f"copy{i}.db"
            done = subprocess.run([*SHOECTL, "journal", "backup", str(live), str(copy)], capture_output=True,
                                  text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            assert done.stdout.startswith(f"{copy}: a copy of {live} to entry ") and ", verified; its " in done.stdout
            assert not Path(f"{copy}-wal").exists() and not Path(f"{copy}-shm").exists()  # one file, whole
            assert oct(copy.stat().st_mode & 0o777) == "0o640"  # the cards dealt face down are in it
            report = verify(copy)  # as anyone checks it later: with the anchors beside it
            assert report.ok and report.anchors > 0 and not report.warnings, (report.reason, report.warnings)
            heads.append(report.last_seq)
        assert table.poll() is None, "the table stopped while it was copied"
    finally:
        table.terminate()
        table.communicate(timeout=30)
    assert heads == sorted(heads) and heads[0] > 0
    assert verify(live).ok  # the table's own journal is as it was: the copies read it only


def test_a_line_of_the_anchors_file_still_being_written_is_left_out(tmp_path: Path, capsys) -> None:
    journal = tmp_path / "j.db"
    _anchored_journal(journal, 30)
    with anchors_path(journal).open("ab") as f:
        f.write(b'{"table_id": "T1", "seq": 3')  # the table writes its next anchor now
    code, out, err = run(capsys, "journal", "backup", str(journal), str(tmp_path / "c.db"))
    assert (code, err) == (0, ""), err
    assert out == (f"{tmp_path / 'c.db'}: a copy of {journal} to entry 30 ({verify(journal).last_hash[:16]}...), "
                   f"verified; its 3 anchors in {tmp_path / 'c.db'}.anchors\n")
    assert anchors_path(tmp_path / "c.db").read_bytes().count(b"\n") == 3


@pytest.mark.parametrize("target", ["existing", "the-anchors", "the-wal"])
def test_a_copy_over_a_file_is_refused_and_changes_nothing(tmp_path: Path, capsys, target: str) -> None:
    journal = tmp_path / "j.db"
    _anchored_journal(journal, 10)
    copy = {"existing": tmp_path / "there.db", "the-anchors": anchors_path(journal),
            "the-wal": Path(f"{journal}-wal")}[target]
    if target == "existing":
        copy.write_bytes(b"keep me")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    code, out, err = run(capsys, "journal", "backup", str(journal), str(copy))
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    said = "already exists: a journal is copied into a new file, never over one" if target == "existing" \
        else "or a file beside it; give another file for the copy"
    assert said in err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


@pytest.mark.parametrize("command", ["backup", "migrate"])
def test_a_copy_into_a_folder_that_takes_no_new_files_names_the_copy_and_its_folder(tmp_path: Path, capsys,
                                                                                    command: str) -> None:
    """A review of bad inputs: `journal backup j.db /proc/n.db` blamed a temporary file the user
    never gave (`/proc/.n.db.anchors.copying-19479`), `journal migrate` the good source journal."""
    journal = tmp_path / "j.db"
    _anchored_journal(journal, 10)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    code, out, err = run(capsys, "journal", command, str(journal), "/proc/n.db")
    assert (code, out) == (2, "")
    assert err == f"shoectl journal {command}: error: /proc/n.db: cannot be made: its folder /proc takes no new files\n"
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_copy_whose_disk_fills_names_the_copy_not_the_journal(tmp_path: Path, capsys,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A review of disk faults: a backup onto a full disk said `j.db: cannot copy the journal:
    database or disk is full` of the journal, whose disk had room; the person freed space on the
    table's disk. The copy is named. (The full disk is SQLite's own: the copy's database is held
    to a few pages, which SQLite reports as a full disk, SQLITE_FULL.)"""
    import sqlite3

    journal, copy = tmp_path / "j.db", tmp_path / "backups" / "b.db"
    copy.parent.mkdir()
    _anchored_journal(journal, 200)
    real_connect = sqlite3.connect

    def small_copies(database, *args, **kwargs):
        conn = real_connect(database, *args, **kwargs)
        if ".copying-" in str(database):
            conn.execute("PRAGMA max_page_count = 2")
        return conn

    monkeypatch.setattr(sqlite3, "connect", small_copies)
    code, out, err = run(capsys, "journal", "backup", str(journal), str(copy))
    assert (code, out) == (2, "")
    assert err == f"shoectl journal backup: error: {copy}: cannot write the copy: database or disk is full; nothing was stored\n"
    assert list(copy.parent.iterdir()) == []


def test_a_disk_io_error_on_a_full_disk_says_the_disk_is_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A review of disk faults: SQLite says "disk I/O error" when it cannot size a journal's -shm
    on a full disk, which sent a person after failing hardware; the words now say the disk is full
    when it is (its free space, ``disk_full``, faked here: a test cannot fill a disk everywhere)."""
    import sqlite3

    from controller.journal import connection

    error = sqlite3.OperationalError("disk I/O error")
    assert str(connection.translate(error, tmp_path / "j.db", "open the journal")) == \
        f"{tmp_path / 'j.db'}: cannot open the journal: disk I/O error; nothing was stored"
    monkeypatch.setattr(connection, "disk_full", lambda path, files=False: not files)
    assert str(connection.translate(error, tmp_path / "j.db", "open the journal")) == \
        f"{tmp_path / 'j.db'}: cannot open the journal: the disk it is on is full (disk I/O error): free space there"
    # no inode left for the -wal and -shm: SQLite says it cannot open the file (the same review)
    cannot_open = sqlite3.OperationalError("unable to open database file")
    monkeypatch.setattr(connection, "disk_full", lambda path, files=False: files)
    assert str(connection.translate(cannot_open, tmp_path / "j.db", "open the journal")) == \
        f"{tmp_path / 'j.db'}: cannot open the journal: the disk it is on has no room for another file (no inode left): free some there"


def test_not_a_journal_is_one_line_and_leaves_no_copy(tmp_path: Path, capsys) -> None:
    other = tmp_path / "other.db"
    other.write_bytes(b"not SQLite at all" * 100)
    code, out, err = run(capsys, "journal", "backup", str(other), str(tmp_path / "c.db"))
    assert code == 2 and "not a journal" in err and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.db"]


def test_an_hmac_journal_is_copied_with_its_key_and_refused_without(tmp_path: Path, capsys) -> None:
    key_file = tmp_path / "key"
    key_file.write_bytes(os.urandom(32).hex().encode())
    key_file.chmod(0o600)
    from controller.journal.chain import load_hmac_key

    with Journal.open(tmp_path / "j.db", table_id="T1", hmac_key=load_hmac_key(str(key_file))) as journal:
        journal.append("note", {"i": 1})
    code, _, err = run(capsys, "journal", "backup", str(tmp_path / "j.db"), str(tmp_path / "c.db"))
    assert code == 2 and "--hmac-key FILE" in err and not (tmp_path / "c.db").exists(), err
    code, out, err = run(capsys, "journal", "backup", str(tmp_path / "j.db"), str(tmp_path / "c.db"),
                         "--hmac-key", str(key_file))
    assert code == 0 and "to entry 1 " in out, err


def test_a_damaged_or_tampered_journal_is_named_as_every_reader_names_it_and_nothing_is_kept(tmp_path: Path,
                                                                                             capsys) -> None:
    """A review of bad inputs: a journal SQLite finds damaged (cut short) was "cannot open the
    journal", exit 2, where every other reader says FAILED, exit 1; one that does not verify was
    named by the copy's path, not the journal's."""
    from tampering import tamper

    journal = tmp_path / "j.db"
    _anchored_journal(journal, 300)
    cut = tmp_path / "cut.db"
    cut.write_bytes(journal.read_bytes()[: journal.stat().st_size // 2])
    code, out, err = run(capsys, "journal", "backup", str(cut), str(tmp_path / "c1.db"))
    assert (code, out) == (1, "") and err.startswith(f"shoectl journal backup: error: {cut}: FAILED: the database "
                                                     "file is corrupt") and err.count("\n") == 1, err
    tamper(journal, "UPDATE entries SET payload = ? WHERE seq = ?", params=('{"forged": true}', 7))
    code, out, err = run(capsys, "journal", "backup", str(journal), str(tmp_path / "c2.db"))
    assert (code, out) == (1, "") and err.startswith(f"shoectl journal backup: error: {journal}: FAILED at entry 7")
    assert err.endswith("its copy does not verify; nothing was kept\n"), err
    assert not any(p.name.startswith(("c1", "c2", ".c")) for p in tmp_path.iterdir())


def test_the_copy_s_anchors_go_to_a_new_file_never_through_a_link_planted_under_its_temporary_name(
        tmp_path: Path, capsys) -> None:
    """A security review: `backup` wrote the copied anchors to `.COPY.anchors.copying-PID`, a name
    anyone can guess, opened to be truncated and following links: root's backup into a shared folder
    wrote the anchors over a file of another account's choosing. (`migrate`: tests/journal/test_schema_v1.py.)"""
    journal = tmp_path / "j.db"
    _anchored_journal(journal, 20)
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    copy = tmp_path / "shared" / "c.db"
    copy.parent.mkdir()
    planted = copy.with_name(f".{copy.name}.anchors.copying-{os.getpid()}")  # this process's own pid
    planted.symlink_to(victim)
    code, out, err = run(capsys, "journal", "backup", str(journal), str(copy))
    assert (code, err) == (0, "") and out.endswith(f"verified; its 2 anchors in {copy}.anchors\n"), err
    assert victim.read_text() == "keep\n" and not planted.exists() and not planted.is_symlink()
    assert anchors_path(copy).read_bytes() == anchors_path(journal).read_bytes() and not anchors_path(copy).is_symlink()
