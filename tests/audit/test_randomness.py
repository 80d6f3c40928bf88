"""The randomness tests on constructed orders: statistics with known values, input checks, and the
audit's verdict for a good and for weak shufflers (generated orders, no journal)."""
from __future__ import annotations

import random

import pytest

from controller.audit.orders import card_text, check_complete, code, fresh_order, impute
from controller.audit.randomness import (
    adjacency_test,
    kept_adjacencies,
    position_max_test,
    positional_test,
    rising_sequences,
    rising_sequences_test,
    runs_test,
    runs_up_down,
    serial_correlation_test,
    validate_orders,
)
from controller.audit.shuffle_audit import ALL_TESTS, audit_orders
from firmware_bridge.emulator.cards import standard_stack
from firmware_bridge.emulator.shuffle_models import parse_model


def shuffled(decks: int, count: int, seed: int, model: str = "uniform") -> list[list[int]]:
    rng = random.Random(seed)
    shuffle = parse_model(model).shuffle
    pre = fresh_order(decks)
    return [shuffle(pre, rng) for _ in range(count)]


# --- orders --------------------------------------------------------------------------------------

def test_fresh_order_is_the_emulators_stack() -> None:
    assert fresh_order(2) == [code(c.rank, c.suit) for c in standard_stack(2)]
    assert [card_text(c) for c in fresh_order(1)[:3]] == ["AC", "2C", "3C"]
    assert card_text(51) == "KS" and card_text(code(10, 2)) == "10H"


def test_check_complete_and_impute() -> None:
    order = fresh_order(2)
    check_complete(order, 2)
    with pytest.raises(ValueError, match="AC appears 3 times"):
        check_complete([0, *order[1:-1], 0], 2)
    with pytest.raises(ValueError, match="103 cards"):
        check_complete(order[:-1], 2)
    partial: list[int | None] = list(order)
    partial[5] = partial[77] = None
    full, n = impute(partial, 2, random.Random(1))
    assert n == 2 and sorted(full) == sorted(order) and full[:5] == order[:5]
    with pytest.raises(ValueError, match="seen more than 2 times"):
        impute([0, 0, 0, *[None] * 101], 2, random.Random(1))


def test_validate_orders_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="no card orders"):
        validate_orders([])
    with pytest.raises(ValueError, match="shoe 2"):
        validate_orders([fresh_order(1), fresh_order(1)[:-1] + [0]])
    with pytest.raises(ValueError, match="shoe 2"):
        validate_orders([fresh_order(1), fresh_order(2)])
    with pytest.raises(ValueError, match="whole number of decks"):
        validate_orders([[0, 1, 2]])


# --- statistics with known values ----------------------------------------------------------------

def test_statistics_of_an_unshuffled_stack() -> None:
    pre = fresh_order(2)
    assert rising_sequences(pre, pre) == 1
    assert kept_adjacencies(pre, pre) == len(pre) - 1
    # reversed: every label's successor comes first, except across the decks' boundary, where the
    # second deck's ace (the second copy met, the last card) follows the first deck's king
    assert rising_sequences(list(reversed(pre)), pre) == len(pre) - 1
    assert runs_up_down([1, 2, 3, 2, 1, 5]) == 3
    assert runs_up_down([3, 1, 2, 0, 4]) == 4


def test_two_decks_riffled_once_have_at_most_two_rising_sequences_per_copy_set() -> None:
    # one GSR riffle of distinct cards leaves at most 2 rising sequences
    rng = random.Random(4)
    riffle = parse_model("riffle:1")
    deck = fresh_order(1)
    for _ in range(20):
        assert rising_sequences(riffle.shuffle(deck, rng), deck) <= 2


def test_one_stuck_card_shows_in_the_position_maximum() -> None:
    orders = shuffled(8, 8, seed=3, model="stuck:17")
    result = position_max_test(orders)
    assert result.statistic == 8 and result.detail["place"] == 17
    assert result.detail["card_code"] == fresh_order(8)[16]
    assert result.p_value < 1e-6


def test_the_position_maximum_claims_no_null_mean() -> None:
    """A lab's review: ``expected`` said S/52, one cell's mean, beside the largest of M x 52 cells
    (about 4.6 for 20 uniform shoes), so a uniform shoe's maximum read 13 times "too high". That
    maximum's null mean has no closed form: none is given (JSON null, "-" in the report)."""
    result = position_max_test(shuffled(8, 20, seed=1, model="uniform"))
    assert result.expected is None and result.to_json()["expected"] is None and result.statistic >= 2


