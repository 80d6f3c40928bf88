"""What a command writes whole (``-o FILE``, the operators file) replaces a regular file and
nothing else, and what it appends to (``--log-file``, ``--dealt-log``) is never a journal.

A review of every command found ``journal export -o /dev/full`` turn the device into a regular
file, ``-o t.sock`` remove a running table's control socket, ``-o other.db`` overwrite another
table's journal with JSON, ``operators add --file LINK`` replace the link with a file (the real
operators file never got the operator), and ``run --log-file other.db`` append log lines into
another journal. Each is refused in one line (exit 2) and leaves what was there as it was; a
symbolic link is written through.
"""
from __future__ import annotations

import errno
import os
import socket
import sqlite3
from pathlib import Path

import pytest

from cli_run import dealt_journal, run
from controller.fsutil import atomic_writer, replacement_problem
from controller.journal import Journal
from controller.journal.verification import verify

EXPORT = ["journal", "export"]


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return dealt_journal(tmp_path_factory.mktemp("out") / "j.db", "--rounds", "2")


def _socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    return sock


@pytest.mark.parametrize("argv", [EXPORT + ["{journal}"], ["diagram"], ["udev", "generate"], ["systemd-unit"],
                                  ["roadmap", "{journal}"]])
def test_output_onto_a_socket_a_device_or_a_journal_is_refused(capsys, tmp_path: Path, journal: Path,
                                                              argv: list[str]) -> None:
    other = tmp_path / "other.db"
    other.write_bytes(journal.read_bytes())
    argv = [a.format(journal=journal) for a in argv]
    os.mkfifo(tmp_path / "fifo")  # not a device of the machine's: were the refusal lost, this test would replace it
    with _socket(tmp_path / "t.sock"):
        for target, said in ((tmp_path / "t.sock", "is a socket, not a regular file"),
                             (tmp_path / "fifo", "is a FIFO, not a regular file"),
                             (other, "is an SQLite database (a journal?), not a file to write over")):
            before = os.stat(target)
            code, out, err = run(capsys, *argv, "-o", str(target))
            assert (code, out) == (2, "") and err.count("\n") == 1, err
            assert err.endswith(f"error: argument -o/--output: {target} {said}; give another file\n"), err
            after = os.stat(target)
            assert (after.st_ino, after.st_mode, after.st_size) == (before.st_ino, before.st_mode, before.st_size)
    assert other.read_bytes() == journal.read_bytes()


@pytest.mark.parametrize("argv", [EXPORT + ["{journal}"], ["roadmap", "{journal}"]])
def test_output_onto_a_journals_write_ahead_log_or_anchors_is_refused(capsys, tmp_path: Path, journal: Path,
                                                                      argv: list[str]) -> None:
    """A review found ``journal export -o other.db-wal`` write over another table's write-ahead
    log (its committed entries lost, and the journal still verified without them), and ``-o
    other.db.anchors`` over its anchors (it no longer verified). Both are refused, in one line,
    and so is appending a log to them."""
    live = sqlite3.connect(tmp_path / "other.db")  # held open: its committed entries wait in the -wal
    try:
        live.execute("PRAGMA journal_mode=WAL")
        live.execute("CREATE TABLE t (x)")
        live.execute("INSERT INTO t VALUES (1)")
        live.commit()
        anchors = tmp_path / "other.db.anchors"
        anchors.write_bytes(Path(f"{journal}.anchors").read_bytes())
        argv = [a.format(journal=journal) for a in argv]
        for target, said in ((tmp_path / "other.db-wal", "is an SQLite write-ahead log (a journal's -wal file)"),
                             (anchors, "is a journal's anchors file")):
            before = target.read_bytes()
            code, out, err = run(capsys, *argv, "-o", str(target))
            assert (code, out) == (2, "") and err.count("\n") == 1, err
            assert err.endswith(f"error: argument -o/--output: {target} is a file the journal {tmp_path / 'other.db'} "
                                "keeps beside it, not a file to write over; give another file\n"), err
            renamed = target.with_name(f"copy-of-{target.name}")  # no journal beside it: what it holds tells
            renamed.write_bytes(before)
            code, out, err = run(capsys, *argv, "-o", str(renamed))
            assert err.endswith(f"error: argument -o/--output: {renamed} {said}, not a file to write over; "
                                "give another file\n"), err
            code, out, err = run(capsys, "run", "--journal", str(tmp_path / "new.db"), "--rounds", "1",
                                 "--log-file", str(target))
            assert code == 2 and f"{target} {said}, not a file to append to" in err, err
            assert target.read_bytes() == before
    finally:
        live.close()


