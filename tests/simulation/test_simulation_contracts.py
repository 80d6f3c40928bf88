"""Contracts of controller/simulation*.py (docs/performance.md) that no test held: each test here kills a mutant
the suite let live (a mutation review)."""
from __future__ import annotations

import dataclasses
import math
from collections import Counter

from controller.rules.cards import Composition
from controller.rules.engine import RoundFacts
from controller.rules.model import Outcome, WagerKind
from controller.rules.submission import load_preset
from controller.simulation import (
    BATCHES, Tally, batch_size, make_rng, proportion_estimate, shuffle_and_prepare, simulate, t975,
    tally_shoe_reference,
)


def test_students_t_is_used_up_to_30_degrees_of_freedom() -> None:
    # "Student's t, two-sided 95%, by degrees of freedom (1..30); beyond 30 the normal quantile"
    assert t975(1) == 12.706 and t975(30) == 2.042
    assert abs(t975(31) - 1.959963984540054) < 1e-12


def test_an_event_never_seen_in_83_rounds_has_the_wilson_upper_bound() -> None:
    # docs/performance.md: an event not yet seen: [0.0000%, 4.4235%] (Wilson, z = 1.96, n = 83)
    t = Tally(shoes=1, rounds=83, facts=Counter({RoundFacts(Outcome.BANKER): 83}))
    est = proportion_estimate(t, lambda f: f.outcome is Outcome.TIE)
    z = 1.959963984540054
    assert est.mean == 0.0 and est.low == 0.0
    assert math.isclose(est.high, z * z / (83 + z * z), rel_tol=1e-12)
    assert f"{est.high * 100:.4f}" == "4.4235"


def test_wilson_interval_of_a_single_batch_is_the_textbook_formula() -> None:
    # 30 of 100 rounds; one batch: the per-round variance gives n_eff = n - 1 = 99
    t = Tally(shoes=1, rounds=100, facts=Counter({RoundFacts(Outcome.TIE): 30, RoundFacts(Outcome.BANKER): 70}))
    est = proportion_estimate(t, lambda f: f.outcome is Outcome.TIE)
    p, z, n = 0.3, 1.959963984540054, 99.0
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    assert math.isclose(est.low, centre - half, rel_tol=1e-9)
    assert math.isclose(est.high, centre + half, rel_tol=1e-9)


def test_the_fast_paths_batches_are_whole_groups_of_batch_size_shoes() -> None:
    # 3100 shoes: batches of 103 shoes (3100 // 30), 30 of them and one of 10, each the rounds of
    # exactly its shoes, whatever the fast path's own step (50 shoes here)
    sub = load_preset("minibaccarat")
    shoes = 3100
    size = batch_size(shoes)
    assert size == 103
    rounds: list[int] = []
    t = simulate(sub, shoes, seed=11, engine="python", on_shoe=lambda i, one: rounds.append(one.rounds))
    assert len(rounds) == shoes
    expected = [sum(rounds[i:i + size]) for i in range(0, shoes, size)]
    assert len(t.batches) == len(expected) == BATCHES + 1
    assert [n for n, _ in t.batches] == expected
    assert sum(t.facts.values()) == t.rounds == sum(rounds)  # the whole run's facts, with on_shoe too


def test_a_banker_bonus_alone_puts_the_bonus_in_play() -> None:
    # 681a.7(f)(2): a hand below 17 gets the bonus-only card when "a Bonus Wager was placed":
    # a table offering only the Banker Bonus deals exactly as one offering both.
    both = load_preset("21-baccarat")
    banker_only = dataclasses.replace(both, wagers=frozenset(both.wagers - {WagerKind.PLAYER_BONUS}))
    assert WagerKind.BANKER_BONUS in banker_only.wagers and WagerKind.PLAYER_BONUS not in banker_only.wagers
    shoe = shuffle_and_prepare(both, make_rng(5), Composition.standard(both.decks).cards())
    a, b = tally_shoe_reference(shoe, both), tally_shoe_reference(shoe, banker_only)
    assert (a.rounds, a.cards_dealt, a.facts) == (b.rounds, b.cards_dealt, b.facts)


def test_a_single_batch_interval_is_the_per_round_standard_error() -> None:
    # 30 ties in 100 rounds: sample variance 0.21 * 100/99, the mean's variance that over 100
    from controller.simulation import Z95, estimate
    t = Tally(shoes=1, rounds=100, facts=Counter({RoundFacts(Outcome.TIE): 30, RoundFacts(Outcome.BANKER): 70}))
    est = estimate(t, lambda f: f.outcome is Outcome.TIE)
    half = Z95 * math.sqrt(0.21 * 100 / 99 / 100)
    assert math.isclose(est.mean, 0.3) and math.isclose(est.high - est.mean, half, rel_tol=1e-9)


