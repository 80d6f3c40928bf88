"""The feed's position: only the highest contiguous acknowledged entry, whatever order the PUBACKs
come in; the cursor file replaced whole and refused when it is another journal's; and its window:
no further into the journal than it may publish."""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from controller.cli.cmd_feed import make_feed
from controller.floor.broker import BrokerOptions, parse_broker_url
from controller.floor.cursor import AckWindow, CursorError, FeedCursor
from controller.floor.feed import FeedSettings
from controller.journal import Journal
from services.postgres import free_port


def test_out_of_order_acknowledgements_advance_only_through_a_contiguous_run() -> None:
    w = AckWindow(10)
    for mid, seq in ((101, 11), (102, 12), (103, 13), (104, 14)):
        w.published(mid, seq)
    assert w.outstanding == 4
    assert not w.acknowledged(103) and w.acked_through == 10  # 11 and 12 not yet: no step over a gap
    assert not w.acknowledged(999)  # a status message's PUBACK: not an entry
    assert w.acknowledged(101) and w.acked_through == 11
    assert w.acknowledged(102) and w.acked_through == 13
    assert w.outstanding == 1
    assert w.acknowledged(104) and w.acked_through == 14 and w.outstanding == 0
    with pytest.raises(ValueError):
        w.published(105, 16)  # an entry skipped is a bug


def test_the_cursor_round_trips_and_refuses_another_journals(tmp_path: Path) -> None:
    path = tmp_path / "c"
    cursor = FeedCursor(path, "T1", "2026-01-01T00:00:00.000000Z")
    assert cursor.load() == 0
    cursor.save(42)
    assert cursor.load() == 42
    assert json.loads(path.read_text())["seq"] == 42
    assert [p.name for p in tmp_path.iterdir()] == ["c"]  # no temporary file left
    with pytest.raises(CursorError, match="the cursor of another journal"):
        FeedCursor(path, "T1", "2026-02-02T00:00:00.000000Z").load()
    with pytest.raises(CursorError, match="the cursor of another journal"):
        FeedCursor(path, "T2", "2026-01-01T00:00:00.000000Z").load()
    for bad in ('{"format": "shoectl-feed-cursor/1", "table_id": "T1", "seq": -1}', "[]", "x" * 10000,
                "[" * 2000 + "]" * 2000, b"\xff\xfe"):  # nested deeper than the decoder goes; not UTF-8
        path.write_bytes(bad if isinstance(bad, bytes) else bad.encode())
        with pytest.raises(CursorError, match="not a feed cursor"):
            cursor.load()


def test_a_cursor_that_cannot_be_saved_names_its_file_in_a_persons_words(tmp_path: Path, monkeypatch) -> None:
    """A review of disk faults: a cursor on a full disk stopped `shoectl feed` with a bare "No
    space left on device", no file named; `run --feed` logged Python's "[Errno 1] ...: 'path'".
    The error names the cursor and what could not be done, as every other message says it. (The
    full disk is a writer that refuses: a test cannot fill a disk everywhere it runs.)"""
    import errno

    from controller.errors import in_words
    from controller.floor import cursor as cursor_module

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cursor_module, "atomic_writer", full_disk)
    path = tmp_path / "c"
    with pytest.raises(OSError) as info:
        FeedCursor(path, "T1", "2026-01-01T00:00:00.000000Z").save(42)
    assert in_words(info.value) == f"{path}: cannot save the feed's cursor: No space left on device"
    assert in_words(PermissionError(errno.EPERM, "Operation not permitted", "t7/j.db.feed-cursor")) == \
        "t7/j.db.feed-cursor: Operation not permitted"


def test_while_the_broker_is_away_the_feed_reads_no_further_than_its_window(tmp_path: Path) -> None:
    """The journal is the buffer: with the broker unreachable, the feed holds no entry and reads
    none, however many the journal has (it publishes only once connected: test_feed_order.py)."""
    journal = tmp_path / "t.db"
    with Journal.open(journal, table_id="T1") as j:
        for i in range(50):
            j.append("e", {"i": i})
    url = f"mqtt://127.0.0.1:{free_port()}"  # nothing listens there
    feed = make_feed(journal, BrokerOptions(url, *parse_broker_url(url)), settings=FeedSettings(window=5))
    stop = threading.Event()
    worker = threading.Thread(target=feed.run, args=(stop,))
    worker.start()
    try:
        time.sleep(1.0)
        assert feed.window.last_published == 0 and feed.window.outstanding == 0
        assert feed.tail.last_seq == 0  # read only as far as it may publish: nothing yet
    finally:
        stop.set()
        worker.join(10)
        feed.tail.close()
    assert not worker.is_alive()
    assert not Path(f"{journal}.feed-cursor").exists()  # nothing acknowledged: nothing to save