@pytest.mark.parametrize("argv", [EXPORT + ["{journal}"], ["diagram"], ["roadmap", "{journal}"]])
@pytest.mark.parametrize("side", ["-shm", "-wal", ".lock", ".feed-cursor", "-journal"])
def test_output_onto_a_file_named_as_a_journal_keeps_it_is_refused_there_or_not(capsys, tmp_path: Path,
                                                                                journal: Path, argv: list[str],
                                                                                side: str) -> None:
    """A review found ``diagram -o t.db-shm`` cut a running table's WAL index to a page of text: the
    table died (SIGBUS) a moment later. A live journal's ``-shm`` has no mark of its own and a
    closed journal's ``-wal`` is not there (SQLite would take one written there for its own): the
    name beside an existing journal is what is refused."""
    live = tmp_path / "live.db"
    with Journal.open(live, table_id="T1") as writer:  # open: its -wal and -shm are there
        writer.append("e", {})
        target = Path(f"{live}{side}")
        before = target.read_bytes() if target.exists() else None
        code, out, err = run(capsys, *[a.format(journal=journal) for a in argv], "-o", str(target))
        assert (code, out) == (2, ""), err
        assert err.endswith(f"error: argument -o/--output: {target} is a file the journal {live} keeps beside it, "
                            "not a file to write over; give another file\n"), err
        assert (target.read_bytes() if target.exists() else None) == before
        writer.append("e", {})  # the writer goes on
    assert verify(live).ok


@pytest.mark.parametrize("argv", [EXPORT + ["{journal}"], ["roadmap", "{journal}"]])
@pytest.mark.parametrize("name, journal_name", [
    ("live.log", "live.db"), ("live.log.2", "live.db"), ("live.sock.lock", "live.db"), ("table.log", "table"),
])
def test_output_onto_the_log_or_socket_lock_run_names_after_a_journal_is_refused(
        capsys, tmp_path: Path, journal: Path, argv: list[str], name: str, journal_name: str) -> None:
    """A surveillance review exported a running table's journal with ``-o t.log``: the table's own
    log (run's default, the journal's name with ``.log``) was replaced, and the table went on
    logging into a deleted file. The names run gives the log, its rotations and the control
    socket's lock beside an existing journal are refused like the journal's own side files."""
    live = tmp_path / journal_name
    with Journal.open(live, table_id="T1") as writer:
        writer.append("e", {})
    target = tmp_path / name
    target.write_text("the table's own\n")
    code, out, err = run(capsys, *[a.format(journal=journal) for a in argv], "-o", str(target))
    assert (code, out) == (2, ""), err
    assert err.endswith(f"error: argument -o/--output: {target} is a file the journal {live} keeps beside it, "
                        "not a file to write over; give another file\n"), err
    assert target.read_text() == "the table's own\n"
    other = tmp_path / f"not-{name}"  # no journal of that name: written as asked
    code, out, err = run(capsys, *[a.format(journal=journal) for a in argv], "-o", str(other))
    assert code == 0 and other.stat().st_size > 0, err


def test_run_may_name_its_own_log_as_the_log_file(capsys, tmp_path: Path) -> None:
    """The refusal above is for files written whole: ``run --log-file t.log`` beside ``t.db`` names
    the log run keeps there anyway, and appends to it (a mend: it was refused with the rest)."""
    journal, log = tmp_path / "t.db", tmp_path / "t.log"
    for _ in range(2):  # the second start finds the journal there
        code, out, err = run(capsys, "run", "--journal", str(journal), "--rounds", "1", "--display", "lines",
                             "--no-edge-monitor", "--log-file", str(log))
        assert code == 0, err
    assert log.stat().st_size > 0


