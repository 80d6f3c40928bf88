"""A new journal appears whole or not at all (controller/journal/opening.py): a feed or a
scoreboard started with the table must never find the path as an empty or half-made database,
which it would refuse as not a journal."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.journal import Journal, JournalReader
from controller.journal import schema
from controller.journal.errors import JournalError


def test_the_path_does_not_exist_while_the_schema_is_written(tmp_path: Path, mocker) -> None:
    path = tmp_path / "j.db"
    seen: list[bool] = []
    real = schema.create_schema

    def spying(conn, p, *args, **kwargs):
        seen.append(path.exists())  # what a reader polling the path finds right now
        return real(conn, p, *args, **kwargs)

    mocker.patch("controller.journal.opening.create_schema", side_effect=spying)
    with Journal.open(path, table_id="T1") as journal:
        journal.append("k", {})
    assert seen == [False]
    with JournalReader.open(path) as reader:
        assert [e.kind for e in reader.entries()] == ["k"]
    assert not [p.name for p in tmp_path.iterdir() if "creating" in p.name]  # the temporary file is gone


def test_a_creation_that_fails_leaves_nothing_behind(tmp_path: Path, mocker) -> None:
    path = tmp_path / "j.db"
    mocker.patch("controller.journal.opening.create_schema", side_effect=OSError(28, "No space left on device"))
    with pytest.raises(JournalError, match="cannot create the journal: No space left on device"):
        Journal.open(path, table_id="T1")
    assert [p.name for p in tmp_path.iterdir() if p.name != "j.db.lock"] == []


def test_a_file_that_appeared_meanwhile_is_checked_not_replaced(tmp_path: Path, mocker) -> None:
    """Another program's file put at the path while the journal was being built is left as it is
    and refused as not a journal, never written over."""
    path = tmp_path / "j.db"
    real = schema.create_schema

    def someone_else_writes(conn, p, *args, **kwargs):
        path.write_bytes(b"someone's notes")
        return real(conn, p, *args, **kwargs)

    mocker.patch("controller.journal.opening.create_schema", side_effect=someone_else_writes)
    with pytest.raises(JournalError):
        Journal.open(path, table_id="T1")
    assert path.read_bytes() == b"someone's notes"
    assert not [p for p in tmp_path.iterdir() if "creating" in p.name]


def test_a_new_journal_is_for_no_one_but_its_owner_and_group_whatever_the_umask(tmp_path) -> None:
    """Under umask 022 (a table run by hand) the journal was 0644: anyone on the computer could
    read the cards dealt face down and those held for the next hand (a security review)."""
    import os
    import stat

    from controller.journal import Journal

    old = os.umask(0o022)
    try:
        with Journal.open(tmp_path / "j.db", table_id="T1") as j:
            j.append("x", {})
            modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir() if p.name.startswith("j.db")
                     and not p.name.endswith(".lock")}
    finally:
        os.umask(old)
    assert modes["j.db"] == 0o640 and all(m & 0o007 == 0 for m in modes.values()), modes


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o000])
def test_a_tables_side_files_are_for_its_owner_and_group_as_its_journal(tmp_path, umask: int) -> None:
    """Under umask 022 the journal was 0640 but its anchors, its lock and the table's log (which
    names the operators) were 0644: for everyone on the computer. Each is now made without the
    bits for others, as the journal. And without the group's write bit, as the journal (a security
    review: under umask 002 they were 0660, and a member of the group could empty the anchors that
    prove a removed tail, or add a line that is no anchor, after which the journal fails every
    check and the table refuses to resume)."""
    import os
    import stat

    from cli_run import dealt_journal

    old = os.umask(umask)
    try:
        journal = dealt_journal(tmp_path / "j.db", "--rounds", "1", "--log-level", "info")
    finally:
        os.umask(old)
    side = [journal.with_name("j.db.anchors"), journal.with_name("j.log"), journal]
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in side}
    assert modes == dict.fromkeys(modes, 0o640), modes
    # the lock holds nothing, and another account of the group may take it in turn: its group writes
    assert stat.S_IMODE(journal.with_name("j.db.lock").stat().st_mode) == 0o660 & ~umask


def test_side_files_an_earlier_version_left_group_writable_are_tightened_when_the_table_writes_them(tmp_path) -> None:
    """The mode is given when a file is made: the anchors and the log an earlier shoectl made 0660
    stayed so, and the fix did nothing for a table upgraded in place (a review of this change)."""
    import os
    import stat

    from cli_run import dealt_journal

    journal = dealt_journal(tmp_path / "j.db", "--rounds", "1", "--log-level", "info")
    side = [journal.with_name("j.db.anchors"), journal.with_name("j.log")]
    for p in side:
        os.chmod(p, 0o660)
    dealt_journal(journal, "--rounds", "2", "--log-level", "info")  # the table runs again on it
    assert {p.name: stat.S_IMODE(p.stat().st_mode) for p in side} == {p.name: 0o640 for p in side}


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a device node")
def test_a_log_that_is_a_device_or_a_mode_a_person_chose_keeps_its_mode(tmp_path) -> None:
    """The tightening above takes the group's write bit from a table's own file an earlier version
    made 0660, and nothing else: `--log-file` naming a device (/dev/null, as root) lost everyone's
    write bit, and a shared log a person made 0666 was changed (a review of this change)."""
    import logging
    import stat

    from controller.logconfig import configure_logging

    null, shared = tmp_path / "null", tmp_path / "shared.log"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    shared.touch()
    for p in (null, shared):
        os.chmod(p, 0o666)
    for log in (null, shared):
        try:
            configure_logging("info", str(log))
            logging.getLogger("test").info("a line")
        finally:
            configure_logging("warning")
    assert {p.name: stat.S_IMODE(os.stat(p).st_mode) for p in (null, shared)} == {"null": 0o666, "shared.log": 0o666}
