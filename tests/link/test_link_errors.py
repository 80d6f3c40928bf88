"""The link's errors reach its owner as errors (``on_error(kind, reason)``), never as state
changes, and the table's wiring (``controller.table.link_wiring``) passes on only the one the
table must act on. Before, every error came to ``on_state`` with the current state, and the table
journaled each as a reconnect: a device refusing every HEARTBEAT made one a second, and events
held behind one that never came held nothing (a device-control review)."""
from __future__ import annotations

import struct
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from controller.table.inbox import DeviceItem
from controller.table.io import DeviceStatus
from controller.table.link_wiring import link_options
from firmware_bridge.link import LinkErrorKind
from firmware_bridge.protocol import DeviceConnection, Heartbeat, MessageType, NakCode, ResendEvents
from firmware_bridge.protocol import device_connection as dc

from .fake_device import FakeDevice, card
from .rig import TIMING, Rig, connected, wait_for
from .test_link_event_recovery import emit_damaged


def table_link(rig_factory: Callable[..., Rig], device: FakeDevice) -> tuple[Rig, list[Any]]:
    """A link wired as ``shoectl run`` wires it, its inbox a list."""
    inbox: list[Any] = []
    holder: dict[str, Rig] = {}
    options = link_options(inbox.append, lambda role: holder["rig"].link.identity, "shoe")
    rig = rig_factory(device=device, **{k: v for k, v in options.items() if k != "on_state"})
    holder["rig"] = rig
    rig.link._reporter.on_state = options["on_state"]  # the table's, not the rig's recorder
    return connected(rig), inbox


def statuses(inbox: list[Any]) -> list[DeviceStatus]:
    return [i for i in inbox if isinstance(i, DeviceStatus)]


def test_only_events_held_for_good_reach_the_table() -> None:
    inbox: list[DeviceStatus] = []
    on_error = link_options(inbox.append, lambda role: None, "shoe")["on_error"]
    on_error(LinkErrorKind.DEVICE_REFUSED, "the device said: HEARTBEAT refused: FAULT: mechanism fault")
    on_error(LinkErrorKind.CONSUMER_FAILED, "on_event raised for event 7:3")
    on_error(LinkErrorKind.EVENTS_GIVEN_UP, "1 missing event(s) accepted as lost")
    assert inbox == []
    on_error(LinkErrorKind.EVENTS_STALLED, "events 3 never arrived although ...")
    assert inbox == [DeviceStatus("shoe", True, "events 3 never arrived although ...", stalled=True)]


def test_a_device_refusing_every_heartbeat_is_not_a_reconnect_a_beat(tmp_path: Path,
                                                                     rig_factory: Callable[..., Rig]) -> None:
    device = FakeDevice(tmp_path)
    device.naks[Heartbeat] = (NakCode.FAULT, "mechanism fault 0x0102")
    rig, inbox = table_link(rig_factory, device)
    wait_for(lambda: device.received["Heartbeat"] >= 4, "four heartbeats, each refused")
    assert statuses(inbox) == [DeviceStatus("shoe", True, "", "SN-TEST-1", 7)]  # the connect alone
    assert rig.link.state.value == "connected"


