"""The compiled evaluations of the exact odds (``odds_multisets.MultisetPlan`` in pure Python,
``odds_multisets_numpy.NumpyMultisetPlan`` with numpy) against the straightforward product per
multiset (``odds_main_game.main_counts_reference``), exactly, on seeded random shoes: full,
depleted as by play, and small and lopsided."""
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


@pytest.fixture(params=["python", "numpy"])
def engine(request):
    """Each odds engine in turn, the default restored afterwards."""
    with omg.using_engine(request.param):
        yield request.param


@pytest.mark.parametrize("name", sorted(TABLES))
def test_compiled_plan_equals_the_product_per_multiset(name: str, engine: str) -> None:
    assert omg.engine_in_use() == engine
    table_of, value = TABLES[name]
    table = table_of()
    for shoe in depleted_shoes(seed=15, count=40):
        c = classes(shoe, value)
        fast = omg._main_counts(table, c, shoe.total)
        assert fast == omg.main_counts_reference(table, c, shoe.total), shoe
        assert all(x >= 0 for x in fast)


def test_the_numpy_plan_computes_what_the_pure_plan_does_on_the_same_factors() -> None:
    """The two plans, built from the same table, give the same integers directly (not only
    through ``_main_counts``, which might have fallen back to pure Python)."""
    from controller.rules.odds_multisets import MultisetPlan
    from controller.rules.odds_multisets_numpy import NumpyMultisetPlan

    table = omg._punto_banco_table()
    pure = MultisetPlan(table.groups, len(table.categories))
    vectorised = NumpyMultisetPlan(table.groups, len(table.categories))
    for shoe in depleted_shoes(seed=16, count=20):
        f = omg._factors(classes(shoe, pb.card_value))
        assert vectorised.fits(f)
        assert vectorised.counts(f, shoe.total) == pure.counts(f, shoe.total), shoe


def test_a_shoe_too_large_for_64_bit_integers_is_still_exact(engine: str) -> None:
    """Weights are products of up to six factors: 1,449 cards of one class make them pass
    2**63, so the numpy engine hands such a shoe to the pure plan, and the counts stay exact."""
    from controller.rules.odds_multisets_numpy import NumpyMultisetPlan

    table = omg._punto_banco_table()
    for huge in ([1449] + [1] * 9, [5000, 300, 2, 0, 7, 7, 7, 7, 7, 1449]):
        assert not NumpyMultisetPlan(table.groups, 5).fits(omg._factors(huge))
        n = sum(huge)
        got = omg._main_counts(table, huge, n)
        assert got == omg.main_counts_reference(table, huge, n)
        assert sum(got) == omg.falling(n, omg.ROUND_CARDS)


def test_an_unknown_odds_engine_is_refused_and_changes_nothing() -> None:
    from controller.rules.errors import RulesError

    before = omg.engine_in_use()
    with pytest.raises(RulesError, match="unknown odds engine 'fortran'"):
        omg.use_engine("fortran")
    assert omg.engine_in_use() == before


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


def test_without_numpy_auto_is_pure_python_and_numpy_is_refused(monkeypatch) -> None:
    """A machine without the ``fast`` extra: ``auto`` evaluates in pure Python, asking for numpy
    is refused in the user's words, and the odds are the same exact figures."""
    from controller.rules.errors import RulesError

    with_numpy = exact_odds(load_preset("ez-baccarat")).counts
    monkeypatch.setattr(omg, "numpy_available", lambda: False)
    assert omg.engine_in_use() == "python"
    with pytest.raises(RulesError, match=r"needs numpy: pip install 'numpy<3,>=1.26' \(shoectl's fast extra\)$"):
        omg.use_engine("numpy")
    assert omg.engine_in_use() == "python"
    assert exact_odds(load_preset("ez-baccarat")).counts == with_numpy
