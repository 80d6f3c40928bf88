"""The emulated dealer on the shoe's prompts (sans-I/O, ManualClock): cut, cover, load, burn, draw
and unload; a table without a shuffler (a preshuffled pack, washing and shuffling by hand);
mistakes, refusals, the same deal from the same seed; cut and cover on plain lists."""
from __future__ import annotations

import pytest

from firmware_bridge.emulator import (
    COVER,
    DeviceCard,
    FaultSpec,
    ManualClock,
    EmulatedTable,
    cut_stack,
    insert_second_cover,
)
from firmware_bridge.protocol import (
    ButtonId,
    ButtonPress,
    CardRead,
    Deliver,
    DeliverTarget,
    DeviceState,
    Display,
    GateLock,
    GateUnlock,
    ShoeEmpty,
    ShoeLoaded,
    Shuffle,
    ShuffleDone,
)

from .host_support import INF, cards, connect


def _stack_in_the_dealers_hand(clock, **options):
    """An emulated table (seed 11) whose shuffler shuffled 8 decks and delivered them to the
    dealer: (the table, a host connected to its shoe, the shuffled stack)."""
    table = EmulatedTable(clock=clock, speed=INF, seed=11, **options)
    shuffler = connect(table.shuffler, clock, ticker=table.tick)
    shoe = connect(table.shoe, clock, ticker=table.tick)
    shuffler.ok(Shuffle(8))
    shuffler.wait_for(ShuffleDone)
    original = list(table.shuffler.shuffled)
    shuffler.ok(Deliver(DeliverTarget.DEALER))
    shuffler.pump(0.05)
    return table, shoe, original


def test_the_dealer_cuts_covers_loads_burns_and_draws_on_prompts(clock, tmp_path) -> None:
    log = tmp_path / "dealt.log"
    table, shoe, original = _stack_in_the_dealers_hand(clock, dealt_log=log)
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


def test_a_dealt_log_that_cannot_be_written_is_said_once_and_the_shoe_deals_on(clock) -> None:
    """A review of disk faults: the dealt log on a full disk raised in the emulated shoe's thread,
    which died with a traceback mid-draw; the table then waited for ever for a shoe it took for
    unplugged. The failure is said once, as an error; the shoe deals every card. (The full disk
    is a stream that refuses its writes: a test cannot fill a disk everywhere it runs.)"""
    import errno
    import io

    from structlog.testing import capture_logs

    class FullDisk(io.StringIO):
        name = "/mnt/full/dealt.log"

        def flush(self) -> None:
            raise OSError(errno.ENOSPC, "No space left on device")

    table, shoe, original = _stack_in_the_dealers_hand(clock, dealt_log=FullDisk())
    for prompt in ("CUT 37", "COVER 14", "LOAD"):
        shoe.ok(Display(prompt))
    shoe.wait_for(ShoeLoaded)
    shoe.ok(GateUnlock())
    with capture_logs() as logs:
        for prompt in ("BURN", "DRAW PLAYER", "DRAW BANKER", "DRAW PLAYER", "DRAW BANKER"):
            shoe.ok(Display(prompt))
        shoe.pump(0.05)
    assert [DeviceCard(r.rank, r.suit) for r in shoe.of(CardRead)] == original[37:42]  # every card dealt
    assert [(e["log_level"], e["event"], e["reason"]) for e in logs] == [
        ("error", "the dealt log stopped; the emulated shoe deals on without it",
         "/mnt/full/dealt.log: cannot be written: No space left on device")]
    table.close()


def test_a_cut_or_cover_prompt_shown_again_places_no_more_cover_cards(clock) -> None:
    """A controller's resume shows its current prompt again. A dealer who has cut does not cut
    again: the emulated one cut once per CUT prompt, and a shown-again COVER put a third cover
    card in the shoe (a soak run printed every dealer action and saw COVER twice)."""
    table, shoe, original = _stack_in_the_dealers_hand(clock)
    for prompt in ("CUT 37", "CUT 37", "COVER 14", "CUT 37", "COVER 14", "LOAD"):
        shoe.ok(Display(prompt))
    assert shoe.wait_for(ShoeLoaded).card_count == 416
    assert table.shoe.stack == insert_second_cover(cut_stack(original, 37), 14)
    assert [(a.prompt, a.detail) for a in table.dealer.log][:5] == [
        ("CUT 37", "cut at 37"), ("CUT 37", "cut already made: no action"),
        ("COVER 14", "cover card 14 above the bottom"), ("CUT 37", "cut already made: no action"),
        ("COVER 14", "cover already made: no action")]
    table.close()


