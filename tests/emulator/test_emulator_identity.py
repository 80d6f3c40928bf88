"""The emulated devices' identity, status and refusals, as sans-I/O models a host talks to
directly (ManualClock): the handshake follows the profile, every device gets a fresh event epoch,
commands are refused before SYNC, when not supported or in the wrong state; mode and display are
remembered."""
from __future__ import annotations

import pytest

from firmware_bridge.emulator import (
    EmulatedShoe,
    EmulatedShuffler,
    EmulatedShufflerShoe,
    build_device,
)
from firmware_bridge.profiles import get_profile
from firmware_bridge.protocol import (
    Ack,
    Capability,
    Deliver,
    DeliverTarget,
    DeviceMode,
    DeviceState,
    Display,
    Door,
    GateUnlock,
    Heartbeat,
    HeartbeatReply,
    Jam,
    JamLocation,
    NakCode,
    Reset,
    ResetKind,
    SetMode,
    Shuffle,
    ShuffleDone,
    StatusRequest,
)

from .host_support import connect, DeviceWire, Host, nak_code



@pytest.mark.parametrize("name, kind, caps", [
    ("emulated-shuffler", EmulatedShuffler, Capability.CARD_COUNT | Capability.BATCH_SHUFFLER),
    ("emulated-shoe", EmulatedShoe, Capability.CARD_RECOGNITION | Capability.FACE_UP_DETECTION
     | Capability.COVER_CARD_SENSOR),
    ("emulated-usb-shuffler", EmulatedShuffler, Capability.CARD_COUNT | Capability.BATCH_SHUFFLER),
    ("acme-autoshoe-r", EmulatedShufflerShoe, Capability.CARD_RECOGNITION
     | Capability.FACE_UP_DETECTION | Capability.CARD_COUNT | Capability.AUTO_RESHUFFLE
     | Capability.BATCH_SHUFFLER),
])
def test_handshake_and_identity_follow_the_profile(clock, name, kind, caps) -> None:
    device = build_device(name, clock=clock, event_epoch=77)
    assert type(device) is kind
    connect(device, clock)
    identity = device.identity
    profile = get_profile(name)
    assert identity.capabilities == caps
    assert identity.model == profile.model and identity.deck_capacity == 8
    assert identity.protocol_version == 1 and identity.event_epoch == 77
    usb_serial = getattr(profile.transport, "serial_number", None)
    assert identity.serial == (usb_serial or f"EMU-{name}")


def test_every_new_device_gets_a_fresh_event_epoch_even_when_seeded(clock) -> None:
    epochs = {build_device("emulated-shoe", clock=clock, seed=1).identity.event_epoch
              for _ in range(5)}
    assert len(epochs) == 5


def test_commands_before_sync_are_refused(clock) -> None:
    shoe = build_device("emulated-shoe", clock=clock)
    host = Host(DeviceWire(shoe, clock))
    host.conn._synced = True  # a host that skips SYNC (the device must refuse, D6)
    assert nak_code(host.command(StatusRequest())) == NakCode.NOT_SYNCED


def test_status_heartbeat_and_not_supported(clock) -> None:
    shuffler = build_device("emulated-shuffler", clock=clock)
    host = connect(shuffler, clock)
    status = host.status()
    assert (status.state, status.mode, status.cards_in_shoe, status.pending_events) == (
        DeviceState.IDLE, DeviceMode.NORMAL, 0, 0)
    # docs/protocol.md 9.17: bit 2 "gate locked", 0 on a device without a card gate (a review: the
    # shuffler said its gate was locked, then refused GATE_LOCK for having none)
    assert not status.gate_locked
    clock.advance(2.5)
    beat = host.ok(Heartbeat(0xCAFE))
    assert isinstance(beat, HeartbeatReply) and beat.token == 0xCAFE
    assert 2500 <= beat.uptime_ms <= 2600 and beat.last_event_counter == 0
    assert nak_code(host.command(GateUnlock())) == NakCode.NOT_SUPPORTED
    assert nak_code(host.command(Deliver(DeliverTarget.SHOE))) == NakCode.NOT_SUPPORTED

    shoe = build_device("emulated-shoe", clock=clock)
    host = connect(shoe, clock)
    assert nak_code(host.command(Shuffle(8))) == NakCode.NOT_SUPPORTED
    assert nak_code(host.command(Deliver(DeliverTarget.DEALER))) == NakCode.NOT_SUPPORTED
    assert host.status().gate_locked


def test_state_refusals(clock) -> None:
    shuffler = build_device("emulated-shuffler", clock=clock, shuffle_s=10)
    host = connect(shuffler, clock)
    assert nak_code(host.command(Shuffle(9))) == NakCode.INVALID_ARGUMENT
    assert nak_code(host.command(Deliver(DeliverTarget.DEALER))) == NakCode.WRONG_STATE
    host.ok(Shuffle(8))
    assert host.status().state == DeviceState.SHUFFLING
    assert nak_code(host.command(Shuffle(8))) == NakCode.BUSY
    assert nak_code(host.command(SetMode(DeviceMode.MAINTENANCE))) == NakCode.BUSY
    host.wait_for(ShuffleDone, timeout=20)
    host.ok(SetMode(DeviceMode.MAINTENANCE))
    assert host.status().state == DeviceState.MAINTENANCE
    assert nak_code(host.command(Shuffle(8))) == NakCode.WRONG_STATE
    host.ok(SetMode(DeviceMode.NORMAL))
    shuffler.open_door()
    assert nak_code(host.command(Shuffle(8))) == NakCode.DOOR_OPEN
    shuffler.close_door()
    shuffler.jam(JamLocation.MIXER)
    assert host.status().state == DeviceState.FAULT
    assert nak_code(host.command(Shuffle(8))) == NakCode.JAM
    host.ok(Reset(ResetKind.MECHANISM))
    assert host.status().state == DeviceState.SHUFFLED  # the shuffled stack is still there
    assert [type(e) for e in host.events][-3:] == [Door, Door, Jam]


def test_set_mode_and_display_are_remembered(clock) -> None:
    shoe = build_device("emulated-shoe", clock=clock)
    host = connect(shoe, clock)
    host.ok(Display("Place your bets"))
    host.ok(SetMode(DeviceMode.DIAGNOSTIC))
    assert shoe.display_text == "Place your bets" and shoe.mode == DeviceMode.DIAGNOSTIC
    assert isinstance(host.ok(SetMode(DeviceMode.NORMAL)), Ack)


def test_a_default_serial_longer_than_identity_carries_is_cut_and_kept_apart() -> None:
    """IDENTITY's serial is text(32); ``EMU-<profile name>`` of two long profile names that begin
    alike was cut to one serial, one unit to a table that files events by serial (a review). A
    serial that fits is as it was; one that does not is cut and ends in a digest of the whole."""
    import dataclasses

    from firmware_bridge.emulator import identity_for

    shoe = get_profile("emulated-shoe")
    assert identity_for(shoe).serial == "EMU-emulated-shoe"
    long_a, long_b = (dataclasses.replace(shoe, name=f"vendorx-cardeye-3000-professional-shoe-unit-{x}") for x in "ab")
    serials = [identity_for(p).serial for p in (long_a, long_b)]
    assert serials[0] != serials[1] and all(len(s.encode()) <= 32 and s.startswith("EMU-vendorx-cardeye-") for s in serials)
    assert serials[0] == identity_for(long_a).serial  # the same profile, the same unit
