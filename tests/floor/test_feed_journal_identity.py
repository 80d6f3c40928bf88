"""The feed knows the journal it publishes (a floor review): its cursor keeps the hash of the last
acknowledged entry beside its seq, and a journal that does not hold that entry as the cursor saw
it (restored from an earlier copy, then written on) is refused in one line, exit 2, by
``shoectl feed`` and by ``shoectl run --feed`` before anything is created; it was fed from the
cursor's seq on, its own entries up to there never published. And one feed per journal, whatever
its cursor: the feed holds ``JOURNAL.feed.lock`` beside the journal's own file, so a second feed
given its own ``--cursor``, or reaching the journal through a symbolic link, is refused in one
line naming the journal; two ran side by side, taking the table's MQTT client id from each other
about four times a second."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cli_run import run
from controller.floor.cursor import AckWindow, FeedCursor
from controller.journal import JournalReader
from floor.feeds import shoectl, start_feed, stopped
from floor.helpers import SHOECTL, wait_until
from services.mosquitto import Mosquitto, free_port


def deal(journal: Path, rounds: int, seed: int) -> None:
    """``shoectl run`` on ``journal`` (a new one, or one it resumes) for ``rounds`` more rounds."""
    out = shoectl("run", "--speed", "max", "--rounds", str(rounds), "--seed", str(seed), "--journal", str(journal),
                  "--display", "lines", "--no-edge-monitor")
    assert out.returncode == 0, out.stderr


def entry_hash(journal: Path, seq: int) -> str:
    with JournalReader.open(journal) as reader:
        entry = reader.get(seq)
    assert entry is not None
    return entry.hash


def last_seq(journal: Path) -> int:
    with JournalReader.open(journal) as reader:
        return reader.last_seq


def restore(copy: Path, journal: Path) -> None:
    """The journal replaced by an earlier copy of it (a disk restored from a backup)."""
    for side in ("", "-wal", "-shm", ".anchors"):
        Path(f"{journal}{side}").unlink(missing_ok=True)
    shutil.copy(copy, journal)
    shutil.copy(f"{copy}.anchors", f"{journal}.anchors")


def fed_through(mosquitto: Mosquitto, journal: Path, seq: int) -> dict[str, object]:
    """Feed ``journal`` to the broker until its cursor holds ``seq``, then stop the feed: the cursor."""
    cursor = Path(f"{journal}.feed-cursor")
    feed = start_feed(mosquitto, journal)
    try:
        wait_until(lambda: cursor.exists() and json.loads(cursor.read_text())["seq"] == seq,
                   f"the cursor at entry {seq}", process=feed)
    finally:
        code, err = stopped(feed)
    assert code == 128 + signal.SIGTERM, err
    return json.loads(cursor.read_text())


def files(folder: Path) -> dict[str, bytes]:
    """The files in ``folder`` and their bytes, but SQLite's ``-shm`` and an empty ``-wal`` (the
    table's own checks read the journal before the feed's, and leave them: nothing written)."""
    return {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file() and not p.name.endswith("-shm")
            and not (p.name.endswith("-wal") and p.stat().st_size == 0)}


def one_line_refusal(capsys, *argv: str) -> str:
    code, out, err = run(capsys, *argv)
    assert code == 2 and err.strip().count("\n") == 0, err
    assert "Traceback" not in err and "Error" not in err, err
    return err.strip()


def fed_then_restored(mosquitto: Mosquitto, tmp_path: Path, rounds: int) -> tuple[Path, int, dict, str]:
    """A journal dealt ``rounds`` rounds and copied, dealt ``rounds`` more and fed to its end, then
    put back as the copy (with its anchors): (the journal, the cursor's entry, the cursor, the hash
    that entry had before the copy was put back)."""
    journal, copy = tmp_path / "t1.db", tmp_path / "t1.copy"
    deal(journal, rounds, seed=5)
    shutil.copy(journal, copy)
    shutil.copy(f"{journal}.anchors", f"{copy}.anchors")
    deal(journal, rounds, seed=6)
    end = last_seq(journal)
    cursor = fed_through(mosquitto, journal, end)
    fed_hash = entry_hash(journal, end)
    restore(copy, journal)
    return journal, end, cursor, fed_hash


def test_a_journal_restored_from_an_earlier_copy_and_written_on_is_refused(capsys, mosquitto: Mosquitto,
                                                                           tmp_path: Path) -> None:
    """Before: the feed started after the cursor's seq in a journal whose entries up to there were
    another history's, logged only ``feed starting after_seq=N``, and never published them."""
    journal, end, cursor, fed_hash = fed_then_restored(mosquitto, tmp_path, 3)
    assert cursor["hash"] == fed_hash  # the hash of the entry acknowledged last
    deal(journal, 8, seed=7)  # the table writes another history on the copy, past the cursor
    assert last_seq(journal) > end and entry_hash(journal, end) != cursor["hash"]
    said = (f"{journal}.feed-cursor: the cursor of another copy of the journal {journal} (its entry {end} is not "
            "the one the broker acknowledged: restored from an earlier copy, then written on?); start the table on "
            "a new journal under a new table id, and keep this one as the record up to its end (docs/deployment.md, "
            '"Restoring a table from a copy")')
    feed = subprocess.run([*SHOECTL, "feed", "--journal", str(journal), "--broker", mosquitto.url,
                           *mosquitto.login("T1")], capture_output=True, text=True, timeout=60)
    assert (feed.returncode, feed.stderr) == (2, f"shoectl feed: error: {said}\n")

    before = files(tmp_path)
    line = one_line_refusal(capsys, "run", "--journal", str(journal), "--rounds", "1", "--speed", "max",
                            "--no-edge-monitor", "--feed", mosquitto.url, *mosquitto.login("T1"))
    assert line == f"shoectl run: error: {said}"
    assert files(tmp_path) == before  # nothing created

    # moved away by hand all the same: the feed publishes this history from its start (to a floor
    # that stored the other, a second body at each entry: what the line advises against)
    Path(f"{journal}.feed-cursor").rename(tmp_path / "old.cursor")
    assert fed_through(mosquitto, journal, last_seq(journal))["hash"] == entry_hash(journal, last_seq(journal))