@pytest.mark.reg("681a.5(e)")
def test_a_recut_offered_takes_the_cover_cards_out_and_the_new_cut_is_the_one_loaded(clock) -> None:
    """681a.5(e): "a floorperson or above may require the cards to be reshuffled or recut" after
    the cut and before the cards are placed in the dealing shoe; the controller offers the cut
    again. The emulated dealer
    took the new CUT and COVER for prompts shown again and loaded the first cut: the cover card
    then came out 390 cards before the place the journal recorded (a floor review's find)."""
    table, shoe, original = _stack_in_the_dealers_hand(clock)
    for prompt in ("OFFER CUT SEAT 2", "CUT 150", "COVER 410", "DEALER CUTS", "CUT 200", "COVER 20", "LOAD"):
        shoe.ok(Display(prompt))
    assert shoe.wait_for(ShoeLoaded).card_count == 416
    assert table.shoe.stack == insert_second_cover(cut_stack(cut_stack(original, 150)[:-1], 200), 20)
    assert [(a.prompt, a.detail) for a in table.dealer.log][:4] == [
        ("OFFER CUT SEAT 2", "no action"), ("CUT 150", "cut at 150"),
        ("COVER 410", "cover card 410 above the bottom"),
        ("DEALER CUTS", "a recut: took the cover cards out of the stack")]
    table.close()


def test_a_cover_prompt_before_its_cut_is_refused_and_done_after_it(clock) -> None:
    """The second cover card goes in after the cut (681a.5(d)). A COVER whose CUT was lost with
    the shoe's link must not put the cut's card in: the CUT shown again by the controller's resume
    would then find a cover card and do nothing, and the stack would go in uncut."""
    table, shoe, original = _stack_in_the_dealers_hand(clock)
    for prompt in ("COVER 14", "CUT 37", "COVER 14", "LOAD"):
        shoe.ok(Display(prompt))
    assert shoe.wait_for(ShoeLoaded).card_count == 416
    assert table.shoe.stack == insert_second_cover(cut_stack(original, 37), 14)
    assert [(a.ok, a.detail) for a in table.dealer.log][:1] == [(False, "the stack is not cut yet")]
    table.close()


def test_an_unload_that_names_another_shoe_leaves_the_stack_loaded_alone(clock) -> None:
    """681a.7(d)(1): UNLOAD takes out the cards left in the shoe it names. Shown again by a
    controller's resume after the next stack went in under another name (its SHOE_LOADED not yet
    heard), it does nothing: the new stack stays in the shoe. Named as the stack in the shoe, or
    with a stack loaded under no name, it empties the shoe."""
    table, shoe, original = _stack_in_the_dealers_hand(clock)
    for prompt in ("CUT 37", "COVER 14", "LOAD T1-S0002", "UNLOAD T1-S0001"):
        shoe.ok(Display(prompt))
    shoe.wait_for(ShoeLoaded)
    table.tick(clock())
    assert table.dealer.log[-1].detail == "the shoe holds T1-S0002, not T1-S0001: no action"
    assert len(table.shoe.stack) == 418
    shoe.ok(Display("unload t1-s0002"))  # the dealer reads a prompt in any case
    shoe.wait_for(ShoeEmpty)
    assert table.shoe.stack == [] and len(table.dealer.discards) == 418
    table.shoe.load(cards("AS 2S"))  # under no name: a shuffler's DELIVER(SHOE), or loaded before the dealer
    shoe.ok(Display("UNLOAD T1-S0009"))
    shoe.wait_for(ShoeEmpty)
    assert table.shoe.stack == []
    table.close()


