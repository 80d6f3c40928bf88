"""``shoectl run`` refuses a bad value of any of its options before anything is opened or created
(issue 12: ``--speed fast`` once failed after the journal file was created): one line, exit 2,
no traceback, and the folder it runs in is exactly as it was."""
from __future__ import annotations

import hashlib
import os
import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest

from cli_run import run
from tampering import tamper
from unprivileged import said_unprivileged
from controller.cli.main import build_parser
from controller.cli.run_options import check_dealer_options, check_paths
from controller.errors import UsageError
from controller.journal import Journal
from controller.journal.anchors import AnchorFile

BAD = [
    ("--speed", "fast"),
    ("--speed", "0"),
    ("--speed", "inf"),    # was taken for max
    ("--speed", "1e999"),  # was taken for max
    ("--speed", "nan"),
    ("--faults", "corrupt=2"),
    ("--faults", "corrupt=\u0660.\u0665"),  # Arabic-Indic digits: taken for 0.5 (a configuration review)
    ("--faults", "drop=0.0_1"),
    ("--faults", "bogus=1"),
    ("--table-id", ""),
    ("--table-id", "T 1"),
    ("--log-file", "no-folder/run.log"),
    ("--log-file", "a-folder"),
    ("--dealt-log", "no-folder/dealt.txt"),
    ("--journal", "a-folder"),
    ("--journal", "no-such-folder/j.db"),  # was made: a mistyped path started a new table
    ("--journal", "operators.toml"),  # not a journal: its lock, log and socket files were made beside it
    ("--control", "a-folder"),
    ("--control-group", "no-such-group-shoectl-test"),
    ("--operators", "missing-operators.toml"),
    ("--submissions", "no-such-folder"),  # accepted: only a floorperson's set_submission found out
    ("--submissions", "operators.toml"),
    ("--hmac-key", "missing.key"),
    ("--submission", "no-such-preset"),
    ("--device", "no-such-profile@/dev/ttyUSB0"),
    ("--device", "emulated-shoe"),
    ("--shoes", "0"),
    ("--rounds", "-1"),
    ("--seed", "x"),
    ("--lockout", "0"),
    ("--remember-pin", "-1"),
    ("--remember-pin", "soon"),
    ("--control-connections", "0"),
    ("--stop-grace", "0"),
    ("--display", "x"),
    ("--log-level", "loud"),
]


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("option, value", BAD, ids=[f"{o}={v}" for o, v in BAD])
def test_a_bad_value_is_refused_before_anything_is_created(capsys, monkeypatch, tmp_path: Path,
                                                            option: str, value: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-folder").mkdir()
    (tmp_path / "operators.toml").write_text("[operators]\n")
    before = _listing(tmp_path)
    code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", f"{option}={value}")
    assert code == 2, err
    assert out == "" and err.count("\n") == 1 and err.startswith("shoectl run: error: "), err
    assert "Traceback" not in err and "None" not in err and "Error" not in err
    assert _listing(tmp_path) == before  # no var/, no journal, no log file, no socket or lock file


@pytest.mark.parametrize("options, said", [
    (["--hmac-key", "journal.key", "--log-file", "journal.key"], "--log-file journal.key: that is the journal's HMAC key"),
    (["--log-file", "var/operators.toml"], "--log-file var/operators.toml: that is the operators file"),
    (["--operators", "ops.toml", "--dealt-log", "ops.toml"], "--dealt-log ops.toml: that is the operators file"),
])
def test_a_log_into_a_file_the_run_reads_is_refused_and_the_file_left_as_it_was(
        capsys, monkeypatch, tmp_path: Path, options: list[str], said: str) -> None:
    """A review of logs: `--log-file` naming the run's HMAC key or its operators file appended the
    log's lines to it; the journal then failed its key and the operators file no longer loaded."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "var").mkdir()
    key = tmp_path / "journal.key"
    key.write_bytes(b"k" * 32)
    key.chmod(0o600)
    for name in ("var/operators.toml", "ops.toml"):
        (tmp_path / name).write_text("[operators]\n")
        (tmp_path / name).chmod(0o600)
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", "--journal", "var/j.db", *options)
    assert (code, out) == (2, "") and err.startswith(f"shoectl run: error: {said} of this run, which it reads"), err
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize("extra", [["--speed", "max"], ["--faults", "corrupt=0.01"], ["--dealt-log", "dealt.txt"],
                                   ["--speed", "5", "--faults", "drop=0.1"]])
def test_built_in_emulator_options_beside_a_device_are_refused_not_ignored(capsys, monkeypatch, tmp_path: Path,
                                                                         extra: list[str]) -> None:
    """``--speed``, ``--faults`` and ``--dealt-log`` set the built-in emulator; with ``--device``
    there is none, so an operator who gives them is told so (once they were silently ignored:
    a fault test that injected nothing)."""
    monkeypatch.chdir(tmp_path)
    before = _listing(tmp_path)
    code, out, err = run(capsys, "run", "--device", "emulated-shoe@/nonexistent/ttyUSB0", "--shoes", "1", *extra)
    assert code == 2, err
    assert err.count("\n") == 1 and "only for the built-in emulator" in err and extra[0] in err, err
    assert _listing(tmp_path) == before


def test_a_pace_without_the_automated_dealer_is_refused_not_ignored(capsys, monkeypatch, tmp_path: Path) -> None:
    """``--pace`` slows the automated dealer; ``--manual`` has none, and the pace was ignored."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "run", "--manual", "--pace", "20", "--rounds", "1")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "--pace" in err and "--manual" in err, err
    assert _listing(tmp_path) == []


@pytest.mark.parametrize("argv, given", [
    (["--edge-threshold", "0.1"], "--edge-threshold"),
    (["--edge-engine", "python"], "--edge-engine"),
    (["--edge-threshold", "0", "--edge-engine", "python"], "--edge-threshold, --edge-engine"),
])
def test_the_edge_monitors_options_without_the_monitor_are_refused_not_ignored(capsys, monkeypatch, tmp_path: Path,
                                                                              argv: list[str], given: str) -> None:
    """A threshold given to a table run with --no-edge-monitor was taken without a word, and no
    notice could ever come (a review of bad inputs)."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "run", "--no-edge-monitor", *argv, "--rounds", "1")
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert f"{given}: the edge monitor's, and --no-edge-monitor turns it off" in err, err
    assert _listing(tmp_path) == []


@pytest.mark.parametrize("argv, said", [
    (["--manual", "--automated", "--device", "emulated-shoe@/nonexistent/ttyUSB0"],
     "--manual, --automated: give one (who drives the table: operators, or the automated dealer)"),
    (["--automated"], "--automated: only with --device; without it the built-in emulated table is dealt by the "
                      "automated dealer already (--manual for operators)"),
    (["--require-device"], "--require-device: no --device given (this table's devices: --device PROFILE[@PORT] "
                           "for each; without any the built-in emulated table would run)"),
    (["--device", "emulated-shoe@/nonexistent/ttyUSB0", "--pace", "20"],
     "--pace: the automated dealer's wait between its actions; with --device and no --automated there is no "
     "automated dealer (operators deal)"),
])
def test_who_drives_the_table_is_one_choice(capsys, monkeypatch, tmp_path: Path, argv: list[str], said: str) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "run", "--rounds", "1", *argv)
    assert (code, out) == (2, "") and err == f"shoectl run: error: {said}\n"
    assert _listing(tmp_path) == []


def test_a_table_with_devices_is_driven_by_its_operators_unless_automated_is_asked(tmp_path: Path) -> None:
    """An integrator review: a table computer's `shoectl run --device ...`, as docs/deployment.md
    sets it up, ran the automated dealer and floorperson, which seated invented players, opened
    the table and placed wagers on a real table's journal. With ``--device`` operators drive it;
    ``--automated`` is for an emulated table served by ``shoectl emulate``."""
    def settled(*argv: str) -> bool:
        args = build_parser(["run", *argv]).parse_args(["run", *argv])
        check_dealer_options(args)
        return args.manual

    assert settled("--device", "acme-readershoe-s@/dev/ttyS0") is True
    assert settled("--device", "emulated-shoe@/dev/pts/3", "--automated") is False
    assert settled() is False and settled("--manual") is True


@pytest.mark.parametrize("control, said", [
    ("a-file/t.sock", "a-file: cannot make the control socket's lock file there (it is not a folder); give another "
                      "--control path"),
    ("t.sock", "t.sock: exists and is not a socket; refusing to replace it"),  # said after its lock was made
], ids=["under a file", "a file there"])
def test_a_control_path_the_socket_cannot_take_is_refused_in_words(capsys, monkeypatch, tmp_path: Path,
                                                                    control: str, said: str) -> None:
    """A place the system refuses is said in the operator's words, naming the folder (it was
    Python's "[Errno 2] No such file or directory: '/proc/version.sock.lock'"); a file of someone's
    where the socket goes is left as it is."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-file").write_text("a file of someone's\n")
    (tmp_path / "t.sock").write_text("a file of someone's\n")
    before = _listing(tmp_path)
    code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", "--control", control)
    assert (code, out, err) == (2, "", f"shoectl run: error: {said}\n")
    assert _listing(tmp_path) == before and (tmp_path / "t.sock").read_text() == "a file of someone's\n"


