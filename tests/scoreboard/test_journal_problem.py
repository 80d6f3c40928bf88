"""A scoreboard whose journal fails its check says so (a surveillance review): served over a real
uvicorn and read with http.client, the state of a journal with an edited entry carries
``journal_problem`` naming the entry and the last good one, in state.json, in the floor's row and
in the event stream, in both languages; so does one whose bad entry arrives while a page follows
it, and one SQLite finds damaged; a journal that verifies has none. The page shows it as a banner
(headless Chromium). Before, the follower logged one line and the page went on showing the last
good state as if it were live."""
from __future__ import annotations

import json
import sqlite3
import time

import pytest

from controller.journal.reader import JournalReader
from controller.scoreboard.state import TableView
from tests.scoreboard.serving import copy_journal, EventReader, dealt_journal, get, get_json, serving
from tests.tampering import rows, tamper


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    return dealt_journal(tmp_path_factory.mktemp("scoreboard") / "journal.db", rounds=6)


def _view_up_to(journal, last_seq, lang="en"):
    with JournalReader.open(journal) as reader:
        return TableView.from_entries(e for e in reader.entries() if e.seq <= last_seq).to_json(lang)


def _problem_state(server, lang="en", timeout=10):
    """state.json once it carries a journal problem (a loaded machine may take its time)."""
    deadline = time.monotonic() + timeout
    while True:
        status, _, body = get(server, f"/tables/T1/state.json?lang={lang}")
        if status == 200 and (state := json.loads(body))["journal_problem"] is not None:
            return state
        assert time.monotonic() < deadline, ("the state never said the journal failed its check", status, body[:200])
        time.sleep(0.05)


def test_a_journal_that_verifies_has_no_problem(journal):
    with serving(journal) as server:
        assert get_json(server, "/tables/T1/state.json")["journal_problem"] is None
        assert get_json(server, "/tables/T1/state.json?lang=zh")["journal_problem"] is None
        assert get_json(server, "/floor.json")["tables"][0]["journal_problem"] is None


def test_an_edited_entry_is_named_in_the_state_which_stays_the_last_good_one(tmp_path, journal):
    tampered = copy_journal(journal, tmp_path)
    bad = next(r[0] for r in rows(tampered) if r[2] == "card" and r[0] > 20)
    # another card dealt, as its payload says: the entry was edited
    tamper(tampered, "UPDATE entries SET payload = replace(payload, '\"card\":\"', '\"card\":\"1') WHERE seq = ?",
           params=(bad,))
    with serving(tampered) as server:
        state = _problem_state(server)
        problem = state["journal_problem"]
        assert problem == (f"the journal failed its check at entry {bad}: hash mismatch: the entry was edited; "
                           f"the state shown is as of entry {bad - 1}")
        assert state["version"] == bad - 1  # the rest is the last good state, as it was
        assert {**state, "journal_problem": None} == _view_up_to(journal, bad - 1)
        zh = get_json(server, "/tables/T1/state.json?lang=zh")
        assert f"第{bad}条" in zh["journal_problem"] and f"第{bad - 1}条" in zh["journal_problem"]
        assert zh["labels"]["not_live"] == "非实时：牌桌日志校验失败"
        assert get_json(server, "/floor.json")["tables"][0]["journal_problem"] == problem
        with EventReader(server, "/tables/T1/events") as events:  # a page connecting now is told too
            stream_id, sent = events.next_state()
        assert sent == state and stream_id == bad  # a state of its own, after the last good one's
        status, headers, _ = get(server, "/tables/T1/state.json")
        assert status == 200 and headers["etag"] == f'"{bad}"'


def test_an_entry_the_program_fails_to_show_stops_the_board_there_and_says_whose_defect(journal, mocker):
    """A defect of this program on one entry (any error of the view but the entry's content: a
    mock, as no known entry makes one). Before, the follower logged a warning and went on after
    the batch: that entry and the rest of its batch were never shown, and the page went on as
    live without them. Now the board stops before that entry, as at a failed check, and says that
    the scoreboard, not the journal, is at fault."""
    bad = 25
    apply = TableView.apply

    def failing(view, entry):
        if entry.seq == bad:
            view.round = 99  # a part of the entry taken before the defect: not shown
            raise ZeroDivisionError("division by zero")
        apply(view, entry)

    mocker.patch.object(TableView, "apply", failing)
    with serving(journal) as server:
        state = _problem_state(server)
        assert state["journal_problem"] == (
            f"the scoreboard cannot show entry {bad} of the journal (a defect of this program, in the scoreboard's "
            f"log, not of the journal); the state shown is as of entry {bad - 1}")
        assert {**state, "journal_problem": None} == _view_up_to(journal, bad - 1)
        zh = get_json(server, "/tables/T1/state.json?lang=zh")["journal_problem"]
        assert f"第{bad}条" in zh and "本程序的缺陷" in zh and f"第{bad - 1}条" in zh
        time.sleep(0.3)  # the follower's next looks: nothing after the entry is taken
        assert get_json(server, "/tables/T1/state.json")["version"] == bad - 1