def test_a_draw_the_locked_gate_refused_is_done_when_the_gate_opens(clock) -> None:
    """A controller restarted after the shoe's host-loss timeout (the gate then locked) showed its
    DRAW prompt before it unlocked the gate; the emulated dealer forgot the refused prompt and the
    table waited for the card for ever (a SIGKILL test under load). A dealer at a locked gate
    waits for it: the DRAW is done once the gate opens, unless the shoe shows another prompt
    first."""
    table, shoe, original = _stack_in_the_dealers_hand(clock)
    for prompt in ("CUT 37", "COVER 14", "LOAD"):
        shoe.ok(Display(prompt))
    shoe.wait_for(ShoeLoaded)
    shoe.ok(GateLock())
    shoe.ok(Display("DRAW PLAYER @1"))
    shoe.pump(0.05)
    assert shoe.of(CardRead) == [] and table.dealer.log[-1].detail == "refused: gate locked"
    shoe.ok(GateUnlock())
    assert DeviceCard(shoe.wait_for(CardRead).rank, shoe.of(CardRead)[0].suit) == original[37]
    shoe.ok(GateLock())
    shoe.ok(Display("DRAW BANKER @2"))
    shoe.ok(Display("PLACE BETS"))  # shown after it: the dealer does what the shoe shows now
    shoe.ok(GateUnlock())
    shoe.pump(0.05)
    assert len(shoe.of(CardRead)) == 1
    table.close()


def _six_cards_loaded(clock):
    """A table whose shoe holds AS-6S cut at 2 and covered at 3 (3S 4S 5S COVER 6S AS 2S COVER),
    its gate open: (the table, a host connected to its shoe)."""
    table = EmulatedTable(clock=clock)
    host = connect(table.shoe, clock)
    table.dealer.receive_stack(cards("AS 2S 3S 4S 5S 6S"))
    for prompt in ("cut 2", "cover 3", "load"):
        host.ok(Display(prompt))
    host.ok(GateUnlock())
    return table, host


def test_the_dealer_sets_the_cover_card_aside_and_draws_on(clock) -> None:
    table, host = _six_cards_loaded(clock)
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


def test_a_burn_ends_at_the_cover_card(clock) -> None:
    """A new dealer's burn of more cards than are left above the cover card: the controller ends the
    shoe at the cover card (681a.7(d)), so the dealer sets it aside and draws no more for that BURN
    (a review of the day's changes: the dealer drew on, and every such shoe warned of a card drawn
    from a shoe that had ended)."""
    table, host = _six_cards_loaded(clock)
    host.ok(Display("DRAW"))
    host.ok(Display("BURN 5"))  # 4S 5S, then the cover card: 6S stays in the shoe
    host.pump(0.05)
    kinds = [type(e).__name__ for e in host.events]
    assert kinds == ["ShoeLoaded", "CardRead", "CardRead", "CardRead", "CoverCard"]
    assert table.dealer.discards == cards("4S 5S") and table.dealer.log[-1].ok
    assert table.dealer.log[-1].detail == "4S 5S cover card set aside: the burn ends"


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


def prompted(host, *prompts: str) -> None:
    """The shoe shows each prompt in turn; the dealer acts on them."""
    for prompt in prompts:
        host.ok(Display(prompt))
    host.pump(0.05)


def loaded_by_hand(clock):
    """A two-deck table without a shuffler whose dealer opened a pack, cut, covered and loaded it;
    the gate open. Returns the table and the host talking to its shoe."""
    table = EmulatedTable(clock=clock, shuffler_profile=None, decks=2, seed=5)
    host = connect(table.shoe, clock)
    prompted(host, "SHUFFLE BY HAND", "cut 30", "cover 14", "load")
    host.ok(GateUnlock())
    return table, host


@pytest.mark.reg("681a.7(d)(1)", "681a.7(d)(2)")
def test_without_a_shuffler_the_dealer_shuffles_a_dealt_shoe_s_collected_cards_by_hand(clock) -> None:
    """681a.7(d): the dealer shall (1) "Collect and reshuffle the cards by removing the cards
    remaining in the shoe and placing them in the discard rack to ensure that no cards are missing";
    (2) "Shuffle the cards so that they are randomly intermixed". On ``SHUFFLE COLLECTED`` the
    emulated dealer takes the cards left in the shoe out (the shoe says SHOE_EMPTY), gathers them
    with the discard rack's and the layout's and shuffles them by hand into the stack in hand: the
    whole set, cut and loaded again. Beside a shuffler: refused."""
    table, host = loaded_by_hand(clock)
    prompted(host, "burn 1", "draw player", "draw banker")
    prompted(host, "SHUFFLE COLLECTED")  # no UNLOAD before it: the cards left in the shoe are taken out
    assert host.of(ShoeEmpty) and table.shoe.stack == []
    shuffled = table.dealer.log[-1]
    assert shuffled.ok and shuffled.detail == "shuffled by hand the 104 cards collected", shuffled
    assert sorted(table.dealer.hand, key=str) == sorted(cards(" ".join(f"{r}{s}" for r in "A 2 3 4 5 6 7 8 9 10 J Q K".split()
                                                                       for s in "CDHS")) * 2, key=str)
    again = table.dealer.perform("SHUFFLE COLLECTED")  # shown again after a controller's restart (a review: the
    assert again.ok and "no action" in again.detail and len(table.dealer.hand) == 104  # stack in hand was lost)
    prompted(host, "cut 40", "cover 14", "load")
    assert host.of(ShoeLoaded)[-1].card_count == 104
    beside_a_shuffler = EmulatedTable(clock=clock).dealer.perform("SHUFFLE COLLECTED")
    assert not beside_a_shuffler.ok and "its shuffler shuffles" in beside_a_shuffler.detail