@pytest.mark.parametrize("argv", [["systemd-unit", "--output"], ["udev", "generate", "--output"],
                                  ["emulate", "--table", "--dealt-log"], ["diagram", "--output"],
                                  ["feed", "--journal", "j.db", "--broker", "mqtt://127.0.0.1:1", "--log-file"]])
def test_a_file_in_a_folder_that_is_not_there_is_refused_in_words(capsys, monkeypatch, tmp_path: Path,
                                                                   argv: list[str]) -> None:
    """The file asked for is named, with nothing of Python's (no "[Errno 2]", no temporary file's
    name), before any work: it was the system's "No such file or directory" once the output was
    opened (after the whole work, for a command that writes its output whole)."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv, "no-folder/out.txt")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.endswith(": no-folder/out.txt: no such folder no-folder\n"), err
    assert _listing(tmp_path) == []


@pytest.mark.parametrize("argv, said", [
    (["run", "--speed", "max", "--shoes", "1", "--control", "no-folder/sub/t.sock"],
     "shoectl run: error: --control no-folder/sub/t.sock: no such folder no-folder/sub"),
    (["emulate", "--profile", "emulated-shoe", "--link", "no-folder/sub/shoe"],
     "shoectl emulate: error: --link no-folder/sub/shoe: no such folder no-folder/sub"),
    (["emulate", "--table", "--dir", "no-folder/sub"],
     "shoectl emulate: error: --dir no-folder/sub: no such folder (the pty links are made in it)"),
], ids=["run --control", "emulate --link", "emulate --dir"])
def test_a_socket_or_link_in_a_folder_that_is_not_there_is_refused_not_made(capsys, monkeypatch, tmp_path: Path,
                                                                             argv: list[str], said: str) -> None:
    """A reviewer's finding: these made every missing folder of the path (``--control
    /nonexistent/t.sock`` too), where every other output refuses a folder that is not there."""
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert (code, out, err) == (2, "", said + "\n")
    assert _listing(tmp_path) == []


@pytest.mark.parametrize("argv", [["feed", "--journal", "j.db", "--broker", "mqtt://127.0.0.1:1", "--log-file"],
                                  ["emulate", "--table", "--dealt-log"]])
def test_a_folder_given_for_a_file_to_append_to_is_refused_in_words(capsys, monkeypatch, tmp_path: Path,
                                                                    argv: list[str]) -> None:
    """It was the system's "Is a directory", once the file was opened."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-folder").mkdir()
    code, out, err = run(capsys, *argv, "a-folder")
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.endswith(": a-folder is a directory, not a regular file; give another file\n"), err