def test_a_feed_that_loses_the_journal_to_another_between_its_check_and_its_claim_makes_no_lock_file(
        tmp_path: Path) -> None:
    """Two feeds of one journal started at once, each with its own cursor: the one refused made its
    cursor's lock file before the journal's refused it (a review of this mend's first form, which
    only looked before claiming): the journal's lock is taken first."""
    journal = tmp_path / "j.db"
    journal.write_bytes(b"")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first = FeedCursor(tmp_path / "j.db.feed-cursor", "T1", "", journal=journal)
    second = FeedCursor(elsewhere / "mine.cursor", "T1", "", journal=journal)
    second.require_unclaimed()  # nobody runs yet
    first.claim()  # meanwhile
    try:
        with pytest.raises(CursorError, match="another feed of this journal is running"):
            second.claim()
    finally:
        first.release()
    assert list(elsewhere.iterdir()) == []
    with pytest.raises(CursorError, match=f"no such folder {tmp_path / 'gone'}"):
        FeedCursor(tmp_path / "gone" / "c", "T1", "", journal=journal).claim()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "j.db", "j.db.feed-cursor.lock", "j.db.feed.lock"]


def _two_journals(tmp_path: Path) -> tuple[dict[str, Path], str]:
    journals, created = {}, ""
    for table in ("T1", "T2"):
        journals[table] = tmp_path / f"{table}.db"
        with Journal.open(journals[table], table_id=table) as j:
            j.append("e", {"i": 1})
            created = j.meta["created"] if table == "T1" else created
    return journals, created


@pytest.mark.parametrize("then", ["saved", "not-saved-yet", "moved-away"])
def test_a_cursor_held_by_another_journals_feed_is_never_said_as_a_feed_of_this_journal(tmp_path: Path,
                                                                                         then: str) -> None:
    """T1's feed runs with cursor ``c``; T2's feed is given ``c`` by mistake. It was told "another
    feed of this journal is running ...: stop that one first" (reviews: whether T1's feed had saved
    a position or not, or after the file was moved away): no feed of T2's journal runs, stopping
    T1's mends nothing, and moving away a cursor a running feed holds loses its position. It is
    told another journal's feed runs with that cursor, and to give this one its own."""
    journals, created = _two_journals(tmp_path)
    cursor = tmp_path / "c.feed-cursor"
    running = FeedCursor(cursor, "T1", created, journal=journals["T1"])
    running.claim()
    if then != "not-saved-yet":
        running.save(1)
    if then == "moved-away":
        cursor.rename(tmp_path / "c.old")
    url = f"mqtt://127.0.0.1:{free_port()}"
    try:
        with pytest.raises(CursorError) as refused:
            make_feed(journals["T2"], BrokerOptions(url, *parse_broker_url(url)), cursor=str(cursor))
    finally:
        running.release()
    assert str(refused.value) == (f"{cursor}: another journal's feed is running with this cursor (it holds "
                                  "c.feed-cursor.lock); a cursor serves one journal's feed: one of the two needs a "
                                  "cursor of its own (shoectl feed --cursor)")
    assert not (tmp_path / "T2.db.feed.lock").exists()


def test_a_damaged_cursor_held_by_the_journals_running_feed_is_said_alike_by_feed_and_run(tmp_path: Path) -> None:
    """The journal's feed runs and holds its cursor; the file is damaged under it. A second ``shoectl
    feed`` was told to move the running feed's cursor away, where ``shoectl run --feed``
    (``check_run_cursor``) said another feed runs (a review): both say that feed runs."""
    from controller.cli.cmd_feed import check_run_cursor

    journals, created = _two_journals(tmp_path)
    cursor = tmp_path / "T1.db.feed-cursor"
    running = FeedCursor(cursor, "T1", created, journal=journals["T1"])
    running.claim()
    cursor.write_text("garbage\n")
    url = f"mqtt://127.0.0.1:{free_port()}"
    try:
        with pytest.raises(CursorError) as by_run:
            check_run_cursor(journals["T1"], "T1")
        with pytest.raises(CursorError) as by_feed:
            make_feed(journals["T1"], BrokerOptions(url, *parse_broker_url(url)))
    finally:
        running.release()
    assert "another feed of this journal is running" in str(by_run.value)
    assert str(by_feed.value) == str(by_run.value)


def test_run_feed_given_a_cursor_another_journals_feed_holds_is_told_what_it_can_do(tmp_path: Path) -> None:
    """``shoectl run --feed`` takes no ``--cursor`` (its feed's cursor is the journal's, beside it):
    told to give itself one with ``--cursor`` (a review), it could not; the words name the command
    that chooses a cursor, for whichever of the two feeds."""
    from controller.cli.cmd_feed import check_run_cursor

    journals, created = _two_journals(tmp_path)
    running = FeedCursor(tmp_path / "T1.db.feed-cursor", "T2", created, journal=journals["T2"])
    running.claim()
    try:
        with pytest.raises(CursorError) as refused:
            check_run_cursor(journals["T1"], "T1")
    finally:
        running.release()
    assert str(refused.value).endswith("a cursor serves one journal's feed: one of the two needs a cursor of its own "
                                       "(shoectl feed --cursor)")
