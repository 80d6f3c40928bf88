"""The emulated devices as sans-I/O models: a host (HostConnection) talks to them directly, time
comes from a ManualClock, nothing sleeps."""
from __future__ import annotations

import random

import pytest

from firmware_bridge.emulator import (
    COVER,
    DeviceCard,
    EmulatedShoe,
    EmulatedShuffler,
    EmulatedShufflerShoe,
    FaultSpec,
    ManualClock,
    EmulatedTable,
    build_device,
    cut_stack,
    insert_second_cover,
    parse_speed,
    standard_stack,
)
from firmware_bridge.emulator.cards import parse_device_card
from firmware_bridge.profiles import get_profile
from firmware_bridge.protocol import (
    CARD_UNREADABLE,
    Ack,
    ButtonId,
    ButtonPress,
    Capability,
    CardRead,
    CoverCard,
    Deliver,
    DeliverTarget,
    DeviceMode,
    DeviceState,
    Display,
    Door,
    GateLock,
    GateUnlock,
    Heartbeat,
    HeartbeatReply,
    HostConnection,
    Jam,
    JamLocation,
    Nak,
    NakCode,
    Reset,
    ResetKind,
    SetMode,
    ShoeEmpty,
    ShoeLoaded,
    Shuffle,
    ShuffleDone,
    ShuffleProgress,
    StatusRequest,
)

from .test_emulator_support import DeviceWire, Host

INF = float("inf")


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


def connect(device, clock: ManualClock, ticker=None) -> Host:
    host = Host(DeviceWire(device, clock, ticker=ticker))
    host.handshake()
    return host


def nak_code(reply) -> NakCode | None:
    return reply.code if isinstance(reply, Nak) else None


def cards(text: str) -> list[DeviceCard]:
    return [parse_device_card(t) for t in text.split()]


def loaded_shoe(clock: ManualClock, stack, **kwargs) -> tuple[EmulatedShoe, Host]:
    shoe = build_device("emulated-shoe", clock=clock, **kwargs)
    host = connect(shoe, clock)
    shoe.load(stack)
    host.ok(GateUnlock())
    return shoe, host


# --- identity, status, refusals ----------------------------------------------------------------


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


# --- shuffler --------------------------------------------------------------------------------


def test_shuffle_reports_progress_then_the_count_after_the_shuffle_time(clock) -> None:
    shuffler = build_device("emulated-shuffler", clock=clock, shuffle_s=10, speed=2)
    host = connect(shuffler, clock)
    start = clock()
    host.ok(Shuffle(8))
    done = host.wait_for(ShuffleDone, timeout=10)
    elapsed = clock() - start
    assert 5.0 <= elapsed <= 5.2  # 10 s at speed 2
    assert [e.percent for e in host.of(ShuffleProgress)] == [25, 50, 75]
    assert (done.card_count, done.expected_count) == (416, 416)
    assert host.status().state == DeviceState.SHUFFLED
    assert sorted(shuffler.shuffled) == sorted(standard_stack(8))
    assert shuffler.shuffled != standard_stack(8)


@pytest.mark.parametrize("spec, count", [("missing-card=1", 311), ("missing-card=3", 309),
                                         ("extra-card=2", 314)])
def test_missing_and_extra_cards_make_the_count_wrong(clock, spec, count) -> None:
    shuffler = build_device("emulated-shuffler", clock=clock, speed=INF,
                            faults=FaultSpec.parse(spec), seed=5)
    host = connect(shuffler, clock)
    host.ok(Shuffle(6))
    done = host.wait_for(ShuffleDone)
    assert (done.card_count, done.expected_count) == (count, 312)
    assert len(shuffler.shuffled) == count


def test_a_retransmitted_shuffle_shuffles_once(clock) -> None:
    shuffler = build_device("emulated-shuffler", clock=clock, speed=INF)
    conn = HostConnection()
    host = Host(DeviceWire(shuffler, clock), conn=conn)
    host.handshake()
    data = conn.send(Shuffle(8))
    shuffler.receive_data(data)              # executed; suppose its ACK is lost
    shuffler.outgoing()
    shuffler.receive_data(conn.retransmit_bytes())
    host._feed(b"".join(shuffler.outgoing()))      # the replayed ACK
    shuffler.tick()
    host._feed(b"".join(shuffler.outgoing()))
    assert len(host.of(ShuffleDone)) == 1 and shuffler.shuffles == 1


