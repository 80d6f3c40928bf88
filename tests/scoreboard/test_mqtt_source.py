"""``MqttFloorSource`` without a broker: a message rebuilds its own table's state only (the other
tables' floor rows are kept, encoded); each scoreboard has a client id of its own."""
from __future__ import annotations

import json

import pytest
import structlog
from paho.mqtt.client import MQTTMessage

from controller.floor.broker import BrokerOptions
from controller.scoreboard import mqtt_source
from controller.scoreboard.mqtt_source import MqttFloorSource, client_id
from tests.scoreboard.runs import shoectl_run


def _message(table: str, topic: str, body: dict) -> MQTTMessage:
    msg = MQTTMessage(topic=f"shoectl/v1/tables/{table}/{topic}".encode())
    msg.payload = json.dumps(body).encode()
    return msg


def _status(table: str, seq: int) -> dict:
    return {"table_id": table, "seq": seq, "state": "betting", "shoe": f"{table}-S0001", "round": seq,
            "last_outcome": "banker", "online": True}


def test_one_tables_message_rebuilds_only_that_table(monkeypatch) -> None:
    source = MqttFloorSource(BrokerOptions("mqtt://127.0.0.1:1", "127.0.0.1", 1, False))
    for i in range(20):
        source._on_message(None, None, _message(f"T{i}", "status", _status(f"T{i}", 1)))
    built = []
    real = mqtt_source.feed_state
    monkeypatch.setattr(mqtt_source, "feed_state", lambda table, *a: built.append(table) or real(table, *a))
    source._on_message(None, None, _message("T7", "status", _status("T7", 2)))
    source._on_message(None, None, _message("T7", "roads", {"bead_plate": ["B"], "big_road": [[
        {"outcome": "B", "ties": 0, "player_pair": False, "banker_pair": False}]], "big_eye_boy": [],
        "small_road": [], "cockroach_pig": []}))
    assert built == ["T7"] * 4  # each message: its table, in each language, nothing else
    floor = json.loads(source.floor.latest.document("zh"))
    assert [t["table"] for t in floor["tables"]] == sorted(f"T{i}" for i in range(20))
    row = next(t for t in floor["tables"] if t["table"] == "T7")
    assert row["version"] == 2 and row["big_road_placed"] == [[0, 0]] and row["state"]["text"] == "请下注"
    assert json.loads(source.table("T7").latest.document("en"))["placed"]["big_road"] == [[0, 0]]


def test_each_scoreboard_has_a_client_id_of_its_own() -> None:
    assert len({client_id() for _ in range(3)}) == 3
    assert client_id().startswith("shoectl-scoreboard-")


def test_a_burst_of_messages_is_coalesced_on_the_floor_and_whole_on_each_tables_page() -> None:
    """With the event loop running, 60 messages in a burst give the floor at most a state per
    ``FLOOR_EVERY_S`` (coalesced: the last state has every message), while each table's own page
    gets every one of its messages."""
    import asyncio
    import time

    async def burst() -> tuple[int, float, dict, list[int]]:
        source = MqttFloorSource(BrokerOptions("mqtt://127.0.0.1:1", "127.0.0.1", 1, False))
        source._loop = asyncio.get_running_loop()  # as start() sets it, without a broker
        for table in ("T1", "T2", "T3"):
            source._on_message(None, None, _message(table, "status", _status(table, 1)))
        await asyncio.sleep(0)
        floor = source.floor.subscribe(limit=100)
        page = source.table("T2").subscribe(limit=100)

        def deliver() -> float:
            t0 = time.monotonic()
            for seq in range(2, 22):
                for table in ("T1", "T2", "T3"):
                    source._on_message(None, None, _message(table, "status", _status(table, seq)))
            return time.monotonic() - t0
        took = await asyncio.to_thread(deliver)
        await asyncio.sleep(2.5 * mqtt_source.FLOOR_EVERY_S)
        states = [floor._queue.popleft() for _ in range(len(floor))]
        pages = [page._queue.popleft().version for _ in range(len(page))]
        return len(states), took, json.loads(states[-1].document("en")), pages

    count, took, last, pages = asyncio.run(burst())
    assert count <= 3 + took / mqtt_source.FLOOR_EVERY_S, (count, took)  # 60 messages, a handful of states
    assert {t["table"]: t["version"] for t in last["tables"]} == {"T1": 21, "T2": 21, "T3": 21}
    assert pages[-20:] == list(range(2, 22))


_ROADS = {"bead_plate": ["B", "T"], "big_road": [[{"outcome": "B", "ties": 1, "player_pair": False,
                                                    "banker_pair": True}]],
          "big_eye_boy": [], "small_road": [], "cockroach_pig": []}
