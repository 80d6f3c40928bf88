"""The feed over TLS (``mqtts://``) to a real Mosquitto with a throwaway CA: it publishes when told
the CA (``--tls-ca``); a broker whose certificate it cannot trust is one line, exit 2 (retrying
cannot help)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_run import run
from floor.mqtt_clients import Subscriber
from floor.test_feed import start_feed, stopped
from floor.test_feed_cli import journal  # noqa: F401 - the fixture: a journal of 5 entries
from services.mosquitto import COLLECTOR, Mosquitto


@pytest.fixture
def tls_broker() -> Iterator[Mosquitto]:
    broker = Mosquitto.start(tls=True)
    try:
        yield broker
    finally:
        broker.stop()


def test_the_feed_publishes_over_tls_with_the_brokers_ca(tls_broker: Mosquitto, journal: Path) -> None:
    sub = Subscriber(tls_broker, COLLECTOR, "shoectl/v1/tables/+/journal", client_id="tls-sub")
    feed = start_feed(tls_broker, journal, "--tls-ca", str(tls_broker.ca_file), broker_url=tls_broker.tls_url)
    try:
        sub.wait_for(lambda: len(sub.payloads("shoectl/v1/tables/T1/journal")) == 5, "every entry over TLS")
    finally:
        stopped(feed)
        sub.close()


def test_a_broker_it_cannot_trust_is_one_line(capsys, tls_broker: Mosquitto, journal: Path) -> None:
    code, out, err = run(capsys, "feed", "--journal", str(journal), "--broker", tls_broker.tls_url,
                         *tls_broker.login("T1"))
    assert code == 2, err
    assert err.strip().count("\n") == 0, err
    assert f"the broker {tls_broker.tls_url} is not trusted: its certificate" in err
    assert "give its CA with --tls-ca FILE" in err
    assert not Path(f"{journal}.feed-cursor").exists()