def test_seeded_shuffles_are_reproducible_and_unseeded_use_the_os_csprng(clock) -> None:
    def stack(seed):
        s = build_device("emulated-shuffler", clock=clock, seed=seed, speed=INF)
        return s.shuffled_stack(8), s.rng

    a, rng = stack(42)
    b, _ = stack(42)
    c, _ = stack(43)
    assert a == b and a != c and type(rng) is random.Random
    d, rng = stack(None)
    assert isinstance(rng, random.SystemRandom) and d != a


def test_deliver_to_the_attached_shoe_loads_it(clock) -> None:
    table = EmulatedTable(clock=clock, speed=INF, seed=3)
    shuffler_host = connect(table.shuffler, clock, ticker=table.tick)
    shoe_host = connect(table.shoe, clock, ticker=table.tick)
    shuffler_host.ok(Shuffle(8))
    shuffler_host.wait_for(ShuffleDone)
    stack = list(table.shuffler.shuffled)
    shuffler_host.ok(Deliver(DeliverTarget.SHOE))
    loaded = shoe_host.wait_for(ShoeLoaded)
    assert loaded.card_count == 416 and table.shoe.stack == stack
    assert shuffler_host.status().state == DeviceState.IDLE
    assert shoe_host.status().state == DeviceState.LOADED
    shuffler_host.ok(Shuffle(8))
    shuffler_host.wait_for(ShuffleDone, predicate=lambda e: e.counter > 4)
    assert nak_code(shuffler_host.command(Deliver(DeliverTarget.SHOE))) == NakCode.WRONG_STATE


def test_shuffler_shoe_delivers_to_itself(clock) -> None:
    device = build_device("acme-autoshoe-r", clock=clock, speed=INF, seed=1)
    host = connect(device, clock)
    host.ok(Shuffle(8))
    host.wait_for(ShuffleDone)
    host.ok(Deliver(DeliverTarget.SHOE))
    assert host.wait_for(ShoeLoaded).card_count == 416
    assert host.status().state == DeviceState.LOADED and host.status().cards_in_shoe == 416
    host.ok(GateUnlock())
    first = device.stack[0]
    device.draw()
    read = host.wait_for(CardRead)
    assert read.position == 1 and DeviceCard(read.rank, read.suit) == first


# --- shoe ------------------------------------------------------------------------------------


def test_shoe_deals_in_order_with_the_cover_card_and_reports_empty(clock) -> None:
    stack = cards("AS 2H 3D 4C 5S 6H") + [COVER] + cards("7D 8C")
    shoe, host = loaded_shoe(clock, stack)
    assert host.wait_for(ShoeLoaded).card_count == 8
    assert host.status().cards_in_shoe == 8
    results = [shoe.draw() for _ in range(len(stack))]
    assert [r.item for r in results] == stack
    host.pump(0.05)
    kinds = [type(e).__name__ for e in host.events]
    assert kinds == ["ShoeLoaded"] + ["CardRead"] * 6 + ["CoverCard"] + ["CardRead"] * 2 + [
        "ShoeEmpty"]
    reads = host.of(CardRead)
    assert [DeviceCard(r.rank, r.suit) for r in reads] == [c for c in stack if c is not COVER]
    assert [r.position for r in reads] == [1, 2, 3, 4, 5, 6, 8, 9]
    assert host.of(CoverCard)[0].position == 7
    assert all(not r.face_up for r in reads)
    assert [e.counter for e in host.events] == list(range(1, 12))
    assert shoe.draw().refused == "shoe empty"
    assert host.status().state == DeviceState.IDLE


