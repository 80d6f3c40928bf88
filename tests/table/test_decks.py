"""Where a shoe's cards come from when the automated shuffler does not shuffle them anew: preshuffled
decks (681a.5(a)) and the batch taken out of the shuffler after an idle table's inspection
(681a.5(g)(2)), through the table core's inputs and outputs (bench.py)."""
from __future__ import annotations

import pytest
from bench import Bench

from controller.rules.cards import Composition
from controller.roles import Role
from controller.table.io import OperatorInput
from firmware_bridge.protocol import messages as m


def shuffles(b: Bench) -> int:
    return sum(isinstance(s.message, m.Shuffle) for s in b.sent)


def cut_and_load(b: Bench) -> None:
    b.op("cut", Role.DEALER, position=100)
    b.op("cover", Role.DEALER, from_bottom=14)
    b.op("load", Role.DEALER)


# -- 681a.5(a): preshuffled decks ------------------------------------------------------------------
@pytest.mark.reg("681a.5(a)")
def test_a_table_without_a_shuffler_may_put_preshuffled_decks_in_play() -> None:
    """681a.5(a): "Immediately prior to commencement of play, unless the cards were preshuffled in
    accordance with § 603a.16(u) or (v) ..., the dealer shall shuffle the cards". A pack of the
    table's decks, preshuffled, takes the place of the hand shuffle; the stack is still offered for
    the cut, and its count is checked when it is loaded."""
    b = Bench(shuffler=False)
    b.op("sit", Role.DEALER, seat=4)
    b.op("open")
    assert b.core.state == "shuffling" and b.core.prompt == "SHUFFLE BY HAND"
    b.stack = Composition.standard(8).cards()
    b.op("preshuffled_decks", Role.DEALER, decks=8, seal="LOT 1234")
    assert b.core.state == "cutting" and b.of("cut_offer")[-1]["order"] == [4]
    operator = [r for r in b.records if r.kind == "operator"][-1].payload
    assert (operator["command"], operator["args"]) == ("preshuffled_decks", {"decks": 8, "seal": "LOT 1234"})
    b.op("cut_decline", Role.DEALER, seat=4)
    cut_and_load(b)
    assert b.core.state == "betting" and b.of("shoe_loaded")[-1]["cards"] == 416
    assert shuffles(b) == 0 and not b.of("manual_shuffle")


@pytest.mark.reg("681a.5(a)")
def test_preshuffled_decks_one_card_short_are_found_at_loading_and_the_table_stays_closed() -> None:
    """681a.5(a): "unless the cards were preshuffled in accordance with § 603a.16(u) or (v)", the
    dealer shuffles; with the count check of 681a.7(a): a preshuffled pack is not counted by a device
    when it is opened; the shoe's count at loading finds the card missing and the table stays closed."""
    b = Bench(shuffler=False)
    b.op("open")
    b.stack = Composition.standard(8).cards()[1:]
    b.op("preshuffled_decks", Role.DEALER, decks=8)
    cut_and_load(b)
    assert b.core.state == "count_fault" and b.of("count_fault")[-1]["problem"] == "1 card missing"
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    assert b.of("refused")[-1]["input"] == "wager" and b.core.state == "count_fault"


@pytest.mark.reg("681a.5(a)")
@pytest.mark.parametrize("shuffler, wash, decks, words", [
    (True, False, 8, "automated shuffler"),
    (False, False, 6, "this table deals 8 decks"),
    (False, True, 8, "681a.5(g)(1)"),
])
def test_preshuffled_decks_that_cannot_be_used_are_refused_and_change_nothing(shuffler, wash, decks, words) -> None:
    """681a.5(a): "Immediately prior to commencement of play, unless the cards were preshuffled in
    accordance with § 603a.16(u) or (v)", the dealer shuffles "either manually or by use of an
    automated card shuffling device". Preshuffled cards replace the dealer's shuffle, not the
    automated shuffler's, nor the wash and shuffle of cards an idle table's player inspected
    (681a.5(g)(1))."""
    b = Bench(shuffler=shuffler)
    if shuffler:  # the bench's shuffler answers at once: open without it, so its shuffle is under way
        b.core.handle(OperatorInput("open", {}, "fp1", Role.FLOORPERSON))
    else:
        b.op("open")
    if wash:  # an idle table's inspected cards wait for the wash and the hand shuffle
        b.stack = Composition.standard(8).cards()
        b.op("manual_shuffle_done", Role.DEALER)
        cut_and_load(b)
        b.op("declare_idle")
        b.player_arrives()
        b.op("inspection_done")
        assert b.core.prompt == "WASH AND SHUFFLE"
    state, sent = b.core.state, len(b.sent)
    b.op("preshuffled_decks", Role.DEALER, decks=decks)
    assert words in b.of("refused")[-1]["reason"]
    assert b.core.state == state and len(b.sent) == sent