@pytest.mark.parametrize("option, value", [("--log-file", "t.db"), ("--dealt-log", "./t.db-wal"),
                                           ("--control", "t.db.anchors"), ("--log-file", "../here/t.db.lock")])
def test_an_output_over_the_journal_or_a_file_beside_it_is_refused(capsys, monkeypatch, tmp_path: Path,
                                                                   option: str, value: str) -> None:
    """A log, dealt log or control socket named as the journal or a file it keeps beside it would
    write into the evidence: refused before anything is opened, however the path is spelled."""
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    (here / "t.db").write_bytes(b"the journal, as it stands")
    before = _listing(tmp_path)
    code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", "--journal", "t.db", f"{option}={value}")
    assert (code, out) == (2, "")
    assert err == (f"shoectl run: error: {option} {value}: that is the journal t.db or a file beside it; "
                   "give another file\n")
    assert _listing(tmp_path) == before and (here / "t.db").read_bytes() == b"the journal, as it stands"


@pytest.mark.parametrize("journal_there", [False, True], ids=["no journal", "a new journal"])
def test_anchors_of_another_journal_beside_the_journal_are_refused_before_anything_changes(
        capsys, monkeypatch, tmp_path: Path, journal_there: bool) -> None:
    """An old journal moved away without its anchors file: a run at its path is refused before the
    journal is created (or a journal there opened for writing), not after."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old").mkdir()
    with Journal.open(tmp_path / "old" / "t.db", table_id="T1") as old:
        AnchorFile.beside(tmp_path / "t.db").record(old.take_anchor())
    if journal_there:
        with Journal.open(tmp_path / "t.db", table_id="T1") as new:
            new.append("e", {})
    before = _listing(tmp_path)
    bytes_before = (tmp_path / "t.db").read_bytes() if journal_there else None
    code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", "--journal", "t.db")
    assert (code, out) == (2, "")
    assert err.startswith("shoectl run: error: t.db.anchors: holds the anchors of another journal (table T1, "
                          "created ") and err.endswith("): move it away with that journal\n") and err.count("\n") == 1
    assert _listing(tmp_path) == before
    assert ((tmp_path / "t.db").read_bytes() if journal_there else None) == bytes_before


@pytest.mark.parametrize("option, says", [
    (["--table-id", "T2"], "t.db: the journal belongs to table 'T1', not 'T2'"),
    # where to go from there (an integrator review): a new journal
    (["--hmac-key", "k.key"], "t.db: the journal was created without an HMAC key; it cannot be continued with one: a "
                              "keyed table starts a new journal (docs/deployment.md, Starting a table afresh)"),
], ids=["another table", "a key for a journal without one"])
def test_a_journal_the_run_cannot_continue_is_refused_before_anything_is_created(capsys, monkeypatch, tmp_path: Path,
                                                                                 option: list[str], says: str) -> None:
    """Opening the journal refused these too, but after making its lock, the log and the control
    socket's lock beside it."""
    monkeypatch.chdir(tmp_path)
    with Journal.open(tmp_path / "t.db", table_id="T1") as journal:
        journal.append("e", {})
    (tmp_path / "k.key").write_bytes(bytes(range(32)))
    (tmp_path / "k.key").chmod(0o600)
    before, journal_bytes = _listing(tmp_path), (tmp_path / "t.db").read_bytes()
    code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", "--journal", "t.db", *option)
    assert (code, out, err) == (2, "", f"shoectl run: error: {says}\n")
    assert _listing(tmp_path) == before and (tmp_path / "t.db").read_bytes() == journal_bytes