def test_draws_are_refused_while_the_gate_is_locked(clock) -> None:
    shoe, host = loaded_shoe(clock, cards("AS 2S 3S"))
    host.ok(GateLock())
    result = shoe.draw()
    assert result.item is None and result.refused == "gate locked"
    host.ok(GateUnlock())
    assert shoe.draw().card == parse_device_card("AS")


def test_timestamps_are_the_device_clock(clock) -> None:
    shoe, host = loaded_shoe(clock, cards("AS 2S"))
    clock.advance(1.0)
    shoe.draw()
    read = host.wait_for(CardRead)
    assert read.timestamp_ms == shoe.uptime_ms() - 10  # the host's read advanced 10 ms since


@pytest.mark.parametrize("spec", ["face-up-at=3,misread-at=5", "face-up-at=3,misread-at=5,seed=1"])
def test_face_up_and_misread_faults(clock, spec) -> None:
    stack = cards("AS 2S 3S 4S 5S 6S")
    seen = []
    shoe, host = loaded_shoe(clock, stack, faults=FaultSpec.parse(spec))
    shoe.add_draw_listener(seen.append)
    for _ in stack:
        shoe.draw()
    host.pump(0.05)
    reads = host.of(CardRead)
    assert [r.face_up for r in reads] == [False, False, True, False, False, False]
    assert (reads[4].rank, reads[4].suit) == (CARD_UNREADABLE, CARD_UNREADABLE)
    assert not reads[4].readable and all(r.readable for i, r in enumerate(reads) if i != 4)
    assert [d.misread for d in seen] == [False] * 4 + [True, False]
    assert seen[4].card == parse_device_card("5S")  # what really came out


def test_cover_at_fault_puts_a_cover_card_in(clock) -> None:
    shoe, host = loaded_shoe(clock, cards("AS 2S 3S 4S"), faults=FaultSpec.parse("cover-at=3"))
    assert shoe.stack == cards("AS 2S") + [COVER] + cards("3S 4S")
    assert host.wait_for(ShoeLoaded).card_count == 4


def test_jam_at_blocks_the_shoe_until_a_mechanism_reset(clock) -> None:
    shoe, host = loaded_shoe(clock, cards("AS 2S 3S 4S"), faults=FaultSpec.parse("jam-at=2"))
    shoe.draw()
    shoe.draw()
    jam = host.wait_for(Jam)
    assert jam.location == JamLocation.SHOE_EXIT
    assert shoe.draw().refused == "jam"
    status = host.status()
    assert status.jam and status.state == DeviceState.FAULT
    assert nak_code(host.command(GateUnlock())) == NakCode.JAM
    host.ok(Reset(ResetKind.MECHANISM))
    status = host.status()
    assert not status.jam and status.gate_locked and status.state == DeviceState.LOADED
    host.ok(GateUnlock())
    assert shoe.draw().card == parse_device_card("3S")


def test_door_open_at_and_the_dealer_closing_it(clock) -> None:
    table = EmulatedTable(clock=clock, faults=FaultSpec.parse("door-open-at=1"))
    host = connect(table.shoe, clock)
    table.shoe.load(cards("AS 2S 3S"))
    host.ok(GateUnlock())
    host.ok(Display("DRAW PLAYER"))
    assert host.wait_for(Door).open
    assert host.status().door_open
    host.ok(Display("DRAW PLAYER"))
    host.pump(0.05)
    assert table.dealer.log[-1].ok is False and "door open" in table.dealer.log[-1].detail
    assert nak_code(host.command(GateUnlock())) == NakCode.DOOR_OPEN
    host.ok(Display("CLOSE DOOR"))
    assert not host.wait_for(Door, predicate=lambda d: not d.open).open
    host.ok(Display("DRAW PLAYER"))
    host.pump(0.05)
    assert [(r.rank, r.position) for r in host.of(CardRead)] == [(1, 1), (2, 2)]


