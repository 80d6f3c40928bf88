"""Simulation: the fast path equals the engine path; seeded runs repeat; shoes end at the cover card."""
from __future__ import annotations

import json
import math

import pytest

from cli_run import run

from controller.rules.cards import Composition
from controller.rules.submission import load_preset
from controller.simulation import (
    deal_shoe, make_rng, outcome_frequencies, shuffle_and_prepare, simulate, tally_shoe_fast,
    tally_shoe_reference, trie_for, wager_holds,
)


@pytest.mark.parametrize("preset", ["minibaccarat", "ez-baccarat", "midibaccarat"])
def test_fast_path_equals_the_round_engine_on_the_same_shoes(preset: str) -> None:
    sub = load_preset(preset)
    rng, base = make_rng(7), Composition.standard(sub.decks).cards()
    trie = trie_for(sub.game)
    for _ in range(60):
        shoe = shuffle_and_prepare(sub, rng, base)
        fast, ref = tally_shoe_fast(shoe, trie), tally_shoe_reference(shoe, sub)
        assert (fast.rounds, fast.cards_dealt, fast.facts) == (ref.rounds, ref.cards_dealt, ref.facts)


def test_fast_path_handles_a_shoe_that_runs_out() -> None:
    """Force the end-of-shoe branch: a cover card placed after the last card (not legal at a
    table, but the simulator must void a round that cannot complete instead of reading past it)."""
    sub = load_preset("minibaccarat")
    shoe = shuffle_and_prepare(sub, make_rng(3), Composition.standard(8).cards())
    from dataclasses import replace

    shoe = replace(shoe, cover_index=len(shoe.stack))
    fast, ref = tally_shoe_fast(shoe, trie_for(sub.game)), tally_shoe_reference(shoe, sub)
    assert (fast.rounds, fast.void_rounds, fast.facts) == (ref.rounds, ref.void_rounds, ref.facts)
    assert ref.void_rounds == 1


@pytest.mark.reg("681a.7(c)", "681a.7(d)", "681a.5(f)")
def test_a_shoe_is_dealt_from_the_burn_to_the_round_that_meets_the_cover_card() -> None:
    """681a.7(c): "the dealer shall remove the first card and place it in the discard rack"; 681a.7(d):
    when the cover card "appears during play, the cover card shall be removed and placed to the side
    and the hand shall be completed"; 681a.5(f): "A reshuffle of the cards in the shoe shall take
    place after the cover card is reached in the shoe and the round of play is completed". The
    simulator's shoe: one card burned, and its last round is the one that began at or before the
    cover card and met it."""
    sub = load_preset("minibaccarat")
    shoe = shuffle_and_prepare(sub, make_rng(11), Composition.standard(8).cards())
    used = shoe.first_live
    rounds = list(deal_shoe(shoe, sub))
    for r in rounds[:-1]:
        used += r.cards_used
    last_start = used
    used += rounds[-1].cards_used
    assert shoe.first_live == 1  # one burned card
    assert last_start <= shoe.cover_index < used  # the last round began at or before the cover card, and met it
    assert all(r is not None for r in rounds)


def test_seeded_runs_repeat_and_differ_by_seed() -> None:
    sub = load_preset("minibaccarat")
    a, b, c = simulate(sub, 5, seed=1), simulate(sub, 5, seed=1), simulate(sub, 5, seed=2)
    assert a.facts == b.facts and a.rounds == b.rounds
    assert a.facts != c.facts


def test_21_baccarat_simulates_through_the_engine() -> None:
    sub = load_preset("21-baccarat")
    t = simulate(sub, 3, seed=5)
    assert t.shoes == 3 and t.rounds > 50
    holds = wager_holds(t, sub)
    assert set(holds) == {k.value for k in sub.wagers}


