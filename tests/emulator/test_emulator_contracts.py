"""docs/emulator.md contracts of the emulated devices that no other test held (found by mutation
testing of firmware_bridge/emulator): host loss at its due and again after a new host, STATUS's
pending events with a backlog, what a power loss clears, the shuffler's timing and refusals, the
shoe's capabilities and faults, the automatic shoe's own cover card."""
from __future__ import annotations

import pytest

from firmware_bridge.emulator import COVER, EmulatedShoe, FaultSpec, build_device
from firmware_bridge.protocol import (
    CardRead,
    Deliver,
    DeliverTarget,
    DeviceMode,
    DeviceState,
    Display,
    GateUnlock,
    NakCode,
    Reset,
    ResetKind,
    SetMode,
    Shuffle,
    ShuffleDone,
    ShuffleProgress,
    ShoeEmpty,
)

from .host_support import INF, Host, cards, connect, loaded_shoe, nak_code


# --- host loss ---------------------------------------------------------------------------------

def test_the_host_is_lost_at_the_due_next_due_gives(clock) -> None:
    """A pump sleeps until next_due and ticks then: that tick must find the host lost (no command
    for host_loss_timeout seconds), not leave the pump polling a past due."""
    shoe, host = loaded_shoe(clock, cards("AS 2S"))
    due = shoe.next_due(clock())
    assert due is not None
    shoe.tick(due - 0.001)
    assert not shoe.gate_locked
    shoe.tick(due)
    assert shoe.gate_locked and shoe.display_text == "HOST LOST"


def test_a_host_that_came_back_is_taken_for_lost_again_when_it_goes_quiet(clock) -> None:
    shoe, host = loaded_shoe(clock, cards("AS 2S 3S"))
    clock.advance(5.1)
    shoe.tick()
    assert shoe.gate_locked and shoe.host_lost
    host.ok(GateUnlock())  # the host is back
    assert not shoe.host_lost and not shoe.gate_locked
    clock.advance(5.1)
    shoe.tick()
    assert shoe.gate_locked, "a second silence of host_loss_timeout went unnoticed"
    assert shoe.draw().refused == "gate locked"


# --- STATUS and power loss ---------------------------------------------------------------------

def test_status_counts_the_events_waiting_in_the_backlog(clock) -> None:
    """STATUS: "pending events (including events still waiting in the backlog, see E8)"."""
    shoe, host = loaded_shoe(clock, cards("AS 2S"), max_unacknowledged=2)
    shoe.press()  # SHOE_LOADED + BUTTON: the store is full
    shoe.press()
    shoe.press()  # these two wait in the backlog
    assert shoe.events_blocked
    assert host.status().pending_events == 4


def test_a_power_loss_clears_the_display_and_returns_to_normal_mode(clock) -> None:
    shoe, host = loaded_shoe(clock, cards("AS 2S"))
    host.ok(Display("DRAW PLAYER"))
    host.ok(SetMode(DeviceMode.MAINTENANCE))
    shoe.power_cycle()
    assert shoe.display_text == ""
    assert shoe.mode == DeviceMode.NORMAL
    fresh = Host(host.wire)
    fresh.handshake()
    status = fresh.status()
    assert status.mode == DeviceMode.NORMAL and status.state == DeviceState.LOADED and status.gate_locked


def test_a_mechanism_reset_clears_a_device_fault(clock) -> None:
    """RESET(MECHANISM) "clears a jam or fault"."""
    shoe, host = loaded_shoe(clock, cards("AS 2S"))
    shoe.fault(0x0301, "reader fault")
    assert host.status().state == DeviceState.FAULT
    assert nak_code(host.command(GateUnlock())) == NakCode.FAULT
    host.ok(Reset(ResetKind.MECHANISM))
    assert host.status().state == DeviceState.LOADED
    host.ok(GateUnlock())
    assert shoe.draw().card is not None


def test_in_maintenance_the_state_is_maintenance_even_with_a_jam(clock) -> None:
    """SET_MODE: "In MAINTENANCE the state is MAINTENANCE" (a technician clears the jam there)."""
    shoe, host = loaded_shoe(clock, cards("AS 2S"))
    shoe.jam()
    host.ok(SetMode(DeviceMode.MAINTENANCE))
    status = host.status()
    assert status.state == DeviceState.MAINTENANCE and status.jam