def test_event_store_full_refuses_to_deal_until_acknowledged(clock) -> None:
    shoe, host = loaded_shoe(clock, cards("AS 2S 3S 4S"), max_unacknowledged=3)
    shoe.draw()
    shoe.draw()  # SHOE_LOADED + 2 reads: full
    assert shoe.draw().refused == "event store full"
    assert host.status().pending_events == 3
    host.ok(GateLock())
    assert nak_code(host.command(GateUnlock())) == NakCode.BUSY
    host.pump(0.05)
    host.ack()
    host.ok(GateUnlock())
    assert shoe.draw().card == parse_device_card("3S")


def test_a_lost_host_locks_the_gate(clock) -> None:
    shoe, host = loaded_shoe(clock, cards("AS 2S 3S"))
    clock.advance(4.9)
    shoe.tick()
    assert not shoe.gate_locked
    clock.advance(0.2)
    shoe.tick()
    assert shoe.gate_locked and shoe.display_text == "HOST LOST"
    assert shoe.draw().refused == "gate locked"
    host.ok(GateUnlock())
    assert shoe.draw().card is not None


# --- power loss ------------------------------------------------------------------------------


def test_events_survive_a_reboot_and_are_resent_until_acknowledged(clock) -> None:
    shoe, host = loaded_shoe(clock, cards("AS 2S 3S 4S"), event_epoch=9)
    shoe.draw()
    shoe.draw()
    host.pump(0.05)
    assert len(host.events) == 3  # SHOE_LOADED and two reads, none acknowledged
    host.ok(Reset(ResetKind.REBOOT))
    assert shoe.boots == 2
    assert nak_code(host.command(StatusRequest())) == NakCode.NOT_SYNCED
    identity = host.handshake()
    assert identity.event_epoch == 9
    status = host.status()
    assert status.pending_events == 3 and status.gate_locked and status.cards_in_shoe == 2
    host.resend()
    host.pump(0.05)
    assert [e.counter for e in host.duplicates] == [1, 2, 3]  # nothing new, nothing lost
    host.ack()
    host.ok(GateUnlock())
    shoe.draw()
    read = host.wait_for(CardRead, predicate=lambda e: e.counter == 4)
    assert read.position == 3
    host.ack()
    before = len(host.duplicates)
    host.resend()
    host.pump(0.05)
    assert len(host.duplicates) == before and host.status().pending_events == 0


def test_reset_at_fault_loses_power_after_the_nth_event(clock) -> None:
    shoe = build_device("emulated-shoe", clock=clock, faults=FaultSpec.parse("reset-at=2"))
    host = connect(shoe, clock)
    shoe.load(cards("AS 2S 3S"))
    host.ok(GateUnlock())
    shoe.draw()  # event 2: power goes at the end of this step
    shoe.tick()
    assert shoe.boots == 2 and shoe.gate_locked
    host.pump(0.05)  # the old session got both events but never acknowledged them
    assert [type(e) for e in host.events] == [ShoeLoaded, CardRead]
    fresh = Host(host.wire)  # a new host: its own sequencer, the epoch from IDENTITY
    fresh.handshake()
    assert fresh.status().pending_events == 2
    fresh.resend()
    fresh.pump(0.05)
    assert [type(e) for e in fresh.events] == [ShoeLoaded, CardRead]
    assert all(e in fresh.retransmitted for e in fresh.events)
    fresh.ack()
    fresh.ok(GateUnlock())
    shoe.draw()
    assert fresh.wait_for(CardRead, predicate=lambda e: e.counter == 3).position == 2
    assert shoe.boots == 2  # once only


# --- dealer ----------------------------------------------------------------------------------