def test_frequencies_sum_to_one_and_holds_are_for_offered_wagers() -> None:
    sub = load_preset("ez-baccarat")
    t = simulate(sub, 20, seed=9)
    f = outcome_frequencies(t, sub.game)
    assert abs(f["player"].mean + f["banker"].mean + f["tie"].mean - 1) < 1e-12
    assert set(wager_holds(t, sub)) == {k.value for k in sub.wagers}


@pytest.mark.parametrize("preset, shoes", [("minibaccarat", 300), ("ez-baccarat", 300), ("21-baccarat", 40)])
def test_simulation_agrees_with_exact_odds(preset: str, shoes: int) -> None:
    """Every outcome frequency and wager hold of a seeded run lies within 3.5 standard errors of
    the exact figure (1.8 times the 95% half-width). At 95% a few of the ~15 figures per game fall
    outside their interval by chance (over 40 seeds, 4.3% did), so the test bounds the error more
    loosely; a systematic error (a wrong payout rule, a path that drifts from the engine) is many
    standard errors off."""
    from controller.rules.odds import exact_odds

    sub = load_preset(preset)
    t = simulate(sub, shoes, seed=2026)
    exact = exact_odds(sub)
    figures = [(n, e, exact.outcomes[n]) for n, e in outcome_frequencies(t, sub.game).items()]
    figures += [(n, e, exact.wagers[n]["house_edge"]) for n, e in wager_holds(t, sub).items()]
    assert len(figures) >= 8
    for name, est, ref in figures:
        half = (est.high - est.low) / 2
        assert half > 0
        assert abs(est.mean - float(ref)) <= 1.8 * half, (name, est, float(ref))


@pytest.mark.parametrize("n", [2, 3, 52, 416, 624])
def test_the_inline_shuffle_is_random_shuffle(n: int) -> None:
    """The fast shuffle makes exactly random.shuffle's draws and swaps: the same permutation and
    the generator left in the same state, so a seed deals the same shoes on every path."""
    import random

    from controller.simulation_shoe import shuffle

    for seed in range(20):
        a, b = list(range(n)), list(range(n))
        ra, rb = random.Random(seed), random.Random(seed)
        ra.shuffle(a)
        shuffle(rb, b)
        assert a == b and ra.random() == rb.random()


def test_fast_path_deals_the_shoes_the_reference_path_deals_for_a_seed() -> None:
    """simulate() on the fast path and on the engine path, same seed: the same tallies."""
    sub = load_preset("ez-baccarat")
    fast, ref = simulate(sub, 40, seed=4), simulate(sub, 40, seed=4, fast=False)
    assert (fast.rounds, fast.cards_dealt, fast.facts) == (ref.rounds, ref.cards_dealt, ref.facts)
    assert [n for n, _ in fast.batches] == [n for n, _ in ref.batches]


@pytest.mark.parametrize("argv", [
    ("--shoes", "2", "--seed", "1", "--engine", "python"),
    ("--shoes", "2", "--seed", "1", "--engine", "auto"),
    ("--shoes", "1", "--seed", "2", "--engine", "python", "--game", "ez-baccarat"),
    ("--shoes", "2", "--seed", "3", "--engine", "python", "--game", "ez-baccarat"),
])
def test_an_outcome_frequencys_interval_lies_within_0_and_100_percent(capsys, argv: tuple[str, ...]) -> None:
    """A frequency is a proportion: its 95% interval (Wilson's) is within [0, 100%] even from two
    shoes (Student's t with 1 degree of freedom) or for a rare event, and holds the estimate; the
    holds keep their symmetric interval (a hold may be below -100%)."""
    code, out, _ = run(capsys, "simulate", "--json", *argv)
    assert code == 0
    report = json.loads(out)
    for name, figure in report["outcomes"].items():
        low, high = figure["ci95"]
        assert 0.0 <= low <= figure["value"] <= high <= 1.0, (name, figure)
    for figure in report["wagers"].values():
        if figure["ci95"] is None:  # a wager never won in one shoe: no spread, no interval, no verdict
            assert figure["agrees"] is None and figure["value"] == 1.0, figure
            continue
        low, high = figure["ci95"]
        assert math.isclose(figure["value"] - low, high - figure["value"], rel_tol=1e-9, abs_tol=1e-12)
    code, out, _ = run(capsys, "simulate", *argv)
    assert code == 0 and "[-" not in out.split("\nwager")[0]