def test_run_feed_refuses_a_cursor_past_the_journals_end_before_creating_anything(capsys, mosquitto: Mosquitto,
                                                                                   tmp_path: Path) -> None:
    """Before: ``shoectl run --feed`` on a journal restored from an earlier copy (shorter than its
    kept cursor) resumed the table, wrote into the journal, and only then stopped on the feed's
    refusal."""
    journal, end, _, _ = fed_then_restored(mosquitto, tmp_path, 2)
    before = files(tmp_path)
    line = one_line_refusal(capsys, "run", "--journal", str(journal), "--rounds", "1", "--speed", "max",
                            "--no-edge-monitor", "--feed", mosquitto.url, *mosquitto.login("T1"))
    assert (f"the cursor says the floor has this journal's entries up to {end}, but the journal ends at entry "
            f"{last_seq(journal)}: an earlier copy of it (restored, or its -wal lost), and entries "
            f"{last_seq(journal) + 1}-{end} are only on the floor; start the table on a new journal under a new "
            "table id") in line
    assert files(tmp_path) == before


def test_a_cursor_saved_before_hashes_were_kept_is_read_and_gets_its_hash(mosquitto: Mosquitto,
                                                                          five_entry_journal: Path) -> None:
    """An older cursor (no ``hash``) still says where to resume; the next save writes the hash."""
    with JournalReader.open(five_entry_journal) as reader:
        created = reader.meta["created"]
    cursor = Path(f"{five_entry_journal}.feed-cursor")
    cursor.write_text(json.dumps({"format": "shoectl-feed-cursor/1", "table_id": "T1", "journal_created": created,
                                  "seq": 3}))
    assert FeedCursor(cursor, "T1", created).position().hash is None
    assert fed_through(mosquitto, five_entry_journal, 5)["hash"] == entry_hash(five_entry_journal, 5)


