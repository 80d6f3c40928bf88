"""Surveillance's events on the control socket (controller/control/audience.py,
controller/table/subscribers.py): the edge monitor's ``edge`` and ``edge_alert`` records and its
"surveillance:" notice say which side wager favours the player now and by how much. The event
stream needs no login and every dealer's account may reach the socket: told that Dragon 7 is
worth a wager, a dealer could tell a player when (a security review: any subscriber got them).
They go to the superuser, the table's own account and the group shoectl-surveillance alone; the
table's own output and log, and the journal, keep them as before."""
from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.control.audience import SURVEILLANCE_GROUP, sees_surveillance
from controller.control.server import ControlServer
from controller.journal import Journal, JournalReader, kinds
from controller.rules.submission import default_submission
from controller.table.core import TableCore
from controller.table.io import Notice, TableRecord
from controller.table.runner import TableRunner
from controller.table.subscribers import Subscribers
from tests.unprivileged import UNPRIVILEGED_USER, said_unprivileged

ALERT = Notice("warning", "surveillance: player edge above 0 after round 9 of T1-S0001: dragon7 +0.4014%",
               surveillance=True)
ORDINARY = Notice("warning", "an ordinary notice, for everyone")


def _surveillance_outputs() -> list[Any]:
    return [TableRecord(kinds.EDGE, {"round": 9, "wagers": {"dragon7": {"edge": "0.00401442"}}}, "T1-S0001", 9),
            TableRecord(kinds.EDGE_ALERT, {"round": 9, "wagers": {"dragon7": "0.00401442"}, "threshold": "0"},
                        "T1-S0001", 9),
            ALERT]


class _Journal:
    last_step = None
    last_ts = "2026-12-07T00:00:00.000000Z"


def _drain(q: Any) -> list[dict[str, Any]]:
    out = []
    while not q.empty():
        out.append(q.get_nowait())
    return out


def test_surveillance_events_reach_surveillance_subscribers_alone_live_and_since_start() -> None:
    subs = Subscribers()
    staff, watch = subs.add(100), subs.add(100, surveillance=True)
    for o in [*_surveillance_outputs(), ORDINARY]:
        subs.publish_output(_Journal(), o)
    everything = ["edge", "edge_alert", ALERT.text, ORDINARY.text]
    assert [e.get("text", e["type"]) for e in _drain(staff)] == [ORDINARY.text]
    assert [e.get("text", e["type"]) for e in _drain(watch)] == everything
    # the events kept since the table started are told by the same rule
    late_staff, late_watch = subs.add(100, since_start=True), subs.add(100, since_start=True, surveillance=True)
    assert [e.get("text", e["type"]) for e in _drain(late_staff)] == [ORDINARY.text]
    assert [e.get("text", e["type"]) for e in _drain(late_watch)] == everything
    subs.remove(watch)
    subs.publish_output(_Journal(), ALERT)
    assert _drain(watch) == [] and _drain(staff) == [] and len(_drain(late_watch)) == 1


def test_who_sees_surveillance() -> None:
    nobody = pwd.getpwnam(UNPRIVILEGED_USER).pw_uid
    assert sees_surveillance(0) and sees_surveillance(os.geteuid())
    assert not sees_surveillance(None)
    assert not sees_surveillance(nobody)  # no member of shoectl-surveillance (the group need not exist)
    assert sees_surveillance(nobody, table_uid=nobody)  # the table's own account
    assert not sees_surveillance(2**31 - 7)  # an account the database does not know
    assert SURVEILLANCE_GROUP == "shoectl-surveillance"


@pytest.fixture
def reachable_table() -> Iterator[tuple[Path, TableRunner]]:
    """A table served in this process on a socket an unprivileged account may open (a folder of
    mode 0755 outside pytest's private ones, the socket 0666: where its account would be in the
    operators group, which a test may not make), its journal beside it."""
    base = Path(tempfile.mkdtemp(prefix="shoectl-audience-"))
    os.chmod(base, 0o755)
    journal = Journal.open(base / "j.db", table_id="T1")
    runner = TableRunner(TableCore(default_submission()), journal)
    server = ControlServer(base / "c.sock", None)
    server.claim().start(runner)
    os.chmod(base / "c.sock", 0o666)
    owner = threading.Thread(target=runner.run, daemon=True)
    owner.start()
    try:
        yield base, runner
    finally:
        runner.stop()
        owner.join(10)
        server.close()
        journal.close()
        shutil.rmtree(base)


def _subscribe_until_ordinary(path: Path) -> str:
    """The subscribe reply's ``surveillance`` and the texts/types of the events since the table
    started, up to the ordinary notice (published last), as JSON."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(20)
        s.connect(str(path))
        s.sendall(b'{"id": 1, "op": "subscribe", "since": "start"}\n')
        f = s.makefile("rb")
        reply = json.loads(f.readline())
        seen = []
        while ORDINARY.text not in seen:
            event = json.loads(f.readline())["event"]
            seen.append(event.get("text", event["type"]))
    return json.dumps({"surveillance": reply["surveillance"], "seen": seen})


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to subscribe as another account")
def test_a_staff_account_is_not_told_the_edge_monitor_s_figures_or_alert(reachable_table) -> None:
    base, runner = reachable_table
    runner.call_on_owner(lambda: runner.journal_outputs([*_surveillance_outputs(), ORDINARY]))
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with JournalReader.open(base / "j.db") as reader:
            if list(reader.entries(kinds=[kinds.EDGE_ALERT])):
                break
        time.sleep(0.02)
    staff = json.loads(said_unprivileged(lambda: _subscribe_until_ordinary(base / "c.sock")))
    assert staff == {"surveillance": False, "seen": [ORDINARY.text]}
    mine = json.loads(_subscribe_until_ordinary(base / "c.sock"))  # the superuser: surveillance
    assert mine["surveillance"] is True
    assert [s for s in mine["seen"] if s != "controller_started"][-4:] == ["edge", "edge_alert", ALERT.text,
                                                                          ORDINARY.text]
    with JournalReader.open(base / "j.db") as reader:  # the journal keeps them, as before
        assert [e.kind for e in reader.entries(kinds=[kinds.EDGE, kinds.EDGE_ALERT])] == ["edge", "edge_alert"]
