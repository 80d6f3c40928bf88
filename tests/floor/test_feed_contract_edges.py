"""The floor feed and its cursor at the edges of their contract (docs/floor.md): the window of
entries in flight, a cursor past the journal's end or at another copy's entry 1, the acknowledged
hashes let go, and a restarted feed that published, retained, the status of a point before its
cursor (mended). A mutation review found each of these surviving the tests before."""
from __future__ import annotations

import json
import signal
import threading
import time
import tracemalloc
from pathlib import Path

import pytest

from controller.cli.cmd_feed import make_feed
from controller.floor import cursor as cursor_module
from controller.floor.broker import BrokerOptions, parse_broker_url
from controller.floor.cursor import AckWindow, CursorError, FeedCursor
from controller.floor.feed import FeedSettings
from controller.journal import Journal
from floor.feeds import start_feed, stopped
from floor.helpers import wait_until
from floor.mqtt_clients import Subscriber
from services.mosquitto import DISPLAY, Mosquitto, password_of

CREATED = "2026-01-01T00:00:00.000000Z"
STATUS_T1 = "shoectl/v1/tables/T1/status"


def test_a_cursor_one_entry_past_the_journals_end_is_refused(tmp_path: Path) -> None:
    """cursor.check_journal: "A journal that ends before that entry would be waited on for entries it
    never had" (docs/floor.md: a journal restored from an earlier copy "ends before N, `the journal
    ends at entry ...`"). A cursor without a hash (saved before hashes were kept) at entry 6 of a
    journal of 5 entries: the feed would skip the table's next entry 6, never publishing it."""
    path = tmp_path / "c"
    path.write_text(json.dumps({"format": "shoectl-feed-cursor/1", "table_id": "T1", "journal_created": CREATED,
                                "seq": 6}))
    with pytest.raises(CursorError, match="the journal ends at entry 5"):
        FeedCursor(path, "T1", CREATED).check_journal(5, lambda seq: f"{seq:064x}")


def test_a_cursor_at_entry_1_of_another_copy_is_refused(tmp_path: Path) -> None:
    """check_journal refuses a journal "whose entry N has another hash" for every N the cursor can
    hold, entry 1 included (a copy restored from before its first entry, then written on)."""
    cursor = FeedCursor(tmp_path / "c", "T1", CREATED)
    cursor.save(1, "a" * 64)
    with pytest.raises(CursorError, match="the cursor of another copy"):
        cursor.check_journal(5, lambda seq: "b" * 64)
    cursor.check_journal(5, lambda seq: "a" * 64)  # the same entry 1: taken


def test_a_cursor_whose_seq_is_not_a_number_is_refused(tmp_path: Path) -> None:
    """The cursor's ``seq`` is an entry's number ("N the highest entry ..."): JSON's true is none."""
    path = tmp_path / "c"
    path.write_text(json.dumps({"format": "shoectl-feed-cursor/1", "table_id": "T1", "journal_created": CREATED,
                                "seq": True}))
    with pytest.raises(CursorError, match="not a feed cursor"):
        FeedCursor(path, "T1", CREATED).position()


def test_the_ack_window_keeps_nothing_of_the_entries_acknowledged() -> None:
    """"Bounded memory ... whatever the backlog" (docs/floor.md): the window holds the entries in
    flight only; 50,000 entries published and acknowledged one window at a time leave nothing behind."""
    w = AckWindow(0)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for start in range(0, 50_000, 200):
            for i in range(start, start + 200):
                w.published(i % 65535 + 1, i + 1, f"{i + 1:064x}")
            for i in range(start, start + 200):
                w.acknowledged(i % 65535 + 1)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert w.acked_through == 50_000 and w.outstanding == 0 and w.acked_hash == f"{50_000:064x}"
    assert grown < 1_000_000, grown  # one window's worth, not 50,000 hashes


def test_the_feed_never_has_more_than_its_window_in_flight(mosquitto: Mosquitto, tmp_path: Path,
                                                          monkeypatch) -> None:
    """docs/floor.md: "At most --max-inflight entries are published and not yet acknowledged: the
    feed reads the journal only as PUBACKs make room". A broker that stops answering (SIGSTOP) after
    the first acknowledgements leaves the feed with its window in flight and no more."""
    journal = tmp_path / "t.db"
    with Journal.open(journal, table_id="T1") as j:
        for i in range(3000):
            j.append("e", {"i": i})
    most = [0]
    real = cursor_module.AckWindow.published

    def published(self, mid, seq, digest=None):
        real(self, mid, seq, digest)
        most[0] = max(most[0], self.outstanding)

    monkeypatch.setattr(cursor_module.AckWindow, "published", published)
    options = BrokerOptions(mosquitto.url, *parse_broker_url(mosquitto.url), username="T1",
                            password=password_of("T1"))
    feed = make_feed(journal, options, settings=FeedSettings(window=5))
    stop = threading.Event()
    worker = threading.Thread(target=feed.run, args=(stop,))
    worker.start()
    paused = False
    try:
        wait_until(lambda: feed.window.acked_through >= 1, "the first acknowledgement")
        mosquitto.pause()
        paused = True
        time.sleep(1.0)
        assert feed.window.outstanding <= 5 and feed.window.last_published - feed.window.acked_through <= 5
    finally:
        if paused:
            mosquitto.resume()
        stop.set()
        worker.join(60)
        feed.tail.close()
    assert not worker.is_alive()
    assert most[0] <= 5, most[0]


def live(sub: Subscriber) -> list[dict]:
    """The statuses a feed published while ``sub`` was subscribed (not the retained one it found)."""
    return [json.loads(p) for t, p, retain in list(sub.messages) if t == STATUS_T1 and not retain
            and json.loads(p).get("online")]


def test_a_restarted_feed_publishes_no_status_of_the_entries_before_its_cursor(mosquitto: Mosquitto,
                                                                                table_journal_copy: Path) -> None:
    """docs/floor.md: "At every start the feed reads the journal from its first entry (checking it,
    and rebuilding the status and roads), then publishes from the cursor on"; the status's ``seq`` is
    "the last journal entry the status includes". A restarted feed must not publish, retained, the
    status of a point of the journal it is still reading through (a display would see the table
    step back hundreds of entries, to another round and state)."""
    cursor = Path(f"{table_journal_copy}.feed-cursor")
    feed = start_feed(mosquitto, table_journal_copy)
    try:
        wait_until(lambda: cursor.exists() and json.loads(cursor.read_text())["seq"] > 500, "the cursor past 500",
                   process=feed)
    finally:
        code, err = stopped(feed)
    assert code == 128 + signal.SIGTERM, err
    end = json.loads(cursor.read_text())["seq"]
    display = Subscriber(mosquitto, DISPLAY, STATUS_T1, client_id="display")
    try:
        again = start_feed(mosquitto, table_journal_copy)
        try:
            display.wait_for(lambda: live(display), "the restarted feed's status")
            time.sleep(1.0)  # and what it publishes next
        finally:
            stopped(again)
        seqs = [status["seq"] for status in live(display)]
        assert seqs and all(seq >= end for seq in seqs), (end, seqs[:5])
    finally:
        display.close()