# -- 681a.5(g)(2): the batch taken out of the shuffler ---------------------------------------------
def idle_after_a_shoe(face_up: bool = False) -> Bench:
    b = Bench()
    b.open_and_cut()
    b.op("declare_idle", face_up=face_up)
    b.player_arrives()
    assert b.core.state == "inspection"
    return b


@pytest.mark.reg("681a.5(g)(2)")
def test_without_a_request_the_batch_taken_out_of_the_shuffler_is_dealt_as_it_is() -> None:
    """681a.5(g)(2): "Unless a player requests otherwise, the batch of cards removed from the
    shuffler does not need to be spread for inspection and reshuffled prior to being dealt"."""
    b = idle_after_a_shoe()
    before = shuffles(b)
    b.op("inspection_done")
    assert b.of("shuffler_batch_removed") == [{"clause": "681a.5(g)(2)"}]
    assert [i["clause"] for i in b.of("inspection")] == ["681a.5(g)"]
    assert shuffles(b) == before + 1 and b.core.state == "cutting"


@pytest.mark.reg("681a.5(g)(2)")
@pytest.mark.parametrize("face_up", [False, True])
def test_a_player_may_ask_that_the_batch_be_spread_and_reshuffled_before_it_is_dealt(face_up: bool) -> None:
    """681a.5(g)(2): "Unless a player requests otherwise, the batch of cards removed from the
    shuffler does not need to be spread for inspection and reshuffled prior to being dealt". At a
    player's request it is spread (face up if the player asked so for the first spread) and
    reshuffled before any card of it is dealt."""
    b = idle_after_a_shoe(face_up)
    before = shuffles(b)
    b.op("inspection_done", reshuffle_batch=True)
    assert b.of("shuffler_batch_removed") == [{"clause": "681a.5(g)(2)"}]
    assert b.of("inspection")[-1] == {"clause": "681a.5(g)(2)", "face_up": face_up}
    spread = "SPREAD FACE UP" if face_up else "SPREAD"  # a floor review: the display read as before
    assert b.core.state == "inspection" and b.core.prompt == f"{spread} THE SHUFFLER'S BATCH"
    assert shuffles(b) == before  # nothing shuffled or dealt yet
    b.op("inspection_done", reshuffle_batch=True)  # already spread: refused, nothing changes
    assert "already spread" in b.of("refused")[-1]["reason"] and b.core.state == "inspection"
    b.op("inspection_done")
    assert shuffles(b) == before + 1 and b.core.state == "cutting"
    assert len(b.of("shuffler_batch_removed")) == 1  # the reshuffled batch is not swapped again
    b.op("cut", Role.DEALER, position=100, seat=b.core.shoe.cut_offeree)  # the player who arrived
    b.op("cover", Role.DEALER, from_bottom=14)
    b.op("load", Role.DEALER)
    assert b.core.state == "betting"


@pytest.mark.reg("681a.5(g)(2)")
def test_the_batch_out_of_a_shuffler_that_does_not_keep_one_batch_is_always_spread_and_reshuffled() -> None:
    """681a.5(g)(2): the removed batch "does not need to be spread for inspection and reshuffled
    prior to being dealt provided that the automated card shuffling device stores a single batch of
    shuffled cards inside the shuffler in a secure manner". A continuous shuffler does not, so its
    batch is spread and reshuffled though no player asked."""
    b = Bench(shuffler_keeps_one_batch=False)
    b.open_and_cut()
    b.op("declare_idle")
    b.player_arrives()
    before = shuffles(b)
    b.op("inspection_done")
    assert b.of("shuffler_batch_removed") == [{"clause": "681a.5(g)(2)"}]
    assert b.of("inspection")[-1] == {"clause": "681a.5(g)(2)", "face_up": False}
    assert b.core.state == "inspection" and b.core.prompt == "SPREAD THE SHUFFLER'S BATCH" and shuffles(b) == before
    b.op("inspection_done")
    assert shuffles(b) == before + 1 and b.core.state == "cutting"
    assert len(b.of("shuffler_batch_removed")) == 1


@pytest.mark.reg("681a.5(g)(2)", "681a.5(g)(1)")
def test_without_a_shuffler_there_is_no_batch_to_ask_for() -> None:
    """681a.5(g)(2) applies "if an automated shuffling device is in use"; without one the cards are
    "Mixed thoroughly by a washing of the cards, stacked, then shuffled and cut" (681a.5(g)(1)): no
    batch to ask for, the table prompts for the wash and shuffle."""
    b = Bench(shuffler=False)
    b.op("open")
    b.stack = Composition.standard(8).cards()
    b.op("manual_shuffle_done", Role.DEALER)
    cut_and_load(b)
    b.op("declare_idle")
    b.player_arrives()
    b.op("inspection_done", reshuffle_batch=True)
    assert "681a.5(g)(1)" in b.of("refused")[-1]["reason"] and b.core.state == "inspection"
    assert not b.core.inspection.washing
    b.op("inspection_done")
    assert b.core.prompt == "WASH AND SHUFFLE" and not b.of("shuffler_batch_removed")