@pytest.mark.reg("681a.5(g)(1)")
def test_without_a_shuffler_the_dealer_washes_and_shuffles_the_inspected_cards_by_hand(clock) -> None:
    """681a.5(g): at an idle table "the cards shall be removed from the dealing shoe and the discard
    rack and spread out on the table ..."; then "(1) Mixed thoroughly by a washing of the cards,
    stacked, then shuffled and cut ... if there is no automated shuffling device in use". The shoe
    prompts ``WASH AND SHUFFLE``; the emulated dealer, who once ignored it (and then refused the cut
    for want of cards in hand), washes the cards of the rack and the layout into a stack in hand,
    which is cut and loaded: every card of the shoe, in a new order. Beside a shuffler: refused."""
    table, host = loaded_by_hand(clock)
    prompted(host, "draw player", "draw banker", "burn 3", "unload")
    assert [a.ok for a in table.dealer.log] == [True] * 8, table.dealer.log
    prompted(host, "WASH AND SHUFFLE", "cut 40", "cover 14", "load")
    assert [a.ok for a in list(table.dealer.log)[8:]] == [True] * 4, table.dealer.log
    assert "washed" in table.dealer.log[8].detail and "104" in table.dealer.log[8].detail
    assert host.of(ShoeLoaded)[-1].card_count == 104
    beside_a_shuffler = EmulatedTable(clock=clock).dealer.perform("WASH AND SHUFFLE")
    assert not beside_a_shuffler.ok and "shuffler" in beside_a_shuffler.detail


def test_a_dealer_dealing_shoe_after_shoe_keeps_one_shoes_cards_and_a_bounded_log(clock) -> None:
    """A table runs for weeks: the dealer's layout and discard rack hold the shoe in play's cards
    only (a new stack in the shoe means the last shoe's cards have left the table), and its log
    keeps the latest ``LOG_LIMIT`` actions. Before, both grew by about 200 kB a shoe."""
    from firmware_bridge.emulator.dealer import LOG_LIMIT

    table = EmulatedTable(clock=clock, shuffler_profile=None, decks=1, seed=3)
    host = connect(table.shoe, clock)
    for shoe in range(3):
        for prompt in ("SHUFFLE BY HAND", "cut 12", "cover 11", "load"):
            host.ok(Display(prompt))
        host.pump(0.05)
        assert table.dealer.layout == [] and table.dealer.discards == [], f"shoe {shoe + 1} began with old cards"
        host.ok(GateUnlock())
        for prompt in ("burn 2", "draw player", "draw banker", "draw player", "draw banker"):
            host.ok(Display(prompt))
        host.pump(0.05)
        assert len(table.dealer.discards) == 2 and len(table.dealer.layout) == 4
        host.ok(Display("unload"))
        host.pump(0.05)
    assert host.of(ShoeLoaded)[-1].card_count == 52 and all(a.ok for a in table.dealer.log)
    # 681a.5(g)(1) at the third shoe: the cards spread and washed are that shoe's 52, not all 156
    # the table has dealt (which the old dealer washed into one stack).
    washed = table.dealer.perform("WASH AND SHUFFLE")
    assert washed.ok and "the 52 inspected cards" in washed.detail, washed
    for i in range(LOG_LIMIT + 5):
        table.dealer.perform(f"PLACE YOUR BETS {i}")
    assert len(table.dealer.log) == LOG_LIMIT
    assert table.dealer.log[-1].prompt == f"PLACE YOUR BETS {LOG_LIMIT + 4}"


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


