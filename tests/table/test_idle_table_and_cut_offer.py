"""Who may see an idle table's cards before they are shuffled, when a table may be declared idle,
and a cut offered to a player who leaves or sits down (681a.5(b), (g)), through the table core's inputs and
outputs (sans-I/O), with scripted devices (bench.py)."""
from __future__ import annotations

import pytest
from bench import Bench
from test_refusals import state_of

from controller.roles import Role
from controller.rules.cards import Composition
from firmware_bridge.protocol import messages as m


def shuffles(b: Bench) -> int:
    return sum(isinstance(s.message, m.Shuffle) for s in b.sent)


# 681a.5 is 21 Baccarat's section, applied at every table: its tests run at both kinds (a review
# of the regulation's coverage: they ran at Minibaccarat alone).
PRESETS = pytest.mark.parametrize("preset", ["minibaccarat", "21-baccarat"])


def idle_table(seats: tuple[int, ...] = (), preset: str = "minibaccarat") -> Bench:
    b = Bench(preset)
    b.open_and_cut(seats=seats)
    b.op("declare_idle")
    assert b.core.state == "inspection"
    return b


@pytest.mark.reg("681a.5(g)")
@PRESETS
def test_the_spread_cards_wait_for_the_first_player_arriving_at_the_table(preset: str) -> None:
    """681a.5(g): "After the first player arriving at the table is afforded an opportunity to
    visually inspect the cards, the cards shall be" washed or put into the shuffler. Until a player
    sits down after the spread, ``inspection_done`` is refused and changes nothing; a player who
    was seated before the table went idle is not one arriving."""
    b = idle_table(seats=(3,), preset=preset)
    before, shuffled = state_of(b.core), shuffles(b)
    b.op("inspection_done")
    refusal = b.of("refused")[-1]
    assert refusal["input"] == "inspection_done" and "first player arriving" in refusal["reason"]
    assert state_of(b.core) == before and shuffles(b) == shuffled and b.core.prompt == "SPREAD"
    b.op("sit", Role.DEALER, seat=6)
    b.op("sit", Role.DEALER, seat=2)
    assert b.core.inspection.first_seat == 6  # the first to arrive
    b.op("inspection_done")
    assert b.core.state == "cutting" and shuffles(b) == shuffled + 1


@pytest.mark.reg("681a.5(g)")
@PRESETS
def test_each_idle_spread_waits_for_its_own_first_arrival(preset: str) -> None:
    """681a.5(g): the cards are shuffled "After the first player arriving at the table is afforded an
    opportunity to visually inspect the cards". The player who arrived at one idle spread is seated
    when the table next goes idle: the next spread waits for a player arriving at it."""
    b = idle_table(preset=preset)
    b.player_arrives()
    b.op("inspection_done")
    b.open_and_cut()  # cutting: the seated player declines, the dealer cuts
    assert b.core.state == "betting"
    b.op("declare_idle")
    b.op("inspection_done")
    assert "first player arriving" in b.of("refused")[-1]["reason"] and b.core.state == "inspection"


@pytest.mark.reg("681a.5(g)")
@PRESETS
def test_a_player_may_ask_for_the_spread_cards_face_up_once_they_lie_spread(preset: str) -> None:
    """681a.5(g): the cards are "spread out on the table face down unless a player requests that
    the cards be spread face up on the table". The first player arriving may ask once they lie
    spread: the dealer turns them face up, recorded as the spread again (``turned``); a batch
    spread after them is spread face up too. Asked again, or with no cards spread, it is refused
    and changes nothing."""
    b = Bench(preset)
    b.open_and_cut()
    b.op("spread_face_up", Role.DEALER)  # betting: nothing spread
    assert b.of("refused")[-1]["input"] == "spread_face_up" and b.core.state == "betting"
    b.op("declare_idle")
    assert b.of("inspection") == [{"clause": "681a.5(g)", "face_up": False}] and b.core.prompt == "SPREAD"
    b.player_arrives()
    b.op("spread_face_up", Role.DEALER)
    assert b.of("inspection")[-1] == {"clause": "681a.5(g)", "face_up": True, "turned": True}
    assert b.core.prompt == "SPREAD FACE UP"
    before = state_of(b.core)
    b.op("spread_face_up", Role.DEALER)
    assert "already spread face up" in b.of("refused")[-1]["reason"] and state_of(b.core) == before
    b.op("inspection_done", reshuffle_batch=True)
    assert b.of("inspection")[-1] == {"clause": "681a.5(g)(2)", "face_up": True}


@pytest.mark.reg("681a.5(g)")
def test_a_closed_table_is_not_declared_idle() -> None:
    """681a.5(g) applies "If there is no gaming activity at a 21 Baccarat table which is open for
    gaming": a closed table's cards are not spread for inspection, and ``declare_idle`` does not
    open it; the refusal changes nothing."""
    b = Bench()
    b.open_and_cut()
    b.op("close")
    assert b.core.state == "closed"
    before = state_of(b.core)
    b.op("declare_idle")
    assert b.of("refused")[-1]["input"] == "declare_idle" and state_of(b.core) == before
    assert not b.of("inspection")


