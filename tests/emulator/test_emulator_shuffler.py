"""The emulated shuffler as a sans-I/O model (ManualClock): progress and the count after the
shuffle time, missing and extra cards, a retransmitted SHUFFLE, seeded and unseeded shuffles,
delivery to the attached shoe or to itself (shuffler-shoe); the speed option."""
from __future__ import annotations

import random

import pytest

from firmware_bridge.emulator import (
    DeviceCard,
    FaultSpec,
    EmulatedTable,
    build_device,
    parse_speed,
    standard_stack,
)
from firmware_bridge.protocol import (
    CardRead,
    Deliver,
    DeliverTarget,
    DeviceState,
    GateUnlock,
    HostConnection,
    NakCode,
    ShoeLoaded,
    Shuffle,
    ShuffleDone,
    ShuffleProgress,
)

from .host_support import INF, connect, DeviceWire, Host, nak_code



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
    # The shoe still holds the first stack: the second stays in the shuffler, said apart from
    # "nothing shuffled to deliver" (WRONG_STATE), so that the host can tell the two apart.
    assert nak_code(shuffler_host.command(Deliver(DeliverTarget.SHOE))) == NakCode.SHOE_NOT_EMPTY
    assert table.shuffler.shuffled is not None
    table.shoe.unload()
    shuffler_host.ok(Deliver(DeliverTarget.SHOE))
    assert shoe_host.wait_for(ShoeLoaded, predicate=lambda e: e.counter > 1).card_count == 416
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


def test_speed_parsing() -> None:
    assert parse_speed("max") == INF and parse_speed("2.5") == 2.5
    for bad in ("0", "-1", "fast", "nan"):
        with pytest.raises(ValueError):
            parse_speed(bad)
