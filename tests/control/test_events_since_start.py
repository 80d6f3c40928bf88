"""A subscription may ask for the events since the table started (``"since": "start"``): a console
whose table stopped and came back sees what the start decided before it could subscribe again (a
floorperson review: a round the restart voided, its wagers returned, was never shown)."""
from __future__ import annotations

import json

import pytest

from controller.control.requests import BadRequest, parse_request
from controller.table.subscribers import MORE_THAN_KEPT, START_KEPT, Subscribers


def test_the_first_events_are_kept_for_a_subscriber_that_asks_and_no_other() -> None:
    subs = Subscribers()
    assert subs  # kept from the start: the table builds its events though no one listens yet
    for n in range(3):
        subs.publish({"type": "notice", "text": str(n)})
    plain, since = subs.add(10), subs.add(10, since_start=True)
    subs.publish({"type": "notice", "text": "3"})
    assert [plain.get_nowait()["text"]] == ["3"] and plain.empty()
    assert [since.get_nowait()["text"] for _ in range(4)] == ["0", "1", "2", "3"] and since.empty()


def test_exactly_the_kept_events_need_no_word_of_more() -> None:
    """A review: after exactly 500 events, all of them replayed, the notice said some were not."""
    subs = Subscribers()
    for n in range(START_KEPT):
        subs.publish({"type": "notice", "text": str(n)})
    q = subs.add(START_KEPT + 10, since_start=True)
    assert q.qsize() == START_KEPT and MORE_THAN_KEPT not in [q.get_nowait() for _ in range(START_KEPT)]


def test_past_the_kept_events_a_subscriber_is_told_some_are_not_shown() -> None:
    subs = Subscribers()
    for n in range(START_KEPT + 5):
        subs.publish({"type": "notice", "text": str(n)})
    subs.remove(subs.add(1))
    assert not subs  # nobody listens and the start's events are kept: no event is built any more
    q = subs.add(START_KEPT + 10, since_start=True)
    got = [q.get_nowait() for _ in range(q.qsize())]
    assert [e["text"] for e in got[:START_KEPT]] == [str(n) for n in range(START_KEPT)]
    assert got[START_KEPT:] == [MORE_THAN_KEPT]


def test_since_is_start_or_nothing() -> None:
    assert parse_request(b'{"op": "subscribe", "since": "start"}').since_start
    assert not parse_request(b'{"op": "subscribe"}').since_start
    with pytest.raises(BadRequest, match='a subscription\'s "since" may only be "start", not 5'):
        parse_request(b'{"op": "subscribe", "since": 5}')


def test_a_table_sends_what_its_start_made_to_a_subscription_since_its_start(start_table, workdir) -> None:
    """Through ``shoectl run`` and its socket: the events the table made before anyone subscribed
    (its first shoe begun) come to a subscription since its start, not to another."""
    t = start_table(workdir)
    t.wait_state("betting")
    with t.connect() as since, t.connect() as plain:
        since.sendall(json.dumps({"op": "subscribe", "since": "start"}).encode() + b"\n")
        plain.sendall(json.dumps({"op": "subscribe"}).encode() + b"\n")
        since_lines, plain_lines = since.makefile("rb"), plain.makefile("rb")
        assert "status" in json.loads(since_lines.readline()) and "status" in json.loads(plain_lines.readline())
        started = None
        for _ in range(START_KEPT):
            event = json.loads(since_lines.readline()).get("event") or {}
            if event.get("type") == "shoe_start":
                started = event
                break
        assert started is not None and started["shoe"] == "T1-S0001"
        later = json.loads(plain_lines.readline()).get("event") or {}
        assert later.get("ts", "") > started["ts"]  # the plain stream begins with what comes next