def test_the_dealer_cuts_covers_loads_burns_and_draws_on_prompts(clock, tmp_path) -> None:
    log = tmp_path / "dealt.log"
    table = EmulatedTable(clock=clock, speed=INF, seed=11, dealt_log=log)
    shuffler = connect(table.shuffler, clock, ticker=table.tick)
    shoe = connect(table.shoe, clock, ticker=table.tick)
    shuffler.ok(Shuffle(8))
    shuffler.wait_for(ShuffleDone)
    original = list(table.shuffler.shuffled)
    shuffler.ok(Deliver(DeliverTarget.DEALER))
    shuffler.pump(0.05)
    assert table.dealer.hand == original
    expected = insert_second_cover(cut_stack(original, 37), 14)
    for prompt in ("CUT 37", "COVER 14", "LOAD"):
        shoe.ok(Display(prompt))
    assert shoe.wait_for(ShoeLoaded).card_count == 416
    assert table.shoe.stack == expected
    assert expected[-1] is COVER and expected[416 - 14] is COVER
    shoe.ok(GateUnlock())
    for prompt in ("BURN", "DRAW PLAYER", "DRAW BANKER", "DRAW PLAYER", "DRAW BANKER", "REVEAL",
                   "PLACE YOUR BETS"):
        shoe.ok(Display(prompt))
    shoe.pump(0.05)
    reads = shoe.of(CardRead)
    assert [DeviceCard(r.rank, r.suit) for r in reads] == original[37:42]
    assert [r.position for r in reads] == [1, 2, 3, 4, 5]
    assert shoe.of(ButtonPress)[0].button == ButtonId.REVEAL
    assert table.dealer.discards == [original[37]]
    assert [h for h, _ in table.dealer.layout] == ["PLAYER", "BANKER", "PLAYER", "BANKER"]
    assert [a.verb for a in table.dealer.log][-1] == "PLACE" and table.dealer.log[-1].ok
    table.close()
    assert log.read_text().splitlines() == [f"{i} {c} down" for i, c in
                                            enumerate(original[37:42], start=1)]


def test_the_dealer_sets_the_cover_card_aside_and_draws_on(clock) -> None:
    table = EmulatedTable(clock=clock)
    host = connect(table.shoe, clock)
    table.dealer.receive_stack(cards("AS 2S 3S 4S 5S 6S"))
    for prompt in ("cut 2", "cover 3", "load"):
        host.ok(Display(prompt))
    host.ok(GateUnlock())
    for _ in range(6):
        host.ok(Display("DRAW"))
    host.ok(Display("DRAW"))
    host.pump(0.05)
    kinds = [type(e).__name__ for e in host.events]
    # cut 2: 3S 4S 5S 6S AS 2S COVER; cover 3: 3S 4S 5S COVER 6S AS 2S COVER
    assert kinds == ["ShoeLoaded", "CardRead", "CardRead", "CardRead", "CoverCard", "CardRead",
                     "CardRead", "CardRead", "CoverCard", "ShoeEmpty"]
    assert [DeviceCard(r.rank, r.suit) for r in host.of(CardRead)] == cards("3S 4S 5S 6S AS 2S")
    assert table.dealer.log[-1].ok is False and "shoe empty" in table.dealer.log[-1].detail


@pytest.mark.reg("681a.5(a)")
def test_without_a_shuffler_the_dealer_opens_a_preshuffled_pack_on_the_shuffle_prompt(clock) -> None:
    """681a.5(a): "unless the cards were preshuffled ...": a table without a shuffler serves the shoe
    alone; on ``SHUFFLE BY HAND`` the dealer opens a new pack of preshuffled decks (a whole set,
    seeded), which the next prompts cut and load. Beside a shuffler there is no pack: refused."""
    table = EmulatedTable(clock=clock, shuffler_profile=None, decks=2, seed=5)
    assert table.devices == (table.shoe,) and table.shuffler is None
    host = connect(table.shoe, clock)
    for prompt in ("SHUFFLE BY HAND", "cut 30", "cover 14", "load"):
        host.ok(Display(prompt))
    host.pump(0.05)
    assert [a.ok for a in table.dealer.log] == [True] * 4
    assert host.of(ShoeLoaded)[0].card_count == 104
    again = EmulatedTable(clock=clock, shuffler_profile=None, decks=2, seed=5).dealer
    again.perform("SHUFFLE BY HAND")
    pack = again.hand
    assert sorted(pack, key=str) == sorted(cards(" ".join(f"{r}{s}" for r in "A 2 3 4 5 6 7 8 9 10 J Q K".split()
                                                          for s in "CDHS")) * 2, key=str)
    assert pack != sorted(pack, key=str)
    beside_a_shuffler = EmulatedTable(clock=clock).dealer.perform("SHUFFLE BY HAND")
    assert not beside_a_shuffler.ok and "no preshuffled pack" in beside_a_shuffler.detail