def test_a_lost_host_leaves_nothing_due(clock) -> None:
    """next_due: None when nothing runs. Once the host is taken for lost, an idle shoe has nothing
    to do until a command comes: a past due would make a pump tick it every poll_s for ever."""
    shoe, host = loaded_shoe(clock, cards("AS 2S"))
    clock.advance(5.1)
    shoe.tick()
    assert shoe.host_lost
    assert shoe.next_due(clock()) is None


def test_prompt_listeners_hear_a_display_after_its_ack(clock) -> None:
    """DISPLAY "passes it to the prompt listeners (the dealer) after the ACK": what a listener
    makes the device emit at once comes after the reply on the wire."""
    from firmware_bridge.protocol import ReplyReceived

    shoe, host = loaded_shoe(clock, cards("AS 2S"))
    shoe.hooks.add_prompt_listener(lambda text: shoe.press())
    shoe.receive_data(host.conn.send(Display("PRESS")))
    frames = shoe.outgoing()
    assert len(frames) == 2
    host.conn.receive_data(frames[0])
    assert isinstance(host.conn.next_event(), ReplyReceived)


@pytest.mark.parametrize("speed", [0, 0.0, -1.0, float("nan")])
def test_a_speed_that_is_not_positive_is_refused(clock, speed) -> None:
    """speed divides every mechanism's time: 0 would fail in the middle of a shuffle."""
    with pytest.raises(ValueError, match="speed must be positive"):
        build_device("emulated-shuffler", clock=clock, speed=speed)


def test_refusals_come_in_their_documented_order(clock) -> None:
    """refusals.mechanism_refusal: "In this order: not in NORMAL mode, a jam, a device fault, the
    door open, the mechanism busy"; a jammed shoe with its door open says JAM (RESET clears it)."""
    shoe, host = loaded_shoe(clock, cards("AS 2S"))
    shoe.open_door()
    shoe.jam()
    shoe.fault(0x0301, "reader")
    assert nak_code(host.command(GateUnlock())) == NakCode.JAM
    host.ok(Reset(ResetKind.MECHANISM))
    assert nak_code(host.command(GateUnlock())) == NakCode.DOOR_OPEN
    shoe.fault(0x0301, "reader")
    assert nak_code(host.command(GateUnlock())) == NakCode.FAULT


def test_a_default_serial_of_exactly_32_bytes_is_kept_and_a_longer_one_ends_in_8_hex_digits() -> None:
    """docs/emulator.md: "one longer than 32 bytes cut and ended with `~` and 8 hex digits of a
    digest of the whole" (`EMU-vendorx-cardeye-300~62aac159`): 32 bytes fit as they are."""
    import dataclasses
    import hashlib
    import re

    from firmware_bridge.emulator import identity_for
    from firmware_bridge.profiles import get_profile

    shoe = get_profile("emulated-shoe")
    exact = dataclasses.replace(shoe, name="n" * 28)  # EMU- + 28 = 32 bytes
    assert identity_for(exact).serial == "EMU-" + "n" * 28
    longer = dataclasses.replace(shoe, name="n" * 29)
    serial = identity_for(longer).serial
    digest = hashlib.sha256(("EMU-" + "n" * 29).encode()).hexdigest()[:8]
    assert re.fullmatch(r"EMU-n{19}~[0-9a-f]{8}", serial) and serial.endswith("~" + digest), serial
    assert len(serial.encode()) == 32


def test_deck_capacity_comes_from_the_profile(clock) -> None:
    """IDENTITY's deck capacity is the profile's, and SHUFFLE of more decks is INVALID_ARGUMENT."""
    import dataclasses

    from firmware_bridge.emulator import EmulatedShuffler
    from firmware_bridge.profiles import get_profile

    base = get_profile("emulated-shuffler")
    six = dataclasses.replace(base, capabilities=dataclasses.replace(base.capabilities, deck_capacity=6))
    shuffler = EmulatedShuffler(six, clock=clock, speed=INF)
    host = Host(host_wire(shuffler, clock))
    assert host.handshake().deck_capacity == 6
    assert nak_code(host.command(Shuffle(7))) == NakCode.INVALID_ARGUMENT
    host.ok(Shuffle(6))


def host_wire(device, clock):
    from .host_support import DeviceWire

    return DeviceWire(device, clock)


def test_loading_a_shoe_that_holds_anything_raises(clock) -> None:
    from firmware_bridge.emulator import EmulatorStateError

    shoe = build_device("emulated-shoe", clock=clock)
    shoe.load(cards("AS"))
    with pytest.raises(EmulatorStateError):
        shoe.load(cards("2S"))
    assert shoe.stack == cards("AS")


