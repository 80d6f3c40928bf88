"""docs/floor.md, Security: under the documented broker (``use_username_as_clientid true``) "two
clients under one account take each other's connection in turn". An integrator who gives two
collectors, or two floor scoreboards, one account (or feeds one table id from two hosts) must be
told so in words that point at the fix: each client an account of its own. Each process logged
a lost/back pair about four times a second, for ever, as if the broker were down (a review of the
floor's deployment); now each says the cause once, at error, and keeps its per-outage lines to
itself while it lasts."""
from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from floor.collector_processes import start
from floor.helpers import SHOECTL
from services.mosquitto import DISPLAY, Mosquitto, running

TIED = ("use_username_as_clientid true",)  # the documented broker's line (docs/floor.md, Security)
WATCH = 6.0  # seconds the two clients share the account (the cause is said within about one)
CAUSE = ("another client", "account of its own", "same account", "took this connection")


@pytest.fixture
def tied_broker() -> Iterator[Mosquitto]:
    with running(settings=TIED) as broker:
        yield broker


def _said_the_cause(err: str) -> bool:
    return any(words in err for words in CAUSE)


def test_two_collectors_under_one_account_are_told_why(tied_broker: Mosquitto, floor_db: str, collectors,
                                                        tmp_path: Path) -> None:
    first = start(collectors, tied_broker, floor_db, tmp_path, "--share", "g", "--client-id", "collector-1")
    second = start(collectors, tied_broker, floor_db, tmp_path, "--share", "g", "--client-id", "collector-2")
    time.sleep(WATCH)
    for c in (first, second):
        err = c.stderr()
        losses = err.count("broker unavailable")
        assert _said_the_cause(err) and losses <= 3, (
            f"{losses} 'broker unavailable' lines in {WATCH} s and no word of the shared account:\n{err[-600:]}")


def _scoreboard(broker: Mosquitto, err: Path) -> subprocess.Popen[bytes]:
    with err.open("wb") as f:
        return subprocess.Popen([*SHOECTL, "scoreboard", "--broker", broker.url, *broker.login(DISPLAY),
                                 "--listen", "127.0.0.1:0"], stdout=subprocess.DEVNULL, stderr=f,
                                stdin=subprocess.DEVNULL)


def test_two_floor_scoreboards_under_one_account_are_told_why(tied_broker: Mosquitto, tmp_path: Path) -> None:
    errs = [tmp_path / "s1.err", tmp_path / "s2.err"]
    boards = [_scoreboard(tied_broker, e) for e in errs]
    try:
        time.sleep(WATCH)
    finally:
        for b in boards:
            b.send_signal(signal.SIGTERM)
            b.wait(timeout=60)
    for e in errs:
        err = e.read_text(errors="replace")
        losses = err.count("lost the connection to the broker")
        assert _said_the_cause(err) and losses <= 3, (
            f"{losses} 'lost the connection' lines in {WATCH} s and no word of the shared account:\n{err[-600:]}")


def test_one_table_fed_from_two_hosts_is_told_why(tied_broker: Mosquitto, table_journal_copy: Path,
                                                  tmp_path: Path) -> None:
    """A table moved to another machine while its old feed still runs (the same journal on both):
    the two feeds take the table's connection in turn. Each says the cause once, not "lost the
    broker" four times a second."""
    import shutil

    from floor.feeds import start_feed, stopped

    other = tmp_path / "other" / "t1.db"
    other.parent.mkdir()
    shutil.copy(table_journal_copy, other)
    shutil.copy(f"{table_journal_copy}.anchors", f"{other}.anchors")
    feeds = [start_feed(tied_broker, table_journal_copy), start_feed(tied_broker, other)]
    time.sleep(WATCH)
    errs = [stopped(f)[1] for f in feeds]
    for err in errs:
        losses = err.count("lost the broker")
        assert _said_the_cause(err) and losses <= 3, (
            f"{losses} 'lost the broker' lines in {WATCH} s and no word of the shared account:\n{err[-600:]}")
