"""The audit package's contracts at their edges (cardset, stats, randomness, shuffle_audit, orders,
journal_source, journal_audit): each test quotes what the docstring or docs/audit.md requires. A
mutation review found each of these changes of the code surviving the tests before."""
from __future__ import annotations

import math
import random
from types import SimpleNamespace as E

import pytest

from controller.audit.cardset import UNREADABLE, Read, verify_cardset
from controller.audit.journal_audit import cards_audit, dealt, select_shoes, shuffle_audit
from controller.audit.journal_source import JournalContentError, ShoeData, collect_shoes, partial_order, stack_map
from controller.audit.moments import serial_moments
from controller.audit.orders import fresh_order, impute, rank_of
from controller.audit.randomness import (TestResult, adjacency_test, kept_adjacencies, position_max_test,
                                         positional_test, rising_sequences_test, serial_correlation_test)
from controller.audit.shuffle_audit import AuditResult, audit_orders
from controller.audit.stats import holm, normal_cdf, normal_sf
from controller.rules.cards import MAX_DECKS


def reads_of(order: list[int]) -> list[Read]:
    return [Read(i + 1, c // 4 + 1, c % 4) for i, c in enumerate(order)]


def shuffled(decks: int, count: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        o = fresh_order(decks)
        rng.shuffle(o)
        out.append(o)
    return out


# --- card sets -----------------------------------------------------------------------------------

def test_an_unreadable_read_at_a_position_already_read_is_a_reused_position() -> None:
    """cardset: "a read position used twice is *reused*" - whether the second read could be read or not."""
    order = fresh_order(1)
    reads = [*reads_of(order)[:10], Read(10, UNREADABLE, 0)]
    report = verify_cardset(reads, decks=1, loaded=52)
    assert report.reused_positions == [10] and "position 10 read more than once" in report.problems


def test_a_foreign_card_is_named_once_not_also_counted_as_surplus() -> None:
    """cardset: "``surplus`` ... beyond the extra/foreign ones already named" (docs/audit.md)."""
    reads = [*reads_of(fresh_order(1)), Read(53, 14, 0)]
    report = verify_cardset(reads, decks=1, loaded=53)
    assert report.foreign == [("rank 14 suit 0", 53)]
    assert report.surplus == 0


def test_more_cards_than_loaded_is_unaccounted_too() -> None:
    """cardset: "``unaccounted`` is ``loaded - (reads + remaining)`` when both are known (a card that
    left unread, or a double read)": negative for one card too many."""
    reads = reads_of(fresh_order(1))[:41]
    report = verify_cardset(reads, decks=1, loaded=52, remaining=12)
    assert report.unaccounted == -1
    assert "loaded 52 cards but 41 read + 12 remaining = 53" in report.problems


def test_a_single_card_more_than_the_composition_is_a_problem() -> None:
    """cardset: "``CardSetReport.ok`` is true when nothing is extra, foreign, reused, missing or
    surplus": one card more (hidden among the unread, no load count known) is not ok."""
    report = verify_cardset(reads_of(fresh_order(1))[:30], decks=1, remaining=23)
    assert report.surplus == 1 and not report.ok
    assert "1 card(s) more than the composition" in report.problems


# --- the statistics ------------------------------------------------------------------------------

def test_holm_rejects_an_adjusted_p_value_equal_to_alpha() -> None:
    """stats.holm: "a hypothesis is rejected when its adjusted p-value is <= alpha"."""
    adjusted, rejected = holm([0.25, 0.5], 0.5)
    assert adjusted == [0.5, 0.5] and rejected == [True, True]


def test_serial_correlation_is_circular_and_two_sided() -> None:
    """randomness: "the circular lag-1 sum of card ranks (1-13) per shoe, summed over shoes
    (Wald-Wolfowitz); normal, two-sided"."""
    orders = shuffled(1, 3, seed=5)
    ranks = [rank_of(c) for c in range(52)]
    mu, v = serial_moments(ranks)
    total = sum(sum(rank_of(o[i]) * rank_of(o[i - 1]) for i in range(52)) for o in orders)
    z = (total - 3 * mu) / math.sqrt(3 * v)
    result = serial_correlation_test(orders)
    assert result.statistic == total
    assert result.p_value == pytest.approx(min(1.0, 2 * normal_sf(abs(z))))
    # the other tail too: an order with too little correlation is as suspect as too much
    assert serial_correlation_test([list(reversed(o)) for o in orders]).p_value == pytest.approx(result.p_value)


def test_rising_sequences_p_is_continuity_corrected_on_the_lower_tail() -> None:
    """docs/audit.md: rising sequences "normal, exact mean and variance, continuity-corrected",
    side "less": P(R <= r) ~ Phi((r + 1/2 - mean) / sd)."""
    orders = shuffled(1, 4, seed=9)
    r = rising_sequences_test(orders, fresh_order(1))
    assert r.p_value == pytest.approx(normal_cdf((r.statistic + 0.5 - r.expected) / r.detail["sd"]))


def test_adjacency_counts_every_neighbouring_pair_including_the_last() -> None:
    """randomness: "how many neighbouring pairs of the pre-shuffle order ... are still neighbours,
    summed over shoes": the test's count is kept_adjacencies' over the whole order."""
    pre = fresh_order(1)
    orders = [pre, *shuffled(1, 2, seed=3)]
    assert adjacency_test(orders, pre).statistic == sum(kept_adjacencies(o, pre) for o in orders)
    assert adjacency_test([pre], pre).statistic == 51


def _pearson(orders: list[list[int]]) -> float:
    s, m = len(orders), len(orders[0])
    e = s / 52
    x2 = 0.0
    for p in range(m):
        counts = [0] * 52
        for o in orders:
            counts[o[p]] += 1
        x2 += sum((n - e) ** 2 / e for n in counts)
    return x2


def test_the_positional_statistic_is_pearsons_x2_and_counts_every_collision() -> None:
    """docs/audit.md: positional "Pearson X2 of the k x M table", X2 = 2k/S Y + M (k - S), Y the pairs
    of shoes holding the same code at the same place."""
    a, b = shuffled(1, 2, seed=1)
    same = positional_test([a, a, b])
    assert same.detail["collisions"] == 52 + sum(x == y for x, y in zip(a, b)) * 2
    for orders in ([a, a, b], shuffled(1, 5, seed=2)):
        assert positional_test(orders).statistic == pytest.approx(_pearson(orders))


@pytest.mark.parametrize("confidence", [0.95, 0.99])
def test_the_position_maximum_tests_nothing_up_to_three_shoes_of_eight_decks(confidence: float) -> None:
    """docs/audit.md: "position_max while M k / k^S is at least alpha: up to 3 shoes for 8 decks, at
    95 % as at 99 %" it is no test; with 4 shoes it is one."""
    alpha = round(1 - confidence, 12)
    assert not position_max_test(shuffled(8, 3, seed=4)).can_reject(alpha)
    assert position_max_test(shuffled(8, 4, seed=4)).can_reject(alpha)


def test_holm_counts_only_the_tests_that_can_reject() -> None:
    """shuffle_audit: a test no shoes could make reject "is left out of Holm's count, shown as no
    test, and never rejected" (a lab's review: with one shoe the real tests were held to alpha/6)."""
    result = audit_orders(shuffled(8, 1, seed=7), confidence=0.99, pre_orders=fresh_order(8))
    real = [i for i, t in enumerate(result.tests) if result.testable(t)]
    assert [result.tests[i].name for i in real] == ["adjacency", "rising_sequences", "runs", "serial_correlation"]
    adjusted, _ = holm([result.tests[i].p_value for i in real], result.alpha)
    assert [result.adjusted[i] for i in real] == pytest.approx(adjusted)


def test_a_tests_own_pass_is_its_p_value_against_alpha_not_holms() -> None:
    """docs/audit.md: "passed (p >= alpha) ... a test can fail alone yet not be rejected after the
    correction"."""
    low = TestResult("runs", 1.0, None, 1.0, 0.004, "two-sided", "m", 10)
    fine = TestResult("serial_correlation", 1.0, None, 1.0, 0.5, "two-sided", "m", 10)
    res = AuditResult(0.99, (low, fine), (0.008 * 1.5, 0.5), (False, False), 10, 8)
    doc = res.to_json()
    assert [t["passed"] for t in doc["tests"]] == [False, True] and doc["verdict"] == "pass"


# --- orders and the journal's shoes --------------------------------------------------------------

def test_impute_refuses_a_code_out_of_range() -> None:
    """orders.impute: "Raises ValueError when the known cards do not fit the composition (a card seen
    too often, a code out of range, ...)"."""
    with pytest.raises(ValueError, match="not a card code"):
        impute([-1, *[None] * 51], 1, random.Random(0))


def test_partial_order_refuses_a_place_read_twice() -> None:
    """partial_order: the stack as card codes; two reads of one position cannot both be its card."""
    shoe = ShoeData("S", decks=1, loaded=52, reads=[Read(1, 1, 0), Read(1, 2, 0)])
    with pytest.raises(ValueError, match="read twice"):
        partial_order(shoe, "shoe")


def test_a_cut_at_the_stacks_size_does_not_fit() -> None:
    """journal_source: reads must land on the stack the recorded cut builds (681a.5(c)): a cut at the
    stack's size moves nothing under, and no table makes it."""
    smap, why = stack_map(ShoeData("S", decks=1, cuts=[(52, 52)], loaded=52))
    assert smap is None and "cut at 52" in why


def test_a_count_no_shoe_holds_is_a_malformed_entry() -> None:
    """journal_source: a count or place of cards is "a whole number no shoe exceeds (a stack is
    rebuilt card by card from it)"; else the entry is malformed."""
    entries = [E(kind="shoe_start", payload={"shoe": "X", "decks": 1}, shoe_id="X", seq=1),
               E(kind="cut", payload={"position": 10, "by": "dealer", "stack": 10 ** 9}, shoe_id="X", seq=2)]
    with pytest.raises(JournalContentError):
        collect_shoes(entries)


def _half_read_shoe() -> ShoeData:
    order = fresh_order(1)
    random.Random(3).shuffle(order)
    return ShoeData("H", decks=1, loaded=52, reads=reads_of(order)[:26],
                    reconciliation={"remaining_in_shoe": 26})


def test_a_shoe_half_read_is_audited() -> None:
    """docs/audit.md: a shoe "whose cards were more than half never read" is excluded; "Such a shoe
    mostly read is audited": exactly half is not more than half."""
    audit = shuffle_audit([_half_read_shoe()], pre_order="none")
    assert audit.shoes == ["H"] and audit.imputed == 26


def test_a_shoe_with_reads_but_no_load_record_was_dealt() -> None:
    """journal_audit: "``dealt(shoe)``: a shoe that was loaded or had cards read"."""
    shoe = ShoeData("R", decks=1, reads=reads_of(fresh_order(1))[:5])
    assert dealt(shoe)
    assert [r.shoe for r in cards_audit([shoe]).reports] == ["R"]


def test_every_pattern_selects_its_shoes() -> None:
    """docs/audit.md: "--shoes: shoe ids or fnmatch patterns, comma-separated, repeatable"."""
    shoes = [ShoeData(f"T1-S000{i}") for i in (1, 2, 3)]
    assert [s.shoe for s in select_shoes(shoes, ["T1-S0001", "T1-S0003"])] == ["T1-S0001", "T1-S0003"]


def test_a_shoe_of_the_most_decks_a_shoe_holds_is_checked() -> None:
    """journal_audit: a deck count is no shoe's only outside "1 to MAX_DECKS"."""
    shoe = ShoeData("M", decks=MAX_DECKS, loaded=MAX_DECKS * 52)
    audit = cards_audit([shoe])
    assert audit.skipped == [] and [r.shoe for r in audit.reports] == ["M"]


def test_previous_without_a_previous_shoe_is_reported_as_none() -> None:
    """docs/audit.md: ``pre_order`` in the JSON is the order the tests used: with no usable previous
    shoe the adjacency and rising-sequence tests are not run, and "none" is said."""
    audit = shuffle_audit([_half_read_shoe()], pre_order="previous")
    assert [t.name for t in audit.result.tests] == ["positional", "position_max", "runs", "serial_correlation"]
    assert audit.to_json()["pre_order"] == "none"


def test_a_low_p_value_holm_does_not_reject_is_said_so_not_pass() -> None:
    """docs/audit.md: "a test can fail alone yet not be rejected after the correction": the report's
    row says so ("low p (not rejected after Holm)"), not "pass", and a test whose p-value is at least
    alpha says "pass"."""
    from controller.audit.report import shuffle_text

    low = TestResult("runs", 1.0, None, 1.0, 0.004, "two-sided", "m", 10)
    fine = TestResult("serial_correlation", 1.0, None, 1.0, 0.5, "two-sided", "m", 10)
    res = AuditResult(0.99, (low, fine), (0.012, 0.5), (False, False), 10, 8)
    audit = E(result=res, order="shoe", pre_order="none", imputed=0, seed=1, excluded=[])
    rows = {line.split()[0]: line for line in shuffle_text("j.db", audit).splitlines()[3:5]}
    assert rows["runs"].endswith("  low p (not rejected after Holm)")
    assert rows["serial_correlation"].endswith("  pass")
