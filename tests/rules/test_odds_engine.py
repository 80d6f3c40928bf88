"""Exact odds by enumeration (controller.rules.odds) against a brute force that deals every
ordered card sequence of small shoes through ``engine.RoundEngine`` and values every wager with
``wagers.net_multiplier`` over the full facts (tests/rules/odds_brute_force.py).

Apart from tests/rules/test_odds.py (the published figures, shoes worked out by hand, ``shoectl
odds``) so that the two run side by side under ``make test``; slow: every test deals up to a few
hundred thousand partial rounds.
"""
from __future__ import annotations

from collections import Counter
from itertools import product

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from odds_brute_force import assert_matches_engine, shoe, with_options

from controller.rules.cards import Composition, card
from controller.rules.submission import load_preset

pytestmark = pytest.mark.slow


PB_SHOES = {
    "minibaccarat": (2, "AS,AS,3H,4D,4D,6H,7C,8D,9S,KH,KS"),
    "ez-baccarat": (2, "AS,2S,3H,4D,4D,6H,7C,8D,9S,KH,QC"),
    "midibaccarat": (2, "AS,2S,3H,4D,4D,6H,7C,7C,9S,KH,KS"),
}


@pytest.mark.parametrize("preset", sorted(PB_SHOES))
def test_punto_banco_family_matches_the_engine_on_every_sequence(preset: str) -> None:
    decks, cards = PB_SHOES[preset]
    assert_matches_engine(load_preset(preset), shoe(decks, cards))


# Naturals (A + ten-value), soft totals, busts on both sides, pairs, flushes, straights (incl.
# Q-K-A and a straight flush), three of a kind and suited three of a kind.
T21_SHOE = (3, "AS,AS,KH,QS,10S,7S,7S,7S,7H,8S,9S,5C")
T21_OPTIONS = [dict(naturals=n, draw_rule=d) for n, d in product((True, False), ("each", "first-only"))]


@pytest.mark.parametrize("bonus_in_play", [True, False], ids=["bonus", "no-bonus"])
@pytest.mark.parametrize("options", T21_OPTIONS, ids=lambda o: "-".join(f"{k}={v}" for k, v in o.items()))
def test_21_baccarat_matches_the_engine_on_every_sequence(options: dict, bonus_in_play: bool) -> None:
    sub = with_options(load_preset("21-baccarat"), **options)
    assert_matches_engine(sub, shoe(*T21_SHOE), bonus_in_play)


POOL = [card(r, s) for r in (1, 2, 3, 5, 6, 7, 8, 9, 10, 12, 13) for s in ("S", "H")]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    preset=st.sampled_from(["minibaccarat", "ez-baccarat", "midibaccarat", "21-baccarat"]),
    cards=st.lists(st.sampled_from(POOL), min_size=6, max_size=8),
    bonus=st.booleans(),
)
def test_random_small_shoes_match_the_engine(preset: str, cards: list, bonus: bool) -> None:
    comp = Composition(dict(Counter(cards)), 3)
    assert_matches_engine(load_preset(preset), comp, bonus)
