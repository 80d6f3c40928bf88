"""The compiled evaluation of the exact odds (``odds_multisets.MultisetPlan``) against the
straightforward product per multiset (``odds_main_game.main_counts_reference``), exactly, on
seeded random shoes: full, depleted as by play, and small and lopsided."""
from __future__ import annotations

import random

import pytest

from controller.rules import odds_main_game as omg
from controller.rules import punto_banco as pb
from controller.rules import twentyone as t21
from controller.rules.cards import Composition
from controller.rules.odds import exact_odds
from controller.rules.submission import load_preset


def depleted_shoes(seed: int, count: int) -> list[Composition]:
    """Seeded random compositions: 1 to 8 decks with 0 up to all but 6 cards removed."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        full = Composition.standard(rng.randint(1, 8))
        cards = full.cards()
        rng.shuffle(cards)
        out.append(full.remove(cards[: rng.randint(0, len(cards) - 6)]))
    return [Composition.standard(8), *out]


def classes(composition: Composition, value) -> list[int]:
    out = [0] * 10
    for c, k in composition.counts().items():
        out[value(c)] += k
    return out


TABLES = {
    "punto-banco": (omg._punto_banco_table, pb.card_value),
    "21 each, naturals": (lambda: omg._twentyone_table(True, "each"), lambda c: t21.card_value(c) - 1),
    "21 first-only, no naturals": (lambda: omg._twentyone_table(False, "first-only"), lambda c: t21.card_value(c) - 1),
}


@pytest.mark.parametrize("name", sorted(TABLES))
def test_compiled_plan_equals_the_product_per_multiset(name: str) -> None:
    table_of, value = TABLES[name]
    table = table_of()
    for shoe in depleted_shoes(seed=15, count=40):
        c = classes(shoe, value)
        fast = omg._main_counts(table, c, shoe.total)
        assert fast == omg.main_counts_reference(table, c, shoe.total), shoe
        assert all(x >= 0 for x in fast)


def test_exact_odds_after_every_round_of_a_dealt_shoe_equals_the_reference() -> None:
    """A real dealt shoe (the simulator's own preparation), after each round: the exact odds'
    main-game counts equal the reference on the composition left."""
    from controller.simulation import deal_shoe, make_rng, shuffle_and_prepare

    sub = load_preset("ez-baccarat")
    rng = make_rng(7)
    shoe = shuffle_and_prepare(sub, rng, Composition.standard(sub.decks).cards())
    left = Composition.standard(sub.decks).remove(shoe.burned)
    table = omg._punto_banco_table()
    for result in deal_shoe(shoe, sub):
        if result is None:
            break
        left = left.remove(c for c, _ in result.dealt)
        if left.total < 6:
            break
        report = exact_odds(sub, left)
        ref = dict(zip(omg.PUNTO_BANCO_CATEGORIES, omg.main_counts_reference(table, classes(left, pb.card_value), left.total)))
        assert report.counts["tie"] == ref["tie"]
        assert report.counts["dragon7"] == ref["banker_dragon7"]
        assert report.counts["panda8"] == ref["player_panda8"]
        assert report.counts["banker"] == ref["banker"] + ref["banker_dragon7"]


def test_a_changed_paytable_is_valued_afresh_each_call() -> None:
    """The net multipliers remembered per submission never leak into another submission: two
    submissions differing only in the Tie's payout, asked in turn, each get their own edge, the
    same as with nothing remembered."""
    import dataclasses
    from fractions import Fraction

    from controller.rules import odds
    from controller.rules.model import Payout, WagerKind

    eight = load_preset("minibaccarat")
    nine = dataclasses.replace(eight, paytable={**eight.paytable, WagerKind.TIE: Payout(9)})
    first = [exact_odds(sub).wagers["tie"]["house_edge"] for sub in (eight, nine, eight, nine)]
    odds.clear_caches()
    fresh = [exact_odds(sub).wagers["tie"]["house_edge"] for sub in (eight, nine)]
    assert first == fresh * 2
    p_tie = exact_odds(eight).outcomes["tie"]
    assert fresh == [1 - 9 * p_tie, 1 - 10 * p_tie] and fresh[0] > fresh[1] > Fraction(0)
