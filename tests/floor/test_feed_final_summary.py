"""The feed's last status and roads when it stops (docs/floor.md, The feed: Stopping; Topics and
messages: the status, the roads). They are published at most every half second; a stopping feed
publishes what changed since the last ones before its goodbye, so a table whose run ends inside
that half second leaves its journal's roads retained, not older ones (seen: 0 beads retained where
``shoectl roadmap --json`` gave 20, and a finished shoe's 80 beads where a new shoe had started)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.cli.cmd_feed import ScoreboardSummary
from controller.journal import JournalReader
from floor.feeds import cli_out, shoectl
from floor.mqtt_clients import Subscriber
from services.mosquitto import DISPLAY, Mosquitto

STATUS = "shoectl/v1/tables/T1/status"
ROADS = "shoectl/v1/tables/T1/roads"


def journal_summary(journal: Path) -> tuple[dict, dict]:
    """The status the feed would publish now for the whole journal, and the roads."""
    summary = ScoreboardSummary("T1")
    with JournalReader.open(journal) as reader:
        entries = list(reader.entries())
    for entry in entries:
        summary.apply(entry)
    last = entries[-1]
    return ({"table_id": "T1", "online": True, **summary.status(), "seq": last.seq, "ts": last.ts},
            dict(summary.roads()))


# Both deal more entries than the feed reads at once (its window, 200): at --speed max the table
# ends before the feed has published them, and the drain takes less than the half second.
@pytest.mark.parametrize("deal", [("--rounds", "20"), ("--shoes", "1")], ids=["20-rounds", "one-shoe"])
def test_a_run_that_ends_inside_the_throttle_leaves_its_final_status_and_roads(mosquitto: Mosquitto, tmp_path: Path,
                                                                               capsys, deal: tuple[str, str]) -> None:
    journal = tmp_path / "t1.db"
    live = Subscriber(mosquitto, DISPLAY, STATUS, ROADS, client_id="live-display")
    try:
        out = shoectl("run", "--table-id", "T1", "--speed", "max", *deal, "--seed", "3", "--journal", str(journal),
                      "--display", "lines", "--no-edge-monitor", "--feed", mosquitto.url, *mosquitto.login("T1"))
        assert out.returncode == 0, out.stderr
        # The goodbye is the feed's last message: what it published before has arrived.
        live.wait_for(lambda: any(json.loads(p)["online"] is False for p in live.payloads(STATUS)), "the goodbye")
        statuses = [json.loads(p) for p in live.payloads(STATUS)]
        live_roads = [json.loads(p) for p in live.payloads(ROADS)]
    finally:
        live.close()
    status, roads = journal_summary(journal)
    # The goodbye: the last status, offline (a board started later shows the table's last state,
    # shoe and round; with the Last Will's body alone it showed "Closed": a review of the docs).
    goodbye = {**status, "online": False}
    roadmap = json.loads(cli_out(capsys, "roadmap", str(journal), "--json", "--shoe", status["shoe"]))
    assert roads == roadmap  # the current shoe's roads, as `shoectl roadmap --json` gives them
    replay = [json.loads(line) for line in cli_out(capsys, "journal", "replay", str(journal), "--json").splitlines()]
    last_round = [d for d in replay if d.get("type") == "round"][-1]
    if deal[0] == "--rounds":
        assert (status["shoe"], status["round"], status["last_outcome"]) == (
            last_round["shoe"], 20, last_round["outcome"])
        assert len(roads["bead_plate"]) > 0
    else:  # the next shoe has started: no round yet, empty roads
        assert status["shoe"] != last_round["shoe"] and status["round"] == 0
        assert all(road == [] for road in roads.values()), roads

    # A display that comes afterwards gets them retained: the journal's roads, and the goodbye.
    late = Subscriber(mosquitto, DISPLAY, STATUS, ROADS, client_id="late-display")
    try:
        late.wait_for(lambda: late.payloads(ROADS) and late.payloads(STATUS), "the retained status and roads")
        assert all(retain for _, _, retain in late.messages)
        retained = [json.loads(p) for p in late.payloads(ROADS)]
        assert [len(r["bead_plate"]) for r in retained] == [len(roadmap["bead_plate"])]  # beads retained, expected
        assert retained == [roadmap]
        assert [json.loads(p) for p in late.payloads(STATUS)] == [goodbye]
    finally:
        late.close()

    # The last status before the goodbye is the journal's final one; the last roads its roads.
    assert statuses[-1] == goodbye, statuses
    online = [s for s in statuses if s.get("online")]
    assert online and online[-1] == status, statuses
    assert live_roads and live_roads[-1] == roads