def test_a_shoe_that_refuses_the_delivered_stack_faults_the_shuffler_which_keeps_it(clock) -> None:
    """DELIVER(SHOE): "If the shoe refuses the stack, the shuffler emits FAULT 0x0201 and keeps it
    in output_tray" (here the shoe was loaded by hand while the stack was on its way)."""
    from firmware_bridge.protocol import Fault

    shuffler = build_device("emulated-shuffler", clock=clock, shuffle_s=1.0, seed=5)
    shoe = build_device("emulated-shoe", clock=clock)
    shuffler.attached_shoe = shoe
    host = connect(shuffler, clock)
    host.ok(Shuffle(1))
    host.wait_for(ShuffleDone)
    stack = list(shuffler.shuffled)
    host.ok(Deliver(DeliverTarget.SHOE))
    shoe.load(cards("AS 2S"))  # meanwhile
    fault = host.wait_for(Fault)
    assert fault.code == 0x0201
    assert shuffler.output_tray == [stack] and shoe.stack == cards("AS 2S")
    assert host.status().state == DeviceState.FAULT


def test_cover_at_right_after_the_last_card_is_put_in_and_beyond_it_is_not(clock) -> None:
    """cover-at=K: "every load puts a cover card at position K": K one past the cards is the
    bottom of the stack (positions count items as loaded); a K no stack reaches puts none."""
    shoe = build_device("emulated-shoe", clock=clock, faults=FaultSpec.parse("cover-at=5"))
    shoe.load(cards("AS 2S 3S 4S"))
    assert shoe.stack == cards("AS 2S 3S 4S") + [COVER]
    shoe.unload()
    shoe.load(cards("AS 2S 3S"))
    assert shoe.stack == cards("AS 2S 3S")


@pytest.mark.parametrize("mode", [DeviceMode.MAINTENANCE, DeviceMode.DIAGNOSTIC])
def test_no_card_leaves_outside_normal_mode(clock, mode) -> None:
    """draw(): refused in "a mode other than NORMAL", the gate open or not; nothing leaves."""
    shoe, host = loaded_shoe(clock, cards("AS 2S"))
    host.ok(SetMode(mode))
    result = shoe.draw()
    assert result.item is None and result.refused == f"{mode.name.lower()} mode"
    assert shoe.stack == cards("AS 2S")
    host.ok(SetMode(DeviceMode.NORMAL))
    assert shoe.draw().card is not None


def _shoe_without(clock, **caps):
    import dataclasses

    from firmware_bridge.profiles import get_profile

    base = get_profile("emulated-shoe")
    profile = dataclasses.replace(base, capabilities=dataclasses.replace(base.capabilities, **caps))
    shoe = EmulatedShoe(profile, clock=clock)
    host = Host(host_wire(shoe, clock))
    host.handshake()
    return shoe, host


def test_without_a_cover_card_sensor_the_cover_card_leaves_silently(clock) -> None:
    from firmware_bridge.protocol import CoverCard

    shoe, host = _shoe_without(clock, cover_card_sensor=False)
    shoe.load(cards("AS") + [COVER] + cards("2S"))
    host.ok(GateUnlock())
    assert [shoe.draw().item for _ in range(3)] == [cards("AS")[0], COVER, cards("2S")[0]]
    host.pump(0.05)
    assert host.of(CoverCard) == []
    assert [r.position for r in host.of(CardRead)] == [1, 3]


def test_without_face_up_detection_the_flag_is_always_0(clock) -> None:
    shoe, host = _shoe_without(clock, face_up_detection=False)
    shoe.load(cards("AS 2S"))
    host.ok(GateUnlock())
    assert shoe.draw(face_up=True).face_up  # it did come out face up ...
    host.pump(0.05)
    assert [r.face_up for r in host.of(CardRead)] == [False]  # ... and the shoe cannot tell


def test_without_card_recognition_every_read_is_unreadable(clock) -> None:
    seen = []
    shoe, host = _shoe_without(clock, card_recognition=False)
    shoe.add_draw_listener(seen.append)
    shoe.load(cards("AS 2S"))
    host.ok(GateUnlock())
    shoe.draw()
    shoe.draw()
    host.pump(0.05)
    assert [r.readable for r in host.of(CardRead)] == [False, False]
    assert [d.misread for d in seen] == [True, True] and seen[0].card == cards("AS")[0]