@pytest.mark.reg("681a.5(g)(1)")
def test_without_a_shuffler_the_dealer_washes_and_shuffles_the_inspected_cards_by_hand(clock) -> None:
    """681a.5(g): at an idle table "the cards shall be removed from the dealing shoe and the discard
    rack and spread out on the table ..."; then "(1) Mixed thoroughly by a washing of the cards,
    stacked, then shuffled and cut ... if there is no automated shuffling device in use". The shoe
    prompts ``WASH AND SHUFFLE``; the emulated dealer, who once ignored it (and then refused the cut
    for want of cards in hand), washes the cards of the rack and the layout into a stack in hand,
    which is cut and loaded: every card of the shoe, in a new order. Beside a shuffler: refused."""
    table = EmulatedTable(clock=clock, shuffler_profile=None, decks=2, seed=5)
    host = connect(table.shoe, clock)
    for prompt in ("SHUFFLE BY HAND", "cut 30", "cover 14", "load"):
        host.ok(Display(prompt))
    host.pump(0.05)
    host.ok(GateUnlock())
    for prompt in ("draw player", "draw banker", "burn 3", "unload"):
        host.ok(Display(prompt))
    host.pump(0.05)
    assert [a.ok for a in table.dealer.log] == [True] * 8, table.dealer.log
    for prompt in ("WASH AND SHUFFLE", "cut 40", "cover 14", "load"):
        host.ok(Display(prompt))
    host.pump(0.05)
    assert [a.ok for a in table.dealer.log[8:]] == [True] * 4, table.dealer.log
    assert "washed" in table.dealer.log[8].detail and "104" in table.dealer.log[8].detail
    assert host.of(ShoeLoaded)[-1].card_count == 104
    beside_a_shuffler = EmulatedTable(clock=clock).dealer.perform("WASH AND SHUFFLE")
    assert not beside_a_shuffler.ok and "shuffler" in beside_a_shuffler.detail


def test_the_dealer_acts_only_on_prompts_after_its_delay(clock) -> None:
    table = EmulatedTable(clock=clock, dealer_delay_s=0.5)
    host = connect(table.shoe, clock)
    table.shoe.load(cards("AS 2S 3S"))
    host.ok(GateUnlock())
    host.pump(1.0)
    assert not host.of(CardRead)  # no prompt, no card: a controller that is down stops dealing
    host.ok(Display("DRAW PLAYER"))
    assert table.dealer.pending_prompts == 1
    clock.advance(0.3)
    table.tick()
    assert table.shoe.cards_delivered == 0
    clock.advance(0.3)
    table.tick()
    assert table.shoe.cards_delivered == 1


def test_a_retransmitted_display_does_not_make_the_dealer_act_twice(clock) -> None:
    table = EmulatedTable(clock=clock)
    host = connect(table.shoe, clock)
    table.shoe.load(cards("AS 2S 3S"))
    host.ok(GateUnlock())
    table.shoe.receive_data(host.conn.send(Display("DRAW")))
    table.shoe.receive_data(host.conn.retransmit_bytes())
    table.tick()
    host._feed(b"".join(table.shoe.outgoing()))
    assert table.shoe.cards_delivered == 1 and len(host.of(CardRead)) == 1


def test_dealer_mistakes_on_request_and_as_faults(clock) -> None:
    table = EmulatedTable(clock=clock, faults=FaultSpec.parse("dealer-extra-at=2,dealer-expose-at=4"))
    host = connect(table.shoe, clock)
    table.shoe.load(cards("AS 2S 3S 4S 5S 6S 7S 8S 9S"))
    host.ok(GateUnlock())
    host.ok(Display("DRAW PLAYER"))            # card 1
    host.ok(Display("DRAW BANKER"))            # 2nd DRAW prompt: cards 2 and 3 (one too many)
    host.ok(Display("DRAW PLAYER"))            # card 4, exposed by the fault
    table.dealer.draw_extra_card_next()
    table.dealer.expose_next_card()
    host.ok(Display("DRAW BANKER"))            # cards 5 (exposed) and 6
    host.pump(0.05)
    reads = host.of(CardRead)
    assert [r.rank for r in reads] == [1, 2, 3, 4, 5, 6]
    assert [r.face_up for r in reads] == [False, False, False, True, True, False]
    assert [a.detail for a in table.dealer.log] == ["AS", "2S 3S", "4S", "5S 6S"]


