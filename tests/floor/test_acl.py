"""The documented Mosquitto ACL (packaging/mosquitto/acl, docs/floor.md Security) on a real broker:
a table publishes only under its own id, the collector and the displays publish nothing a reader
takes for a table's, nobody gets in without a password."""
from __future__ import annotations

import threading
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from controller.floor.broker import stop_client
from floor.mqtt_clients import Subscriber, connected_client
from services.mosquitto import COLLECTOR, DISPLAY, Mosquitto

NOT_AUTHORISED = 135


class Publisher:
    """A client of ``user`` that publishes QoS 1 and returns the PUBACK's reason code."""

    def __init__(self, broker: Mosquitto, user: str) -> None:
        self.codes: dict[int, Any] = {}
        self.acked = threading.Condition()
        self.client = connected_client(broker, user, client_id=f"pub-{user}")
        self.client.on_publish = self._on_publish

    def _on_publish(self, client: Any, userdata: Any, mid: int, rc: Any, props: Any) -> None:
        with self.acked:
            self.codes[mid] = rc
            self.acked.notify_all()

    def publish(self, topic: str, body: bytes) -> int:
        info = self.client.publish(topic, body, qos=1)
        with self.acked:
            assert self.acked.wait_for(lambda: info.mid in self.codes, timeout=10)
            return self.codes[info.mid].value

    def close(self) -> None:
        stop_client(self.client)


@pytest.fixture
def readers(mosquitto: Mosquitto):
    collector = Subscriber(mosquitto, COLLECTOR, "shoectl/v1/tables/+/journal", client_id="acl-collector")
    display = Subscriber(mosquitto, DISPLAY, "shoectl/v1/tables/+/status", "shoectl/v1/tables/+/roads",
                         client_id="acl-display")
    yield collector, display
    collector.close()
    display.close()


def test_table_a_cannot_publish_as_table_b(mosquitto: Mosquitto, readers) -> None:
    collector, display = readers
    t1 = Publisher(mosquitto, "T1")
    try:
        for leaf in ("journal", "status", "roads"):
            assert t1.publish(f"shoectl/v1/tables/T2/{leaf}", b'{"forged":true}') == NOT_AUTHORISED
        assert t1.publish("shoectl/v1/tables/T1/journal", b"marker") == 0  # its own: taken (after the forgeries)
        assert t1.publish("shoectl/v1/tables/T1/status", b"marker") == 0
        collector.wait_for(lambda: collector.payloads("shoectl/v1/tables/T1/journal") == [b"marker"], "T1's own")
        display.wait_for(lambda: display.payloads("shoectl/v1/tables/T1/status") == [b"marker"], "T1's status")
    finally:
        t1.close()
    assert all(t == "shoectl/v1/tables/T1/journal" for t, _, _ in collector.messages), collector.messages
    assert all(t == "shoectl/v1/tables/T1/status" for t, _, _ in display.messages), display.messages


def test_the_collector_and_a_display_cannot_publish_a_tables_messages(mosquitto: Mosquitto, readers) -> None:
    collector, display = readers
    for user in (COLLECTOR, DISPLAY):
        p = Publisher(mosquitto, user)
        try:
            for leaf in ("journal", "status", "roads"):
                assert p.publish(f"shoectl/v1/tables/T1/{leaf}", b'{"forged":true}') == NOT_AUTHORISED
        finally:
            p.close()
    t1 = Publisher(mosquitto, "T1")
    try:
        assert t1.publish("shoectl/v1/tables/T1/journal", b"marker") == 0
        collector.wait_for(lambda: collector.payloads("shoectl/v1/tables/T1/journal"), "the marker")
    finally:
        t1.close()
    assert collector.payloads("shoectl/v1/tables/T1/journal") == [b"marker"]
    assert display.messages == []


def test_nobody_gets_in_without_a_password(mosquitto: Mosquitto) -> None:
    refused: list[Any] = []
    done = threading.Event()
    for user, password in ((None, None), ("T1", "guess")):
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="anon", protocol=mqtt.MQTTv5)
        if user:
            client.username_pw_set(user, password)
        client.on_connect = lambda c, u, f, rc, p: (refused.append(rc.value), done.set())
        client.connect("127.0.0.1", mosquitto.port)
        client.loop_start()
        assert done.wait(10)
        done.clear()
        stop_client(client)
    assert all(code in (NOT_AUTHORISED, 134) for code in refused), refused
