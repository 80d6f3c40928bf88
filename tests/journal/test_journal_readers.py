"""Every command that reads a journal (`journal verify|export|replay`, `audit cards|shuffle`,
`roadmap`), on a journal written by a real `shoectl run`: read-only copies, FIFOs, damaged and
tampered files, a garbage `-wal` file."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from controller.journal import JournalReader
from controller.journal.anchors import AnchorFile, anchors_path

from cli_run import dealt_journal, run
from tampering import delete_and_rechain, tamper
from unprivileged import read_only_copy, run_unprivileged
from .reader_commands import READERS


@pytest.fixture(scope="module")
def table_journal(tmp_path_factory) -> Path:
    """A journal of one whole shoe dealt by `shoectl run` on the built-in emulator."""
    path = tmp_path_factory.mktemp("readers") / "table.db"
    _run_table(path)
    return path


@pytest.fixture
def journal(table_journal: Path, tmp_path: Path) -> Path:
    """A private copy of the table's journal (and of the files beside it that belong to it)."""
    for side in table_journal.parent.glob(table_journal.name + "*"):
        if not side.name.endswith(".lock"):
            shutil.copy(side, tmp_path / side.name)
    return tmp_path / table_journal.name


@pytest.mark.parametrize("reader", READERS)
def test_a_read_only_copy_is_read_by_an_unprivileged_user(reader: str, table_journal: Path) -> None:
    """docs/journal.md: a read-only copy (e.g. on write-protected media) without a -wal file is
    opened immutable. A 0444 file in a 0555 directory, read as `nobody`: SQLite cannot create the
    -shm file beside it and says "attempt to write a readonly database"."""
    with read_only_copy(table_journal) as ro:
        code, out, err = run_unprivileged(*READERS[reader], str(ro / table_journal.name))
        assert sorted(p.name for p in ro.iterdir()) == [table_journal.name]  # nothing created beside it
    assert "readonly" not in err and "read-only" not in err
    assert code == 0, err
    assert out


