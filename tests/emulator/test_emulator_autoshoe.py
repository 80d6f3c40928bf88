"""The emulated automatic reshuffling shoe (profile ``emulated-autoshoe``, kind ``shuffler-shoe``):
one device that shuffles, counts, loads itself, ends each shoe with its own cover card and deals;
the emulated table and its server built around it (sans-I/O, ManualClock)."""
from __future__ import annotations

import pytest

from firmware_bridge.emulator import COVER, EmulatedShufflerShoe, EmulatedTable, build_device
from firmware_bridge.emulator.serving import TableServer
from firmware_bridge.emulator.shuffler_shoe import AUTO_COVER_FROM_BOTTOM
from firmware_bridge.protocol import CardRead, CoverCard, Deliver, DeliverTarget, Display, GateUnlock, ShoeLoaded, Shuffle, ShuffleDone
from .host_support import INF, connect




def shuffled_and_loaded(device, host) -> None:
    host.ok(Shuffle(8))
    host.wait_for(ShuffleDone)
    host.ok(Deliver(DeliverTarget.SHOE))


@pytest.mark.reg("681a.5(h)")
def test_an_automatic_shoe_with_a_cover_sensor_ends_its_shoe_with_its_own_cover_card(clock) -> None:
    """681a.5(h): a dealing shoe "that automatically reshuffles and counts the cards": no one cuts
    or places a cover card, so the device marks the end of its shoe itself."""
    device = build_device("emulated-autoshoe", clock=clock, speed=INF, seed=1)
    host = connect(device, clock)
    shuffled_and_loaded(device, host)
    assert host.wait_for(ShoeLoaded).card_count == 416
    assert device.stack.index(COVER) == 416 - AUTO_COVER_FROM_BOTTOM and device.stack.count(COVER) == 1
    host.ok(GateUnlock())
    for _ in range(416 - AUTO_COVER_FROM_BOTTOM + 1):
        device.draw()
    host.pump(0.05)
    assert host.of(CoverCard)[0].position == 416 - AUTO_COVER_FROM_BOTTOM + 1
    assert len(host.of(CardRead)) == 416 - AUTO_COVER_FROM_BOTTOM


def test_without_a_cover_sensor_no_cover_card_is_placed(clock) -> None:
    device = build_device("acme-autoshoe-r", clock=clock, speed=INF, seed=1)
    host = connect(device, clock)
    shuffled_and_loaded(device, host)
    assert host.wait_for(ShoeLoaded).card_count == 416 and COVER not in device.stack


def test_a_table_with_the_shuffler_in_the_shoe_is_one_device_served_once(clock, tmp_path) -> None:
    table = EmulatedTable(shoe_profile="emulated-autoshoe", clock=clock, speed=INF, seed=2)
    assert isinstance(table.shoe, EmulatedShufflerShoe) and table.shuffler is table.shoe
    assert table.devices == (table.shoe,)
    server = TableServer(table, directory=tmp_path)
    assert list(server.servers) == ["shoe"]
    assert [d["profile"] for d in server.devices()] == ["emulated-autoshoe"]
    server.close()


def test_the_dealer_counts_the_cards_of_each_shoe_the_device_loads_itself(clock) -> None:
    """A prompt's ``@N`` is "the N-th card out of this shoe": after the device loads a new shoe
    itself (no dealer's LOAD), ``BURN @1`` burns the new shoe's first card."""
    table = EmulatedTable(shoe_profile="emulated-autoshoe", clock=clock, speed=INF, seed=3)
    host = connect(table.shoe, clock, ticker=table.tick)
    for shoe in range(2):
        host.ok(Shuffle(8))
        host.pump(0.05)
        host.ok(Deliver(DeliverTarget.SHOE))
        host.pump(0.05)
        assert len(host.of(ShoeLoaded)) == shoe + 1
        host.ok(GateUnlock())
        host.ok(Display("BURN @1"))
        host.ok(Display("DRAW PLAYER @2"))
        host.pump(0.05)
        assert len(host.of(CardRead)) == 2 * (shoe + 1), shoe
        host.ok(Display("UNLOAD"))
        host.pump(0.05)