@pytest.mark.reg("681a.5(d)", "681a.7(c)")
def test_the_second_cover_card_goes_where_the_rules_allow_whatever_the_burn(tmp_path) -> None:
    """681a.5(d): the second cover card "in a position at least ten cards above the bottom of the
    stack" (or the submission's deeper minimum), below the cards 681a.7(c) burns ("remove the first
    card" after the batch is placed in the shoe). The dealer's usual place, 14-16 cards above the
    bottom (the automated dealer's and the simulator's: ``cover_range``), moves under a long burn
    of a one-deck shoe: with 40 cards burned, every shoe used to be refused its cover for ever at
    the table, and dealt nothing in ``simulate`` (a configuration review)."""
    from types import SimpleNamespace

    from controller.rules.shoe import check_second_cover
    from controller.rules.submission import load_submission
    from controller.simulation_shoe import cover_range

    for decks in (1, 2, 8):
        n = decks * 52
        for depth in (10, 16, 20, n // 2):
            for burn in range(1, min(52, n - depth) + 1):
                lo, hi = cover_range(SimpleNamespace(decks=decks, min_cover_depth=depth, burn_cards=burn))
                assert lo <= hi, (decks, depth, burn)
                check_second_cover(n, lo, depth, burn)
                check_second_cover(n, hi, depth, burn)
    assert cover_range(load_preset("minibaccarat")) == (14, 16)  # the usual place, where the rules allow it
    path = tmp_path / "long-burn.toml"
    path.write_text('[submission]\ngame = "punto-banco"\ndecks = 1\nburn_cards = 40\n')
    sub = load_submission(path)
    assert cover_range(sub) == (12, 12)  # as near the usual place as the burn lets it
    for engine in ("python", "numpy"):
        assert simulate(sub, shoes=30, seed=4, engine=engine).rounds >= 30, engine  # every shoe deals


@pytest.mark.parametrize("game", ["punto-banco", "ez-baccarat", "21-baccarat"])
def test_the_text_says_how_many_figures_miss_their_interval_beside_what_chance_gives(capsys, game: str) -> None:
    """Each figure's 95 % interval misses its exact figure one time in twenty where the cards follow
    the exact odds, so a run of a dozen figures shows a "NO" about every other time, which an
    operator could take for a failure (a gaming lab's review): the text counts the misses beside
    what chance alone gives, the same count the rows' "NO"s show."""
    code, out, _ = run(capsys, "simulate", "--game", game, "--shoes", "40", "--seed", "3")
    assert code == 0
    rows = [line.split() for line in out.splitlines() if line.endswith((" yes", " NO"))]
    judged, outside = len(rows), sum(row[-1] == "NO" for row in rows)
    assert judged >= 8
    assert out.rstrip().splitlines()[-1] == (
        f"{outside} of {judged} figures outside their 95% interval, where chance alone puts 1 in 20 "
        f"({judged / 20:.1f} of {judged} on average) when the cards follow the exact odds")


def test_the_count_of_misses_is_of_the_figures_an_exact_one_judges(capsys) -> None:
    from controller.cli.cmd_simulate import print_agreement

    print_agreement({"a": {"agrees": True}, "b": {"agrees": False}, "c": {"agrees": None}}, {"d": {"value": 1}},
                    {"e": {"agrees": False}})
    assert capsys.readouterr().out == ("\n2 of 3 figures outside their 95% interval, where chance alone puts 1 in 20 "
                                       "(0.1 of 3 on average) when the cards follow the exact odds\n")
    print_agreement({"a": {"agrees": None}}, {})  # nothing to judge (no exact figure, or no spread): no line
    assert capsys.readouterr().out == ""
