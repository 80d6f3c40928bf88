"""A client of the broker, stopped, holds no socket: ``stop_client`` closes the connection and the
socket pair paho's ``loop_start`` made to wake its thread, which paho itself closes only when the
client is garbage-collected (eclipse-paho/paho.mqtt.python#627). The scoreboard, the feed and the
collector stop their clients through it; before, a client held in a reference cycle left its two
sockets open until the cyclic collector ran, and they were reported as unclosed then."""
from __future__ import annotations

import threading
from typing import Any

from controller.floor.broker import BrokerOptions, connect_in_background, make_client, stop_client
from services.mosquitto import Mosquitto, password_of
from tests.transport.descriptors import open_descriptors


def open_sockets() -> set[tuple[str, str]]:
    """This process's open sockets: (descriptor, ``socket:[inode]``)."""
    return {(fd, what) for fd, what in open_descriptors() if what.startswith("socket:")}


def test_a_stopped_client_holds_no_socket_while_it_is_still_referenced(mosquitto: Mosquitto) -> None:
    before = open_sockets()
    options = BrokerOptions(url=mosquitto.url, host="127.0.0.1", port=mosquitto.port, tls=False,
                            username="T1", password=password_of("T1"))
    client = make_client(options, client_id="stop-client-test")
    connected = threading.Event()

    def on_connect(client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        connected.set()

    client.on_connect = on_connect
    connect_in_background(client, options)
    assert connected.wait(30), "the client did not connect"
    held = open_sockets() - before
    assert len(held) >= 3, held  # the connection and loop_start's pair: what is to be closed

    stop_client(client)

    assert open_sockets() & held == set()  # all closed while ``client`` still refers to the client