def test_unloading_an_empty_shoe_sends_nothing(clock) -> None:
    shoe, host = loaded_shoe(clock, cards("AS"))
    assert shoe.unload() == cards("AS")
    assert shoe.unload() == []
    host.pump(0.05)
    assert [type(e) for e in host.events].count(ShoeEmpty) == 1


# --- the shuffler ------------------------------------------------------------------------------

def _shuffler(clock, **kwargs):
    shuffler = build_device("emulated-shuffler", clock=clock, **kwargs)
    return shuffler, connect(shuffler, clock)


def _drain(device, host):
    """The events the device has sent so far, without moving the clock."""
    host._feed(b"".join(device.outgoing()))
    return host.events


def test_progress_steps_come_exactly_at_25_50_and_75_percent_of_the_shuffle_time(clock) -> None:
    shuffler, host = _shuffler(clock, shuffle_s=8.0)
    shuffler.receive_data(host.conn.send(Shuffle(1)))
    start = clock()
    host._feed(b"".join(shuffler.outgoing()))
    for step, percent in ((2.0, 25), (4.0, 50), (6.0, 75)):
        shuffler.tick(start + step - 0.001)
        assert [e.percent for e in _drain(shuffler, host) if isinstance(e, ShuffleProgress)][-1:] != [percent]
        assert shuffler.next_due(start + step - 0.001) == pytest.approx(start + step)
        shuffler.tick(start + step)
        assert [e.percent for e in _drain(shuffler, host) if isinstance(e, ShuffleProgress)][-1] == percent
    shuffler.tick(start + 8.0)
    assert isinstance(_drain(shuffler, host)[-1], ShuffleDone)


def test_the_default_shuffle_time_is_half_the_profiles_and_a_delivery_takes_a_second(clock) -> None:
    """shuffle_s "defaults to half the profile's timing.shuffle_ms"; DELIVER takes deliver_s, 1 s."""
    from firmware_bridge.profiles import get_profile

    shuffler, host = _shuffler(clock)
    half = get_profile("emulated-shuffler").timing.shuffle_s / 2
    assert shuffler.shuffle_s == half and shuffler.deliver_s == 1.0
    shuffler.receive_data(host.conn.send(Shuffle(1)))
    start = clock()
    clock.set(start + half - 0.001)
    shuffler.tick()
    assert shuffler.state == DeviceState.SHUFFLING
    clock.set(start + half)
    shuffler.tick()
    assert shuffler.state == DeviceState.SHUFFLED
    host._feed(b"".join(shuffler.outgoing()))
    shuffler.receive_data(host.conn.send(Deliver(DeliverTarget.DEALER)))
    clock.advance(0.999)
    shuffler.tick()
    assert shuffler.state == DeviceState.DELIVERING
    clock.advance(0.001)
    shuffler.tick()
    assert shuffler.state == DeviceState.IDLE and len(shuffler.output_tray) == 1


def test_a_shuffler_without_card_counting_reports_0(clock) -> None:
    import dataclasses

    from firmware_bridge.emulator import EmulatedShuffler
    from firmware_bridge.profiles import get_profile

    base = get_profile("emulated-shuffler")
    profile = dataclasses.replace(base, capabilities=dataclasses.replace(base.capabilities, card_count_after_shuffle=False))
    shuffler = EmulatedShuffler(profile, clock=clock, speed=INF)
    host = Host(host_wire(shuffler, clock))
    host.handshake()
    host.ok(Shuffle(2))
    done = host.wait_for(ShuffleDone)
    assert (done.card_count, done.expected_count) == (0, 104)


def test_deliver_to_a_shoe_with_none_attached_is_not_supported(clock) -> None:
    shuffler, host = _shuffler(clock, speed=INF)
    host.ok(Shuffle(1))
    host.wait_for(ShuffleDone)
    assert nak_code(host.command(Deliver(DeliverTarget.SHOE))) == NakCode.NOT_SUPPORTED
    assert shuffler.shuffled is not None


@pytest.mark.parametrize("how", ["power", "reset"])
def test_a_power_loss_or_a_mechanism_reset_aborts_a_running_shuffle(clock, how) -> None:
    """"A shuffle in progress is aborted": no SHUFFLE_DONE comes later, the cards stay unshuffled."""
    shuffler, host = _shuffler(clock, shuffle_s=10.0)
    host.ok(Shuffle(1))
    clock.advance(1.0)
    if how == "power":
        shuffler.power_cycle()
        host = Host(host.wire)
        host.handshake()
    else:
        host.ok(Reset(ResetKind.MECHANISM))
    assert host.status().state == DeviceState.IDLE
    clock.advance(20.0)
    host.pump(0.1)
    assert host.of(ShuffleDone) == [] and shuffler.shuffled is None