# (topic leaf, payload bytes) of messages that are not the feed's: each is refused whole
_MISFITS = {
    "not JSON": ("status", b"{not json"),
    "not UTF-8": ("status", b'{"table_id": "T7", "state": "\xff"}'),
    "nested too deep": ("roads", b"[" * 5000 + b"]" * 5000),
    "a list": ("status", b"[1, 2]"),
    "another table's id": ("status", json.dumps({**_status("T8", 9)}).encode()),
    "faults not objects": ("status", json.dumps({**_status("T7", 9), "faults": [1]}).encode()),
    "round as text": ("status", json.dumps({**_status("T7", 9), "round": "nine"}).encode()),
    "seq negative": ("status", json.dumps({**_status("T7", 9), "seq": -1}).encode()),
    "online as text": ("status", json.dumps({**_status("T7", 9), "online": "yes"}).encode()),
    "bead plate as text": ("roads", json.dumps({**_ROADS, "bead_plate": "BBB"}).encode()),
    "an empty big-road column": ("roads", json.dumps({**_ROADS, "big_road": [[]]}).encode()),
    "a cell of other keys": ("roads", json.dumps({**_ROADS, "big_road": [[{"outcome": "B"}]]}).encode()),
    "a tie as a big-road win": ("roads", json.dumps({**_ROADS, "big_road": [[{**_ROADS["big_road"][0][0],
                                                                             "outcome": "T"}]]}).encode()),
    "a derived mark of another colour": ("roads", json.dumps({**_ROADS, "small_road": [["green"]]}).encode()),
    "more cells than a shoe": ("roads", json.dumps({**_ROADS, "bead_plate": ["B"] * 1001}).encode()),
    "bead pairs of another bead count": ("roads", json.dumps({**_ROADS, "bead_pairs": ["P"]}).encode()),
    "a bead pair of another word": ("roads", json.dumps({**_ROADS, "bead_pairs": ["", "T"]}).encode()),
}


@pytest.mark.parametrize("name", sorted(_MISFITS))
def test_a_message_that_is_not_the_feeds_changes_nothing_and_is_one_warning(name: str) -> None:
    """What the floor scoreboard keeps comes from the feed's shapes only (controller/scoreboard/
    feed_shapes.py): a message of another shape on a table's topic raises nothing on paho's thread
    (which would stop the scoreboard), changes neither the table's page nor the floor, and is
    logged once; the table's next good message is taken as before."""
    source = MqttFloorSource(BrokerOptions("mqtt://127.0.0.1:1", "127.0.0.1", 1, False))
    source._on_message(None, None, _message("T7", "status", _status("T7", 1)))
    source._on_message(None, None, _message("T7", "roads", _ROADS))
    page, floor = source.table("T7").latest.document("en"), source._floor_snapshot().document("en")
    leaf, payload = _MISFITS[name]
    msg = MQTTMessage(topic=f"shoectl/v1/tables/T7/{leaf}".encode())
    msg.payload = payload
    with structlog.testing.capture_logs() as logs:
        source._on_message(None, None, msg)
    assert [(e["log_level"], e["event"]) for e in logs] == [
        ("warning", "scoreboard: a floor message that does not fit, ignored")]
    assert source.table("T7").latest.document("en") == page
    assert source._floor_snapshot().document("en") == floor
    source._on_message(None, None, _message("T7", "status", _status("T7", 2)))
    assert json.loads(source.table("T7").latest.document("en"))["version"] == 2


def test_the_feeds_own_messages_fit(tmp_path) -> None:
    """What the feed publishes is taken: a real EZ Baccarat journal (a Dragon 7 and a Panda 8
    among its rounds, a jam's fault) read entry by entry through the feed's own summary
    (``cmd_feed.ScoreboardSummary``), its status and roads after every entry, as the feed sends
    them, and its goodbye: the shapes are the feed's, not stricter."""
    from controller.cli.cmd_feed import ScoreboardSummary
    from controller.journal import JournalReader
    from controller.scoreboard import feed_shapes

    journal = shoectl_run(tmp_path, "--submission", "ez-baccarat", "--rounds", "30", "--seed", "8",
                          "--faults", "jam-at=20")
    summary = ScoreboardSummary("T1")
    seen_roads = seen_faults = 0
    with JournalReader.open(journal) as reader:
        for entry in reader.entries():
            summary.apply(entry)
            status = {"table_id": "T1", "online": True, **summary.status(), "seq": entry.seq, "ts": entry.ts}
            roads = json.loads(json.dumps(summary.roads()))
            assert feed_shapes.problem("status", "T1", json.loads(json.dumps(status))) is None, status
            assert feed_shapes.problem("roads", "T1", roads) is None, roads
            seen_roads = max(seen_roads, len(roads["bead_plate"]) and len(roads["big_eye_boy"]))
            seen_faults = max(seen_faults, len(status["faults"] or []))
    assert seen_roads and seen_faults  # derived roads and a fault were among what was checked
    assert feed_shapes.problem("status", "T1", {"table_id": "T1", "online": False}) is None  # the goodbye