def test_events_held_behind_one_that_never_comes_hold_the_table_until_given_up(
        tmp_path: Path, rig_factory: Callable[..., Rig]) -> None:
    """The device lost event 3 (a device fault): 4 and 5 wait behind it. The table hears it once,
    as ``stalled``; once the link gives 3 up (what a floorperson's clear_fault has the runner
    do), 4 and 5 come."""
    device = FakeDevice(tmp_path)
    stored = [replace(card(i), counter=i + 1) for i in range(5)]
    device.conn = DeviceConnection(device.identity, next_event_counter=6, unacknowledged=stored[3:],
                                   last_acknowledged_event=2)
    rig, inbox = table_link(rig_factory, device)
    wait_for(lambda: any(s.stalled for s in statuses(inbox)), "the stall reported", deadline=30)
    time.sleep(0.3)
    stalled = [s for s in statuses(inbox) if s.stalled]
    assert len(stalled) == 1 and stalled[0].reason.startswith(
        "events 3 never arrived although the device was asked 8 times to resend them")
    assert "accept_gap" not in stalled[0].reason  # no Python name in what the floor reads
    assert not [i for i in inbox if isinstance(i, DeviceItem)]
    assert rig.link.accept_stalled_gap() == ("SN-TEST-1", 7, 3, 3)  # what a floorperson's clear_fault has done
    wait_for(lambda: len([i for i in inbox if isinstance(i, DeviceItem)]) == 2, "events 4 and 5")
    assert [i.link_event.counter for i in inbox if isinstance(i, DeviceItem)] == [4, 5]
    # the connect, the stall and its end (the events come through again, once given up): giving up
    # is the table's own act, not a status
    assert [(s.stalled, s.stall_ended) for s in statuses(inbox)] == [(False, False), (True, False), (False, True)]


class UnreadableJam:
    """A JAM as a newer firmware might send it: a location this protocol does not list (a
    malformed payload, docs/protocol.md section 11). Sent, stored and resent as the device would."""

    TYPE = MessageType.JAM

    def __init__(self, counter: int) -> None:
        self.counter = counter

    def encode_payload(self) -> bytes:
        return struct.pack("<IB", self.counter, 6)


class UndefinedEvent(UnreadableJam):
    """An event of a type this protocol version does not define (0x8a: a newer firmware's): a
    firmware review found it said "never arrived" where a JAM it cannot read is said to have come."""

    TYPE = 0x8A  # type: ignore[assignment]


@pytest.mark.parametrize("unreadable, words", [(UnreadableJam, "JAM"), (UndefinedEvent, "type 0x8a")])
def test_an_event_that_comes_but_cannot_be_read_is_said_so_when_it_holds_the_table(
        tmp_path: Path, rig_factory: Callable[..., Rig], unreadable: type, words: str) -> None:
    """Event 2 comes at every resend but does not decode; 3 and 4 wait behind it. The stall said
    event 2 "never arrived" (it came seventeen times: a device-control review); it now says it came
    and cannot be read, and giving it up lets 3 and 4 through."""
    device = FakeDevice(tmp_path)
    stored = [replace(card(0), counter=1), unreadable(2), replace(card(2), counter=3), replace(card(3), counter=4)]
    device.conn = DeviceConnection(device.identity, next_event_counter=5, unacknowledged=stored,
                                   last_acknowledged_event=0)
    rig, inbox = table_link(rig_factory, device)
    wait_for(lambda: any(s.stalled for s in statuses(inbox)), "the stall reported", deadline=30)
    reason = [s for s in statuses(inbox) if s.stalled][0].reason
    assert reason.startswith(f"event 2 ({words}) came "), reason
    assert " times but cannot be read, although the device was asked 8 times to resend it: a device fault" in reason
    assert [i.link_event.counter for i in inbox if isinstance(i, DeviceItem)] == [1]
    assert rig.link.accept_stalled_gap() == ("SN-TEST-1", 7, 2, 2)
    wait_for(lambda: len([i for i in inbox if isinstance(i, DeviceItem)]) == 3, "events 3 and 4")
    assert [i.link_event.counter for i in inbox if isinstance(i, DeviceItem)] == [1, 3, 4]


