"""``reach_problem``: what a probe of the broker's port finds, in words. The real cases (a name
that does not resolve, nothing listening, TLS and plain listeners mixed up) are run against a real
Mosquitto in test_feed_cli.py, test_collector.py and the scoreboard's tests; here the one edge a
test cannot reach for real: a process its sandbox keeps off the network (the service unit's
``RestrictAddressFamilies``/``IPAddressDeny``), where ``connect`` fails with EPERM or
EAFNOSUPPORT."""
from __future__ import annotations

import errno
import socket

import pytest

from controller.floor import broker_probe
from controller.floor.broker import BrokerOptions


@pytest.mark.parametrize("code", [errno.EPERM, errno.EAFNOSUPPORT])
def test_a_sandbox_that_refuses_the_socket_is_said_so(monkeypatch, code: int) -> None:
    def refused(*args, **kwargs) -> socket.socket:
        raise OSError(code, "refused by the sandbox")

    monkeypatch.setattr(broker_probe.socket, "create_connection", refused)
    options = BrokerOptions(url="mqtt://127.0.0.1:1883", host="127.0.0.1", port=1883, tls=False)
    said = broker_probe.reach_problem(options)
    assert said == ("this process may not open that connection (a sandbox: the service unit's "
                    "RestrictAddressFamilies and IPAddressAllow, docs/deployment.md)")


@pytest.mark.parametrize("code, said", [(errno.ENETUNREACH, "no route to 10.9.9.9 from this machine"),
                                        (errno.EHOSTUNREACH, "no route to 10.9.9.9 from this machine"),
                                        (errno.EIO, None)])
def test_other_failures_to_connect_are_said_only_where_known(monkeypatch, code: int, said: str | None) -> None:
    def unreachable(*args, **kwargs) -> socket.socket:
        raise OSError(code, "a network without a route")

    monkeypatch.setattr(broker_probe.socket, "create_connection", unreachable)
    options = BrokerOptions(url="mqtt://10.9.9.9:1883", host="10.9.9.9", port=1883, tls=False)
    assert broker_probe.reach_problem(options) == said