def test_dealer_refusals_are_logged_and_change_nothing(clock) -> None:
    table = EmulatedTable(clock=clock)
    host = connect(table.shoe, clock)
    for prompt in ("CUT 10", "LOAD", "CUT x", "DRAW"):
        host.ok(Display(prompt))
    host.pump(0.05)
    assert [(a.verb, a.ok) for a in table.dealer.log] == [
        ("CUT", False), ("LOAD", False), ("CUT", False), ("DRAW", False)]
    assert "no stack in hand" in table.dealer.log[0].detail
    assert table.dealer.log[-1].detail == "refused: shoe empty"
    assert host.events == []


def test_unload_empties_the_shoe(clock) -> None:
    table = EmulatedTable(clock=clock)
    host = connect(table.shoe, clock)
    table.shoe.load(cards("AS 2S") + [COVER] + cards("3S"))
    host.ok(Display("UNLOAD"))
    host.wait_for(ShoeEmpty)
    assert table.shoe.stack == [] and table.dealer.discards == cards("AS 2S") + [COVER] + cards("3S")
    assert host.status().state == DeviceState.IDLE


def test_same_seed_same_prompts_same_cards(clock, tmp_path) -> None:
    def deal(seed: int, name: str) -> list[str]:
        c = ManualClock()
        path = tmp_path / name
        with EmulatedTable(clock=c, seed=seed, speed=INF, dealt_log=path) as table:
            sh = connect(table.shuffler, c, ticker=table.tick)
            so = connect(table.shoe, c, ticker=table.tick)
            sh.ok(Shuffle(8))
            sh.wait_for(ShuffleDone)
            sh.ok(Deliver(DeliverTarget.DEALER))
            sh.pump(0.05)
            for prompt in ("CUT 100", "COVER 20", "LOAD"):
                so.ok(Display(prompt))
            so.ok(GateUnlock())
            for _ in range(6):
                so.ok(Display("DRAW"))
            so.pump(0.05)
        return path.read_text().splitlines()

    assert deal(5, "a") == deal(5, "b") != deal(6, "c")
    assert len(deal(5, "d")) == 6


# --- small pieces ----------------------------------------------------------------------------


def test_cut_and_cover_on_plain_lists() -> None:
    stack = cards("AS 2S 3S 4S 5S")
    assert cut_stack(stack, 2) == cards("3S 4S 5S AS 2S") + [COVER]
    assert insert_second_cover(cut_stack(stack, 2), 2) == cards("3S 4S 5S") + [COVER] + cards(
        "AS 2S") + [COVER]
    assert stack == cards("AS 2S 3S 4S 5S")
    for bad in (0, 5):
        with pytest.raises(ValueError):
            cut_stack(stack, bad)
    with pytest.raises(ValueError):
        insert_second_cover(stack, 6)
    assert str(DeviceCard(10, 2)) == "10H" and str(DeviceCard(1, 3)) == "AS"


def test_speed_parsing() -> None:
    assert parse_speed("max") == INF and parse_speed("2.5") == 2.5
    for bad in ("0", "-1", "fast", "nan"):
        with pytest.raises(ValueError):
            parse_speed(bad)


def test_set_mode_and_display_are_remembered(clock) -> None:
    shoe = build_device("emulated-shoe", clock=clock)
    host = connect(shoe, clock)
    host.ok(Display("Place your bets"))
    host.ok(SetMode(DeviceMode.DIAGNOSTIC))
    assert shoe.display_text == "Place your bets" and shoe.mode == DeviceMode.DIAGNOSTIC
    assert isinstance(host.ok(SetMode(DeviceMode.NORMAL)), Ack)


