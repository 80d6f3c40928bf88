"""The floor page from the floor feed: two tables fed by ``shoectl feed`` to a real Mosquitto
(tests/services/mosquitto.py, under the documented ACL), the scoreboard logged in as the floor's
display user, ``MqttFloorSource`` reading the retained ``status`` and ``roads`` topics; a feed
that stops says so (its status ``online: false``) and the floor shows it."""
from __future__ import annotations

import json
import signal
import time

from tests.scoreboard.serving import EventReader, floor_fed, get_json, journal_view


def test_the_floor_page_lists_every_table_the_feed_publishes(tmp_path, mosquitto):
    with floor_fed(tmp_path, mosquitto, {"T1": 6, "T2": 3}) as (server, journals, feeds):
        want = {t: journal_view(j) for t, j in journals.items()}
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
