"""``shoectl floor collect`` as a process for the floor's tests, and what publishes to it:
``Collector`` (the process, its standard error in a file), ``start`` (one more collector, once
subscribed), ``publisher`` and ``publish`` (a table's entries, QoS 1, as the broker's user). The
``collectors`` fixture (exposed through tests/floor/conftest.py) kills at the end every collector
a test started."""
from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from floor.helpers import HANG, SHOECTL, wait_until
from services.mosquitto import COLLECTOR, Mosquitto, password_of


class Collector:
    def __init__(self, broker_url: str, db: str, tmp: Path, *extra: str, login: list[str]) -> None:
        self.err = tmp / f"collector-{time.monotonic_ns()}.err"
        with self.err.open("wb") as err:  # the child writes its own copy
            self.proc = subprocess.Popen([*SHOECTL, "floor", "collect", "--broker", broker_url, "--db", db, *login,
                                          "--log-level", "info", *extra],
                                         stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def wait(self, predicate, what: str) -> None:
        wait_until(predicate, what, process=self.proc, output=self.stderr)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=HANG)


@pytest.fixture
def collectors() -> Iterator[list[Collector]]:
    started: list[Collector] = []
    yield started
    for c in started:
        if c.proc.poll() is None:
            c.proc.kill()
            c.proc.wait()


def start(collectors: list[Collector], broker: Mosquitto, db: str, tmp: Path, *extra: str,
          subscribed: bool = True) -> Collector:
    """A collector process; with ``subscribed``, once it has subscribed (its session exists from
    then on: what is published before a collector's first subscription is nobody's)."""
    c = Collector(broker.url, db, tmp, *extra, login=broker.login(COLLECTOR))
    collectors.append(c)
    if subscribed:
        c.wait(lambda: "collecting" in c.stderr(), "the collector subscribed")
    return c


def publisher(broker: Mosquitto, user: str = "T1") -> mqtt.Client:
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"test-{user}-{time.monotonic_ns()}",
                         protocol=mqtt.MQTTv5)
    client.username_pw_set(user, password_of(user))
    client.connect("127.0.0.1", broker.port)
    client.loop_start()
    return client


def publish(client: mqtt.Client, messages: list[str | bytes], table: str = "T1") -> None:
    infos = [client.publish(f"shoectl/v1/tables/{table}/journal", m, qos=1) for m in messages]
    for info in infos:
        info.wait_for_publish(timeout=HANG)
