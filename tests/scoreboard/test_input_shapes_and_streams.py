"""The scoreboard's input side at its edges: feed messages of another shape change nothing (and
never raise on paho's thread), and an event stream asked for on a kept-alive connection is not
cut by the timer of the response before it. A mutation review found each of these surviving the
tests before."""
from __future__ import annotations

import json
import time

import pytest
import structlog
from paho.mqtt.client import MQTTMessage

from controller.floor.broker import BrokerOptions
from controller.scoreboard.mqtt_source import MqttFloorSource
from tests.scoreboard.serving import connection, dealt_journal, serving

_CELL = {"outcome": "B", "ties": 0, "player_pair": False, "banker_pair": False}
_ROADS = {"bead_plate": ["B"], "big_road": [[_CELL]], "big_eye_boy": [], "small_road": [], "cockroach_pig": []}


def _status(seq: int) -> dict:
    return {"table_id": "T7", "seq": seq, "state": "betting", "shoe": "T7-S0001", "round": seq,
            "last_outcome": "banker", "online": True}


def _message(leaf: str, body: object) -> MQTTMessage:
    msg = MQTTMessage(topic=f"shoectl/v1/tables/T7/{leaf}".encode())
    msg.payload = json.dumps(body).encode()
    return msg


_MISFITS = {
    "a big-road cell with a key more": ("roads", {**_ROADS, "big_road": [[{**_CELL, "natural": True}]]}),
    "seq as true": ("status", {**_status(9), "seq": True}),
    "round as false": ("status", {**_status(9), "round": False}),
    "a status without its table_id": ("status", {k: v for k, v in _status(9).items() if k != "table_id"}),
    "more big-road cells than a shoe": ("roads", {**_ROADS, "big_road": [[_CELL]] * 1001}),
}


@pytest.mark.parametrize("name", sorted(_MISFITS))
def test_a_message_of_another_shape_changes_nothing(name: str) -> None:
    """feed_shapes.py: ``round`` and ``seq`` "whole numbers of at least 0", each field may be absent
    "but ``table_id``"; a big-road cell is exactly ``{"outcome", "ties", "player_pair",
    "banker_pair"}``; "at most MAX_CELLS cells a road". mqtt_source.py: such a message "is logged (one
    warning) and changes nothing"; the table's next good message is taken as before."""
    source = MqttFloorSource(BrokerOptions("mqtt://127.0.0.1:1", "127.0.0.1", 1, False))
    source._on_message(None, None, _message("status", _status(1)))
    source._on_message(None, None, _message("roads", _ROADS))
    page, floor = source.table("T7").latest.document("en"), source._floor_snapshot().document("en")
    leaf, body = _MISFITS[name]
    with structlog.testing.capture_logs() as logs:
        try:
            source._on_message(None, None, _message(leaf, body))
        except Exception as exc:  # paho's network thread would stop on it
            pytest.fail(f"raised {exc!r}")
    assert [(e["log_level"], e["event"]) for e in logs] == [
        ("warning", "scoreboard: a floor message that does not fit, ignored")]
    assert source.table("T7").latest.document("en") == page
    assert source._floor_snapshot().document("en") == floor
    source._on_message(None, None, _message("status", _status(2)))
    assert json.loads(source.table("T7").latest.document("en"))["version"] == 2


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    return dealt_journal(tmp_path_factory.mktemp("scoreboard") / "journal.db", rounds=2)


def test_an_event_stream_asked_for_on_a_kept_alive_connection_is_not_cut(journal, monkeypatch) -> None:
    """guarded_http.py: "An event stream is one request whose response lasts: neither limit ends it".
    The limit armed after a response is for the next request's head: once that request (an event
    stream) has begun, the timer of the response before it must not answer 408 into the stream."""
    from controller.scoreboard import guarded_http

    monkeypatch.setattr(guarded_http, "HEAD_TIMEOUT_S", 0.5)
    with serving(journal) as server:
        conn = connection(server, timeout=5)
        try:
            conn.request("GET", "/healthz")
            first = conn.getresponse()
            first.read()
            assert first.status == 200
            conn.request("GET", "/tables/T1/events", headers={"Accept": "text/event-stream"})
            stream = conn.getresponse()
            assert stream.status == 200
            time.sleep(1.5)  # three head limits
            assert server.source.table("T1").subscribers == 1
        finally:
            conn.close()