def test_a_page_following_live_is_pushed_the_problem_when_a_bad_entry_arrives(tmp_path, journal):
    """The follower had published every good state; an entry that breaks the chain arrives: the
    open event stream gets the same state once more, now saying why it is frozen."""
    live = copy_journal(journal, tmp_path)
    last = rows(live)[-1]
    with serving(live) as server, EventReader(server, "/tables/T1/events") as events:
        _, state = events.next_state()
        assert state["version"] == last[0] and state["journal_problem"] is None
        conn = sqlite3.connect(live, isolation_level=None)
        try:  # linked to the last entry, but not hashed as the journal hashes
            conn.execute("INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                         (last[0] + 1, last[1], "note", last[3], None, None, None, None, None, None,
                          '{"text":"forged"}', last[12], "0" * 64))
        finally:
            conn.close()
        _, marked = events.next_state()
    assert marked["version"] == last[0] and f"at entry {last[0] + 1}:" in marked["journal_problem"]
    assert {**marked, "journal_problem": None} == state


def test_a_journal_sqlite_finds_damaged_is_said_as_one_that_cannot_be_read_any_more(tmp_path, journal):
    """A page of the entries overwritten: SQLite refuses to read them. Before, the follower tried
    again every 2 s for ever and state.json stayed 503 (no state read yet), /healthz 200."""
    damaged = copy_journal(journal, tmp_path)
    victim = rows(damaged)[len(rows(damaged)) // 2]
    conn = sqlite3.connect(damaged)
    try:  # every page in the file itself, none left in a WAL
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (page,) = conn.execute("PRAGMA page_size").fetchone()
    finally:
        conn.close()
    data = bytearray(damaged.read_bytes())
    start = data.index(victim[12].encode()) // page * page  # the page that holds that entry's hash
    data[start:start + page] = b"\xff" * page
    damaged.write_bytes(bytes(data))
    with serving(damaged) as server:
        state = _problem_state(server)
        health = json.loads(get(server, "/healthz")[2])
    assert state["journal_problem"].startswith("the journal cannot be read any more: the database file is corrupt")
    assert str(damaged) not in state["journal_problem"]  # a public page does not say where the file is
    assert health["ok"] is False and "corrupt" in health["reason"]


BANNER_JS = """var b = document.getElementById('journal-problem');
return {shown: !b.hidden && b.getBoundingClientRect().height > 0, title: b.querySelector('b').textContent,
        text: b.querySelector('span').textContent, failed: document.body.classList.contains('journal-failed')};"""


def test_the_page_shows_the_problem_as_a_banner_in_chinese(tmp_path, journal):
    """In headless Chromium (``tests/scoreboard/browser.py``): the banner of a tampered journal's
    page, in Chinese, over the last good state."""
    from tests.scoreboard.browser import chrome

    tampered = copy_journal(journal, tmp_path)
    bad = next(r[0] for r in rows(tampered) if r[2] == "card" and r[0] > 20)
    tamper(tampered, "UPDATE entries SET operator = 'mallory' WHERE seq = ?", params=(bad,))
    with serving(tampered, lang="zh") as server, chrome(tmp_path) as driver:
        state = _problem_state(server, lang="zh")
        driver.get(f"{server.url}/tables/T1")
        deadline = time.monotonic() + 15
        while not (banner := driver.execute_script(BANNER_JS))["shown"]:
            assert time.monotonic() < deadline, banner
            time.sleep(0.05)
    assert banner == {"shown": True, "title": "非实时：牌桌日志校验失败", "text": state["journal_problem"],
                      "failed": True}
    assert f"第{bad}条" in banner["text"]
