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
