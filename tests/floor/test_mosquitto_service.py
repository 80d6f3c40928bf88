"""The test broker (tests/services/mosquitto.py) is found where .ci/run accepts it: Debian's
``/usr/sbin/mosquitto`` (and ``/usr/bin/mosquitto_passwd``) when PATH lacks those folders, as it
does for many non-root shells; under ``CI=true`` a broker not found is a failure, so not finding
it there was one."""
from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from required import missing_tool
from services.mosquitto import Mosquitto


def test_the_broker_is_found_in_usr_sbin_off_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if not (os.access("/usr/sbin/mosquitto", os.X_OK) and os.access("/usr/bin/mosquitto_passwd", os.X_OK)):
        missing_tool("mosquitto is not installed in /usr/sbin (Debian's package)")
    monkeypatch.setenv("PATH", str(tmp_path))  # neither /usr/sbin nor /usr/bin
    monkeypatch.setenv("CI", "true")
    broker = Mosquitto.start(("T1",))
    try:
        assert broker.program == "/usr/sbin/mosquitto"
        with socket.create_connection(("127.0.0.1", broker.port), timeout=5):
            pass
    finally:
        broker.stop()
