"""``MqttFloorSource`` without a broker: a message rebuilds its own table's state only (the other
tables' floor rows are kept, encoded); each scoreboard has a client id of its own."""
from __future__ import annotations

import json

from paho.mqtt.client import MQTTMessage

from controller.floor.broker import BrokerOptions
from controller.scoreboard import mqtt_source
from controller.scoreboard.mqtt_source import MqttFloorSource, client_id


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
