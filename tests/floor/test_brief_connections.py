"""``BriefConnections`` tells two clients under one account (connections the broker accepts and
closes again at once, for ever) from a broker that is down and up again: an attempt to connect
that fails is an outage's, which a client under the same account never causes. A broker
restarted every few seconds was blamed on another client under the account, at ``error``, and
its outages went unsaid (a review of long runs)."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from controller.floor.brief_connections import BRIEF_S, BriefConnections

from floor.feeds import start_feed, stopped
from services.mosquitto import Mosquitto


def _brief(b: BriefConnections, at: float) -> str | None:
    b.connected(at)
    return b.lost(at + BRIEF_S / 10)


def test_three_brief_connections_in_a_row_are_said_once_and_an_attempt_that_fails_starts_the_count_again() -> None:
    b = BriefConnections("mqtt://h:1883")
    assert _brief(b, 0.0) is None and _brief(b, 1.0) is None
    said = _brief(b, 2.0)
    assert said is not None and "3 times in a row" in said and "same account" in said and b.flapping
    assert _brief(b, 3.0) is None and b.flapping  # said once
    b.unreachable()  # the broker is down: an outage, not another client
    assert not b.flapping
    assert _brief(b, 4.0) is None and _brief(b, 5.0) is None
    b.unreachable()
    assert _brief(b, 6.0) is None and _brief(b, 7.0) is None and not b.flapping
    b.connected(8.0)
    assert b.lost(8.0 + BRIEF_S) is None and not b.flapping  # a connection that lasted: the count starts again


def test_a_brief_connection_whose_broker_is_down_as_it_ends_is_an_outage() -> None:
    down = [False]
    b = BriefConnections("mqtt://h:1883", down=lambda: down[0])
    assert _brief(b, 0.0) is None and _brief(b, 1.0) is None
    down[0] = True  # the port refuses as the connection ends: the broker went away
    assert _brief(b, 2.0) is None and not b.flapping
    down[0] = False
    assert _brief(b, 3.0) is None and _brief(b, 4.0) is None and not b.flapping  # counted from there
    assert _brief(b, 5.0) is not None and b.flapping


@pytest.mark.parametrize("down_for", [0.8, 0.0])  # 0.0: back before paho's first retry, no attempt fails
def test_a_feed_whose_broker_restarts_every_few_seconds_says_its_outages_not_another_client(
        mosquitto: Mosquitto, table_journal_copy: Path, down_for: float) -> None:
    feed = start_feed(mosquitto, table_journal_copy)
    try:
        time.sleep(0.5)
        for _ in range(4):  # up about a second each time: every connection brief
            mosquitto.restart(down_for=down_for)
            time.sleep(1.0)
    finally:
        code, err = stopped(feed)
    assert "same account" not in err and "[error" not in err, err
    assert err.count("lost the broker") >= 2, err  # each outage said, not kept quiet as another client's