@pytest.mark.parametrize("side", ["-shm", ".lock", "-journal"])  # (a -wal is told by what it holds, above)
def test_a_log_appended_to_a_file_named_as_a_journal_keeps_it_is_refused(capsys, tmp_path: Path, side: str) -> None:
    """The same rule for a file appended to (``--log-file``): a live journal's ``-shm`` has no
    mark of its own, so its name beside an existing journal is what is refused."""
    live = tmp_path / "live.db"
    with Journal.open(live, table_id="T1") as writer:
        writer.append("e", {})
        target = Path(f"{live}{side}")
        before = target.read_bytes() if target.exists() else None
        code, out, err = run(capsys, "run", "--journal", str(tmp_path / "new.db"), "--rounds", "1",
                             "--log-file", str(target))
        assert (code, out) == (2, "")
        assert err.endswith(f"argument --log-file: {target} is a file the journal {live} keeps beside it, not a "
                            "file to append to; give another file\n"), err
        assert (target.read_bytes() if target.exists() else None) == before
    assert not (tmp_path / "new.db").exists()


def test_an_export_through_a_symbolic_link_replaces_the_file_it_points_to(capsys, tmp_path: Path,
                                                                          journal: Path) -> None:
    target, link = tmp_path / "export.jsonl", tmp_path / "latest.jsonl"
    target.write_text("old\n")
    link.symlink_to(target.name)
    code, out, err = run(capsys, *EXPORT, str(journal), "-o", str(link))
    assert code == 0, err
    assert link.is_symlink() and os.readlink(link) == target.name
    assert target.read_text().startswith('{"seq":1,')


def test_operators_added_through_a_symbolic_link_reach_the_file_it_points_to(capsys, monkeypatch,
                                                                             tmp_path: Path) -> None:
    real, link = tmp_path / "operators.toml", tmp_path / "ops-link.toml"
    link.symlink_to(real)
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("2580\n"))
    code, out, err = run(capsys, "operators", "add", "fp1", "--role", "floorperson", "--pin-stdin",
                         "--file", str(link))
    assert code == 0, err
    assert link.is_symlink() and "fp1" in real.read_text()


def test_a_device_is_not_a_file_to_write_over() -> None:
    assert replacement_problem("/dev/full") == "is a character device, not a regular file"
    assert replacement_problem("/no/such/file") is None


def test_the_writer_itself_leaves_what_is_not_a_regular_file(tmp_path: Path) -> None:
    with _socket(tmp_path / "s.sock"):
        with pytest.raises(OSError) as caught, atomic_writer(tmp_path / "s.sock") as fh:
            fh.write("x")
        assert caught.value.errno == errno.EEXIST and "is a socket" in caught.value.strerror
        assert (tmp_path / "s.sock").is_socket() and sorted(p.name for p in tmp_path.iterdir()) == ["s.sock"]


@pytest.mark.parametrize("option", ["--log-file", "--dealt-log"])
def test_run_never_appends_to_a_journal(capsys, tmp_path: Path, journal: Path, option: str) -> None:
    other = tmp_path / "other.db"
    other.write_bytes(journal.read_bytes())
    code, out, err = run(capsys, "run", "--journal", str(tmp_path / "new.db"), "--rounds", "1", option, str(other))
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert f"{other} is an SQLite database (a journal?), not a file to append to; give another file" in err
    assert other.read_bytes() == journal.read_bytes() and not (tmp_path / "new.db").exists()