def test_a_dealer_who_misses_the_first_unload_takes_the_cards_out_at_the_next(clock) -> None:
    table = EmulatedTable(clock=clock, faults=FaultSpec.parse("dealer-miss=UNLOAD"))
    host = connect(table.shoe, clock)
    table.shoe.load(cards("AS 2S"))
    host.ok(Display("unload T1-S0001"))  # prompts are case-insensitive
    host.pump(0.05)
    assert table.shoe.stack == cards("AS 2S") and not host.of(ShoeEmpty)
    assert (table.dealer.log[-1].ok, table.dealer.log[-1].detail) == (False, "missed the prompt (fault dealer-miss)")
    host.ok(Display("UNLOAD T1-S0001"))
    host.wait_for(ShoeEmpty)
    assert table.shoe.stack == [] and table.dealer.log[-1].ok


def _keep_asking(host, seconds: int) -> None:
    """Let ``seconds`` pass with the host asking for the status twice a second, so that the shoe
    never loses its host (its display would then show HOST LOST)."""
    for _ in range(seconds * 2):
        host.pump(0.5)
        host.status()


def test_a_missed_prompt_still_on_the_display_is_done_when_the_dealer_looks_again(clock) -> None:
    """A dealer who missed a prompt reads the display again ``reread_s`` later (5 s of real time
    at speed 1) and does what it still shows; nothing is done before."""
    table = EmulatedTable(clock=clock, faults=FaultSpec.parse("dealer-miss=DRAW"))
    host = connect(table.shoe, clock)
    table.shoe.load(cards("AS 2S 3S"))
    host.ok(GateUnlock())
    host.ok(Display("DRAW PLAYER @1"))
    assert table.dealer.reread_s == 5.0
    _keep_asking(host, 4)
    assert not host.of(CardRead) and table.shoe.stack == cards("AS 2S 3S")
    _keep_asking(host, 2)
    assert [DeviceCard(r.rank, r.suit) for r in host.of(CardRead)] == cards("AS")
    assert [a.ok for a in table.dealer.log] == [False, True]
    _keep_asking(host, 10)
    assert len(host.of(CardRead)) == 1  # looked at once: the prompt is done


def test_a_missed_prompt_the_display_no_longer_shows_is_not_done(clock) -> None:
    """What the shoe shows after the missed prompt is what the dealer does; the missed one is gone
    from the display, and the dealer does not go back to it."""
    table = EmulatedTable(clock=clock, faults=FaultSpec.parse("dealer-miss=BURN"))
    host = connect(table.shoe, clock)
    table.shoe.load(cards("AS 2S 3S"))
    host.ok(GateUnlock())
    host.ok(Display("BURN"))
    _keep_asking(host, 1)
    host.ok(Display("PLACE YOUR BETS"))
    _keep_asking(host, 10)
    assert table.shoe.display_text == "PLACE YOUR BETS"
    assert not host.of(CardRead) and table.shoe.stack == cards("AS 2S 3S")
    assert [a.verb for a in table.dealer.log] == ["BURN", "PLACE"]


def test_the_reread_follows_the_speed_with_a_floor(clock) -> None:
    assert EmulatedTable(clock=clock, speed=4).dealer.reread_s == 1.25
    assert EmulatedTable(clock=clock, speed=INF).dealer.reread_s == 0.5


def test_a_load_into_a_shoe_still_holding_the_last_shoes_cards_takes_them_out_first(clock) -> None:
    """The UNLOAD was missed and the CUT replaced it on the display: at LOAD the dealer finds the
    last shoe's cards still in the shoe and takes them out (681a.7(d)(1)), then loads."""
    table, shoe, original = _stack_in_the_dealers_hand(clock)
    table.shoe.load(cards("AS 2S") + [COVER])  # the last shoe's cards, left in
    shoe.pump(0.05)
    shoe.events.clear()
    for prompt in ("CUT 37", "COVER 14", "LOAD T1-S0002"):
        shoe.ok(Display(prompt))
    loaded = shoe.wait_for(ShoeLoaded)
    assert [type(e) for e in shoe.events] == [ShoeEmpty, ShoeLoaded] and loaded.card_count == 416
    assert len(table.shoe.stack) == 418 and table.dealer.loaded_as == "T1-S0002"
    assert table.dealer.log[-1].detail == "took 3 items left in the shoe out, then loaded 416 cards as T1-S0002"


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
