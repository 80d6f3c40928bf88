"""Exact odds by enumeration (pure; no I/O).

Contract:
- ``exact_odds(submission, composition=None, *, bonus_in_play=None) -> OddsReport``. The
  composition defaults to ``Composition.standard(submission.decks)``; pass
  ``Composition.standard(n).remove(cards)`` for a shoe with cards removed. ``bonus_in_play`` (21
  Baccarat only) says whether a Bonus Wager was placed (681a.7(f)(2)); ``None`` means "if the
  Rules Submission offers one". The shoe must hold at least 6 cards (``CompositionError``).
- Every figure is an exact integer COUNT of ordered six-card sequences that the shoe can deal
  (``total_sequences = N (N-1) ... (N-5)``; a round that uses fewer than six cards leaves the
  trailing cards free), so every probability is the exact ``Fraction(count, total_sequences)``.
- A wager's figures come only from ``wagers.net_multiplier(kind, RoundFacts(...), submission)``
  evaluated over the exact distribution of the facts that wager depends on (``WAGER_FACTS``): no
  paytable rule is re-implemented here.

Method (docs/odds.md has the details):
- Main game (Player / Banker / Tie, Dragon 7, Panda 8): the drawing rules are turned once per rule
  set into a composition-independent table keyed by the MULTISET of card-value classes a round uses
  (4, 5 or 6 cards; 10 classes), holding how many ordered value sequences with that multiset end in
  each category. The table is built from the rule functions of ``punto_banco`` / ``twentyone``
  (unordered first-two-card pairs with multiplicity 2, ``RoundResult`` for Dragon 7 / Panda 8). A
  shoe is then one pass over the table: every value sequence with multiset ``{v: k_v}`` is dealt
  by ``prod_v c_v (c_v - 1) ... (c_v - k_v + 1)`` ordered card sequences, times ``(N-k)...(N-5)``
  for the free trailing positions.
- Pairs: closed form over RANK counts (10-J-Q-K are four ranks): ``sum_r n_r (n_r - 1)`` ordered
  first-two-card pairs; both hands paired: ``S^2 - sum_r (n_r(n_r-1))^2 + sum_r n_r...(n_r-3)``.
- 21 Baccarat Bonus ranks: by rank and suit counts. A hand's bonus cards are its first two cards
  and, when it gets one, the next card dealt to it (a drawn card or the 681a.7(f)(2) bonus-only
  card). Whether it gets one depends on its own two-card total and, for some rule options, on the
  other hand's first two cards (a natural, or the Player drawing under "first-only"). Conditioned
  on one hand's cards, the other positions are an exchangeable sample of the rest of the shoe, so
  the exact count is (ordered rank/suit triples of the hand) x (ordered pairs of the other hand's
  first two cards of the relevant class among the rest), the latter a quadratic form in the
  remaining rank counts. Exact for every option combination.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from operator import mul
from typing import Any

from . import punto_banco as pb
from . import twentyone as t21
from .cards import ALL_CARDS, SUITS, Card, Composition, card
from .engine import RoundFacts, RoundResult, twentyone_outcome
from .errors import CompositionError, RulesError
from .model import BonusRank, Game, Outcome, WagerKind
from .wagers import net_multiplier

__all__ = ["OddsReport", "WAGER_FACTS", "clear_caches", "exact_odds", "falling"]

ROUND_CARDS = 6  # the most cards a round uses in every supported game (4 + two more)

# Which distribution of facts each wager is evaluated over (the facts net_multiplier reads).
WAGER_FACTS: Mapping[WagerKind, str] = {
    WagerKind.PLAYER: "main",
    WagerKind.BANKER: "main",
    WagerKind.TIE: "main",
    WagerKind.DRAGON7: "main",
    WagerKind.PANDA8: "main",
    WagerKind.PLAYER_PAIR: "pairs",
    WagerKind.BANKER_PAIR: "pairs",
    WagerKind.HOUSE_MONEY: "pairs",
    WagerKind.PLAYER_BONUS: "player_bonus",
    WagerKind.BANKER_BONUS: "banker_bonus",
}


def falling(n: int, k: int) -> int:
    """``n (n-1) ... (n-k+1)``: ordered ways to draw ``k`` cards from ``n`` (0 when ``n < k``)."""
    if n < k:
        return 0
    out = 1
    for i in range(k):
        out *= n - i
    return out


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class OddsReport:
    """Exact odds for one Rules Submission and one shoe composition.

    ``counts[name]`` is the number of ordered six-card sequences on which ``name`` happens;
    ``outcomes[name] = counts[name] / total_sequences``. ``wagers[kind]`` holds exact Fractions
    ``house_edge`` (expected loss per unit staked, per round, pushes included), ``expected``
    (= -house_edge), ``win``, ``push`` and ``lose``.
    """

    game: Game
    decks: int
    cards: int
    removed: tuple[Card, ...]
    total_sequences: int
    counts: dict[str, int]
    outcomes: dict[str, Fraction]
    wagers: dict[str, dict[str, Fraction]]
    submission: str = ""
    bonus_in_play: bool | None = None
    payouts: dict[str, str] = field(default_factory=dict)

    def to_json(self, exact: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "game": self.game.value,
            "decks": self.decks,
            "cards": self.cards,
        }
        if self.removed:
            out["removed"] = [str(c) for c in self.removed]
        if self.submission:
            out["submission"] = self.submission
        if self.bonus_in_play is not None:
            out["bonus_in_play"] = self.bonus_in_play
        out["total_sequences"] = self.total_sequences
        out["outcomes"] = {k: float(v) for k, v in self.outcomes.items()}
        out["wagers"] = {
            k: {"pays": self.payouts.get(k, ""), **{f: float(x) for f, x in w.items()}}
            for k, w in self.wagers.items()
        }
        if exact:
            out["exact"] = {
                "counts": dict(self.counts),
                "outcomes": {k: _frac_text(v) for k, v in self.outcomes.items()},
                "wagers": {k: {f: _frac_text(x) for f, x in w.items()} for k, w in self.wagers.items()},
            }
        return out


def _frac_text(x: Fraction) -> str:
    return f"{x.numerator}/{x.denominator}"


# --------------------------------------------------------------------------------------------
# Main-game tables: multiset of value classes -> ordered value sequences per category
# --------------------------------------------------------------------------------------------

_BASE = 8  # a multiset of <= 6 values in 10 classes is a base-8 number (digit = multiplicity)
_POW = tuple(_BASE**v for v in range(10))
_SLOTS_PER_CLASS = ROUND_CARDS  # slot v*6 + j holds (count of class v) - j


@dataclass(frozen=True)
class _MainTable:
    """Categories and, per number of cards used, the multisets (as slot tuples) and one column of
    ordered-value-sequence counts per category."""

    categories: tuple[str, ...]
    groups: tuple[tuple[int, tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]], ...]


def _finish_table(acc: Mapping[int, int], categories: tuple[str, ...]) -> _MainTable:
    nc = len(categories)
    by_key: dict[int, list[int]] = {}
    for code, m in acc.items():
        key, cat = divmod(code, nc)
        by_key.setdefault(key, [0] * nc)[cat] += m
    by_k: dict[int, list[tuple[tuple[int, ...], list[int]]]] = defaultdict(list)
    for key, row in sorted(by_key.items()):
        slots: list[int] = []
        rest = key
        for v in range(10):
            rest, k_v = divmod(rest, _BASE)
            slots.extend(v * _SLOTS_PER_CLASS + j for j in range(k_v))
        by_k[len(slots)].append((tuple(slots), row))
    groups = []
    for k in sorted(by_k):
        entries = by_k[k]
        slots_list = tuple(s for s, _ in entries)
        cols = tuple(tuple(row[c] for _, row in entries) for c in range(nc))
        groups.append((k, slots_list, cols))
    return _MainTable(categories, tuple(groups))


def _value_pairs() -> list[tuple[int, int, int]]:
    """Unordered pairs of value classes with their number of orders (1 or 2)."""
    return [(a, b, 1 if a == b else 2) for a in range(10) for b in range(a, 10)]


# Punto Banco family categories (Dragon 7 / Panda 8 are facts of every Punto Banco round).
_PB_CATS = ("player", "player_panda8", "banker", "banker_dragon7", "tie")


def _pb_category(pf: int, bf: int, p3: bool, b3: bool) -> int:
    """Category of a finished Punto Banco round, read off a ``RoundResult`` (so Dragon 7 and
    Panda 8 are exactly the engine's definitions)."""
    outcome = Outcome.PLAYER if pf > bf else Outcome.BANKER if bf > pf else Outcome.TIE  # as RoundEngine.result
    dummy = ALL_CARDS[0]
    r = RoundResult(
        game=Game.EZ_BACCARAT,
        dealt=(),
        player=(dummy,) * (3 if p3 else 2),
        banker=(dummy,) * (3 if b3 else 2),
        player_total=pf,
        banker_total=bf,
        outcome=outcome,
        player_natural=False,
        banker_natural=False,
    )
    if outcome is Outcome.PLAYER:
        return 1 if r.panda8 else 0
    if outcome is Outcome.BANKER:
        return 3 if r.dragon7 else 2
    return 4


@lru_cache(maxsize=None)
def _punto_banco_table() -> _MainTable:
    nc = len(_PB_CATS)
    nat = [pb.is_natural(t) for t in range(10)]
    pdraw = [pb.player_draws(t) for t in range(10)]
    bdraw_stood = [pb.banker_draws(t, None) for t in range(10)]
    bdraw = [[pb.banker_draws(t, x) for x in range(10)] for t in range(10)]
    cat = [[[[_pb_category(pf, bf, p3, b3) for b3 in (False, True)] for p3 in (False, True)]
            for bf in range(10)] for pf in range(10)]
    # cat_y[pf][bt][y]: both hands three cards, Banker's third card y.
    cat_y = [[[cat[pf][(bt + y) % 10][1][1] for y in range(10)] for bt in range(10)] for pf in range(10)]
    cat_by = [[[cat[pt][(bt + y) % 10][0][1] for y in range(10)] for bt in range(10)] for pt in range(10)]
    pow_nc = [p * nc for p in _POW]
    acc: dict[int, int] = defaultdict(int)
    pairs = _value_pairs()
    for a, b, mp in pairs:
        pt = (a + b) % 10
        kp = _POW[a] + _POW[b]
        for c, d, mb in pairs:
            bt = (c + d) % 10
            m = mp * mb
            k4 = (kp + _POW[c] + _POW[d]) * nc
            if nat[pt] or nat[bt]:  # 631a.11(a)
                acc[k4 + cat[pt][bt][0][0]] += m
            elif pdraw[pt]:
                row = bdraw[bt]
                for x in range(10):
                    pf = (pt + x) % 10
                    k5 = k4 + pow_nc[x]
                    if row[x]:
                        cats = cat_y[pf][bt]
                        for y in range(10):
                            acc[k5 + pow_nc[y] + cats[y]] += m
                    else:
                        acc[k5 + cat[pf][bt][1][0]] += m
            elif bdraw_stood[bt]:
                cats = cat_by[pt][bt]
                for y in range(10):
                    acc[k4 + pow_nc[y] + cats[y]] += m
            else:
                acc[k4 + cat[pt][bt][0][0]] += m
    return _finish_table(acc, _PB_CATS)


_T21_CATS = ("player", "banker", "tie")
_T21_CAT_INDEX = {Outcome.PLAYER: 0, Outcome.BANKER: 1, Outcome.TIE: 2}


def _t21_rep(v: int) -> Card:
    """A card of 21 Baccarat value class ``v`` (0 = ace, 1..8 = 2..9, 9 = ten-value)."""
    return card(v + 1, "S")


@lru_cache(maxsize=None)
def _twentyone_table(naturals: bool, draw_rule: str, threshold: int) -> _MainTable:
    """Mirror of ``RoundEngine._next_twentyone`` for the cards that count for the Player and
    Banker wagers (the 681a.7(f)(2) bonus-only cards never do)."""
    nc = len(_T21_CATS)
    rep = [_t21_rep(v) for v in range(10)]
    pairs = _value_pairs()
    tot2 = {(a, b): t21.total([rep[a], rep[b]]) for a, b, _ in pairs}
    nat2 = {(a, b): bool(naturals and t21.is_natural([rep[a], rep[b]])) for a, b, _ in pairs}
    tot3 = {(a, b, x): t21.total([rep[a], rep[b], rep[x]]) for a, b, _ in pairs for x in range(10)}
    out = [[_T21_CAT_INDEX[twentyone_outcome(p, q)] for q in range(32)] for p in range(32)]
    pow_nc = [p * nc for p in _POW]
    acc: dict[int, int] = defaultdict(int)
    for a, b, mp in pairs:
        pt = tot2[a, b]
        kp = _POW[a] + _POW[b]
        for c, d, mb in pairs:
            bt = tot2[c, d]
            m = mp * mb
            k4 = (kp + _POW[c] + _POW[d]) * nc
            if nat2[a, b] or nat2[c, d]:  # 681a.7(f): no more cards for the wagers
                acc[k4 + out[pt][bt]] += m
                continue
            # 681a.7(g): each hand below the threshold gets one card, the Player's first.
            p_draws = pt < threshold
            b_draws = bt < threshold and not (draw_rule == "first-only" and p_draws)
            if p_draws:
                for x in range(10):
                    px = tot3[a, b, x]
                    k5 = k4 + pow_nc[x]
                    if b_draws:
                        row = out[px]
                        for y in range(10):
                            acc[k5 + pow_nc[y] + row[tot3[c, d, y]]] += m
                    else:
                        acc[k5 + out[px][bt]] += m
            elif b_draws:
                row = out[pt]
                for y in range(10):
                    acc[k4 + pow_nc[y] + row[tot3[c, d, y]]] += m
            else:
                acc[k4 + out[pt][bt]] += m
    return _finish_table(acc, _T21_CATS)


def _main_counts(table: _MainTable, class_counts: Sequence[int], n_cards: int) -> list[int]:
    """Ordered six-card sequences per category for a shoe with these value-class counts."""
    f = [c - j for c in class_counts for j in range(_SLOTS_PER_CLASS)]
    fget = f.__getitem__
    prod = math.prod
    totals = [0] * len(table.categories)
    for k, slots_list, cols in table.groups:
        tail = falling(n_cards - k, ROUND_CARDS - k)
        if not tail:
            continue
        weights = [prod(map(fget, s)) for s in slots_list]
        for i, col in enumerate(cols):
            totals[i] += tail * sum(map(mul, weights, col))
    return totals


# --------------------------------------------------------------------------------------------
# Pairs (closed form over rank counts)
# --------------------------------------------------------------------------------------------


def _pair_counts(rank_counts: Sequence[int], n_cards: int) -> dict[tuple[bool, bool], int]:
    """Ordered six-card sequences by (player_pair, banker_pair): the first two cards of a hand
    have the same rank (positions 1,3 for the Player, 2,4 for the Banker)."""
    pp = [n * (n - 1) for n in rank_counts]
    s2 = sum(pp)
    both4 = s2 * s2 - sum(x * x for x in pp) + sum(falling(n, 4) for n in rank_counts)
    one = s2 * falling(n_cards - 2, 4)  # Player pair (and, by symmetry, Banker pair)
    both = both4 * falling(n_cards - 4, 2)
    total = falling(n_cards, ROUND_CARDS)
    return {
        (True, True): both,
        (True, False): one - both,
        (False, True): one - both,
        (False, False): total - 2 * one + both,
    }


# --------------------------------------------------------------------------------------------
# 21 Baccarat Bonus ranks (rank and suit counts)
# --------------------------------------------------------------------------------------------

_NAT, _DRAW, _STAND = 0, 1, 2
_RANKS = range(1, 14)


@lru_cache(maxsize=None)
def _bonus_tables(naturals: bool, threshold: int) -> tuple[Any, ...]:
    """Composition-independent rank tables from the ``twentyone`` functions."""
    s, h = SUITS[3], SUITS[2]  # "S", "H"
    cls = [[_STAND] * 14 for _ in range(14)]
    draws = [[False] * 14 for _ in range(14)]
    rank2 = [[(BonusRank.NONE, BonusRank.NONE)] * 14 for _ in range(14)]
    rank3: dict[tuple[int, int, int], tuple[BonusRank, BonusRank]] = {}
    for r1 in _RANKS:
        for r2 in _RANKS:
            two = [card(r1, s), card(r2, h)]
            total = t21.total(two)
            if naturals and t21.is_natural(two):
                cls[r1][r2] = _NAT
            elif total < threshold:
                cls[r1][r2] = _DRAW
            draws[r1][r2] = total < threshold
            # (same suit, different suits)
            rank2[r1][r2] = (t21.bonus_rank([card(r1, s), card(r2, s)]), t21.bonus_rank(two))
            for r3 in _RANKS:
                rank3[r1, r2, r3] = (
                    t21.bonus_rank([card(r1, s), card(r2, s), card(r3, s)]),  # all one suit
                    t21.bonus_rank([card(r1, s), card(r2, h), card(r3, h)]),  # not all one suit
                )
    return cls, draws, rank2, rank3


class _PairCounter:
    """Ordered pairs (a, b) of cards with ``M[rank a][rank b]`` among the shoe less a few removed
    cards: ``x^T M x - diag(M).x`` with ``x`` the remaining rank counts (M symmetric)."""

    __slots__ = ("m", "mr", "base")

    def __init__(self, m: list[list[int]], rank_counts: Sequence[int]) -> None:
        self.m = m
        self.mr = [sum(m[a][b] * rank_counts[b] for b in _RANKS) if a else 0 for a in range(14)]
        rmr = sum(rank_counts[a] * self.mr[a] for a in _RANKS)
        self.base = rmr - sum(m[a][a] * rank_counts[a] for a in _RANKS)

    def __call__(self, removed: Sequence[int]) -> int:
        m, mr = self.m, self.mr
        out = self.base
        for i in removed:
            out -= 2 * mr[i] - m[i][i]
            row = m[i]
            for j in removed:
                out += row[j]
        return out


def _bonus_counts(
    composition: Composition, naturals: bool, threshold: int, draw_rule: str, bonus_active: bool
) -> tuple[dict[BonusRank, int], dict[BonusRank, int]]:
    """Ordered six-card sequences by the Player's and by the Banker's Bonus rank."""
    cls, draws, rank2, rank3 = _bonus_tables(naturals, threshold)
    n = [[0] * 4 for _ in range(14)]
    for c, k in composition.counts().items():
        n[c.rank][SUITS.index(c.suit)] += k
    rc = [sum(row) for row in n]
    big_n = sum(rc)

    # Player: gets a third bonus card iff own total < threshold, unless (naturals and no
    # bonus-only card) the Banker has a natural.
    # Banker: gets one iff own total < threshold and the Player's first two cards allow it.
    allowed = {_STAND: True, _DRAW: draw_rule == "each", _NAT: bonus_active}
    classes_possible = {_STAND, _DRAW} | ({_NAT} if naturals else set())
    player_always = not naturals or bonus_active
    banker_always = all(allowed[k] for k in classes_possible)
    nat_pairs = _PairCounter([[int(cls[a][b] == _NAT) for b in range(14)] for a in range(14)], rc)
    ok_pairs = _PairCounter([[int(allowed[cls[a][b]]) for b in range(14)] for a in range(14)], rc)

    f_rest2 = falling(big_n - 2, 4)
    f_rest3 = falling(big_n - 3, 3)
    f_rest4 = falling(big_n - 4, 2)
    f_rest5 = falling(big_n - 5, 1)
    pairs_after3 = falling(big_n - 3, 2)
    pairs_after2 = falling(big_n - 2, 2)

    player: dict[BonusRank, int] = defaultdict(int)
    banker: dict[BonusRank, int] = defaultdict(int)
    suits = range(4)
    for r1 in _RANKS:
        n1, big1 = n[r1], rc[r1]
        if not big1:
            continue
        for r2 in _RANKS:
            d12 = int(r1 == r2)
            big2 = rc[r2] - d12
            if big2 <= 0:
                continue
            n2 = n[r2]
            w2 = big1 * big2
            same2 = sum(n1[s] * (n2[s] - d12) for s in suits)
            r_same, r_diff = rank2[r1][r2]
            if not draws[r1][r2]:
                for out in (player, banker):
                    out[r_same] += same2 * f_rest2
                    out[r_diff] += (w2 - same2) * f_rest2
                continue
            # Two-card hands that could have drawn but did not.
            if not player_always:
                q = nat_pairs((r1, r2)) * f_rest4
                player[r_same] += same2 * q
                player[r_diff] += (w2 - same2) * q
            if not banker_always:
                q = (pairs_after2 - ok_pairs((r1, r2))) * f_rest4
                banker[r_same] += same2 * q
                banker[r_diff] += (w2 - same2) * q
            for r3 in _RANKS:
                d13, d23 = int(r3 == r1), int(r3 == r2)
                big3 = rc[r3] - d13 - d23
                if big3 <= 0:
                    continue
                n3 = n[r3]
                w3 = w2 * big3
                flush = sum(n1[s] * (n2[s] - d12) * (n3[s] - d13 - d23) for s in suits)
                r_flush, r_other = rank3[r1, r2, r3]
                removed = (r1, r2, r3)
                fp = f_rest3 if player_always else (pairs_after3 - nat_pairs(removed)) * f_rest5
                fb = f_rest3 if banker_always else ok_pairs(removed) * f_rest5
                player[r_flush] += flush * fp
                player[r_other] += (w3 - flush) * fp
                banker[r_flush] += flush * fb
                banker[r_other] += (w3 - flush) * fb
    return dict(player), dict(banker)


# --------------------------------------------------------------------------------------------
# exact_odds
# --------------------------------------------------------------------------------------------


def clear_caches() -> None:
    """Forget the composition-independent tables (built on first use per rule set); for
    measuring a cold call."""
    _punto_banco_table.cache_clear()
    _twentyone_table.cache_clear()
    _bonus_tables.cache_clear()



def _removed(composition: Composition) -> tuple[Card, ...]:
    try:
        std = Composition.standard(composition.decks)
    except CompositionError:
        return ()
    out: list[Card] = []
    for c in ALL_CARDS:
        out.extend([c] * max(std.count(c) - composition.count(c), 0))
    return tuple(out)


def exact_odds(
    submission: Any, composition: Composition | None = None, *, bonus_in_play: bool | None = None
) -> OddsReport:
    """Exact odds of every outcome and every offered wager (see the module docstring)."""
    game = Game(submission.game)
    if composition is None:
        composition = Composition.standard(submission.decks)
    big_n = composition.total
    if big_n < ROUND_CARDS:
        raise CompositionError(
            f"exact odds need at least {ROUND_CARDS} cards in the shoe (a round can use 6), not {big_n}"
        )
    total = falling(big_n, ROUND_CARDS)
    counts: dict[str, int] = {}
    dists: dict[str, list[tuple[RoundFacts, int]]] = {}

    if game.is_punto_banco_family:
        classes = [0] * 10
        for c, k in composition.counts().items():
            classes[pb.card_value(c)] += k
        cat = dict(zip(_PB_CATS, _main_counts(_punto_banco_table(), classes, big_n)))
        counts["player"] = cat["player"] + cat["player_panda8"]
        counts["banker"] = cat["banker"] + cat["banker_dragon7"]
        counts["tie"] = cat["tie"]
        pairs = _pair_counts(composition.rank_counts()[1:], big_n)
        counts["player_pair"] = pairs[True, True] + pairs[True, False]
        counts["banker_pair"] = pairs[True, True] + pairs[False, True]
        if game is Game.EZ_BACCARAT:
            counts["dragon7"] = cat["banker_dragon7"]
            counts["panda8"] = cat["player_panda8"]
        if WagerKind.HOUSE_MONEY in submission.wagers:
            counts["both_pairs"] = pairs[True, True]
        dists["main"] = [
            (RoundFacts(Outcome.PLAYER), cat["player"]),
            (RoundFacts(Outcome.PLAYER, panda8=True), cat["player_panda8"]),
            (RoundFacts(Outcome.BANKER), cat["banker"]),
            (RoundFacts(Outcome.BANKER, dragon7=True), cat["banker_dragon7"]),
            (RoundFacts(Outcome.TIE), cat["tie"]),
        ]
        dists["pairs"] = [
            (RoundFacts(Outcome.TIE, player_pair=p, banker_pair=b), k) for (p, b), k in pairs.items()
        ]
        in_play = None
    else:
        opts = submission.twentyone
        classes = [0] * 10
        for c, k in composition.counts().items():
            classes[t21.card_value(c) - 1] += k
        table = _twentyone_table(bool(opts.naturals), str(opts.draw_rule), int(opts.draw_threshold))
        cat = dict(zip(_T21_CATS, _main_counts(table, classes, big_n)))
        counts.update(cat)
        dists["main"] = [(RoundFacts(Outcome(k)), v) for k, v in cat.items()]
        offered = bool(submission.wagers & {WagerKind.PLAYER_BONUS, WagerKind.BANKER_BONUS})
        in_play = offered if bonus_in_play is None else bool(bonus_in_play)
        p_ranks, b_ranks = _bonus_counts(
            composition,
            bool(opts.naturals),
            int(opts.draw_threshold),
            str(opts.draw_rule),
            bool(in_play and opts.bonus_only_card),
        )
        for side, ranks in (("player", p_ranks), ("banker", b_ranks)):
            for r in BonusRank:
                counts[f"{side}_bonus:{r.value}"] = ranks.get(r, 0)
        dists["player_bonus"] = [(RoundFacts(Outcome.TIE, player_bonus_rank=r), k) for r, k in p_ranks.items()]
        dists["banker_bonus"] = [(RoundFacts(Outcome.TIE, banker_bonus_rank=r), k) for r, k in b_ranks.items()]

    outcomes = {name: Fraction(k, total) for name, k in counts.items()}
    wagers: dict[str, dict[str, Fraction]] = {}
    payouts: dict[str, str] = {}
    for kind in WagerKind:
        if kind not in submission.wagers:
            continue
        if kind in (WagerKind.PLAYER_BONUS, WagerKind.BANKER_BONUS) and not in_play:
            continue  # a Bonus Wager puts the Bonus in play (681a.7(f)(2))
        wagers[kind.value] = _wager_stats(kind, dists[WAGER_FACTS[kind]], submission, total)
        payouts[kind.value] = _payout_text(kind, submission)
    return OddsReport(
        game=game,
        decks=composition.decks,
        cards=big_n,
        removed=_removed(composition),
        total_sequences=total,
        counts=counts,
        outcomes=outcomes,
        wagers=wagers,
        submission=str(getattr(submission, "source", "") or getattr(submission, "name", "")),
        bonus_in_play=in_play,
        payouts=payouts,
    )


def _wager_stats(
    kind: WagerKind, dist: Iterable[tuple[RoundFacts, int]], submission: Any, total: int
) -> dict[str, Fraction]:
    win = push = lose = 0
    ev = Fraction(0)
    for facts, k in dist:
        if not k:
            continue
        m = net_multiplier(kind, facts, submission)
        ev += m * k
        if m > 0:
            win += k
        elif m < 0:
            lose += k
        else:
            push += k
    ev /= total
    return {
        "house_edge": -ev,
        "expected": ev,
        "win": Fraction(win, total),
        "push": Fraction(push, total),
        "lose": Fraction(lose, total),
    }


def _payout_text(kind: WagerKind, submission: Any) -> str:
    """The odds as shown to a reader (display only; settlement is net_multiplier's)."""
    try:
        if kind is WagerKind.HOUSE_MONEY:
            hm = submission.house_money
            return f"{hm.either_pair} one pair, {hm.both_pairs} both"
        if kind in (WagerKind.PLAYER_BONUS, WagerKind.BANKER_BONUS):
            return "by rank"
        text = str(submission.payout(kind))
        if submission.commission_on(kind):
            rate = (Decimal(submission.commission_on(kind)) * 100).normalize()
            text += f" less {rate:f}% commission"
        return text
    except (RulesError, AttributeError, TypeError):  # display only
        return ""