@pytest.mark.parametrize("argv", [EXPORT + ["{journal}"], ["roadmap", "{journal}", "--format", "svg"]])
def test_output_onto_the_commands_key_or_the_tables_operators_file_is_refused(capsys, tmp_path: Path,
                                                                               argv: list[str]) -> None:
    """A review of bad inputs wrote ``journal export J --hmac-key K -o K``: the key was replaced by
    the export, and the journal's HMAC chain could never be checked again; ``-o
    var/operators.toml`` beside a running table's journal replaced every PIN. Both are refused
    in one line, and the files are as they were."""
    key = tmp_path / "journal.key"
    key.write_bytes(b"k" * 32)
    key.chmod(0o600)
    journal = dealt_journal(tmp_path / "j.db", "--rounds", "1", "--hmac-key", str(key))
    operators = tmp_path / "operators.toml"
    operators.write_text("# the table's operators\n", encoding="utf-8")
    argv = [a.format(journal=journal) for a in argv] + ["--hmac-key", str(key)]
    for target, what in ((key, "the HMAC key"), (operators, "the operators file beside the journal")):
        before = target.read_bytes()
        code, out, err = run(capsys, *argv, "-o", str(target))
        assert (code, out) == (2, "") and err.count("\n") == 1, err
        assert err.endswith(f"error: -o {target}: that is {what}; give another file to write\n"), err
        assert target.read_bytes() == before


