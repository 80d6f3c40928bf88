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


def test_the_first_event_after_a_stall_comes_after_an_input_that_ends_it() -> None:
    """The link reports events held behind some that never came (``stalled``); when it delivers
    that device's events again, the first comes after a ``stall_ended`` status, in the order they
    happened, once; a later event comes alone."""
    from controller.table.inbox import DeviceItem
    from controller.table.link_wiring import link_options
    from firmware_bridge.errors import LinkErrorKind

    put: list = []
    options = link_options(put.append, lambda role: None, "shoe")
    options["on_event"]("event 8")
    options["on_error"](LinkErrorKind.EVENTS_STALLED, "events 9 never arrived")
    options["on_error"](LinkErrorKind.DEVICE_REFUSED, "HEARTBEAT refused")  # not the table's to act on
    options["on_event"]("event 9")
    options["on_event"]("event 10")
    assert put == [DeviceItem("shoe", "event 8"),
                   DeviceStatus("shoe", True, "events 9 never arrived", stalled=True),
                   DeviceStatus("shoe", True, "the link delivers the events again", stall_ended=True),
                   DeviceItem("shoe", "event 9"), DeviceItem("shoe", "event 10")]
