"""Anchors: the journal's head kept outside it (``controller.journal.anchors``), and what they let
``verify`` see that a chain alone cannot: a removed tail, a re-chained journal, an HMAC journal
re-chained with SHA-256 and relabelled when no key is given. Also the writer and a ``-wal`` file
that SQLite ignores."""
from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import time
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from controller.journal import Journal, JournalError, verify, walcheck
from controller.journal.anchors import Anchor, AnchorFile, anchors_path
from controller.journal.chain import Hasher
from tampering import delete_and_rechain, rechain, rewrite, rows, tamper

from .conftest import KEY, OTHER_KEY, FakeClock

N = 10


def anchored(path: Path, n: int = N, *, key: bytes | None = None, every: int = 5) -> AnchorFile:
    """A journal of ``n`` entries whose anchors (at opening, then every ``every`` entries) are in
    the file beside it, as ``shoectl run`` keeps them."""
    witness = AnchorFile.beside(path)
    with Journal.open(path, table_id="T1", hmac_key=key, clock=FakeClock()) as j:
        witness.record(j.take_anchor())
        for i in range(n):
            j.append(f"e{i}", {"i": i}, shoe="S1")
            if (i + 1) % every == 0:
                witness.record(j.take_anchor())
    return witness


def test_anchors_round_trip_and_an_hmac_journals_are_signed(journal_path: Path) -> None:
    witness = anchored(journal_path, key=KEY)
    lines = witness.read()
    assert [a.seq for _, a in lines.anchors] == [0, 5, 10] and not lines.bad and lines.torn_last_line is None
    assert lines.anchors[-1][0] == f"{witness.path} line 3"
    last = lines.anchors[-1][1]
    assert (last.algorithm, last.table_id, last.hash) == ("hmac-sha256", "T1", rows(journal_path)[-1][12])
    assert last.signature_holds(Hasher(KEY)) and not last.signature_holds(Hasher(OTHER_KEY))
    assert Anchor.from_json(last.to_json()) == last
    r = verify(journal_path, hmac_key=KEY)
    assert r.ok and r.anchors == 2 and r.warnings == ()


def test_a_verification_without_any_anchor_warns(journal_path: Path) -> None:
    anchored(journal_path)
    anchors_path(journal_path).unlink()
    r = verify(journal_path)
    assert r.ok and r.anchors == 0 and len(r.warnings) == 1 and "checked without an anchor" in r.warnings[0]
    assert verify(journal_path, expect_count=N).warnings == ()


def test_anchors_of_the_opening_only_are_said_to_anchor_no_entry(journal_path: Path) -> None:
    """A table killed before its first shoe ended leaves only the opening's anchor (entry 0): the
    file was read and fits, so "checked without an anchor" alone read as if it had not been."""
    anchored(journal_path, every=N + 1)
    r = verify(journal_path)
    assert r.ok and len(r.warnings) == 1
    assert "checked without an anchor of any entry (the anchors read hold only the journal's opening)" in r.warnings[0]


def test_a_removed_tail_is_caught_by_the_anchors_beside_the_journal(journal_path: Path) -> None:
    anchored(journal_path)
    tamper(journal_path, "DELETE FROM entries WHERE seq > 7")
    r = verify(journal_path)
    assert not r.ok and r.first_bad_seq == 10
    assert r.reason == (f"entry 10 of an anchor ({anchors_path(journal_path)} line 3) is missing: the journal ends "
                        "at 7 (truncated?)")


def test_a_rechained_journal_is_caught_by_the_anchors(journal_path: Path) -> None:
    anchored(journal_path)
    delete_and_rechain(journal_path, 3)
    r = verify(journal_path)
    assert not r.ok and r.first_bad_seq == 5 and "differs from the anchor" in r.reason and "line 2" in r.reason


