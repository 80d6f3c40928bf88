"""What a device link's state reports become on the table's inbox (``controller.table.link_wiring``):
an outage is one disconnect, however many reconnect attempts fail during it."""
from __future__ import annotations

from types import SimpleNamespace

from controller.table.io import DeviceStatus
from controller.table.link_wiring import state_callback
from firmware_bridge.link import LinkState


def test_an_outage_is_put_on_the_inbox_once_whatever_its_failed_attempts_say() -> None:
    """A device away for a while: the link reports the loss, then every failed attempt to reach it
    again (each with its own cause). The table hears one disconnect per outage and every connect;
    the next loss is a new outage."""
    inbox: list[DeviceStatus] = []
    identity = SimpleNamespace(serial="SO-1", event_epoch=7)
    on_state = state_callback(inbox.append, lambda role: identity, "shoe")
    on_state(LinkState.CONNECTING, None)
    on_state(LinkState.CONNECTED, None)
    on_state(LinkState.DISCONNECTED, "read failed: /dev/x: closed at the device's end")
    for cause in ("connect failed: cannot open serial port /dev/x: no such device",
                  "connect failed: emulated-shoe: HELLO: got no reply after 4 attempt(s)",
                  "connect failed: cannot open serial port /dev/x: no such device"):
        on_state(LinkState.CONNECTING, None)
        on_state(LinkState.DISCONNECTED, cause)
    on_state(LinkState.CONNECTING, None)
    on_state(LinkState.CONNECTED, None)
    on_state(LinkState.DISCONNECTED, "write failed: /dev/x: device gone (input/output error)")
    assert inbox == [
        DeviceStatus("shoe", True, "", "SO-1", 7),
        DeviceStatus("shoe", False, "read failed: /dev/x: closed at the device's end"),
        DeviceStatus("shoe", True, "", "SO-1", 7),
        DeviceStatus("shoe", False, "write failed: /dev/x: device gone (input/output error)"),
    ]


def test_a_device_missing_from_the_start_is_one_outage_too() -> None:
    inbox: list[DeviceStatus] = []
    on_state = state_callback(inbox.append, lambda role: None, "shuffler")
    for _ in range(5):
        on_state(LinkState.CONNECTING, None)
        on_state(LinkState.DISCONNECTED, "connect failed: cannot open serial port /dev/y: no such device")
    assert inbox == [DeviceStatus("shuffler", False, "connect failed: cannot open serial port /dev/y: no such device")]
