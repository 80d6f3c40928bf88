"""MQTT clients for the floor's tests: a subscriber that keeps what it receives and a publisher,
both logging in to the real broker (tests/services/mosquitto.py) as one of its users."""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from controller.floor.broker import stop_client
from services.mosquitto import Mosquitto, password_of

WAIT = 30.0  # seconds a test waits for a message (never a performance limit)


def connected_client(broker: Mosquitto, user: str, *, client_id: str, persistent: bool = False,
                     on_message: Callable[..., None] | None = None) -> mqtt.Client:
    """A v5 client logged in as ``user``, its network loop running; AssertionError if refused."""
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv5)
    client.username_pw_set(user, password_of(user))
    client.reconnect_delay_set(0.1, 0.5)
    up = threading.Event()
    refused: list[Any] = []

    def on_connect(c: Any, u: Any, flags: Any, rc: Any, props: Any) -> None:
        (refused.append(rc) if rc.is_failure else up.set())

    client.on_connect = on_connect
    if on_message is not None:
        client.on_message = on_message
    props = None
    if persistent:
        props = Properties(PacketTypes.CONNECT)
        props.SessionExpiryInterval = 3600
    client.connect_async("127.0.0.1", broker.port, clean_start=not persistent, properties=props)
    client.loop_start()
    deadline = time.monotonic() + WAIT
    while not up.is_set() and not refused and time.monotonic() < deadline:
        time.sleep(0.01)
    assert up.is_set(), f"{user} not connected: {refused}"
    return client


class Subscriber:
    """Subscribes to ``topics`` (QoS 1) as ``user`` and keeps ``(topic, payload, retain)`` of every
    message in ``messages``."""

    def __init__(self, broker: Mosquitto, user: str, *topics: str, persistent: bool = False,
                 client_id: str = "test-subscriber") -> None:
        self.messages: list[tuple[str, bytes, bool]] = []
        self._lock = threading.Lock()
        self.client = connected_client(broker, user, client_id=client_id, persistent=persistent,
                                       on_message=self._on_message)
        for topic in topics:
            info = self.client.subscribe(topic, qos=1)
            assert info[0] == mqtt.MQTT_ERR_SUCCESS
        time.sleep(0.1)  # the SUBACK

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        with self._lock:
            self.messages.append((msg.topic, msg.payload, msg.retain))

    def payloads(self, topic: str) -> list[bytes]:
        with self._lock:
            return [p for t, p, _ in self.messages if t == topic]

    def seqs(self, topic: str) -> list[int]:
        return [json.loads(p)["seq"] for p in self.payloads(topic)]

    def wait_for(self, done: Callable[[], bool], what: str, timeout: float = WAIT) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.02)

    def close(self) -> None:
        stop_client(self.client)