def test_a_relabelled_hmac_journal_fails_without_the_key(journal_path: Path, tmp_path: Path) -> None:
    """Issue 9: an HMAC journal re-chained with SHA-256 and relabelled verified when the key was
    not given. Its anchors were signed with the key and say the chain is HMAC: they do not fit."""
    anchored(journal_path, key=KEY)
    witness_copy = shutil.copy(anchors_path(journal_path), tmp_path / "witness.anchors")
    rewrite(journal_path, rechain(rows(journal_path)), meta={"hash_algorithm": "sha256", "key_id": None})
    r = verify(journal_path)
    assert not r.ok and r.first_bad_seq is None
    assert "the anchor does not fit this journal: it says the journal's chain is hmac-sha256" in r.reason
    assert "re-chained and relabelled?" in r.reason
    anchors_path(journal_path).unlink()  # the forger removes the anchors beside it too: only a warning
    r = verify(journal_path)
    assert r.ok and "checked without an anchor" in r.warnings[0]
    assert not verify(journal_path, anchor_files=[witness_copy]).ok  # a copy kept elsewhere still sees it


def test_a_forged_anchor_of_an_hmac_journal_is_caught_with_the_key(journal_path: Path) -> None:
    """A forger without the key removes the tail and rewrites the anchors to the new end: the
    anchors' signatures do not hold."""
    witness = anchored(journal_path, key=KEY)
    tamper(journal_path, "DELETE FROM entries WHERE seq > 7")
    forged = [a for _, a in witness.read().anchors if a.seq <= 5]
    last = rows(journal_path)[-1]
    forged.append(Anchor("T1", forged[0].journal_created, 7, last[12], "hmac-sha256", forged[0].key_id,
                         forged[-1].ts, mac="ab" * 32))
    witness.path.write_text("".join(json.dumps(a.to_json()) + "\n" for a in forged))
    r = verify(journal_path, hmac_key=KEY)
    assert not r.ok and r.reason.endswith("the anchor does not fit this journal: its signature does not match the "
                                          "journal's key: forged?")


def test_anchors_of_another_journal(journal_path: Path, tmp_path: Path) -> None:
    """A new journal at the same path, with the old one's anchors still beside it: verify says so,
    and the writer of anchors refuses to mix them."""
    anchored(journal_path)
    journal_path.unlink()
    with Journal.open(journal_path, table_id="T1") as j:  # created now, not at the fake clock's instant
        j.append("e", {})
        r = verify(journal_path)
        assert not r.ok and "it was taken of another journal" in r.reason
        with pytest.raises(JournalError, match="holds the anchors of another journal .*: move it away with that "
                                               "journal"):
            AnchorFile.beside(journal_path).record(j.take_anchor())


def test_a_line_that_is_not_an_anchor_fails_and_a_torn_last_line_warns(journal_path: Path) -> None:
    witness = anchored(journal_path)
    text = witness.path.read_text()
    witness.path.write_text(text + '{"format": "shoectl-journal-anchor/1", "seq": 1')
    r = verify(journal_path)
    assert r.ok and r.warnings == (f"{witness.path} line 4: an incomplete last line (a write cut short) is not an "
                                   "anchor",)
    witness.path.write_text(text.replace('"seq":5', '"seq":"5"'))
    r = verify(journal_path)
    assert not r.ok and r.reason == f"{witness.path} line 2: not an anchor (seq is not a whole number)"


