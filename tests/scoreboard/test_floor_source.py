"""The floor page from the floor feed: two tables fed by ``shoectl feed`` to a real Mosquitto
(tests/services/mosquitto.py, under the documented ACL), the scoreboard logged in as the floor's
display user, ``MqttFloorSource`` reading the retained ``status`` and ``roads`` topics; a feed
that stops says so (its status ``online: false``) and the floor shows it."""
from __future__ import annotations

import json
import signal
import subprocess
import time

from controller.cli.main import build_parser
from controller.journal.reader import JournalReader
from controller.scoreboard.state import TableView
from services.mosquitto import DISPLAY, mosquitto  # noqa: F401 - the broker fixture
from tests.scoreboard.serving import SHOECTL, EventReader, dealt_journal, get_json


def _view(journal):
    with JournalReader.open(journal) as reader:
        return TableView.from_entries(reader.entries()).to_json("en")


def test_the_floor_page_lists_every_table_the_feed_publishes(tmp_path, mosquitto):
    from controller.cli.cmd_scoreboard import floor_server
    from controller.scoreboard.server import bind

    journals = {}
    for table, rounds in (("T1", 6), ("T2", 3)):
        (tmp_path / table).mkdir()
        journals[table] = dealt_journal(tmp_path / table / "journal.db", rounds, 5, "--table-id", table)
    feeds = [subprocess.Popen([*SHOECTL, "feed", "--journal", str(j), "--broker", mosquitto.url, *mosquitto.login(t)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
             for t, j in journals.items()]
    server = None
    try:
        args = build_parser().parse_args(["scoreboard", "--broker", mosquitto.url, *mosquitto.login(DISPLAY),
                                          "--listen", "127.0.0.1:0"])
        server = floor_server(args, bind(*args.listen)).start()
        want = {t: _view(j) for t, j in journals.items()}
        deadline = time.monotonic() + 30
        while True:
            floor = get_json(server, "/floor.json")
            rows = {row["table"]: row for row in floor["tables"]}
            if all(rows.get(t, {}).get("version") == w["version"] and rows[t]["big_road"] == w["roads"]["big_road"]
                   for t, w in want.items()):
                break
            assert time.monotonic() < deadline, f"the floor never showed both tables: {json.dumps(rows)[:400]}"
            time.sleep(0.1)
        for table, w in want.items():
            assert rows[table]["shoe"] == w["shoe"] and rows[table]["state"]["name"] == w["state"]["name"]
            assert rows[table]["online"] is True
            state = get_json(server, f"/tables/{table}/state.json")
            assert state["roads"] == w["roads"] and state["ask"] == w["ask"]
            assert state["shoe_so_far"]["rounds"] == w["shoe_so_far"]["rounds"]
            assert state["last_round"]["outcome"] == w["last_round"]["outcome"]
        assert list(rows) == ["T1", "T2"]
        with EventReader(server, "/events") as events:
            assert events.next_state()[1]["tables"] == floor["tables"]
            # T2's feed stops: its goodbye (retained status online: false) dims its tile
            feeds[1].send_signal(signal.SIGTERM)
            version, floor = events.next_state(timeout=30)
            while {t["table"]: t["online"] for t in floor["tables"]} != {"T1": True, "T2": False}:
                version, floor = events.next_state(timeout=30)
    finally:
        if server is not None:
            server.stop()
        for feed in feeds:
            if feed.poll() is None:
                feed.send_signal(signal.SIGTERM)
            try:
                feed.wait(timeout=30)
            finally:
                if feed.poll() is None:
                    feed.kill()
                    feed.wait()
                feed.stderr.close()
