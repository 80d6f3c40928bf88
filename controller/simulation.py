"""Whole-shoe simulation through the rules core, as the table deals.

Each shoe: the submission's N decks shuffled (a seeded ``random.Random`` for reproducible runs, the
OS's CSPRNG otherwise), cut at a legal random position with the second cover card 14-16 cards above
the bottom (681a.5(c)-(d)), the first card burned (681a.7(c)), rounds dealt until the cover card
comes out, the round in progress completed, then reshuffled (681a.7(d)).

Two paths produce identical tallies (a test checks it on the same seeded shoes):
- the reference path feeds every card to ``RoundEngine`` (used for 21 Baccarat and whenever each
  round is printed);
- the fast path for the Punto Banco games walks a decision trie that is *compiled by running the same
  RoundEngine* over every (Player two-card total, Banker two-card total, fifth card, sixth card),
  so it cannot drift from live play; it needs only card values and ranks per position.

Results are tallied as ``Counter[RoundFacts]``; every wager is then valued with
``wagers.net_multiplier``, the same function that settles live wagers.

Confidence intervals: rounds dealt from the same shoe are not independent (they share its
composition), so a per-round binomial interval is too narrow. The tally keeps one sub-tally per
batch of whole shoes (about 30 batches), and intervals are ratio-estimator intervals over those
batches (batch means) with Student's t; with a single shoe it falls back to the per-round interval.
"""
from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from controller.rules.cards import Card, Composition, card
from controller.rules.engine import RoundEngine, RoundFacts, RoundResult
from controller.rules.errors import RulesError
from controller.rules.model import Game, WagerKind
from controller.rules.punto_banco import card_value as pb_value
from controller.rules.shoe import PreparedShoe, prepare, random_cut, round_may_start
from controller.rules.wagers import net_multiplier

Z95 = 1.959963984540054  # two-sided 95% normal quantile
BATCHES = 30  # shoes are grouped into about this many batches for the confidence intervals
# Student's t, two-sided 95%, by degrees of freedom (1..30); beyond 30 the normal quantile.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
         2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
         2.052, 2.048, 2.045, 2.042)


def t975(df: int) -> float:
    return _T975[df - 1] if 1 <= df <= len(_T975) else Z95
COVER_FROM_BOTTOM = (14, 16)  # where the dealer puts the second cover card (>= 10, 681a.5(d))


@dataclass
class Tally:
    """What a simulation counted. ``facts`` maps each distinct round summary to its count."""

    shoes: int = 0
    rounds: int = 0
    void_rounds: int = 0
    cards_dealt: int = 0
    facts: Counter = field(default_factory=Counter)
    batches: list[tuple[int, Counter]] = field(default_factory=list)  # (rounds, facts) per batch of shoes

    def merge(self, other: Tally, *, new_batch: bool = False) -> None:
        self.shoes += other.shoes
        self.rounds += other.rounds
        self.void_rounds += other.void_rounds
        self.cards_dealt += other.cards_dealt
        self.facts.update(other.facts)
        if new_batch or not self.batches:
            self.batches.append((0, Counter()))
        n, f = self.batches[-1]
        f.update(other.facts)
        self.batches[-1] = (n + other.rounds, f)


def make_rng(seed: int | None) -> random.Random:
    """A seeded generator for reproducible runs; the OS CSPRNG when ``seed`` is None."""
    return random.Random(seed) if seed is not None else random.SystemRandom()


def shuffle_and_prepare(submission: Any, rng: random.Random, base: list[Card]) -> PreparedShoe:
    cards = list(base)
    rng.shuffle(cards)
    n = len(cards)
    depth = submission.min_cover_depth
    lo, hi = max(COVER_FROM_BOTTOM[0], depth), max(COVER_FROM_BOTTOM[1], depth)
    return prepare(cards, random_cut(rng, n, depth), rng.randint(lo, hi), submission.burn_cards, depth)


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


# -- fast path (Punto Banco family) -------------------------------------------------------------
_VALUE_CARD = {v: card(v if v else 10, "S") for v in range(10)}  # a representative card per value