def test_a_symbolic_link_that_loops_is_refused_as_an_output_and_as_a_key(capsys, tmp_path: Path, journal: Path) -> None:
    """``-o LOOP`` (a link that leads back to itself) ended in a traceback, and once that was mended
    the export replaced the link with a file; ``--hmac-key LOOP`` went the same way (a review of
    this session's diff). Both are one line, exit 2, and the links stay."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    code, out, err = run(capsys, *EXPORT, str(journal), "-o", str(tmp_path / "a"))
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.endswith(f"{tmp_path / 'a'} is a symbolic link that loops (it leads back to itself through others); "
                        "give another file\n"), err
    code, out, err = run(capsys, *EXPORT, str(journal), "--hmac-key", str(tmp_path / "a"), "-o", str(tmp_path / "x"))
    assert (code, out) == (2, "") and err.count("\n") == 1 and "Traceback" not in err, err
    assert os.path.islink(tmp_path / "a") and os.path.islink(tmp_path / "b") and not (tmp_path / "x").exists()


def test_a_journal_name_with_a_byte_that_is_not_utf8_is_said_alike_on_both_streams(capsys, tmp_path: Path,
                                                                                 journal: Path) -> None:
    """`journal verify` of `j\\xff.db` said `j\\udcff.db` (Python's name for the byte) in its warning
    and `j\\ufffd.db` in its verdict (a review of bad inputs): both say `j\\xff.db` now."""
    name = os.fsdecode(b"j\xff.db")
    odd = tmp_path / name
    odd.write_bytes(journal.read_bytes())
    code, out, err = run(capsys, "journal", "verify", str(odd))
    shown = str(tmp_path) + "/j\\xff.db"
    assert code == 0 and out.startswith(f"{shown}: ok: "), out
    assert err and all(line.split("warning: ", 1)[1].startswith(f"{shown}: ") for line in err.splitlines()), err


NOBODY = 65534  # another user's: the links below are made as this user, then given to nobody


def _foreign_link(link: Path, target: Path) -> Path:
    link.symlink_to(target)
    os.lchown(link, NOBODY, NOBODY)
    return link


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a link to another user needs root")
def test_a_symbolic_link_another_user_made_is_not_followed(capsys, monkeypatch, tmp_path: Path, journal: Path) -> None:
    """A security review: a stranger's link in /tmp turned root's `journal export -o` into a write
    over a file of /etc (0600 became a 0644 export), and the service account's link beside the
    journal turned root's `operators add` into a new file in /etc/profile.d. A link this user or
    root made is still followed (the tests above)."""
    secret = tmp_path / "secret"
    secret.write_text("keep\n")
    secret.chmod(0o600)
    for argv in ([*EXPORT, str(journal), "-o"], ["diagram", "-o"]):
        link = _foreign_link(tmp_path / f"out-{argv[0]}", secret)
        code, out, err = run(capsys, *argv, str(link))
        assert code == 2 and "is a symbolic link of another user (uid 65534): not followed" in err, err
        assert secret.read_text() == "keep\n" and (secret.stat().st_mode & 0o777) == 0o600
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO("2580\n"))
    link = _foreign_link(tmp_path / "operators.toml", tmp_path / "profile.sh")
    code, out, err = run(capsys, "operators", "add", "fp1", "--role", "floorperson", "--pin-stdin", "--file", str(link))
    assert code == 2 and "symbolic link of another user" in err and not (tmp_path / "profile.sh").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a link to another user needs root")
@pytest.mark.parametrize("beside", [".log", ".db.lock", ".db.anchors"])
def test_run_follows_no_link_another_user_put_beside_the_journal(capsys, tmp_path: Path, beside: str) -> None:
    """The log, the lock and the anchors beside the journal: root's `run` created and appended to
    files of /etc through the service account's links (security reviews; the anchors until
    2026-12-07)."""
    planted = _foreign_link(tmp_path / f"table{beside}", tmp_path / "elsewhere")
    argv = ["run", "--journal", str(tmp_path / "table.db"), "--rounds", "1", "--speed", "max", "--display", "lines"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and "symbolic link of another user" in err and not (tmp_path / "elsewhere").exists(), err
    assert err.count("\n") == 1 and planted.is_symlink() and not (tmp_path / "table.db").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
@pytest.mark.parametrize("beside", [".log", ".db.anchors"])
def test_run_writes_into_no_file_another_user_made_beside_the_journal(capsys, tmp_path: Path, beside: str) -> None:
    """A security review: another account that may write in the journal's folder made the table's
    anchors and log first, mode 0666; root's table wrote into them, and that account could then
    read them and rewrite the anchors, the evidence against a cut journal."""
    made = tmp_path / f"table{beside}"
    made.touch(mode=0o666)
    os.chown(made, NOBODY, NOBODY)
    argv = ["run", "--journal", str(tmp_path / "table.db"), "--rounds", "1", "--speed", "max", "--display", "lines"]
    code, out, err = run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1, err
    assert f"{made}: belongs to nobody, not to this account: a file another account made is not written to" in err
    assert made.stat().st_size == 0 and sorted(tmp_path.iterdir()) == [made]  # nothing made (a review: the socket's lock was)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_root_does_not_run_the_table_of_a_journal_another_user_owns(capsys, tmp_path: Path, journal: Path) -> None:
    """Root's `run` on the service's journal left a root-owned log beside it, and the service,
    started again, stopped on it (a security review): refused, one line, nothing made."""
    os.chown(journal, NOBODY, NOBODY)
    before = sorted(p.name for p in journal.parent.iterdir())
    code, out, err = run(capsys, "run", "--journal", str(journal), "--rounds", "1", "--speed", "max",
                         "--display", "lines")
    assert code == 2 and "belongs to nobody; run its table as that user" in err, err
    assert sorted(p.name for p in journal.parent.iterdir()) == before


@pytest.mark.parametrize("argv", [("udev", "generate", "-o", "{file}"), ("diagram", "-o", "{file}"),
                                  ("signature", "-o", "{file}")])
def test_a_file_in_a_folder_that_takes_no_new_files_is_said_so_not_said_missing(capsys, argv) -> None:
    """A review of bad inputs: `udev generate -o /proc/version` said "/proc/version: No such file or
    directory" of a file that is there (the error was the new contents' temporary file's, beside it)."""
    from cli_run import run

    target = "/proc/version"  # there, and its folder takes no new file
    code, out, err = run(capsys, *(a.format(file=target) for a in argv))
    assert (code, out) == (2, "")
    assert err.endswith(f"error: argument -o/--output: {target}: not a file that can be replaced here (its folder /proc takes no new files); "
                        "it was left as it is\n") and err.count("\n") == 1, err


def test_an_export_is_no_more_readable_than_the_journal_it_copies(capsys, tmp_path: Path, journal: Path) -> None:
    """A security review: under the usual umask 022 an export, every card as read (those dealt face
    down, a card held for the next hand) and every operator id, was made 0644, readable by anyone,
    where the journal and its backup are 0640."""
    old = os.umask(0o022)
    try:
        code, _, err = run(capsys, *EXPORT, str(journal), "-o", str(tmp_path / "all.jsonl"))
    finally:
        os.umask(old)
    assert code == 0, err
    assert oct((tmp_path / "all.jsonl").stat().st_mode & 0o777) == "0o640"