def test_a_topic_whose_table_id_no_table_can_have_makes_no_table() -> None:
    """A status whose ``table_id`` matched its topic's became a table, whatever the id: an escape
    sequence and a right-to-left mark were shown as a table of the floor (a review, 2026-12-03)."""
    source = MqttFloorSource(BrokerOptions("mqtt://127.0.0.1:1", "127.0.0.1", 1, False))
    odd = "\x1b[31mT\u202e"
    msg = MQTTMessage(topic=f"shoectl/v1/tables/{odd}/status".encode())
    msg.payload = json.dumps(_status(odd, 1)).encode()
    with structlog.testing.capture_logs() as logs:
        source._on_message(None, None, msg)
    assert [e["why"] for e in logs] == ["the topic's table id is not one a table can have (1-32 letters, digits, "
                                        "'.', '_' or '-', starting with a letter or digit)"]
    assert source.table_ids() == [] and json.loads(source._floor_snapshot().document("en"))["tables"] == []


def test_a_feeds_goodbye_keeps_the_tables_last_state_dimmed() -> None:
    """A table killed while betting: its feed's Last Will (the table id, online false) replaced its
    status, so the floor showed "Closed", no shoe, round 0 and a version back to 0 beside the
    shoe's roads (a floor review). The last state stays, offline."""
    source = MqttFloorSource(BrokerOptions("mqtt://127.0.0.1:1", "127.0.0.1", 1, False))
    source._on_message(None, None, _message("T2", "status", _status("T2", 3935)))
    source._on_message(None, None, _message("T2", "status", {"table_id": "T2", "online": False}))
    state = json.loads(source.table("T2").latest.document("en"))
    assert (state["version"], state["shoe"], state["round"], state["online"]) == (3935, "T2-S0001", 3935, False)
    assert state["state"]["name"] == "betting" and state["state"]["reason"] == "Offline"
    # the page's "Not live: the table is not running" banner, as for a journal's table not running
    # (a review: the page showed "Place your bets", a small "Offline" its only sign)
    assert source.table("T2").running is False
    source._on_message(None, None, _message("T2", "status", _status("T2", 3936)))
    assert source.table("T2").running is True
    source._on_message(None, None, _message("T3", "status", {"table_id": "T3", "online": False}))  # nothing known before
    assert json.loads(source.table("T3").latest.document("en"))["state"]["name"] == "closed"
    # A stopped feed's goodbye is its last status, offline: a board started after it shows that
    # (a review of the docs: the goodbye held the Last Will's body, and such a board said "Closed").
    source._on_message(None, None, _message("T4", "status", {**_status("T4", 12), "online": False}))
    state = json.loads(source.table("T4").latest.document("en"))
    assert (state["shoe"], state["round"], state["state"]["name"], state["state"]["reason"]) == (
        "T4-S0001", 12, "betting", "Offline")
    assert source.table("T4").running is False


def test_a_floor_fed_page_counts_the_pairs_its_feed_carries_and_leaves_out_what_it_does_not() -> None:
    """A review of the scoreboard: a table's page from the floor showed "Banker pair", "Player pair"
    and "Naturals" with no figure; the pairs are in the feed's bead_pairs."""
    source = MqttFloorSource(BrokerOptions("mqtt://127.0.0.1:1", "127.0.0.1", 1, False))
    source._on_message(None, None, _message("T1", "status", _status("T1", 4)))
    source._on_message(None, None, _message("T1", "roads", {"bead_plate": ["B", "P", "T", "B"],
                                                             "bead_pairs": ["PB", "", "P", "B"], "big_road": []}))
    so_far = json.loads(source.table("T1").latest.document("en"))["shoe_so_far"]
    assert (so_far["rounds"], so_far["player_pairs"], so_far["banker_pairs"]) == (4, 2, 2)
    assert "naturals" not in so_far  # not carried: the page shows no label for it
    source._on_message(None, None, _message("T1", "roads", {"bead_plate": ["B"], "big_road": []}))  # an older feed
    so_far = json.loads(source.table("T1").latest.document("en"))["shoe_so_far"]
    assert (so_far["player_pairs"], so_far["banker_pairs"]) == (None, None)