def test_an_anchor_cut_short_by_a_full_disk_is_taken_back_and_a_torn_line_is_not_glued_to_the_next(
        journal_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A review of disk faults: an anchor's write cut short by a full disk left a torn line, the
    next anchor (the table resumed once space was freed) was appended onto it, and the whole journal,
    every entry intact, then failed `verify`, every reader and the table's start. A failed write is
    taken back, saying the file; a torn last line (a crash mid-write) is cut off before the next
    anchor is appended: the torn bytes never were an anchor. (The full disk is a mock: a test
    cannot fill a disk of its own everywhere it runs.)"""
    import errno

    from controller.journal import anchors as anchors_module

    witness = anchored(journal_path)
    before = witness.path.read_bytes()

    def disk_full(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])  # a short write, then no more room
        raise OSError(errno.ENOSPC, "No space left on device")

    with Journal.open(journal_path, table_id="T1", clock=FakeClock()) as j:
        j.append("more", {"i": 99}, shoe="S1")
        monkeypatch.setattr(anchors_module, "write_synced", disk_full)
        with pytest.raises(OSError) as info:
            AnchorFile.beside(journal_path).record(j.take_anchor())
        assert info.value.filename == str(witness.path) and info.value.errno == errno.ENOSPC
        assert info.value.strerror == "cannot record the journal's anchor: No space left on device"
        assert witness.path.read_bytes() == before  # taken back
        monkeypatch.undo()
        witness.path.write_bytes(before + b'{"format":"shoectl-journal-anchor/1","seq":1')  # a crash mid-write
        with capture_logs() as logs:
            AnchorFile.beside(journal_path).record(j.take_anchor())
    lines = witness.read()
    assert [a.seq for _, a in lines.anchors] == [0, 5, 10, 11] and not lines.bad and lines.torn_last_line is None
    assert [e["event"] for e in logs] == ["an incomplete last line of the anchors file removed before the next anchor"]
    assert verify(journal_path).ok


def test_the_same_head_is_anchored_once(journal_path: Path) -> None:
    anchored(journal_path)
    witness = AnchorFile.beside(journal_path)  # as a second run of the table would
    with Journal.open(journal_path, table_id="T1") as j:
        witness.record(j.take_anchor())
        witness.record(j.take_anchor())
    assert [a.seq for _, a in witness.read().anchors] == [0, 5, 10, 10]  # the second run's once


def test_the_writer_keeps_a_wal_file_that_sqlite_ignores(journal_path: Path) -> None:
    """SQLite would overwrite a -wal file it ignores: the writer keeps a copy and warns."""
    anchored(journal_path)
    wal = Path(f"{journal_path}-wal")
    wal.write_bytes(b"not a wal" * 1000)
    with capture_logs() as logs:
        Journal.open(journal_path, table_id="T1").close()
    copies = list(journal_path.parent.glob(f"{wal.name}.ignored-*"))
    assert len(copies) == 1 and copies[0].read_bytes() == b"not a wal" * 1000
    [event] = [e for e in logs if e["event"] == "journal -wal file ignored by SQLite"]
    assert event["log_level"] == "warning" and event["kept_as"] == str(copies[0])
    assert "not a WAL file (9000 bytes)" in event["problem"]


def test_the_copy_of_an_ignored_wal_is_on_disk_and_as_private_as_the_wal_before_sqlite_writes(
        journal_path: Path, mocker) -> None:
    """SQLite's first commit overwrites the ignored -wal and syncs it: the copy (the only evidence
    left) must be synced before, with its folder, not left to the page cache (a power cut soon
    after the start lost it); and readable by no more people than the -wal (it holds the cards
    dealt face down), whatever the umask. A review of the files' durability."""
    anchored(journal_path)
    wal = Path(f"{journal_path}-wal")
    wal.write_bytes(b"not a wal" * 1000)
    wal.chmod(0o660)  # a table run under umask 007 (docs/journal.md): its group reads and writes
    synced: list[str] = []  # what was synced, in order (a disk's state after a power cut cannot be reached)
    fsync = os.fsync
    mocker.patch.object(os, "fsync", side_effect=lambda fd: (synced.append(os.readlink(f"/proc/self/fd/{fd}")),
                                                             fsync(fd))[1])
    old = os.umask(0o022)
    try:
        copy = walcheck.keep_ignored_wal(journal_path)
    finally:
        os.umask(old)
    assert copy is not None and copy.read_bytes() == b"not a wal" * 1000
    assert synced == [str(copy), str(copy.parent)]  # the copy, then the folder that names it
    assert stat.S_IMODE(copy.stat().st_mode) == 0o660  # the WAL's, whatever this process's umask