@pytest.mark.reg("681a.5(g)(1)", "681a.5(g)(2)")
@pytest.mark.parametrize("shuffler", [True, False])
@PRESETS
def test_a_restart_does_not_skip_the_idle_tables_inspection(shuffler: bool, preset: str) -> None:
    """681a.5(g)(1)-(2): the inspected cards are "Mixed thoroughly by a washing of the cards" without
    a shuffler, or "placed into the automated shuffling device" and the batch in it removed. The
    spread cards are in no device, so ``restart_shoe`` (the devices lost the shoe) is refused while
    they lie on the table: it would shuffle them anew without the wash or the batch's removal."""
    b = Bench(preset, shuffler=shuffler)
    b.op("open")
    if not shuffler:
        b.stack = Composition.standard(b.core.sub.decks).cards()
        b.op("manual_shuffle_done", Role.DEALER)
    b.op("cut", Role.DEALER, position=100)
    b.op("cover", Role.DEALER, from_bottom=14)
    b.op("load", Role.DEALER)
    b.op("declare_idle")
    assert b.core.state == "inspection"
    before = state_of(b.core)
    b.op("restart_shoe", reason="test")
    assert b.of("refused")[-1]["input"] == "restart_shoe" and state_of(b.core) == before
    b.player_arrives()
    b.op("inspection_done")
    if shuffler:
        assert b.of("shuffler_batch_removed") == [{"clause": "681a.5(g)(2)"}]
    else:
        assert b.core.prompt == "WASH AND SHUFFLE" and b.core.inspection.washing


@pytest.mark.reg("681a.5(b)")
def test_a_player_offered_the_cut_who_leaves_is_passed_over() -> None:
    """681a.5(b): the dealer offers the stack "to each player until a player accepts the cut". A
    player offered the cut who leaves before cutting is a player no more: the offer moves on to the
    next seat clockwise, and the empty seat cannot cut or decline."""
    b = Bench()
    for seat in (2, 5, 7):
        b.op("sit", Role.DEALER, seat=seat)
    b.op("open")
    assert b.core.shoe.cut_offeree == 7
    b.op("leave", Role.DEALER, seat=5)  # waiting for the offer: taken out of the order
    b.op("leave", Role.DEALER, seat=7)  # offered it now: the offer moves on
    assert b.core.shoe.cut_offeree == 2 and b.core.prompt == "OFFER CUT SEAT 2"
    for command, args in (("cut", {"position": 50, "seat": 7}), ("cut_decline", {"seat": 7})):
        before = state_of(b.core)
        b.op(command, Role.DEALER, **args)
        assert "offered to seat 2" in b.of("refused")[-1]["reason"] and state_of(b.core) == before
    b.op("leave", Role.DEALER, seat=2)
    assert b.core.shoe.cut_offeree is None and b.core.prompt == "DEALER CUTS"
    b.op("cut", Role.DEALER, position=50)
    assert b.of("cut")[-1]["by"] == "dealer"


@pytest.mark.reg("681a.5(b)")
def test_a_player_sitting_down_before_the_offer_reaches_the_seat_is_offered_the_cut() -> None:
    """681a.5(b): "working clockwise around the table, offer the stack to each player until a
    player accepts the cut". A player who sits down while the stack goes round is offered it when
    the offer reaches that seat; a seat it has already passed is not offered it again, nor is an
    offer that has ended with the dealer's cut reopened."""
    b = Bench()
    for seat in (2, 7):
        b.op("sit", Role.DEALER, seat=seat)
    b.op("open")
    assert b.core.shoe.cut_offeree == 7 and b.of("cut_offer")[-1]["order"] == [7, 2]
    b.op("sit", Role.DEALER, seat=5)  # between 7 and 2, clockwise: not yet reached
    assert b.of("cut_offer")[-1] == {"order": [7, 5, 2], "joined": 5}
    b.op("cut_decline", Role.DEALER, seat=7)
    assert b.core.shoe.cut_offeree == 5 and b.core.prompt == "OFFER CUT SEAT 5"
    offers = len(b.of("cut_offer"))
    b.op("sit", Role.DEALER, seat=6)  # the offer has passed seat 6: not offered it
    assert len(b.of("cut_offer")) == offers
    for seat in (5, 2):
        b.op("cut_decline", Role.DEALER, seat=seat)
    assert b.core.shoe.cut_offeree is None and b.core.prompt == "DEALER CUTS"
    b.op("sit", Role.DEALER, seat=1)  # every player declined: the dealer cuts
    assert b.core.shoe.cut_offeree is None and len(b.of("cut_offer")) == offers
    b.op("cut", Role.DEALER, position=50)
    assert b.of("cut")[-1]["by"] == "dealer"


@pytest.mark.reg("681a.5(e)")
@PRESETS
def test_a_recut_or_reshuffle_is_ordered_only_before_the_cards_are_in_the_shoe_and_not_by_a_dealer(preset: str) -> None:
    """681a.5(e): "After the cards have been cut and before the cards have been placed in the
    dealing shoe, a floorperson or above may require the cards to be reshuffled or recut". A
    dealer's order is refused; once the stack is in the shoe (the burn due), a floorperson's recut
    or reshuffle under (e) is refused too; each refusal changes nothing."""
    b = Bench(preset, auto_deal=False)
    b.op("open")
    b.op("cut", Role.DEALER, position=100)
    b.op("cover", Role.DEALER, from_bottom=14)
    assert b.core.state == "ready_to_load"
    for command in ("order_recut", "order_reshuffle"):
        before = state_of(b.core)
        b.op(command, Role.DEALER, operator="d1")
        assert b.of("refused")[-1]["input"] == command and state_of(b.core) == before
    b.op("load", Role.DEALER)
    b.event("shoe", m.ShoeLoaded(len(b.stack)))
    assert b.core.state == "burning"
    for command in ("order_recut", "order_reshuffle"):
        before = state_of(b.core)
        b.op(command)
        assert b.of("refused")[-1]["input"] == command and state_of(b.core) == before