def test_a_numbered_draw_prompt_shown_again_never_draws_twice(clock) -> None:
    """``@N``: the N-th card of this shoe. The same prompt again (a restarted controller showing
    its current prompt) is a no-op once that card is out."""
    table = EmulatedTable(clock=clock, speed=INF, seed=5)
    shuffler = connect(table.shuffler, clock, ticker=table.tick)
    shoe = connect(table.shoe, clock, ticker=table.tick)
    shuffler.ok(Shuffle(8))
    shuffler.wait_for(ShuffleDone)
    shuffler.ok(Deliver(DeliverTarget.DEALER))
    shuffler.pump(0.05)
    for prompt in ("CUT 50", "COVER 14", "LOAD"):
        shoe.ok(Display(prompt))
    shoe.wait_for(ShoeLoaded)
    shoe.ok(GateUnlock())
    for prompt in ("BURN @1", "BURN @1", "DRAW PLAYER @2", "DRAW PLAYER @2", "DRAW BANKER @3"):
        shoe.ok(Display(prompt))
    shoe.pump(0.05)
    assert [r.position for r in shoe.of(CardRead)] == [1, 2, 3]
    assert [a.detail for a in table.dealer.log if "already drawn" in a.detail] == [
        "card 1 already drawn: no action", "card 2 already drawn: no action"]
    table.close()


def shuffled_table(clock: ManualClock) -> tuple[EmulatedTable, Host, Host]:
    """A table at real speed whose shuffler holds a shuffled stack; hosts on the shuffler and the
    shoe."""
    table = EmulatedTable(clock=clock, speed=1.0, seed=5)
    shuffler = connect(table.shuffler, clock, ticker=table.tick)
    shoe = connect(table.shoe, clock, ticker=table.tick)
    table.shuffler.shuffle_s = 0.01
    shuffler.ok(Shuffle(8))
    shuffler.wait_for(ShuffleDone)
    return table, shuffler, shoe


def test_the_dealer_waits_for_the_stack_before_cutting(clock) -> None:
    """CUT arrives while the shuffler is still delivering: the dealer cuts once the stack is in
    hand, and the prompts after it keep their order."""
    table, shuffler, shoe = shuffled_table(clock)
    shuffler.ok(Deliver(DeliverTarget.DEALER))  # takes deliver_s (1 s) at speed 1
    for prompt in ("CUT 50", "COVER 14", "LOAD"):
        shoe.ok(Display(prompt))
    assert table.dealer.hand is None and table.dealer.pending_prompts == 3
    clock.advance(1.5)
    shoe.pump(0.05)
    assert shoe.wait_for(ShoeLoaded).card_count == 416
    assert [a.ok for a in table.dealer.log] == [True, True, True]
    table.close()


def test_the_dealer_waits_for_a_stack_the_shuffler_has_not_been_told_to_deliver_yet(clock) -> None:
    """The prompts reach the shoe and the DELIVER reaches the shuffler on independent links, so
    CUT and COVER may come before the shuffler has even started delivering. The dealer once
    refused them ("no stack in hand"), then loaded the uncut stack when it came: a shoe without
    its cover card, dealt to the last card."""
    table, shuffler, shoe = shuffled_table(clock)
    original = list(table.shuffler.shuffled)
    for prompt in ("CUT 50", "COVER 14", "LOAD"):      # before the DELIVER
        shoe.ok(Display(prompt))
    shoe.pump(0.5)
    assert table.dealer.hand is None and table.dealer.pending_prompts == 3 and not table.dealer.log
    shuffler.ok(Deliver(DeliverTarget.DEALER))
    clock.advance(1.5)
    shoe.pump(0.05)
    assert shoe.wait_for(ShoeLoaded).card_count == 416
    assert [a.ok for a in table.dealer.log] == [True, True, True]
    assert table.shoe.stack == insert_second_cover(cut_stack(original, 50), 14)
    table.close()