def test_two_ignored_wal_files_in_one_second_are_both_kept(journal_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two opens in the same second (or a clock stepped back onto a second already used) each
    keep their own copy: the second never overwrites the first's evidence."""
    anchored(journal_path)
    frozen = time.gmtime(1_800_000_000)
    monkeypatch.setattr(time, "gmtime", lambda *_: frozen)  # every copy is named in one second
    wal = Path(f"{journal_path}-wal")
    for text in (b"FIRST" * 40, b"SECOND" * 40, b"THIRD" * 40):
        wal.write_bytes(text)
        Journal.open(journal_path, table_id="T1").close()
    stem = f"{wal.name}.ignored-20270115T080000Z"
    assert {p.name: p.read_bytes() for p in journal_path.parent.glob(f"{wal.name}.ignored-*")} == {
        stem: b"FIRST" * 40, f"{stem}-2": b"SECOND" * 40, f"{stem}-3": b"THIRD" * 40}

@pytest.mark.parametrize("line", [
    '{"seq": ' + "9" * 5000 + "}",
    "[" * 100_000,
    "\xff\xfe not utf-8",
])
def test_a_hostile_line_is_one_line_not_an_anchor(journal_path: Path, line: str) -> None:
    witness = anchored(journal_path)
    with open(witness.path, "a", encoding="latin-1") as f:
        f.write(line + "\n")
    r = verify(journal_path)
    assert not r.ok and r.reason == f"{witness.path} line 4: not an anchor (not a line of JSON)"


def test_an_anchor_naming_its_journal_with_a_line_break_is_not_one(journal_path: Path) -> None:
    witness = anchored(journal_path)
    obj = witness.read().anchors[-1][1].to_json()
    with open(witness.path, "a") as f:
        f.write(json.dumps({**obj, "table_id": "T1\nFAKE"}) + "\n")
    r = verify(journal_path)
    assert not r.ok and "\n" not in r.reason and r.reason.endswith("line 4: not an anchor (table_id is not a line of text)")


def test_a_failed_integrity_check_comes_before_a_missing_key(journal_path: Path) -> None:
    anchored(journal_path, n=200, key=KEY)
    conn = sqlite3.connect(journal_path)
    page = conn.execute("SELECT pageno FROM dbstat WHERE name = 'entries_shoe_seq' ORDER BY pageno DESC").fetchone()[0]
    conn.close()
    with open(journal_path, "r+b") as f:
        f.seek((page - 1) * 4096 + 100)
        f.write(b"\x13" * 200)
    r = verify(journal_path)
    assert not r.ok and not r.needs_key and r.reason.startswith("SQLite integrity check failed")


def test_an_anchor_written_while_a_reader_checks_does_not_fail_the_read(tmp_path: Path, monkeypatch) -> None:
    """A long-run review: a reader took its snapshot, ran SQLite's check, and only then read the
    anchors file; an anchor the running table wrote meanwhile (one at every shoe's end) named an
    entry past the snapshot's end, and an intact journal read as "truncated?" (3 exports of 5 on a
    large journal). The anchors are read before the snapshot: the read is of what they name."""
    from controller.journal import verification

    path = tmp_path / "j.db"
    writer = Journal.open(path, table_id="T1")
    writer.append("dealer", {"dealer": "d1"})
    AnchorFile.beside(path).record(writer.take_anchor())
    check_integrity = verification.CheckedRead.check_integrity

    def a_shoe_ends_meanwhile(self) -> None:  # after the snapshot: SQLite's check comes first in prepare
        check_integrity(self)
        writer.append("dealer", {"dealer": "d2"})
        AnchorFile.beside(path).record(writer.take_anchor())

    monkeypatch.setattr(verification.CheckedRead, "check_integrity", a_shoe_ends_meanwhile)
    try:
        with verification.checked_read(path) as read:
            entries = list(read.entries())
            report = read.report()
        assert report.ok, report.reason
        assert [e.payload["dealer"] for e in entries if e.kind == "dealer"] == ["d1"]  # the snapshot's
        monkeypatch.undo()
        assert verify(path).ok and len(AnchorFile.beside(path).read().anchors) == 2
    finally:
        writer.close()


def test_every_anchor_of_an_entry_is_checked_not_only_the_first(journal_path: Path) -> None:
    """An anchor says entry SEQ "must exist and have that hash" (docs/journal.md): two anchors of
    one entry (a witness's and one a forger wrote) are both checked, in either order."""
    with Journal.open(journal_path, table_id="T1") as j:
        for i in range(3):
            j.append("note", {"i": i})
        good = j.get(2).hash
    bad = "0" * 64
    for anchors in ([(2, good), (2, bad)], [(2, bad), (2, good)]):
        report = verify(journal_path, anchors=anchors, anchor_files=[])
        assert not report.ok and report.first_bad_seq == 2 and bad in report.reason, (anchors, report.reason)
    assert verify(journal_path, anchors=[(2, good), (2, good)], anchor_files=[]).ok