def test_the_cursor_keeps_the_hash_of_the_entry_acknowledged_last(tmp_path: Path) -> None:
    w = AckWindow(10, "a" * 64)
    for mid, seq in ((101, 11), (102, 12), (103, 13)):
        w.published(mid, seq, f"{seq:064x}")
    w.acknowledged(102)
    assert (w.acked_through, w.acked_hash) == (10, "a" * 64)  # 11 not yet: the hash stays entry 10's
    w.acknowledged(101)
    assert (w.acked_through, w.acked_hash) == (12, f"{12:064x}")
    cursor = FeedCursor(tmp_path / "c", "T1", "2026-01-01T00:00:00.000000Z")
    cursor.save(w.acked_through, w.acked_hash)
    assert cursor.position().hash == f"{12:064x}" and cursor.load() == 12
    for bad in (12, "", "not hex", "A" * 64):
        (tmp_path / "c").write_text(json.dumps({"format": "shoectl-feed-cursor/1", "table_id": "T1",
                                                "journal_created": "2026-01-01T00:00:00.000000Z", "seq": 5,
                                                "hash": bad}))
        with pytest.raises(Exception, match="not a feed cursor"):
            cursor.position()


def waiting_feed(journal: Path, url: str, log: Path, *extra: str) -> subprocess.Popen[str]:
    """``shoectl feed`` of ``journal`` waiting for the unreachable broker ``url`` (it runs, holding
    its locks)."""
    with log.open("w") as err_file:
        feed = subprocess.Popen([*SHOECTL, "feed", "--journal", str(journal), "--broker", url, *extra],
                                stdout=subprocess.DEVNULL, stderr=err_file, text=True)
    deadline = time.monotonic() + 60
    while "cannot reach the broker" not in log.read_text():
        if feed.poll() is not None or time.monotonic() > deadline:
            stopped(feed)
            pytest.fail(log.read_text())
        time.sleep(0.05)
    return feed


def test_a_second_feed_of_the_journal_is_refused_whatever_its_cursor_or_path(capsys, five_entry_journal: Path,
                                                                              tmp_path: Path) -> None:
    """Before: a second feed given its own ``--cursor`` ran beside the first, each taking the
    table's client id ``shoectl-feed-T1`` from the other about four times a second."""
    url = f"mqtt://127.0.0.1:{free_port()}"
    first = waiting_feed(five_entry_journal, url, tmp_path / "first.err", "--cursor", str(tmp_path / "first.cursor"))
    link = tmp_path / "elsewhere" / "link.db"
    link.parent.mkdir()
    link.symlink_to(five_entry_journal)
    try:
        for journal, cursor in ((five_entry_journal, tmp_path / "second.cursor"), (link, tmp_path / "third.cursor"),
                                (five_entry_journal, None)):
            second = subprocess.run([*SHOECTL, "feed", "--journal", str(journal), "--broker", url,
                                     *(["--cursor", str(cursor)] if cursor else [])],
                                    capture_output=True, text=True, timeout=60)  # not refused: it would wait on
            held = f"{os.path.realpath(five_entry_journal)}.feed.lock" if journal == link else f"{five_entry_journal.name}.feed.lock"
            assert (second.returncode, second.stdout, second.stderr) == (
                2, "", f"shoectl feed: error: {journal}: another feed of this journal is running (it holds {held}, "
                       "whatever its cursor); one feed per journal: stop that one first\n")
            assert cursor is None or not cursor.exists()
        before = sorted(p.name for p in five_entry_journal.parent.iterdir())
        journal_bytes = five_entry_journal.read_bytes()
        line = one_line_refusal(capsys, "run", "--journal", str(five_entry_journal), "--rounds", "1", "--feed", url)
        assert f"{five_entry_journal}: another feed of this journal is running" in line
        assert sorted(p.name for p in five_entry_journal.parent.iterdir()) == before  # nothing created
        assert five_entry_journal.read_bytes() == journal_bytes
        assert first.poll() is None  # the first goes on
    finally:
        code, _ = stopped(first)
    assert code == 128 + signal.SIGTERM
    # once it stopped, a feed of the journal may start (the lock file stays; no one holds it)
    assert os.path.exists(f"{five_entry_journal}.feed.lock")
    stopped(waiting_feed(link, url, tmp_path / "after.err", "--cursor", str(tmp_path / "second.cursor")))
