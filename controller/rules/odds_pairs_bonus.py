"""Exact counts for the wagers decided by ranks and suits: pairs and 21 Baccarat Bonus (pure).

Contract:
- ``pair_counts(rank_counts, n_cards)`` -> ordered six-card sequences by ``(player_pair,
  banker_pair)``, from the count of each of the 13 ranks (10-J-Q-K are four ranks) and the shoe's
  size; the four counts sum to ``falling(n_cards, ROUND_CARDS)``. Player Pair, Banker Pair and
  House Money read these.
- ``bonus_counts(composition, naturals, draw_rule, bonus_active)`` -> two mappings,
  the Player's and the Banker's, of ordered six-card sequences by that hand's ``BonusRank`` (a
  rank with no sequence may be missing). ``bonus_active`` says whether the 681a.7(f)(2)
  bonus-only card is dealt.
- ``clear_caches()`` forgets the rank tables (built once per rule set, on first use).

Method (docs/odds.md):
- Pairs: closed form over RANK counts: ``sum_r n_r (n_r - 1)`` ordered first-two-card pairs;
  both hands paired: ``S^2 - sum_r (n_r(n_r-1))^2 + sum_r n_r...(n_r-3)``.
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

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from . import twentyone as t21
from .cards import SUITS, Composition, card
from .model import BonusRank
from .odds_multisets import gather
from .odds_sequences import ROUND_CARDS, falling

__all__ = ["bonus_counts", "clear_caches", "pair_counts"]


# --------------------------------------------------------------------------------------------
# Pairs (closed form over rank counts)
# --------------------------------------------------------------------------------------------


def pair_counts(rank_counts: Sequence[int], n_cards: int) -> dict[tuple[bool, bool], int]:
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
def _bonus_tables(naturals: bool) -> tuple[Any, ...]:
    """Composition-independent rank tables from the ``twentyone`` functions."""
    threshold = t21.DRAW_BELOW  # 681a.7(f)(2), (g)
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


def bonus_counts(
    composition: Composition, naturals: bool, draw_rule: str, bonus_active: bool
) -> tuple[dict[BonusRank, int], dict[BonusRank, int]]:
    """Ordered six-card sequences by the Player's and by the Banker's Bonus rank."""
    cls, draws, _, _ = _bonus_tables(naturals)
    n = [[0] * 4 for _ in range(14)]
    for c, k in composition.counts().items():
        n[c.rank][SUITS.index(c.suit)] += k
    rc = [sum(row) for row in n]
    big_n = sum(rc)

    # Player: gets a third bonus card iff own total < 17, unless (naturals and no Bonus Wager
    # in play) the Banker has a natural.
    # Banker: gets one iff own total < 17 and the Player's first two cards allow it.
    allowed = {_STAND: True, _DRAW: draw_rule == "each", _NAT: bonus_active}
    classes_possible = {_STAND, _DRAW} | ({_NAT} if naturals else set())
    player_always = not naturals or bonus_active
    banker_always = all(allowed[k] for k in classes_possible)
    # Only needed where a hand's third card depends on the other hand's first two cards.
    nat_pairs = ok_pairs = None
    if not player_always:
        nat_pairs = _PairCounter([[int(cls[a][b] == _NAT) for b in range(14)] for a in range(14)], rc)
    if not banker_always:
        ok_pairs = _PairCounter([[int(allowed[cls[a][b]]) for b in range(14)] for a in range(14)], rc)

    f_rest2 = falling(big_n - 2, 4)
    f_rest3 = falling(big_n - 3, 3)
    f_rest4 = falling(big_n - 4, 2)
    f_rest5 = falling(big_n - 5, 1)
    pairs_after3 = falling(big_n - 3, 2)
    pairs_after2 = falling(big_n - 2, 2)

    # Sums by rank index (``_RANK_LIST``): ``p_*`` / ``b_*`` already weighted; ``raw`` counts the
    # three-card hands of a hand that always gets its third card, weighted by f_rest3 at the end.
    nr = len(_RANK_LIST)
    p_sum, b_sum, raw = [0] * nr, [0] * nr, [0] * nr
    rank2i, rank3i, groups, subsets = _rank_indices(naturals)
    both_always = player_always and banker_always
    if both_always:  # per set of third ranks: the cards left of each suit, and of any suit
        columns = [[row[s] for row in n] for s in range(4)] + [rc]
        sums = [tuple(map(sum, map(pick, columns))) for pick in subsets]
    for r1 in _RANKS:
        n1, big1 = n[r1], rc[r1]
        if not big1:
            continue
        c0, c1, c2, c3 = n1
        for r2 in _RANKS:
            d12 = int(r1 == r2)
            big2 = rc[r2] - d12
            if big2 <= 0:
                continue
            n2 = n[r2]
            w2 = big1 * big2
            a0, a1, a2, a3 = c0 * (n2[0] - d12), c1 * (n2[1] - d12), c2 * (n2[2] - d12), c3 * (n2[3] - d12)
            same2 = a0 + a1 + a2 + a3
            i_same, i_diff = rank2i[r1][r2]
            if not draws[r1][r2]:
                q = f_rest2
                p_sum[i_same] += same2 * q
                p_sum[i_diff] += (w2 - same2) * q
                b_sum[i_same] += same2 * q
                b_sum[i_diff] += (w2 - same2) * q
                continue
            # Two-card hands that could have drawn but did not.
            if not player_always:
                q = nat_pairs((r1, r2)) * f_rest4
                p_sum[i_same] += same2 * q
                p_sum[i_diff] += (w2 - same2) * q
            if not banker_always:
                q = (pairs_after2 - ok_pairs((r1, r2))) * f_rest4
                b_sum[i_same] += same2 * q
                b_sum[i_diff] += (w2 - same2) * q
            if both_always:
                # The third cards by the rank pair they give (all one suit, not): the flushes of
                # a set of third ranks are a . (cards of each suit in it) less those the first
                # two took; a rank left without a card adds nothing to either count.
                for i_flush, i_other, k, taken in groups[r1][r2]:
                    s0, s1, s2, s3, left = sums[k]
                    flush = a0 * s0 + a1 * s1 + a2 * s2 + a3 * s3 - taken * same2
                    raw[i_flush] += flush
                    raw[i_other] += w2 * (left - taken) - flush
                continue
            row3 = rank3i[r1][r2]
            for r3 in _RANKS:
                taken = (r3 == r1) + (r3 == r2)
                big3 = rc[r3] - taken
                if big3 <= 0:
                    continue
                n3 = n[r3]
                w3 = w2 * big3
                flush = a0 * n3[0] + a1 * n3[1] + a2 * n3[2] + a3 * n3[3] - taken * same2
                i_flush, i_other = row3[r3]
                removed = (r1, r2, r3)
                fp = f_rest3 if player_always else (pairs_after3 - nat_pairs(removed)) * f_rest5
                fb = f_rest3 if banker_always else ok_pairs(removed) * f_rest5
                p_sum[i_flush] += flush * fp
                p_sum[i_other] += (w3 - flush) * fp
                b_sum[i_flush] += flush * fb
                b_sum[i_other] += (w3 - flush) * fb
    player = {r: p_sum[i] + raw[i] * f_rest3 for i, r in enumerate(_RANK_LIST) if p_sum[i] or raw[i]}
    banker = {r: b_sum[i] + raw[i] * f_rest3 for i, r in enumerate(_RANK_LIST) if b_sum[i] or raw[i]}
    return player, banker


_RANK_LIST = tuple(BonusRank)


@lru_cache(maxsize=None)
def _rank_indices(naturals: bool) -> tuple[Any, Any, Any, Any]:
    """``_bonus_tables``' rank2 and rank3 as indices into ``_RANK_LIST``, in nested lists for the
    loops: ``rank2i[r1][r2]`` and ``rank3i[r1][r2][r3]`` = (all one suit, not); and the third
    ranks grouped by what they give: ``groups[r1][r2]`` = ``(flush index, other index, k, taken)``
    for the set of third ranks ``subsets[k]`` (as a gather over a list by rank), ``taken`` the
    cards of those ranks among the first two."""
    _, _, rank2, rank3 = _bonus_tables(naturals)
    index = {r: i for i, r in enumerate(_RANK_LIST)}
    rank2i = [[tuple(index[x] for x in rank2[r1][r2]) for r2 in range(14)] for r1 in range(14)]
    rank3i = [[[tuple(index[x] for x in rank3[r1, r2, r3]) if r1 and r2 and r3 else (0, 0) for r3 in range(14)]
               for r2 in range(14)] for r1 in range(14)]
    subset_ids: dict[tuple[int, ...], int] = {}
    groups: list[list[tuple[tuple[int, int, int, int], ...]]] = [[()] * 14 for _ in range(14)]
    for r1 in _RANKS:
        for r2 in _RANKS:
            by_pair: dict[tuple[int, int], list[int]] = {}
            for r3 in _RANKS:
                by_pair.setdefault(rank3i[r1][r2][r3], []).append(r3)
            groups[r1][r2] = tuple(
                (i_flush, i_other, subset_ids.setdefault(tuple(r3s), len(subset_ids)),
                 sum((r3 == r1) + (r3 == r2) for r3 in r3s))
                for (i_flush, i_other), r3s in by_pair.items())
    subsets = [gather(r3s) for r3s in subset_ids]
    return rank2i, rank3i, groups, subsets


def clear_caches() -> None:
    """Forget the Bonus rank tables (for measuring a cold call)."""
    _bonus_tables.cache_clear()
    _rank_indices.cache_clear()
