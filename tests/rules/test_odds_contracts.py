"""Contracts of the exact-odds engines (docs/odds.md) that no test held: each test here kills a mutant
the suite let live (a mutation review)."""
from __future__ import annotations

import itertools
from collections import Counter

import pytest

from controller.rules import odds_main_game
from controller.rules.odds import exact_odds
from controller.rules.odds_pairs_bonus import pair_counts
from controller.rules.submission import load_preset


def test_pair_counts_equal_enumeration_with_four_or_more_of_a_rank() -> None:
    # docs/odds.md "Pairs": both hands paired = (S^2 - sum (n(n-1))^2 + sum n(n-1)(n-2)(n-3)) x ...;
    # the last term only matters when a rank has 4 or more cards, which the small brute-force
    # shoes of the other tests never have.
    ranks = [1] * 5 + [13] * 3  # five aces, three kings
    counts = [0] * 13
    for r in ranks:
        counts[r - 1] += 1
    seen: Counter = Counter()
    for seq in itertools.permutations(range(len(ranks)), 6):
        p = ranks[seq[0]] == ranks[seq[2]]
        b = ranks[seq[1]] == ranks[seq[3]]
        seen[p, b] += 1
    assert pair_counts(counts, len(ranks)) == dict(seen)


def test_midibaccarat_house_money_edge_is_the_documented_figure() -> None:
    # docs/odds.md: "The 6-deck midibaccarat preset gives ... House Money (3:1 / 15:1) 36.4594%".
    report = exact_odds(load_preset("midibaccarat"))
    assert report.decks == 6
    assert f"{float(report.wagers['house_money']['house_edge']) * 100:.4f}" == "36.4594"


def test_house_money_payout_text_names_each_odds_with_its_case() -> None:
    report = exact_odds(load_preset("midibaccarat"))
    assert report.payouts["house_money"] == "3:1 one pair, 15:1 both"


def test_auto_engine_is_numpy_when_numpy_is_installed() -> None:
    pytest.importorskip("numpy")
    with odds_main_game.using_engine("auto"):
        assert odds_main_game.engine_in_use() == "numpy"
    with odds_main_game.using_engine("python"):
        assert odds_main_game.engine_in_use() == "python"