def test_batch_means_use_the_unbiased_variance_and_students_t() -> None:
    from controller.simulation import batch_means_estimate
    est = batch_means_estimate([(10, 3.0), (10, 5.0), (10, 4.0)])
    var = 3 / 2 * ((3 - 4) ** 2 + (5 - 4) ** 2 + 0) / 30 ** 2
    assert math.isclose(est.mean, 0.4)
    assert math.isclose(est.high - est.mean, 4.303 * math.sqrt(var), rel_tol=1e-12)


def test_an_empty_batch_is_not_a_batch() -> None:
    from controller.simulation import batch_means_estimate, estimate
    tie, banker = RoundFacts(Outcome.TIE), RoundFacts(Outcome.BANKER)
    batches = [(10, Counter({tie: 3, banker: 7})), (10, Counter({tie: 5, banker: 5})), (0, Counter())]
    t = Tally(shoes=3, rounds=20, facts=Counter({tie: 8, banker: 12}), batches=batches)
    got = estimate(t, lambda f: f.outcome is Outcome.TIE)
    assert got == batch_means_estimate([(10, 3.0), (10, 5.0)])


def test_bonus_rank_frequencies_are_the_ranks_above_none() -> None:
    from controller.simulation import bonus_rank_frequencies
    t = Tally(shoes=1, rounds=1, facts=Counter({RoundFacts(Outcome.TIE): 1}))
    keys = set(bonus_rank_frequencies(t))
    assert keys and not any(k.endswith(":none") for k in keys)


def test_simulating_no_shoe_is_refused() -> None:
    import pytest
    from controller.rules.errors import RulesError
    with pytest.raises(RulesError, match="--shoes must be at least 1"):
        simulate(load_preset("minibaccarat"), 0, seed=1)


def test_a_round_starting_at_a_cover_card_near_the_end_is_dealt_from_its_last_four_cards() -> None:
    # Each round here is two naturals (4 + 5 = 9 each): four cards. The cover card is at index 8
    # of 12 cards: the round starting there is still dealt (round_may_start: dealt == cover), and
    # four cards are enough for it: 3 rounds, 12 cards, none void.
    from controller.rules.model import Game
    from controller.simulation_fast import deal_ranks, tableau_for
    tableau = tableau_for(Game.PUNTO_BANCO)
    counts = [0] * tableau.codes
    assert deal_ranks([4, 4, 5, 5] * 3, 0, 8, tableau, counts) == (3, 12, 0)
    assert sum(counts) == 3


def test_merging_into_an_empty_tally_starts_its_first_batch() -> None:
    one = Tally(shoes=1, rounds=5, facts=Counter({RoundFacts(Outcome.TIE): 5}))
    total = Tally()
    total.merge(one)
    assert total.rounds == 5 and total.batches == [(5, Counter({RoundFacts(Outcome.TIE): 5}))]


def test_seed_zero_is_a_seed() -> None:
    assert make_rng(0).random() == make_rng(0).random()


def test_the_numpy_engine_refuses_a_cover_card_without_room_for_a_round_below_it() -> None:
    import numpy as np
    import pytest
    from controller.rules.errors import RulesError
    from controller.rules.model import Game
    from controller.simulation_fast import tableau_for
    from controller.simulation_numpy import deal_shoes
    ranks = np.full((1, 20), 4, np.int32)
    with pytest.raises(RulesError, match="room for a whole round"):
        deal_shoes(ranks, 0, np.array([15]), tableau_for(Game.PUNTO_BANCO))  # 5 cards from the cover to the end


def test_the_numpy_shoes_cut_anywhere_legal_and_burn_the_submissions_burn_cards() -> None:
    # 681a.5(c): the cut at least ten cards from either end (random_cut: depth .. n - depth, both
    # included); 681a.7(c) / the submission: burn_cards cards burned
    import numpy as np
    from controller.simulation_numpy import draw_shoes
    sub = dataclasses.replace(load_preset("minibaccarat"), decks=1, burn_cards=2)
    _, first_live, _ = draw_shoes(sub, np.random.default_rng(3), 20000)
    assert int(first_live.min()) == 10 + 2 and int(first_live.max()) == 52 - 10 + 2