def test_a_mechanism_reset_aborts_a_delivery_and_the_stack_stays(clock) -> None:
    shuffler, host = _shuffler(clock, shuffle_s=1.0, deliver_s=5.0)
    host.ok(Shuffle(1))
    host.wait_for(ShuffleDone)
    host.ok(Deliver(DeliverTarget.DEALER))
    host.ok(Reset(ResetKind.MECHANISM))
    assert host.status().state == DeviceState.SHUFFLED
    clock.advance(10.0)
    host.pump(0.1)
    assert shuffler.output_tray == [] and shuffler.shuffled is not None


def test_the_shuffler_jams_halfway_through_its_nth_shuffle(clock) -> None:
    """shuffler-jam-at=N: "a JAM in the mixer halfway through its N-th shuffle"."""
    from firmware_bridge.protocol import Jam, JamLocation

    shuffler, host = _shuffler(clock, shuffle_s=8.0, faults=FaultSpec.parse("shuffler-jam-at=1"))
    shuffler.receive_data(host.conn.send(Shuffle(1)))
    start = clock()
    host._feed(b"".join(shuffler.outgoing()))
    shuffler.tick(start + 3.999)
    assert not shuffler.jammed
    shuffler.tick(start + 4.0)
    assert shuffler.jammed and shuffler.jam_location == JamLocation.MIXER
    events = _drain(shuffler, host)
    assert [e.percent for e in events if isinstance(e, ShuffleProgress)] == [25]
    assert isinstance(events[-1], Jam)


def test_set_mode_and_a_second_shuffle_are_busy_while_a_shuffle_runs(clock) -> None:
    shuffler, host = _shuffler(clock, shuffle_s=10.0)
    host.ok(Shuffle(1))
    assert nak_code(host.command(SetMode(DeviceMode.MAINTENANCE))) == NakCode.BUSY
    assert nak_code(host.command(Shuffle(1))) == NakCode.BUSY
    assert nak_code(host.command(Deliver(DeliverTarget.DEALER))) == NakCode.BUSY


def test_deliver_to_the_dealer_hands_the_stack_to_the_dealer(clock) -> None:
    got = []
    shuffler, host = _shuffler(clock, speed=INF, seed=2)
    shuffler.deliver_to_dealer = got.append
    host.ok(Shuffle(1))
    host.wait_for(ShuffleDone)
    stack = list(shuffler.shuffled)
    host.ok(Deliver(DeliverTarget.DEALER))
    host.pump(0.05)
    assert got == [stack] and shuffler.output_tray == []


# --- the automatic shoe ------------------------------------------------------------------------

def test_an_automatic_shoe_places_its_cover_card_16_cards_above_the_bottom_of_a_long_enough_stack(clock) -> None:
    """docs/emulator.md: "one AUTO_COVER_FROM_BOTTOM (16) cards above the bottom" (681a.5(d) asks
    at least 10), only in a stack without a cover card and longer than that."""
    device = build_device("emulated-autoshoe", clock=clock)
    deck = [c for c in cards("AS 2S 3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AH 2H 3H 4H")]
    device.load(deck)  # 17 cards
    assert device.stack.index(COVER) == 1 and device.stack.count(COVER) == 1
    assert device.stack[-16:] == deck[-16:]
    device.unload()
    device.load(deck[:16])  # too short to hold it
    assert COVER not in device.stack
    device.unload()
    device.load(deck[:3] + [COVER] + deck[3:])  # a stack with its cover card keeps it alone
    assert device.stack.count(COVER) == 1 and device.stack.index(COVER) == 3


def test_reset_at_cuts_the_power_when_a_flushed_backlog_passes_n(clock) -> None:
    """reset-at=N: "power loss at the end of the step in which event counter N was emitted", also
    when N goes out within a backlog the host's acknowledgement lets through (E8), not as its last."""
    from firmware_bridge.protocol import EventAck

    shoe, host = loaded_shoe(clock, cards("AS 2S"), max_unacknowledged=2, faults=FaultSpec.parse("reset-at=3"))
    for _ in range(3):
        shoe.press()  # event 2 is sent; 3 and 4 wait in the backlog
    host.pump(0.05)
    assert shoe.boots == 1 and shoe.events_blocked
    host.ok(EventAck(2))  # the backlog goes out: events 3 and 4
    shoe.tick()
    assert shoe.boots == 2