class FifoWatch:
    """A FIFO, and whether anything opened it for reading (which would block until a writer came):
    a background poller opens it for writing without blocking, which succeeds only then."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self.opened_for_reading = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._done.wait(0.02):
            try:
                fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: no reader
                continue
            self.opened_for_reading = True
            os.close(fd)  # the blocked reader sees the end of the file and goes on

    def close(self) -> None:
        self._done.set()
        self._thread.join()


@pytest.mark.parametrize("reader", READERS)
def test_a_fifo_given_as_the_journal_is_refused_without_opening_it(reader: str, tmp_path: Path, capsys) -> None:
    """A FIFO would block a reader forever: it is refused, one line, exit 2, before it is opened."""
    fifo = FifoWatch(tmp_path / "journal.db")
    try:
        code, out, err = run(capsys, *READERS[reader], str(fifo.path))
    finally:
        fifo.close()
    assert not fifo.opened_for_reading
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and f"{fifo.path}: is a FIFO, not a regular file" in err


@pytest.mark.parametrize("reader", READERS)
def test_a_fifo_given_as_the_key_file_is_refused_without_opening_it(reader: str, journal: Path, tmp_path: Path,
                                                                     capsys) -> None:
    fifo = FifoWatch(tmp_path / "journal.key")
    try:
        code, out, err = run(capsys, *READERS[reader], str(journal), "--hmac-key", str(fifo.path))
    finally:
        fifo.close()
    assert not fifo.opened_for_reading
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and "is a FIFO, not a regular file" in err


# --- a journal that does not verify is not read as if it did (issue 9, items 8 and 9) -------------

TAMPERING = {
    "an edited entry": lambda p: tamper(p, "UPDATE entries SET payload = '{\"amount\":999999}' WHERE seq = 100"),
    "a deleted entry": lambda p: tamper(p, "DELETE FROM entries WHERE seq = 100"),
    "a re-chained journal": lambda p: delete_and_rechain(p, 100),
    "a removed tail": lambda p: tamper(p, "DELETE FROM entries WHERE seq > (SELECT max(seq) - 20 FROM entries)"),
}


@pytest.mark.parametrize("tampering", TAMPERING)
@pytest.mark.parametrize("reader", READERS)
def test_a_journal_that_does_not_verify_is_refused(reader: str, tampering: str, journal: Path, capsys) -> None:
    """Every reader checks the chain (and the anchors `shoectl run` left beside the journal) as it
    reads: an edited, deleted, re-chained or truncated journal is refused in one line, exit 1,
    nothing on standard output."""
    assert run(capsys, *READERS[reader], str(journal))[0] == 0
    TAMPERING[tampering](journal)
    code, out, err = run(capsys, *READERS[reader], str(journal))
    assert code == 1
    if reader == "verify":
        assert out.count("\n") == 1 and "FAILED at entry" in out
        return
    assert out == ""
    assert err.count("\n") == 1 and "FAILED at entry" in err and "nothing was written" in err


@pytest.mark.parametrize("reader", [r for r in READERS if r != "verify"])
def test_no_verify_reads_it_all_the_same_and_says_so(reader: str, journal: Path, capsys) -> None:
    _, intact, _ = run(capsys, *READERS[reader], str(journal))
    tamper(journal, "UPDATE entries SET operator = 'someone' WHERE seq = 100")
    code, out, err = run(capsys, *READERS[reader], str(journal), "--no-verify")
    assert code == 0 and (out == intact or reader == "export" and out.count("\n") == intact.count("\n"))
    assert err.count("\n") == 1 and "warning" in err and "FAILED at entry 100" in err and "--no-verify" in err


@pytest.mark.parametrize("reader", [r for r in READERS if r != "verify"])
def test_no_verify_reads_it_all_when_the_check_fails_before_any_entry(reader: str, journal: Path, capsys) -> None:
    """A check that fails before the entries are read (here an anchors file beside the journal
    with a line that is not an anchor) is the verdict; --no-verify still reads every entry."""
    _, intact, _ = run(capsys, *READERS[reader], str(journal))
    anchors = Path(f"{journal}.anchors")
    anchors.write_text("not an anchor\n" + anchors.read_text())
    code, out, err = run(capsys, *READERS[reader], str(journal), "--no-verify")
    assert code == 0 and (out == intact or reader == "export" and out.count("\n") == intact.count("\n"))
    assert err.count("\n") == 1 and "warning" in err and "not an anchor" in err and "--no-verify" in err


@pytest.mark.parametrize("reader", ["replay", "roadmap", "audit cards"])
def test_a_record_without_what_its_kind_needs_is_one_line(reader: str, journal: Path, capsys) -> None:
    """Read with --no-verify (or forged with valid hashes): the reader names the entry, exit 2."""
    kind = "cut" if reader.startswith("audit") else "round_result"
    tamper(journal, f"UPDATE entries SET payload = '{{}}' WHERE seq = (SELECT min(seq) FROM entries WHERE kind = '{kind}')")
    code, out, err = run(capsys, *READERS[reader], str(journal), "--no-verify")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and f"({kind}): malformed payload: no field " in err


@pytest.fixture
def damaged_index(journal: Path) -> Path:
    """The journal with one page of an index overwritten: every entry reads back, but SQLite's
    integrity check fails (its report spans several lines)."""
    conn = sqlite3.connect(journal)
    page = conn.execute("SELECT pageno FROM dbstat WHERE name = 'entries_shoe_seq' AND pagetype = 'leaf' "
                        "ORDER BY pageno LIMIT 1 OFFSET 1").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(journal, "r+b") as f:
        f.seek((page - 1) * size + 200)
        f.write(b"\x13" * 300)
    return journal


@pytest.mark.parametrize("reader", READERS)
def test_a_failed_integrity_check_is_one_line_and_nothing_is_read(reader: str, damaged_index: Path, capsys) -> None:
    """`audit cards` said "card sets ok" on this file; `verify` spread its failure over six lines."""
    code, out, err = run(capsys, *READERS[reader], str(damaged_index))
    assert code == 1
    line = out if reader == "verify" else err
    assert line.count("\n") == 1 and "SQLite integrity check failed: On tree page" in line
    if reader != "verify":
        assert out == "" and "nothing was written" in err
    code, out, _ = run(capsys, "journal", "verify", str(damaged_index), "--json")
    reason = json.loads(out)["reason"]
    assert code == 1 and reason.startswith("SQLite integrity check failed: On tree page") and "\n" not in reason


@pytest.fixture
def damaged_leaf(journal: Path) -> Path:
    """The journal with a page of entries in its middle overwritten: the first entries read back,
    then SQLite says the file is malformed."""
    conn = sqlite3.connect(journal)
    pages = [r[0] for r in conn.execute("SELECT pageno FROM dbstat WHERE name = 'entries' AND pagetype = 'leaf' "
                                        "ORDER BY pageno")]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(journal, "r+b") as f:
        f.seek((pages[len(pages) // 2] - 1) * size)
        f.write(b"\x0d\x00\x00\xff\xff")
    return journal


@pytest.mark.parametrize("reader", READERS)
def test_a_corrupt_file_gives_one_line_and_no_partial_output(reader: str, damaged_leaf: Path, capsys) -> None:
    """`export` wrote 1000 entries and `replay` 26 rounds before failing on this file."""
    code, out, err = run(capsys, *READERS[reader], str(damaged_leaf))
    # A file SQLite finds damaged is a journal that does not verify (exit 1), as a broken chain is;
    # it was exit 2 ("cannot open the journal") or 1 by where the damage lay (a bad-input review).
    assert code == 1 and err.count("\n") + out.count("\n") == 1, (code, out, err)
    assert "malformed" in err + out or "integrity check failed" in err + out
    assert "FAILED" in err + out
    if reader != "verify":
        assert out == ""


# --- a -wal file SQLite ignores (issue 9, item 18) ---------------------------------------------------


@pytest.mark.parametrize("reader", READERS)
def test_a_garbage_wal_file_is_reported(reader: str, journal: Path, capsys) -> None:
    """SQLite silently ignores a -wal file that is not one: every reader says so, one line."""
    wal = Path(f"{journal}-wal")
    wal.write_bytes(bytes(range(256)) * 200)
    code, out, err = run(capsys, *READERS[reader], str(journal))
    assert code == 0 and out
    assert err == (f"shoectl {' '.join(READERS[reader])}: warning: {wal}: not a WAL file (51200 bytes): SQLite ignores it, "
                   "so whatever it held is not in the journal\n")


# --- the anchors `shoectl run` keeps (issue 9, item 9) ------------------------------------------------


def _run_table(path: Path, *extra: str) -> None:
    dealt_journal(path, "--shoes", "1", "--seed", "1", *extra)


def test_run_anchors_the_journal_when_it_opens_it_and_at_every_shoe_end(table_journal: Path, capsys) -> None:
    lines = AnchorFile.beside(table_journal).read()
    with JournalReader.open(table_journal) as r:
        shoe_end = next(r.entries(kinds=["reconciliation"])).seq
        last = r.last()
    assert [a.seq for _, a in lines.anchors] == [0, last.seq] and last.seq >= shoe_end
    assert lines.anchors[-1][1].hash == last.hash and not lines.bad
    code, out, err = run(capsys, "journal", "verify", str(table_journal), "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["anchors"] == 1 and report["warnings"] == [] and err == ""


@pytest.fixture(scope="module")
def hmac_table(tmp_path_factory) -> tuple[Path, Path]:
    """A journal of one shoe dealt by `shoectl run --hmac-key`, and its key file."""
    base = tmp_path_factory.mktemp("hmac-table")
    key = base / "journal.key"
    key.write_bytes(b"k" * 32)
    key.chmod(0o600)
    _run_table(base / "table.db", "--hmac-key", str(key))
    return base / "table.db", key


def test_a_relabelled_hmac_journal_does_not_verify_without_the_key(hmac_table: tuple[Path, Path], tmp_path: Path,
                                                                    capsys) -> None:
    """Issue 9: a re-chained HMAC journal relabelled sha256 verified when the key was not given.
    The anchors `shoectl run` signed with the key say the chain is HMAC."""
    table, key = hmac_table
    journal = tmp_path / table.name
    shutil.copy(table, journal)
    shutil.copy(anchors_path(table), anchors_path(journal))
    assert [a.mac is not None for _, a in AnchorFile.beside(journal).read().anchors] == [True, True]
    assert run(capsys, "journal", "verify", str(journal), "--hmac-key", str(key))[0] == 0
    delete_and_rechain(journal, 100)
    code, out, _ = run(capsys, "journal", "verify", str(journal))
    assert code == 1 and out.count("\n") == 1
    assert "it says the journal's chain is hmac-sha256 (key id " in out and "the journal says sha256" in out
    code, out, _ = run(capsys, "journal", "verify", str(journal), "--hmac-key", str(key))
    assert code == 1 and "not HMAC-protected" in out


# --- the table itself reads its journal when it resumes ------------------------------------------------


def test_run_does_not_resume_from_a_journal_that_does_not_verify(journal: Path) -> None:
    """`shoectl run` feeds every journaled input to the core again when it resumes: from an
    edited journal it would rebuild (and anchor) a state the journal does not prove."""
    tamper(journal, "UPDATE entries SET operator = 'someone' WHERE seq = 100")
    before = journal.read_bytes(), anchors_path(journal).read_bytes()
    done = subprocess.run([sys.executable, "-m", "controller.cli.main", "run", "--journal", str(journal), "--shoes",
                           "1", "--speed", "max", "--seed", "2", "--display", "lines"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "FAILED at entry 100" in done.stderr
    assert "the table does not resume from a journal that does not verify" in done.stderr
    assert (journal.read_bytes(), anchors_path(journal).read_bytes()) == before
