"""JournalTail: following a journal that a real ``shoectl run`` is writing, checked as it reads."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from controller.journal import Journal, JournalError, JournalReader
from controller.journal.errors import JournalIntegrityError
from controller.journal.tail import JournalTail
from tests.journal.conftest import KEY, OTHER_KEY, fill
from tests.tampering import tamper
from tests.unprivileged import said_unprivileged

SHOECTL = [sys.executable, "-m", "controller.cli.main"]


def test_follows_a_journal_that_shoectl_run_is_writing(tmp_path: Path) -> None:
    journal = tmp_path / "t.db"
    proc = subprocess.Popen([*SHOECTL, "run", "--speed", "max", "--rounds", "25", "--seed", "3", "--journal",
                             str(journal), "--display", "lines"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    got = []
    read_while_running = 0
    try:
        deadline = time.monotonic() + 60
        while True:  # until the table has made its journal (its schema committed)
            assert proc.poll() is None and time.monotonic() < deadline, "the table did not start"
            try:
                tail = JournalTail.open(journal)
                break
            except JournalError:
                time.sleep(0.02)
        with tail:
            assert tail.table_id == "T1"
            while proc.poll() is None:
                batch = tail.poll(7)  # small batches: many polls while it writes
                assert len(batch) <= 7
                got += batch
                read_while_running += len(batch)
                time.sleep(0.005)
            assert proc.wait(timeout=60) == 0, proc.stderr.read()
            while batch := tail.poll(500):
                got += batch
            assert tail.poll() == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stderr.close()
    assert read_while_running > 0 and read_while_running < len(got) + 1
    assert [e.seq for e in got] == list(range(1, len(got) + 1))
    with JournalReader.open(journal) as r:
        assert got == list(r.entries())


def test_seek_continues_after_an_entry_and_refuses_one_beyond_the_end(journal_path: Path) -> None:
    hashes = fill(journal_path, 12)
    with JournalTail.open(journal_path) as tail:
        tail.seek(5)
        assert tail.last_seq == 5 and tail.last_hash == hashes[4]
        assert [e.seq for e in tail.poll(3)] == [6, 7, 8]
        tail.seek(2)  # back: checked again from the first
        assert [e.seq for e in tail.poll()] == list(range(3, 13))
        with pytest.raises(JournalError, match="ends at entry 12; entry 13 is not in it"):
            tail.seek(13)


def test_a_break_in_the_chain_stops_the_follower_at_the_entry_before(journal_path: Path) -> None:
    fill(journal_path, 10)
    tamper(journal_path, "UPDATE entries SET payload = '{\"i\":99}' WHERE seq = 6")
    with JournalTail.open(journal_path) as tail:
        assert [e.seq for e in tail.poll(100)] == [1, 2, 3, 4, 5]
        for _ in range(2):  # and again: a follower never skips a bad entry
            with pytest.raises(JournalIntegrityError, match=r"FAILED at entry 6: entry 6: hash mismatch"):
                tail.poll()


def test_a_deleted_entry_is_a_gap_it_does_not_step_over(journal_path: Path) -> None:
    fill(journal_path, 8)
    tamper(journal_path, "DELETE FROM entries WHERE seq = 4")
    with JournalTail.open(journal_path) as tail:
        with pytest.raises(JournalIntegrityError, match="entry 4 is missing"):
            tail.seek(6)


def test_entries_appended_after_a_poll_come_with_the_next(journal_path: Path) -> None:
    with Journal.open(journal_path, table_id="T9") as j, JournalTail.open(journal_path) as tail:
        assert tail.poll() == []
        j.append("a", {"n": 1})
        j.append("b", {"n": 2})
        assert [e.kind for e in tail.poll()] == ["a", "b"]
        j.append("c", {"n": 3})
        assert [e.kind for e in tail.poll()] == ["c"]


def test_an_hmac_journal_is_checked_with_its_key_and_refused_with_another(journal_path: Path) -> None:
    fill(journal_path, 4, hmac_key=KEY)
    with JournalTail.open(journal_path, hmac_key=KEY) as tail:
        assert not tail.links_only and len(tail.poll()) == 4
    with JournalTail.open(journal_path) as tail:
        assert tail.links_only and len(tail.poll()) == 4
    with pytest.raises(JournalError, match="wrong HMAC key"):
        JournalTail.open(journal_path, hmac_key=OTHER_KEY)


def test_not_a_journal_is_one_line(tmp_path: Path) -> None:
    bogus = tmp_path / "x.db"
    bogus.write_text("hello, this is not SQLite at all" * 40)
    with pytest.raises(JournalError, match="not a journal"):
        JournalTail.open(bogus)


def _open_as_another_user(path: Path) -> str:
    """Open and poll ``path`` in a child dropped to an unprivileged user: 'ok N' or the error."""
    def follow() -> str:
        try:
            with JournalTail.open(path) as tail:
                return f"ok {len(tail.poll())}"
        except JournalError as exc:
            return str(exc)

    return said_unprivileged(follow)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_another_user_follows_a_running_table_and_is_told_what_it_lacks_when_it_is_stopped() -> None:
    shared = Path(tempfile.mkdtemp(prefix="shoectl-tail-"))  # pytest's own directories are private
    try:
        shared.chmod(0o755)
        journal = shared / "t.db"
        with Journal.open(journal, table_id="T1") as j:  # a writer is active: -wal and -shm exist
            j.append("a", {})
            for side in ("", "-wal", "-shm"):
                Path(f"{journal}{side}").chmod(0o644)
            assert _open_as_another_user(journal) == "ok 1"  # read access to the three files is enough
            j.append("b", {})
            assert _open_as_another_user(journal) == "ok 2"
        # stopped: SQLite removed -wal and -shm; a copy's reader would open it immutable, a follower must not
        assert not Path(f"{journal}-wal").exists()
        refused = _open_as_another_user(journal)
        assert "cannot follow the journal" in refused and "write access to the journal's directory" in refused
        shared.chmod(0o777)  # what the shared group gives it
        assert _open_as_another_user(journal) == "ok 2"
    finally:
        shutil.rmtree(shared)


_OUT_OF_DESCRIPTORS_CHILD = r"""
import os, sys
from pathlib import Path
from controller.journal.connection import open_readonly_connection
from controller.journal.errors import JournalError

fillers = []
try:
    while True:  # every descriptor the process may have, taken by its other work
        fillers.append(os.open(os.devnull, os.O_RDONLY))
except OSError:
    pass
said = []
for live in (True, False):
    try:
        open_readonly_connection(Path(sys.argv[1]), live=live).close()
        said.append("opened")
    except JournalError as exc:
        said.append(str(exc))
for fd in fillers:
    os.close(fd)
open_readonly_connection(Path(sys.argv[1]), live=True).close()
print("\n".join(said))
"""


def test_a_reader_out_of_file_descriptors_is_told_so_not_to_fix_its_permissions(tmp_path: Path) -> None:
    """SQLite says "unable to open database file" when the process has no descriptor left, the
    words it uses when the -shm file cannot be created beside the journal: a follower was told to
    get write access to the journal's directory, which it had. Both readers now name the cause."""
    journal = tmp_path / "t.db"
    with Journal.open(journal, table_id="T1") as j:
        j.append("a", {})
    proc = subprocess.run([sys.executable, "-c", _OUT_OF_DESCRIPTORS_CHILD, str(journal)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    said = proc.stdout.splitlines()
    assert said == [f"{journal}: cannot open the journal: the process has no file descriptor left (its limit of "
                    "open files is reached)"] * 2, said
