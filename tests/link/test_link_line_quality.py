"""A line that turns noisy is said, once, and so is its return to clean (``LineQuality``): the
link mends the noise by itself, so nothing else would tell a technician that a cable wears out."""
from __future__ import annotations

import time

import pytest
from structlog.testing import capture_logs

from firmware_bridge.emulator import FaultSpec
from firmware_bridge.emulator.loopback import LoopbackTransport
from firmware_bridge.emulator.factory import build_device
from firmware_bridge.errors import BridgeError
from firmware_bridge.link import DeviceLink, quality
from firmware_bridge.link.quality import LineQuality
from firmware_bridge.profiles import Timing
from firmware_bridge.protocol import StatusRequest


def test_a_noisy_window_is_said_once_and_a_clean_one_after_it() -> None:
    line = LineQuality(0.0)
    assert line.observe(10.0, 100, 50, 0) is None  # the window is not over
    assert line.observe(30.0, 100, 4, 0) is None  # 4 % sent again: clean, as it was
    level, event, figures = line.observe(60.0, 200, 10, 0)  # 6 of 100, none damaged: late, not noise
    assert (level, figures) == ("warning", {"seconds": 30, "commands": 100, "sent_again_for_the_line": 6, "damaged_frames": 0})
    assert event.startswith("replies late or lost: commands sent again after no reply, no frame damaged")
    assert line.observe(90.0, 210, 20, 25) is None  # still noisy (damaged frames): said already
    assert line.observe(120.0, 219, 21, 25)[:2] == ("info", "line clean again")
    assert line.observe(150.0, 229, 29, 25) is None  # 8 of 10: too few commands to judge
    assert line.observe(180.0, 229, 29, 45)[:2] == ("warning", "line noisy: check the device's cable and connectors")


def test_a_link_on_a_noisy_line_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(quality, "WINDOW_S", 0.5)
    shoe = build_device("emulated-shoe", seed=1, speed=float("inf"))
    faults = FaultSpec.parse("corrupt=0.02,both-ways=1,seed=3")
    timing = Timing(response_timeout_ms=200, heartbeat_interval_ms=600_000, retries=3,
                    reconnect_min_ms=10, reconnect_max_ms=50)
    link = DeviceLink(LoopbackTransport(shoe, faults=faults), timing=timing, profile_name="emulated-shoe")
    with capture_logs() as logs:
        link.start()
        try:
            assert link.wait_connected(10)
            deadline = time.monotonic() + 20
            while not any(e["event"].startswith("line noisy") for e in logs):
                assert time.monotonic() < deadline, [e["event"] for e in logs]
                try:
                    link.request(StatusRequest())
                except BridgeError:  # a command the noise defeated: the link reconnects
                    link.wait_connected(10)
        finally:
            link.stop()
    said = [e for e in logs if e["event"].startswith("line noisy")]
    assert len(said) == 1 and said[0]["log_level"] == "warning" and said[0]["sent_again_for_the_line"] > 0