def test_one_shoe_cannot_fail_the_positional_tests() -> None:
    orders = shuffled(8, 1, seed=1, model="riffle:1")
    assert positional_test(orders).p_value == 1.0
    assert position_max_test(orders).p_value == 1.0


def test_every_test_reports_a_p_value_and_its_contract() -> None:
    orders = shuffled(2, 6, seed=11)
    pre = fresh_order(2)
    results = [positional_test(orders), position_max_test(orders), adjacency_test(orders, pre),
               rising_sequences_test(orders, pre), runs_test(orders, seed=2), serial_correlation_test(orders)]
    assert [r.name for r in results] == list(ALL_TESTS)
    for r in results:
        assert 0.0 <= r.p_value <= 1.0
        assert r.alternative in ("greater", "less", "two-sided")
        assert r.shoes == 6
    assert results[0].df == 104 * 51
    assert results[3].expected == pytest.approx(6 * 52.1666666, rel=1e-6)


def test_pre_orders_per_shoe_with_unknowns() -> None:
    orders = shuffled(1, 3, seed=5)
    pre = fresh_order(1)
    result = adjacency_test(orders, [None, pre, pre])
    assert result.shoes == 2
    with pytest.raises(ValueError, match="no shoe has a known pre-shuffle order"):
        rising_sequences_test(orders, [None, None, None])
    with pytest.raises(ValueError, match="2 pre-shuffle orders for 3 shoes"):
        adjacency_test(orders, [pre, pre])


def test_runs_test_is_reproducible_for_a_seed() -> None:
    orders = shuffled(2, 3, seed=8)
    assert runs_test(orders, seed=4) == runs_test(orders, seed=4)


# --- the audit's verdict -------------------------------------------------------------------------

def test_audit_of_a_good_shuffler_passes_and_reports_holm() -> None:
    result = audit_orders(shuffled(8, 12, seed=2024), confidence=0.99, pre_orders=fresh_order(8))
    assert result.passed
    doc = result.to_json()
    assert doc["verdict"] == "pass" and doc["multiple_testing"] == "Holm-Bonferroni"
    assert doc["alpha"] == 0.01 and doc["shoes"] == 12 and doc["decks"] == 8
    assert [t["name"] for t in doc["tests"]] == list(ALL_TESTS)
    for t in doc["tests"]:
        assert t["p_adjusted"] >= t["p_value"] and t["passed"] and not t["rejected"]


def test_audit_without_a_pre_order_skips_the_order_tests() -> None:
    result = audit_orders(shuffled(2, 3, seed=1))
    assert [t.name for t in result.tests] == ["positional", "position_max", "runs", "serial_correlation"]
    with pytest.raises(ValueError, match="need a pre-shuffle order"):
        audit_orders(shuffled(2, 3, seed=1), tests=["adjacency"])
    with pytest.raises(ValueError, match="unknown test"):
        audit_orders(shuffled(2, 3, seed=1), tests=["poker"])
    with pytest.raises(ValueError, match="confidence"):
        audit_orders(shuffled(2, 3, seed=1), confidence=1.5)


@pytest.mark.parametrize("model, shoes, caught_by", [
    ("riffle:1", 1, {"adjacency", "rising_sequences", "runs", "serial_correlation"}),
    ("riffle:2", 1, {"adjacency", "rising_sequences"}),
    ("riffle:4", 1, {"adjacency", "rising_sequences"}),
    ("strip", 1, {"adjacency", "rising_sequences", "runs", "serial_correlation"}),
    ("stuck:17", 12, {"position_max"}),
])
def test_audit_fails_weak_shufflers(model: str, shoes: int, caught_by: set[str]) -> None:
    for seed in range(3):
        result = audit_orders(shuffled(8, shoes, seed=seed, model=model), confidence=0.99, pre_orders=fresh_order(8))
        assert not result.passed, f"{model} passed with seed {seed}"
        rejected = {t.name for t, rej in zip(result.tests, result.rejected) if rej}
        assert caught_by <= rejected, f"{model}: rejected only {rejected}"
