"""A session's ``CONNECTED`` reaches the owner before any of its events (``DeviceLink``'s
``on_state`` contract). The table learns which device answers (its serial and event epoch) from
that report; an event handed over first would be decided as coming from the device it replaced.
"""
from __future__ import annotations

import threading
import time
from pathlib import Path

from firmware_bridge.link import DeviceLink, LinkState
from firmware_bridge.protocol import StatusRequest
from firmware_bridge.transport import SerialTransport

from .fake_device import FakeDevice, card
from .rig import DEADLINE, TIMING, wait_for


def test_events_sent_during_the_handshake_wait_for_the_connected_report(tmp_path: Path) -> None:
    order: list[str] = []
    lock = threading.Lock()

    def on_state(state: LinkState, reason: str | None) -> None:
        if state is LinkState.CONNECTED:
            time.sleep(0.05)  # an owner that takes its time: the events must still come after
            with lock:
                order.append("connected")

    def on_event(event) -> None:
        with lock:
            order.append(f"event {event.counter}")

    device = FakeDevice(tmp_path)
    device.start(plugged=True)

    def status_after_events(command):  # the device emits while the host is still shaking hands
        if isinstance(command, StatusRequest) and device.executed["StatusRequest"] == 0:
            device.emit(card(0))
            device.emit(card(1))
        return None

    device.on_command = status_after_events
    for hand_off in (True, False):
        order.clear()
        device.executed.clear()
        link = DeviceLink(SerialTransport(str(device.path)), on_state=on_state, on_event=on_event,
                          auto_ack=not hand_off, timing=TIMING)
        link.start()
        try:
            wait_for(lambda: len(order) >= 3, "the connect and two events")
            with lock:
                got = list(order)
            assert got[0] == "connected", got
            first = int(got[1].split()[1])
            assert got[1:3] == [f"event {first}", f"event {first + 1}"], got
            assert link.wait_connected(DEADLINE)
        finally:
            link.stop()
        device.unplug()  # the next link meets the same device anew: the events not acknowledged
        device.plug()    # by the hand-off owner come back during its handshake too
        device.plug()
    device.stop()
