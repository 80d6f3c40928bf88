"""When the emulated dealer acts (sans-I/O, ManualClock): only on prompts and after its delay,
once per prompt (a retransmitted DISPLAY, a numbered prompt shown again), and a cut only once
the stack is in hand, however late the shuffler delivers it."""
from __future__ import annotations

from firmware_bridge.emulator import EmulatedTable, ManualClock, cut_stack, insert_second_cover
from firmware_bridge.emulator.dealer import STACK_WAIT_S
from firmware_bridge.protocol import (
    CardRead,
    Deliver,
    DeliverTarget,
    Display,
    GateUnlock,
    ShoeLoaded,
    Shuffle,
    ShuffleDone,
)

from .host_support import INF, cards, connect, shuffled_table



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


def test_the_dealer_waits_for_a_stack_shuffled_again_however_long_the_shuffle_takes(clock) -> None:
    """An integrator's review: a controller stopped during a shuffle and started again asks for the
    shuffle again; the first shuffle's SHUFFLE_DONE, which reached it meanwhile, makes it show the
    cut's prompts while the shuffler shuffles the kept stack a second time. The dealer refused CUT,
    COVER and LOAD at once (no stack in hand, none "coming"), and when the stack came, nothing
    showed them again: the table waited for a load for ever. The dealer waits for a stack being
    shuffled, however long past ``STACK_WAIT_S`` the shuffle takes, and cuts it once delivered."""
    table, shuffler, shoe = shuffled_table(clock)
    table.shuffler.shuffle_s = 3 * STACK_WAIT_S  # a slow batch shuffler (acme-batchshuffler-x: 120 s)
    shuffler.ok(Shuffle(8))  # the restart's SHUFFLE: the kept stack is shuffled again
    for prompt in ("CUT 50", "COVER 14", "LOAD"):
        shoe.ok(Display(prompt))
    for _ in range(5):
        clock.advance(STACK_WAIT_S / 2)
        shoe.pump(0.05)
    assert table.dealer.hand is None and table.dealer.pending_prompts == 3 and not table.dealer.log
    clock.advance(STACK_WAIT_S / 2 + 1)  # the second shuffle is done (its SHUFFLE_DONE makes the controller deliver)
    shuffler.pump(0.05)
    assert len(shuffler.of(ShuffleDone)) == 2
    shuffler.ok(Deliver(DeliverTarget.DEALER))
    clock.advance(1.5)
    shoe.pump(0.05)
    assert shoe.wait_for(ShoeLoaded).card_count == 416
    assert [a.ok for a in table.dealer.log] == [True, True, True]
    table.close()
