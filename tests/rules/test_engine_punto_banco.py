"""The Punto Banco round engine (Minibaccarat, Midibaccarat, EZ Baccarat)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules import punto_banco as pb
from controller.rules.cards import ALL_CARDS, card, parse_cards
from controller.rules.engine import RoundEngine, deal
from controller.rules.errors import InsufficientCardsError, RoundStateError
from controller.rules.model import Game, Outcome, Target

# The published third-card rule, transcribed independently of the engine: Banker total -> D/S by the Player's third card 0..9.
TABLEAU = {3: "DDDDDDDDSD", 4: "SSDDDDDDSS", 5: "SSSSDDDDSS", 6: "SSSSSSDDSS"}

VALUE_CARD = {v: card(v if v else 10, "S") for v in range(10)}


def cards_for(*values: int) -> list:
    return [VALUE_CARD[v] for v in values]


@pytest.mark.parametrize("banker", range(10))
@pytest.mark.parametrize("third", range(10))
def test_banker_draw_rule_matches_the_tableau(banker: int, third: int) -> None:
    if banker <= 2:
        expected = True
    elif banker >= 7:
        expected = False
    else:
        expected = TABLEAU[banker][third] == "D"
    assert pb.banker_draws(banker, third) is expected


@pytest.mark.parametrize("total", range(10))
def test_player_draws_on_0_to_5_and_banker_after_player_stands(total: int) -> None:
    assert pb.player_draws(total) is (total <= 5)
    assert pb.banker_draws(total, None) is (total <= 5)


@pytest.mark.reg("629a.8(a)", "629a.8(c)")
def test_initial_four_cards_go_player_banker_player_banker() -> None:
    """629a.8(a): "There shall be two hands dealt in the game of Midibaccarat, one of which shall be
    designated the Player's Hand and the other designated the Banker's Hand" (Midibaccarat is dealt by the Punto
    Banco engine); 629a.8(c): "The dealer shall then deal an initial four cards from the dealing shoe. The first and
    third cards dealt shall be placed ... on the area designated for the Player's Hand and the second and fourth
    cards dealt shall be placed ... on the area designated for the Banker's Hand"."""
    engine = RoundEngine(Game.PUNTO_BANCO)
    targets = [engine.feed(c) for c in parse_cards("2S,3S,4S,5S")]
    assert targets == [Target.PLAYER, Target.BANKER, Target.PLAYER, Target.BANKER]
    assert engine.hand(Target.PLAYER) == tuple(parse_cards("2S,4S"))  # first and third cards
    assert engine.hand(Target.BANKER) == tuple(parse_cards("3S,5S"))  # second and fourth


@pytest.mark.parametrize("p1,b1,p2,b2", [(4, 0, 4, 0), (9, 3, 0, 3), (1, 4, 7, 4), (0, 9, 0, 0)])
def test_a_natural_ends_the_round(p1: int, b1: int, p2: int, b2: int) -> None:
    r = deal(cards_for(p1, b1, p2, b2, 5, 5))
    assert r.cards_used == 4 and r.natural


def test_worked_examples() -> None:
    # Player 2+3=5 draws a 4 -> 9; Banker 3+3=6 with Player's third 4 stands.
    r = deal(parse_cards("2H,3D,3C,3S,4H,KC"))
    assert [str(c) for c in r.player] == ["2H", "3C", "4H"] and r.player_total == 9
    assert r.banker_total == 6 and r.outcome is Outcome.PLAYER and r.cards_used == 5
    # Player stands on 7; Banker 5 draws.
    r = deal(parse_cards("4H,2D,3C,3S,KH"))
    assert len(r.player) == 2 and len(r.banker) == 3 and r.banker_total == 5
    assert r.outcome is Outcome.PLAYER
    # Banker 3 draws unless the Player's third card is an 8.
    assert len(deal(cards_for(1, 1, 1, 2, 8, 0)).banker) == 2
    assert len(deal(cards_for(1, 1, 1, 2, 9, 0)).banker) == 3


def test_engine_refuses_a_card_after_completion_and_changes_nothing() -> None:
    engine = RoundEngine(Game.PUNTO_BANCO)
    for c in cards_for(8, 1, 0, 1):
        engine.feed(c)
    assert engine.complete and engine.next_target() is None
    before = engine.result()
    with pytest.raises(RoundStateError):
        engine.feed(VALUE_CARD[5])
    assert engine.result() == before


def test_result_before_completion_is_an_error() -> None:
    engine = RoundEngine(Game.PUNTO_BANCO)
    engine.feed(VALUE_CARD[1])
    with pytest.raises(RoundStateError, match="next card goes to the banker"):
        engine.result()


@pytest.mark.reg("627a.13(e)")
def test_running_out_of_cards_voids_the_round() -> None:
    """627a.13(e): "If there are insufficient cards remaining in the dealing shoe to complete a round of play,
    that round shall be void": five cards where the round needs six, and the engine refuses the round as void (its
    wagers are returned by ``wagers.void``, tests/rules/test_wagers.py)."""
    with pytest.raises(InsufficientCardsError, match="void.*insufficient cards"):
        deal(cards_for(1, 1, 1, 1, 1))  # Player 2 draws, Banker 2 draws: needs 6


def test_result_is_immutable() -> None:
    r = deal(cards_for(8, 1, 0, 1))
    with pytest.raises(AttributeError):
        r.outcome = Outcome.PLAYER  # type: ignore[misc]


def test_ez_dragon7_and_panda8() -> None:
    # Banker 3-card 7 beating Player 6: Dragon 7.
    r = deal(cards_for(3, 1, 3, 1, 5), Game.EZ_BACCARAT)
    assert r.banker_total == 7 and len(r.banker) == 3 and r.player_total == 6 and r.dragon7
    # Player 3-card 8 beating Banker 7: Panda 8.
    r = deal(cards_for(2, 3, 1, 4, 5), Game.EZ_BACCARAT)
    assert r.player_total == 8 and len(r.player) == 3 and r.banker_total == 7 and r.panda8
    # A two-card Banker 7 is no Dragon.
    assert not deal(cards_for(3, 3, 3, 4), Game.EZ_BACCARAT).dragon7


shoe_cards = st.lists(st.sampled_from(ALL_CARDS), min_size=6, max_size=6)


@given(shoe_cards, st.sampled_from([Game.PUNTO_BANCO, Game.EZ_BACCARAT]))
def test_incremental_equals_batch_and_uses_4_to_6_cards(cards: list, game: Game) -> None:
    batch = deal(cards, game)
    engine = RoundEngine(game)
    i = 0
    while engine.next_target() is not None:
        engine.feed(cards[i])
        i += 1
    assert engine.result() == batch
    assert 4 <= batch.cards_used <= 6
    assert [c for c, _ in batch.dealt] == cards[: batch.cards_used]


@settings(max_examples=300)
@given(shoe_cards, st.lists(st.sampled_from("CDHS"), min_size=6, max_size=6))
def test_outcome_does_not_depend_on_suits(cards: list, suits: list) -> None:
    resuited = [card(c.rank, s) for c, s in zip(cards, suits)]
    a, b = deal(cards), deal(resuited)
    assert (a.outcome, a.player_total, a.banker_total, a.cards_used) == (b.outcome, b.player_total, b.banker_total, b.cards_used)
    assert [t for _, t in a.dealt] == [t for _, t in b.dealt]