def test_a_device_refusing_resend_events_busy_for_a_moment_is_not_a_stall(
        rig_factory: Callable[..., Rig], monkeypatch: pytest.MonkeyPatch) -> None:
    """A device that answers RESEND_EVENTS with NAK BUSY for 0.4 s was asked again at once, in a
    loop, each refusal counting towards the stall: eight in 0.2 s, declared "a device fault" (the
    table held, a floorperson asked to give up events the device still held; a review of this
    stop's code). A refused request is asked again a reply timeout later and counts for nothing."""
    answer = dc._AUTO_HANDLERS[ResendEvents]
    busy_until, asked = [0.0], []

    def busy(conn: DeviceConnection, seq: int, command: ResendEvents, cache: object) -> object:
        asked.append(time.monotonic())
        if time.monotonic() < busy_until[0]:
            return conn._nak(seq, command, NakCode.BUSY, "shuffling", cache)
        return answer(conn, seq, command, cache)

    monkeypatch.setitem(dc._AUTO_HANDLERS, ResendEvents, busy)
    errors: list[tuple[LinkErrorKind, str]] = []
    rig = connected(rig_factory(timing=replace(TIMING, heartbeat_interval_ms=3_600_000),
                                on_error=lambda kind, reason: errors.append((kind, reason))))
    rig.device.emit(card(0))
    wait_for(lambda: len(rig.sink) == 1, "the first event")
    start = time.monotonic()
    busy_until[0] = start + 0.4
    emit_damaged(rig.device, card(1))
    rig.device.emit(card(2))
    wait_for(lambda: len(rig.sink) == 3, "events 2 and 3 once the device is no longer busy", deadline=10)
    assert [kind for kind, _ in errors] == []
    assert len([t for t in asked if t - start < 0.4]) <= 3  # one a reply timeout (0.2 s), not a loop


def test_giving_up_a_stall_gives_up_only_the_gap_that_stalled(rig_factory: Callable[..., Rig],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The floorperson's decision is about the gap the stall named. Once it is over (its event came
    after all) there is nothing to give up: the sender gave up whatever gap was open then, an
    ordinary one included (here: event 2 damaged on the line, the device busy for a moment), and
    the device forgot an event it still held (a review of this stop's code)."""
    answer = dc._AUTO_HANDLERS[ResendEvents]
    busy = [True]

    def maybe_busy(conn: DeviceConnection, seq: int, command: ResendEvents, cache: object) -> object:
        return conn._nak(seq, command, NakCode.BUSY, "shuffling", cache) if busy[0] else answer(conn, seq, command, cache)

    monkeypatch.setitem(dc._AUTO_HANDLERS, ResendEvents, maybe_busy)
    rig = connected(rig_factory(timing=replace(TIMING, heartbeat_interval_ms=3_600_000)))
    rig.device.emit(card(0))
    wait_for(lambda: len(rig.sink) == 1, "the first event")
    assert rig.link.accept_stalled_gap() is None  # no gap at all
    emit_damaged(rig.device, card(1))
    rig.device.emit(card(2))
    wait_for(lambda: rig.link.stats["events_buffered"] >= 1, "event 3 held behind the gap")
    assert rig.link.accept_stalled_gap() is None  # an ordinary gap, not stalled: nothing given up
    busy[0] = False
    wait_for(lambda: len(rig.sink) == 3, "event 2 resent, and 3")
    assert [e.counter for e in rig.sink.events] == [1, 2, 3]


def test_an_event_numbered_0_holds_the_table_and_says_why(tmp_path: Path, rig_factory: Callable[..., Rig]) -> None:
    """A firmware review: a device numbering its events from 0 (E1 starts them at 1) had its
    SHOE_LOADED 0 dropped with a warning in the log; it is never asked for again, and the table
    waited for it for ever, nothing said. The link reports it as events that cannot be taken, which
    holds the table in a fault naming the device's defect."""
    from firmware_bridge.protocol import encode_message

    device = FakeDevice(tmp_path)
    rig, inbox = table_link(rig_factory, device)
    with device.lock:
        device._write(encode_message(replace(card(0), counter=0), 0))
    wait_for(lambda: any(s.stalled for s in statuses(inbox)), "the event numbered 0 reported")
    reason = [s for s in statuses(inbox) if s.stalled][0].reason
    assert reason.startswith("event 0 (CARD_READ) came: event counters start at 1 (docs/protocol.md E1)"), reason
    assert not [i for i in inbox if isinstance(i, DeviceItem)]
