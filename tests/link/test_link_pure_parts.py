"""The link's pure parts, no device and no threads: ``EventSequencer`` (order, duplicates, gaps,
epoch changes, overflow), ``Backoff``, ``RetransmitTimer`` and a ``DeviceLink`` built from a device profile."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from firmware_bridge.link import Backoff, DeviceLink, EventSequencer, LinkState
from firmware_bridge.link.rto import MIN_RTO, RetransmitTimer
from firmware_bridge.link.sequencer import BUFFERED, DUPLICATE, OVERFLOW, QUEUED
from firmware_bridge.profiles import parse_profile
from firmware_bridge.transport import SerialTransport

from .fake_device import card


def test_sequencer_orders_and_deduplicates() -> None:
    seq = EventSequencer(profile_name="d")
    with pytest.raises(RuntimeError):
        seq.offer(card(0))
    seq.set_epoch(1)
    ev = [replace(card(i), counter=i + 1) for i in range(6)]
    assert seq.offer(ev[0]) == QUEUED
    assert seq.offer(ev[2]) == BUFFERED
    assert seq.gap and seq.missing() == [(2, 2)]
    assert seq.offer(ev[2]) == DUPLICATE
    assert seq.offer(ev[1]) == QUEUED  # releases 3
    assert not seq.gap and seq.queued == 3
    assert seq.offer(ev[0]) == DUPLICATE
    seq.note_highest(6)
    assert seq.missing() == [(4, 6)]
    delivered = []
    while (head := seq.peek()) is not None:
        delivered.append(head.counter)
        seq.commit(head)
    assert delivered == [1, 2, 3] and seq.last_delivered == (1, 3)
    assert seq.delivered_in_epoch() == 3
    assert seq.offer(ev[4]) == BUFFERED
    assert seq.accept_gap() == 2  # 4 and 6 given up; 5 delivered
    assert [seq.peek().counter] == [5]  # type: ignore[union-attr]


def test_sequencer_epoch_change_and_overflow() -> None:
    seq = EventSequencer((1, 10), max_buffered=2)
    assert seq.epoch == 1 and seq.queued == 10
    r = replace
    assert seq.offer(r(card(0), counter=5)) == DUPLICATE
    assert seq.offer(r(card(0), counter=11)) == QUEUED
    assert seq.offer(r(card(0), counter=13)) == BUFFERED
    assert not seq.full  # events behind a gap never fill it: only a resend can close the gap
    assert seq.offer(r(card(0), counter=14)) == OVERFLOW  # too far past the gap
    assert seq.set_epoch(2) == [(12, 12), (14, 14)]  # lost with the old epoch
    assert seq.peek() is not None and seq.peek().epoch == 1  # type: ignore[union-attr]
    seq.commit(seq.peek())  # type: ignore[arg-type]
    assert seq.delivered_in_epoch() == 0  # the last delivered belongs to the old epoch
    assert seq.offer(r(card(0), counter=1)) == QUEUED
    with pytest.raises(ValueError):
        EventSequencer((1, -1))


def test_backoff() -> None:
    b = Backoff(0.1, 0.5)
    assert [b.next() for _ in range(5)] == [0.1, 0.2, 0.4, 0.5, 0.5]
    b.reset()
    assert b.next() == 0.1
    with pytest.raises(ValueError):
        Backoff(1.0, 0.5)


def test_link_from_profile(tmp_path: Path) -> None:
    profile = parse_profile({"device": {"vendor": "v", "model": "m", "kind": "shoe",
                                        "protocol_version": 1},
                             "transport": {"type": "serial"},
                             "capabilities": {"card_recognition": True, "cover_card_sensor": True},
                             "timing": {"response_timeout_ms": 300, "retries": 2}},
                            "test.toml", "table-7-shoe")
    link = DeviceLink.from_profile(profile, str(tmp_path / "tty"))
    assert link.name == "table-7-shoe"
    assert link.reply_timeout == 0.3 and link.attempts == 3
    assert isinstance(link.transport, SerialTransport)
    assert link.state is LinkState.DISCONNECTED
    link.stop()
    assert link.state is LinkState.CLOSED


def test_the_retransmit_timer_learns_the_answer_time_between_its_floor_and_the_reply_timeout() -> None:
    """Before any answer was timed a command waits the profile's whole reply timeout; then
    srtt + 4 rttvar (RFC 6298), never below the floor nor above the reply timeout; each further
    attempt waits twice the last, up to the reply timeout."""
    timer = RetransmitTimer(0.25)
    assert timer.first() == 0.25
    timer.sample(0.001)
    assert timer.first() == MIN_RTO  # 1 ms + 4 x 0.5 ms is below the floor
    for _ in range(50):
        timer.sample(0.030)  # a slower line: the estimate follows it
    assert 0.030 <= timer.first() < 0.035
    for rtt in (0.010, 0.090) * 20:  # an answer time that varies: the wait covers its spread
        timer.sample(rtt)
    assert 0.09 < timer.first() <= 0.25
    timer.sample(5.0)
    assert timer.first() == 0.25  # never longer than the profile's reply timeout
    assert [timer.after(w) for w in (0.02, 0.1, 0.2)] == [0.04, 0.2, 0.25]
    short = RetransmitTimer(0.01)  # a reply timeout below the floor is kept
    short.sample(0.001)
    assert short.first() == 0.01
    with pytest.raises(ValueError):
        RetransmitTimer(0)


def test_a_usb_unit_is_picked_by_its_usb_serial_not_held_to_the_text_its_firmware_says() -> None:
    """An integrator review: a USB profile's serial number (the unit's iSerialNumber string, up to
    126 characters) was also required of the serial the firmware says in IDENTITY (at most 32
    bytes, written as the firmware writes it): such a unit was found on the bus and refused at the
    handshake for ever. The transport picks the unit by its USB string; IDENTITY's is the firmware's."""
    from firmware_bridge.emulator.factory import build_device
    from firmware_bridge.emulator.usb_backend import EmulatedUsbBackend
    from firmware_bridge.profiles import get_profile

    profile = get_profile("emulated-usb-shuffler")
    device = build_device(profile, seed=1, speed=float("inf"), serial="SN000123")  # the firmware's own text
    link = DeviceLink.from_profile(profile, usb_backend=EmulatedUsbBackend(device), on_event=lambda e: None)
    link.start()
    try:
        assert link.wait_connected(10) and link.identity.serial == "SN000123"
    finally:
        link.stop()


def test_another_unit_under_the_same_epoch_number_has_delivered_nothing_yet() -> None:
    """docs/link.md: another unit "has counters of its own, even under the same epoch number", and
    an event is acknowledged only after it was delivered and stored: the events the first unit
    delivered are no acknowledgement of the second's (which would then forget card reads the table
    never stored)."""
    seq = EventSequencer(profile_name="shoe", serial="UNIT-A")
    seq.set_epoch(1, "UNIT-A")
    for c in range(1, 6):
        seq.offer(replace(card(c), counter=c))
        seq.commit(seq.peek())  # type: ignore[arg-type]
    assert seq.delivered_in_epoch() == 5
    seq.set_epoch(1, "UNIT-B")  # the same epoch number, another unit's counters
    for c in range(1, 4):
        assert seq.offer(replace(card(c), counter=c)) == QUEUED  # not duplicates of unit A's
    assert seq.delivered_in_epoch() == 0
    seq.commit(seq.peek())  # type: ignore[arg-type]
    assert seq.delivered_in_epoch() == 1


def test_a_gap_given_up_past_the_highest_known_counter_gives_up_only_what_is_missing() -> None:
    """``accept_gap(up_to)`` gives up missing counters (docs/protocol.md E7), not counters the
    device has not reached yet: the events after them are delivered when they come."""
    seq = EventSequencer(profile_name="shoe")
    seq.set_epoch(1)
    for c in (1, 2, 4):  # 3 missing; nothing known past 4
        seq.offer(replace(card(c), counter=c))
    assert seq.accept_gap(10) == 1
    assert seq.offer(replace(card(5), counter=5)) == QUEUED
    assert seq.offer(replace(card(6), counter=6)) == QUEUED
    delivered = []
    while (head := seq.peek()) is not None:
        delivered.append(head.counter)
        seq.commit(head)
    assert delivered == [1, 2, 4, 5, 6]


def test_events_held_behind_a_gap_at_an_epoch_change_are_delivered_and_the_rest_reported_lost() -> None:
    """docs/link.md section 6, epoch change: "events of the old epoch already received are still
    delivered first; old-epoch counters that never arrived are lost and reported". Events 3 and 4
    arrived behind missing 2: they are delivered, 2 reported lost (they were dropped, in neither
    the deliveries nor the loss)."""
    seq = EventSequencer(profile_name="shoe", serial="UNIT-A")
    seq.set_epoch(7, "UNIT-A")
    for counter in (1, 3, 4):
        seq.offer(replace(card(counter), counter=counter))
    assert seq.set_epoch(8, "UNIT-A") == [(2, 2)]  # the device's counter restarted
    delivered = []
    while (event := seq.peek()) is not None:
        delivered.append((event.epoch, event.counter))
        seq.commit(event)
    assert delivered == [(7, 1), (7, 3), (7, 4)]
    assert seq.offer(replace(card(1), counter=1)) == QUEUED and seq.delivered_in_epoch() == 0


def test_a_replaced_units_missing_events_are_said_to_be_held_by_it_not_lost_with_an_epoch() -> None:
    """When another unit answers, the events the old one never sent are not lost with an epoch: it
    still holds them, unacknowledged, and resends them should it answer again (docs/link.md section
    6); the connect's report says so, and says lost only of a counter that restarted."""
    import threading

    from firmware_bridge.link.reporting import StateReporter

    reporter = StateReporter(threading.Condition(), None, "shoe")
    swapped = reporter.epoch_changed((7, 7), ("UNIT-A", "UNIT-B"), [(2, 2)])
    assert swapped[-1] == ("events 2 of event epoch 7 never arrived from UNIT-A, which still holds them: lost to "
                           "this table unless it answers again")
    restarted = reporter.epoch_changed((7, 8), None, [(2, 2)])
    assert restarted[-1] == "events 2 of event epoch 7 never arrived and are lost with it"