class PuntoBancoTrie:
    """Decision trie compiled from ``RoundEngine``: root index ``10 * player_total + banker_total``
    of the first four cards; an inner node is a list indexed by the next card's value; a leaf is an
    int index into ``leaves`` (a ``(facts_without_pairs, cards_used)`` pair)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.leaves: list[tuple[RoundFacts, int]] = []
        self._leaf_ids: dict[tuple[RoundFacts, int], int] = {}
        self.root = [self._build([_VALUE_CARD[pt], _VALUE_CARD[bt], _VALUE_CARD[0], _VALUE_CARD[0]])
                     for pt in range(10) for bt in range(10)]

    def _build(self, prefix: list[Card]) -> Any:
        engine = RoundEngine(self.game)
        for c in prefix:
            engine.feed(c)
        if engine.complete:
            res = engine.result()
            f = res.facts
            key = (RoundFacts(f.outcome, dragon7=f.dragon7, panda8=f.panda8), res.cards_used)
            if key not in self._leaf_ids:
                self._leaf_ids[key] = len(self.leaves)
                self.leaves.append(key)
            return self._leaf_ids[key]
        return [self._build(prefix + [_VALUE_CARD[v]]) for v in range(10)]


_TRIES: dict[Game, PuntoBancoTrie] = {}


def trie_for(game: Game) -> PuntoBancoTrie:
    if game not in _TRIES:
        _TRIES[game] = PuntoBancoTrie(game)
    return _TRIES[game]


def tally_shoe_fast(shoe: PreparedShoe, trie: PuntoBancoTrie) -> Tally:
    """Deal one prepared shoe through the compiled trie. Same result as the reference path."""
    stack = shoe.stack
    vals = [pb_value(c) for c in stack]
    ranks = [c.rank for c in stack]
    n, pos, cover = len(stack), shoe.first_live, shoe.cover_index
    root = trie.root
    counts = [0] * (4 * len(trie.leaves))
    rounds = void = 0
    start = pos
    while pos <= cover:
        if pos + 6 > n:  # near the end: the round might run out; use exact engine semantics
            needed = _needed(vals, pos, root, n)
            if needed is None:
                void = 1
                break
        node = root[(vals[pos] + vals[pos + 2]) % 10 * 10 + (vals[pos + 1] + vals[pos + 3]) % 10]
        k = 4
        while node.__class__ is list:
            node = node[vals[pos + k]]
            k += 1
        counts[node * 4 + (ranks[pos] == ranks[pos + 2]) * 2 + (ranks[pos + 1] == ranks[pos + 3])] += 1
        pos += k
        rounds += 1
    t = Tally(shoes=1, rounds=rounds, void_rounds=void, cards_dealt=pos - start)
    for idx, c in enumerate(counts):
        if c:
            f, _ = trie.leaves[idx // 4]
            t.facts[RoundFacts(f.outcome, player_pair=bool(idx & 2), banker_pair=bool(idx & 1),
                               dragon7=f.dragon7, panda8=f.panda8)] += c
    return t


def _needed(vals: list[int], pos: int, root: list, n: int) -> int | None:
    """Cards the round starting at ``pos`` uses, or None if the shoe runs out first."""
    if pos + 4 > n:
        return None
    node = root[(vals[pos] + vals[pos + 2]) % 10 * 10 + (vals[pos + 1] + vals[pos + 3]) % 10]
    k = 4
    while node.__class__ is list:
        if pos + k >= n:
            return None
        node = node[vals[pos + k]]
        k += 1
    return k


# -- driver ------------------------------------------------------------------------------------
def simulate(
    submission: Any,
    shoes: int,
    seed: int | None = None,
    *,
    on_round: Callable[[int, int, RoundResult], None] | None = None,
    on_shoe: Callable[[int, Tally], None] | None = None,
    fast: bool | None = None,
) -> Tally:
    """Deal ``shoes`` whole shoes. ``on_round(shoe_no, round_no, result)`` forces the reference
    path. ``on_shoe(shoe_no, shoe_tally)`` after each shoe, with that shoe's own tally (for
    progress and running figures). ``fast`` None = automatic (the trie for the Punto Banco
    games)."""
    if shoes < 1:
        raise RulesError(f"--shoes must be at least 1, not {shoes}")
    rng = make_rng(seed)
    base = Composition.standard(submission.decks).cards()
    use_fast = submission.game.is_punto_banco_family and on_round is None if fast is None else fast
    if use_fast and not submission.game.is_punto_banco_family:
        raise RulesError("the compiled fast path covers the Punto Banco games only")
    trie = trie_for(submission.game) if use_fast else None
    total = Tally()
    batch_size = max(1, shoes // BATCHES)
    for shoe_no in range(1, shoes + 1):
        shoe = shuffle_and_prepare(submission, rng, base)
        new_batch = (shoe_no - 1) % batch_size == 0
        if trie is not None:
            one = tally_shoe_fast(shoe, trie)
        else:
            cb = None if on_round is None else (lambda i, r, s=shoe_no: on_round(s, i, r))
            one = tally_shoe_reference(shoe, submission, cb)
        total.merge(one, new_batch=new_batch)
        if on_shoe is not None:
            on_shoe(shoe_no, one)
    return total


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
    n = t.rounds
    if n == 0:
        return Estimate(math.nan, math.nan, math.nan)
    cache: dict[RoundFacts, float] = {}

    def v(f: RoundFacts) -> float:
        if f not in cache:
            cache[f] = float(value(f))
        return cache[f]

    total = sum(v(f) * c for f, c in t.facts.items())
    batches = [(bn, sum(v(f) * c for f, c in bf.items())) for bn, bf in t.batches if bn]
    if len(batches) >= 2:
        return batch_means_estimate(batches)
    mean = total / n
    ss = sum(v(f) ** 2 * c for f, c in t.facts.items())
    var = max(ss / n - mean * mean, 0.0) * n / max(n - 1, 1)
    half = Z95 * math.sqrt(var / n)
    return Estimate(mean, mean - half, mean + half)


def batch_means_estimate(batches: list[tuple[int, float]]) -> Estimate:
    """The mean per round and its 95% interval from at least two batches of whole shoes, each
    ``(rounds, sum of the value over its rounds)``: the ratio estimator with Student's t (see the
    module docstring)."""
    n = sum(n_j for n_j, _ in batches)
    mean = sum(s_j for _, s_j in batches) / n
    k = len(batches)
    var = k / (k - 1) * sum((s_j - mean * n_j) ** 2 for n_j, s_j in batches) / (n * n)
    half = t975(k - 1) * math.sqrt(var)
    return Estimate(mean, mean - half, mean + half)


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
    return {name: estimate(t, pred) for name, pred in events.items()}


def house_gains(submission: Any) -> dict[str, Callable[[RoundFacts], Fraction]]:
    """For each offered wager (in the order of ``WagerKind``), the house's gain per unit staked
    in a round, valued by ``net_multiplier``; House Money on its own (without additions)."""
    kinds = sorted(submission.wagers, key=lambda k: list(WagerKind).index(k))
    return {k.value: (lambda f, k=k: -net_multiplier(k, f, submission)) for k in kinds}


def wager_holds(t: Tally, submission: Any) -> dict[str, Estimate]:
    """Realised hold (the house's gain per unit staked, per round) of each offered wager."""
    return {name: estimate(t, gain) for name, gain in house_gains(submission).items()}
