"""Whole-shoe simulation through the rules core, as the table deals.

Each shoe: the submission's N decks shuffled (a seeded generator for reproducible runs, the OS's
randomness otherwise), cut at a legal random position with the second cover card 14-16 cards
above the bottom (681a.5(c)-(d)), the first card burned (681a.7(c)), rounds dealt until the cover
card comes out, the round in progress completed, then reshuffled (681a.7(d)).

Three paths produce the same tallies on the same shoes (tests check it on seeded shoes):
- the reference path feeds every card to ``RoundEngine`` (used for 21 Baccarat and whenever each
  round is printed);
- the pure-Python fast path for the Punto Banco games (``simulation_fast``) deals shoes of ranks
  through a tableau *compiled by running the same RoundEngine*, so it cannot drift from live play;
  for the same seed it deals the same shoes as the reference path;
- the numpy path (``simulation_numpy``, the optional ``fast`` extra) deals thousands of shoes at
  once through lookup tables derived from that same tableau; its shoes come from numpy's own
  generator, so a seed repeats a run on the same engine only.

Results are tallied as ``Counter[RoundFacts]``; every wager is then valued with
``wagers.net_multiplier``, the same function that settles live wagers.

Confidence intervals: rounds dealt from the same shoe are not independent (they share its
composition), so a per-round binomial interval is too narrow. The tally keeps one sub-tally per
batch of whole shoes (about 30 batches), and intervals are ratio-estimator intervals over those
batches (batch means) with Student's t; with a single shoe it falls back to the per-round interval.
An outcome's frequency is a proportion: its interval is Wilson's score interval (with the batch
means' variance as an effective number of rounds and the same quantile), which stays within
[0, 1] even with two shoes or a rare event never seen; a wager's hold is not a proportion (a
round may cost the house several units) and keeps the symmetric interval.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from controller.rules.cards import Composition
from controller.rules.engine import RoundEngine, RoundFacts, RoundResult
from controller.rules.engines import ENGINES, numpy_available
from controller.rules.errors import RulesError
from controller.rules.model import BonusRank, Game, WagerKind
from controller.rules.shoe import PreparedShoe, round_may_start
from controller.rules.wagers import net_multiplier
from controller.simulation_fast import PuntoBancoTrie, deal_batch, tally_shoe_fast, trie_for
from controller.simulation_shoe import COVER_FROM_BOTTOM, Tally, make_rng, shuffle_and_prepare
from shoectl_config.extras import install_hint

__all__ = [
    "BATCHES", "COVER_FROM_BOTTOM", "ENGINES", "Estimate", "PuntoBancoTrie", "Tally", "batch_means_estimate",
    "deal_shoe", "engine_for", "estimate", "house_gains", "make_rng", "numpy_available", "outcome_frequencies",
    "proportion_estimate", "shuffle_and_prepare", "simulate", "tally_shoe_fast", "tally_shoe_reference", "trie_for", "wager_holds",
]

Z95 = 1.959963984540054  # two-sided 95% normal quantile
BATCHES = 30  # shoes are grouped into about this many batches for the confidence intervals
# Student's t, two-sided 95%, by degrees of freedom (1..30); beyond 30 the normal quantile.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
         2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
         2.052, 2.048, 2.045, 2.042)


def t975(df: int) -> float:
    return _T975[df - 1] if 1 <= df <= len(_T975) else Z95


# -- reference path ---------------------------------------------------------------------------
def deal_shoe(shoe: PreparedShoe, submission: Any, *, bonus_in_play: bool = False) -> Iterator[RoundResult | None]:
    """Yield each round's result in order; ``None`` for a round voided for insufficient cards
    (627a.13(e)), after which the shoe ends."""
    stack, pos, cover = shoe.stack, shoe.first_live, shoe.cover_index
    options = getattr(submission, "twentyone", None)
    while round_may_start(pos, cover):
        engine = RoundEngine(submission.game, options, bonus_in_play=bonus_in_play)
        while engine.next_target() is not None:
            if pos >= len(stack):
                yield None
                return
            engine.feed(stack[pos])
            pos += 1
        yield engine.result()


def tally_shoe_reference(shoe: PreparedShoe, submission: Any, on_round: Callable[[int, RoundResult], None] | None = None) -> Tally:
    t = Tally(shoes=1)
    bonus = WagerKind.PLAYER_BONUS in submission.wagers or WagerKind.BANKER_BONUS in submission.wagers
    for i, result in enumerate(deal_shoe(shoe, submission, bonus_in_play=bonus), start=1):
        if result is None:
            t.void_rounds += 1
            break
        t.rounds += 1
        t.cards_dealt += result.cards_used
        t.facts[result.facts] += 1
        if on_round is not None:
            on_round(i, result)
    return t


# -- driver ------------------------------------------------------------------------------------
def batch_size(shoes: int) -> int:
    """Shoes per batch of a tally of ``shoes`` shoes: ``BATCHES`` batches of whole shoes at most,
    the intervals' unit (see the module docstring)."""
    return max(1, shoes // BATCHES)


def engine_for(submission: Any, engine: str = "auto", *, per_round: bool = False) -> str:
    """The engine a run uses: ``"numpy"`` or ``"python"``. ``auto`` takes numpy when it is
    importable and the run allows it (a Punto Banco game, rounds not printed). Asking for numpy
    where it cannot serve raises ``RulesError`` with the reason."""
    if engine not in ENGINES:
        raise RulesError(f"--engine must be one of {', '.join(ENGINES)}, not {engine!r}")
    fits = submission.game.is_punto_banco_family and not per_round
    if engine == "numpy":
        if not submission.game.is_punto_banco_family:
            raise RulesError("the numpy engine deals the Punto Banco games only; use --engine python")
        if per_round:
            raise RulesError("--rounds prints every round through the rules engine; use --engine python")
        if not numpy_available():
            raise RulesError(f"the numpy engine needs numpy: {install_hint('fast')}")
        return "numpy"
    return "numpy" if engine == "auto" and fits and numpy_available() else "python"


def simulate(
    submission: Any,
    shoes: int,
    seed: int | None = None,
    *,
    on_round: Callable[[int, int, RoundResult], None] | None = None,
    on_shoe: Callable[[int, Tally], None] | None = None,
    on_progress: Callable[[int], None] | None = None,
    fast: bool | None = None,
    engine: str = "python",
) -> Tally:
    """Deal ``shoes`` whole shoes. ``on_round(shoe_no, round_no, result)`` forces the reference
    path. ``on_shoe(shoe_no, shoe_tally)`` after each shoe, with that shoe's own tally (for running
    figures; it costs a tally per shoe). ``on_progress(shoes_done)`` now and then (cheap).
    ``engine``: see ``engine_for``. ``fast`` (python engine): None = automatic (the compiled
    tableau for the Punto Banco games), False = RoundEngine for every card."""
    if shoes < 1:
        raise RulesError(f"--shoes must be at least 1, not {shoes}")
    chosen = engine_for(submission, engine, per_round=on_round is not None)
    size = batch_size(shoes)
    if chosen == "numpy":
        from controller.simulation_numpy import simulate_numpy

        return simulate_numpy(submission, shoes, seed, size, on_shoe=on_shoe, on_progress=on_progress)
    rng = make_rng(seed)
    use_fast = submission.game.is_punto_banco_family and on_round is None if fast is None else fast
    if use_fast and not submission.game.is_punto_banco_family:
        raise RulesError("the compiled fast path covers the Punto Banco games only")
    total = Tally()
    if use_fast:
        step = min(size, max(50, shoes // 500))  # progress often, a tally per 50 shoes at most
        done = 0
        numbered = None if on_shoe is None else _numbered(on_shoe)
        while done < shoes:
            n = min(step, size - done % size, shoes - done)
            total.merge(deal_batch(submission, rng, n, numbered), new_batch=done % size == 0)
            done += n
            if on_progress is not None:
                on_progress(done)
        return total
    base = Composition.standard(submission.decks).cards()
    for shoe_no in range(1, shoes + 1):
        shoe = shuffle_and_prepare(submission, rng, base)
        cb = None if on_round is None else (lambda i, r, s=shoe_no: on_round(s, i, r))
        one = tally_shoe_reference(shoe, submission, cb)
        total.merge(one, new_batch=(shoe_no - 1) % size == 0)
        if on_shoe is not None:
            on_shoe(shoe_no, one)
        if on_progress is not None:
            on_progress(shoe_no)
    return total


def _numbered(on_shoe: Callable[[int, Tally], None]) -> Callable[[Tally], None]:
    """``on_shoe`` with the shoes numbered from 1 in the order they come."""
    shoe_no = 0

    def numbered(one: Tally) -> None:
        nonlocal shoe_no
        shoe_no += 1
        on_shoe(shoe_no, one)
    return numbered


# -- statistics ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Estimate:
    mean: float
    low: float
    high: float

    def contains(self, x: float) -> bool:
        return self.low <= x <= self.high

    def to_json(self) -> dict[str, float]:
        return {"value": self.mean, "ci95": [self.low, self.high]}


def estimate(t: Tally, value: Callable[[RoundFacts], Fraction | int | bool]) -> Estimate:
    """Mean per round of ``value(facts)``, with a 95% interval over the batches of shoes (see the
    module docstring); per-round when there is only one batch."""
    if t.rounds == 0:
        return Estimate(math.nan, math.nan, math.nan)
    mean, var, quantile = _mean_and_variance(t, value)
    half = quantile * math.sqrt(var)
    return Estimate(mean, mean - half, mean + half)


def proportion_estimate(t: Tally, event: Callable[[RoundFacts], bool]) -> Estimate:
    """The share of rounds where ``event`` holds, with Wilson's 95% score interval (within [0, 1]):
    the variance of ``estimate``'s batch means (or per round) gives the effective number of rounds
    ``p(1-p)/variance``; the rounds themselves when that is undefined (an event never or always seen)."""
    if t.rounds == 0:
        return Estimate(math.nan, math.nan, math.nan)
    p, var, z = _mean_and_variance(t, event)
    n = p * (1 - p) / var if var > 0 and 0 < p < 1 else t.rounds
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(p * (1 - p) / n + z2n / (4 * n))
    return Estimate(p, max(min(centre - half, p), 0.0), min(max(centre + half, p), 1.0))  # rounding: p=0 stays 0


def _mean_and_variance(t: Tally, value: Callable[[RoundFacts], Fraction | int | bool]) -> tuple[float, float, float]:
    """The mean per round of ``value`` over ``t`` (at least one round), the variance of that mean,
    and the two-sided 95% quantile to use with it."""
    n = t.rounds
    cache: dict[RoundFacts, float] = {}

    def v(f: RoundFacts) -> float:
        if f not in cache:
            cache[f] = float(value(f))
        return cache[f]

    total = sum(v(f) * c for f, c in t.facts.items())
    batches = [(bn, sum(v(f) * c for f, c in bf.items())) for bn, bf in t.batches if bn]
    if len(batches) >= 2:
        return _batch_means(batches)
    mean = total / n
    ss = sum(v(f) ** 2 * c for f, c in t.facts.items())
    var = max(ss / n - mean * mean, 0.0) * n / max(n - 1, 1)
    return mean, var / n, Z95


def batch_means_estimate(batches: list[tuple[int, float]]) -> Estimate:
    """The mean per round and its 95% interval from at least two batches of whole shoes, each
    ``(rounds, sum of the value over its rounds)``: the ratio estimator with Student's t (see the
    module docstring)."""
    mean, var, quantile = _batch_means(batches)
    half = quantile * math.sqrt(var)
    return Estimate(mean, mean - half, mean + half)


def _batch_means(batches: list[tuple[int, float]]) -> tuple[float, float, float]:
    n = sum(n_j for n_j, _ in batches)
    mean = sum(s_j for _, s_j in batches) / n
    k = len(batches)
    var = k / (k - 1) * sum((s_j - mean * n_j) ** 2 for n_j, s_j in batches) / (n * n)
    return mean, var, t975(k - 1)


def outcome_frequencies(t: Tally, game: Game) -> dict[str, Estimate]:
    events: dict[str, Callable[[RoundFacts], bool]] = {
        "player": lambda f: f.outcome.value == "player",
        "banker": lambda f: f.outcome.value == "banker",
        "tie": lambda f: f.outcome.value == "tie",
    }
    if game.is_punto_banco_family:
        events["player_pair"] = lambda f: f.player_pair
        events["banker_pair"] = lambda f: f.banker_pair
    if game is Game.EZ_BACCARAT:
        events["dragon7"] = lambda f: f.dragon7
        events["panda8"] = lambda f: f.panda8
    return {name: proportion_estimate(t, pred) for name, pred in events.items()}


def bonus_rank_frequencies(t: Tally) -> dict[str, Estimate]:
    """21 Baccarat: how often each hand's Bonus cards made each rank above none (681a.7(k)),
    named as ``controller.rules.odds`` names them (``player_bonus:pair``)."""
    ranks = [r for r in BonusRank if r is not BonusRank.NONE]
    return {f"{side}_bonus:{rank.value}": proportion_estimate(
                t, lambda f, side=side, rank=rank: getattr(f, f"{side}_bonus_rank") is rank)
            for side in ("player", "banker") for rank in ranks}


def house_gains(submission: Any) -> dict[str, Callable[[RoundFacts], Fraction]]:
    """For each offered wager (in the order of ``WagerKind``), the house's gain per unit staked
    in a round, valued by ``net_multiplier``; House Money on its own (without additions)."""
    kinds = sorted(submission.wagers, key=lambda k: list(WagerKind).index(k))
    return {k.value: (lambda f, k=k: -net_multiplier(k, f, submission)) for k in kinds}


def wager_holds(t: Tally, submission: Any) -> dict[str, Estimate]:
    """Realised hold (the house's gain per unit staked, per round) of each offered wager."""
    return {name: estimate(t, gain) for name, gain in house_gains(submission).items()}
