"""The order of a feed's messages on one connection (docs/floor.md, Guarantees and limits: Order
per table). paho holds what is published while it has no socket and sends it after the CONNACK,
behind what was published once the socket was up: a feed that published before the broker had
answered sent, e.g., entries 6..12 and then 1..5 (seen as "a killed feed's last messages among the
restarted feed's"). The feed publishes only once connected."""
from __future__ import annotations

import json
import time
from pathlib import Path

from controller.journal import Journal
from floor.feeds import JOURNAL_TOPIC, start_feed, stopped
from floor.mqtt_clients import Subscriber
from services.mosquitto import COLLECTOR, Mosquitto

WAIT = 30.0


def _connected_to(port: int) -> bool:
    """Whether some socket of this machine is ESTABLISHED to 127.0.0.1:``port`` (/proc/net/tcp)."""
    remote = f"0100007F:{port:04X}"
    lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return any(f.split()[2] == remote and f.split()[3] == "01" for f in lines)


def _until(done, what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def test_entries_published_while_the_broker_has_not_answered_go_out_in_seq_order(mosquitto: Mosquitto,
                                                                                  five_entry_journal: Path) -> None:
    Subscriber(mosquitto, COLLECTOR, JOURNAL_TOPIC, persistent=True, client_id="order-collector").close()
    mosquitto.down()  # the feed starts while nothing listens: entries 1-5 wait for a socket
    feed = start_feed(mosquitto, five_entry_journal)
    collector = None
    try:
        time.sleep(0.5)  # its first tries fail
        mosquitto.up()
        mosquitto.pause()  # its next try connects (the kernel accepts) and gets no CONNACK
        _until(lambda: _connected_to(mosquitto.port), "the feed's connection")
        with Journal.open(five_entry_journal, table_id="T1") as j:  # the table writes on meanwhile
            for i in range(5, 12):
                j.append("e", {"i": i})
        time.sleep(0.5)  # room to publish them
        mosquitto.resume()
        collector = Subscriber(mosquitto, COLLECTOR, JOURNAL_TOPIC, persistent=True, client_id="order-collector")
        collector.wait_for(lambda: len(collector.payloads(JOURNAL_TOPIC)) >= 12, "every entry", timeout=WAIT)
    finally:
        code, err = stopped(feed)
        if collector is not None:
            collector.close()
    assert collector.seqs(JOURNAL_TOPIC) == list(range(1, 13)), err
    assert json.loads(Path(f"{five_entry_journal}.feed-cursor").read_text())["seq"] == 12