def test_a_journal_that_does_not_verify_is_refused_before_anything_is_made_beside_it(capsys, monkeypatch,
                                                                                    tmp_path: Path) -> None:
    """Resuming replays the journal, so one that does not verify is refused: that was said after
    the journal's lock, the log and the control socket's lock had been made. (Reading it leaves
    SQLite's -wal and -shm beside it, as every reader of a closed journal does.)"""
    monkeypatch.chdir(tmp_path)
    with Journal.open(tmp_path / "t.db", table_id="T1") as journal:
        journal.append("e", {"n": 1})
        journal.append("e", {"n": 2})
    tamper(tmp_path / "t.db", "UPDATE entries SET payload = '{\"n\":3}' WHERE seq = 1")
    before = _listing(tmp_path)
    code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", "--journal", "t.db")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.startswith("shoectl run: error: t.db: FAILED at entry 1") and err.endswith(
        ": the table does not resume from a journal that does not verify\n"), err
    assert _listing(tmp_path) == before  # not even the -wal and -shm its reading made (a review)


def _damage(path: Path, how: str) -> None:
    """A journal of 50 entries at ``path``, then damaged ``how``."""
    with Journal.open(path, table_id="T1") as journal:
        for n in range(50):
            journal.append("e", {"n": n, "text": "x" * 200})
    conn = sqlite3.connect(path)
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'entries'").fetchone()[0]
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    with open(path, "r+b") as f:
        if how == "cut short":
            f.truncate(path.stat().st_size // 2)
        else:
            f.seek(200 if how == "its schema overwritten" else (root - 1) * size)
            f.write(b"x" * 3000)


@pytest.mark.parametrize("how", ["cut short", "its schema overwritten", "a page of entries overwritten"])
def test_a_damaged_journal_is_refused_before_anything_is_made_beside_it(capsys, monkeypatch, tmp_path: Path,
                                                                       how: str) -> None:
    """A review: opening refused these after making the journal's lock, an empty log and the
    control socket's lock (or SQLite's -wal and -shm, for a page overwritten), which the
    refused run left behind. The main file is all there is (no -wal beside it): it is read at rest."""
    monkeypatch.chdir(tmp_path)
    _damage(tmp_path / "t.db", how)
    before, journal_bytes = _listing(tmp_path), (tmp_path / "t.db").read_bytes()
    code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", "--journal", "t.db")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "the database file is corrupt" in err, err
    assert _listing(tmp_path) == before and (tmp_path / "t.db").read_bytes() == journal_bytes


@pytest.mark.parametrize("how", ["cut short", "a page of entries overwritten"])
def test_a_damaged_journal_with_a_readers_wal_beside_it_is_refused_before_anything_is_made(
        capsys, monkeypatch, tmp_path: Path, how: str) -> None:
    """The same, after a `journal verify` that found it damaged left SQLite's -wal and -shm beside
    it: it could not be read at rest, was left for opening to refuse, and the refused run left
    the journal's lock, the control socket's lock and an empty log (a review of bad inputs)."""
    monkeypatch.chdir(tmp_path)
    _damage(tmp_path / "t.db", how)
    assert run(capsys, "journal", "verify", "t.db")[0] == 1
    assert (tmp_path / "t.db-wal").exists()  # what the reader left
    before, journal_bytes = _listing(tmp_path), (tmp_path / "t.db").read_bytes()
    code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", "--journal", "t.db")
    assert (code, out) == (2, "") and err.count("\n") == 1 and "the database file is corrupt" in err, err
    assert _listing(tmp_path) == before and (tmp_path / "t.db").read_bytes() == journal_bytes


@pytest.mark.parametrize("wal_beside", [False, True])
def test_an_empty_database_an_older_creation_left_is_still_made_a_journal(capsys, monkeypatch, tmp_path: Path,
                                                                         wal_beside: bool) -> None:
    """controller/journal/opening.py: an empty database left by a crash of an older, in-place
    creation is made a journal in place. Read through its -wal (the mend above), it was refused as
    "an empty SQLite database" (a review of the mend)."""
    import os

    monkeypatch.chdir(tmp_path)
    conn = sqlite3.connect(tmp_path / "j.db")
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    conn.close()
    if wal_beside:
        (tmp_path / "j.db-wal").write_bytes(b"")
    assert os.path.exists("j.db-wal") == wal_beside
    code, _, err = run(capsys, "run", "--journal", "j.db", "--rounds", "1", "--speed", "max", "--display", "lines")
    assert code == 0, err
    assert run(capsys, "journal", "verify", "j.db")[0] == 0


@pytest.mark.parametrize("wal_beside", [False, True])
def test_anchors_of_another_journal_beside_an_empty_database_are_refused_before_anything_changes(
        capsys, monkeypatch, tmp_path: Path, wal_beside: bool) -> None:
    """An empty database read through its -wal returned before the anchors were looked at: the
    lock, the log and the control socket's lock were made, the file made a journal of table T1,
    and only then was the run refused (a review of the mend above)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "old").mkdir()
    with Journal.open(tmp_path / "old" / "t.db", table_id="T1") as old:
        AnchorFile.beside(tmp_path / "t.db").record(old.take_anchor())
    conn = sqlite3.connect(tmp_path / "t.db")
    assert conn.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    conn.close()
    if wal_beside:
        (tmp_path / "t.db-wal").write_bytes(b"")
    before, journal_bytes = _listing(tmp_path), (tmp_path / "t.db").read_bytes()
    code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", "--journal", "t.db")
    assert (code, out) == (2, ""), err
    assert err.startswith("shoectl run: error: t.db.anchors: holds the anchors of another journal (table T1, "), err
    # (SQLite's index of the -wal that was there stays: it is removed only with a -wal the read made)
    made = set(_listing(tmp_path)) - set(before)
    assert made == ({"t.db-shm"} if wal_beside else set()) and (tmp_path / "t.db").read_bytes() == journal_bytes


def test_a_journal_another_table_has_open_is_refused_before_its_socket_is_claimed(capsys, monkeypatch,
                                                                                 tmp_path: Path) -> None:
    """A review: a run given its own --control made that socket's lock, then found the journal
    taken, and left the lock behind."""
    monkeypatch.chdir(tmp_path)
    with Journal.open(tmp_path / "t.db", table_id="T1") as journal:
        journal.append("e", {})
        before = _listing(tmp_path)
        code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", "--journal", "t.db",
                             "--control", "other.sock")
        assert (code, out, err) == (2, "", "shoectl run: error: t.db: the journal is already open for writing "
                                           "(another shoectl holds t.db.lock)\n")
        assert _listing(tmp_path) == before


@pytest.mark.parametrize("schema", ["PRAGMA application_id = 1234; CREATE VIEW v AS SELECT 1",
                                    "CREATE VIEW v AS SELECT 1",
                                    "PRAGMA application_id = 1234",
                                    "PRAGMA user_version = 3"],
                         ids=["a view and an application id", "a view", "an application id", "a user version"])
def test_another_programs_database_without_tables_is_not_made_a_journal(capsys, monkeypatch, tmp_path: Path,
                                                                        schema: str) -> None:
    """A review: a database with no table (a view, another program's application id) was taken for
    an empty one, and ``run`` made it a journal in place; ``journal verify`` called it "an empty
    SQLite database". Both refuse it as not a journal, the file byte for byte as it was."""
    monkeypatch.chdir(tmp_path)
    conn = sqlite3.connect(tmp_path / "other.db")
    conn.executescript(schema)
    conn.close()
    digest = hashlib.sha256((tmp_path / "other.db").read_bytes()).hexdigest()
    said = "other.db: not a journal: an SQLite database without the journal's tables\n"
    code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", "--journal", "other.db")
    assert (code, out, err) == (2, "", f"shoectl run: error: {said}")
    code, out, err = run(capsys, "journal", "verify", "other.db")
    assert (code, out, err) == (2, "", f"shoectl journal verify: error: {said}")
    assert _listing(tmp_path) == ["other.db"]
    assert hashlib.sha256((tmp_path / "other.db").read_bytes()).hexdigest() == digest


def _check_paths_as_nobody(*argv: str) -> str:
    """What ``check_paths`` says of ``shoectl run *argv`` in a child process of the ``nobody``
    account (root writes anywhere: the real permission check, not a simulation): the refusal, or
    ""."""
    def check() -> str:
        args = build_parser(["run", *argv]).parse_args(["run", *argv])
        try:
            check_paths(args, Path(args.journal))
        except UsageError as exc:
            return str(exc)
        return ""

    return said_unprivileged(check)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as nobody")
def test_outputs_that_cannot_be_written_are_refused_before_the_journal_is_made() -> None:
    """A bad-input review: ``--dealt-log`` on a read-only file system was refused only when the
    built-in emulator opened it, after the journal was made and its first anchor written (and on an
    existing journal, an anchor appended); a read-only journal was resumed, an anchor appended, then
    refused with a Python-worded warning before the error. Each is now one line before anything."""
    base = Path(tempfile.mkdtemp(prefix="shoectl-ro-"))
    try:
        os.chmod(base, 0o777)
        ro = base / "ro"
        ro.mkdir()
        with Journal.open(ro / "old.db", table_id="T1") as journal:
            journal.append("card", {})
        os.chmod(ro / "old.db", 0o444)
        os.chmod(ro, 0o555)
        said = _check_paths_as_nobody("--journal", str(base / "j.db"), "--dealt-log", str(ro / "dealt.txt"))
        assert said == (f"--dealt-log {ro / 'dealt.txt'}: cannot be created: the folder {ro} cannot be written in "
                        "(read-only, or no permission)")
        said = _check_paths_as_nobody("--journal", str(ro / "old.db"))
        assert said == (f"--journal {ro / 'old.db'}: cannot be written (a read-only file or file system, or no "
                        "permission)")
        said = _check_paths_as_nobody("--journal", str(ro / "new.db"))
        assert said == (f"--journal {ro / 'new.db'}: cannot be created: the folder {ro} cannot be written in "
                        "(read-only, or no permission)")
        assert sorted(p.name for p in base.iterdir()) == ["ro"]
    finally:
        os.chmod(base / "ro", 0o755)
        shutil.rmtree(base)


def test_an_empty_file_given_as_the_journal_is_refused_not_replaced(capsys, monkeypatch, tmp_path: Path) -> None:
    """A bad-input review: ``: > zero.db; shoectl run --journal zero.db`` made a new journal of the
    empty file, which ``journal verify`` calls "not a journal"; a journal cut to nothing would have
    been started over without a word. A journal is made whole and then linked in (opening.py), so
    an empty file at its path is never one of shoectl's."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "zero.db").write_bytes(b"")
    code, out, err = run(capsys, "run", "--journal", "zero.db", "--rounds", "1", "--speed", "max")
    assert (code, out) == (2, "")
    assert err == ("shoectl run: error: --journal zero.db: an empty file, not a journal (one cut to nothing?); "
                   "move it aside to start a new table there\n")
    assert _listing(tmp_path) == ["zero.db"] and (tmp_path / "zero.db").stat().st_size == 0


def test_a_wal_file_left_without_its_journal_is_refused_before_anything_is_made_beside_it(
        capsys, monkeypatch, tmp_path: Path) -> None:
    """A docs review: opening the journal refused a ``-wal`` holding another journal's last entries
    (docs/journal.md), but only after the run had made the journal's lock, the control socket's
    lock and the log file beside it."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "nw.db-wal").write_bytes(b"\x37\x7f\x06\x82" + bytes(28))  # a WAL header, not zeros
    code, out, err = run(capsys, "run", "--journal", "nw.db", "--rounds", "1", "--speed", "max")
    assert (code, out) == (2, "")
    assert err.startswith("shoectl run: error: nw.db-wal: a WAL file without its journal: it holds the last "
                          "entries") and err.count("\n") == 1
    assert _listing(tmp_path) == ["nw.db-wal"]
