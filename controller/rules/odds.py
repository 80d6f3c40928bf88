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
- ``clear_caches()`` forgets the composition-independent tables, plans and the net multipliers
  remembered per submission (for measuring a cold call).

This module puts the figures together; the counting is done by (docs/odds.md has the method):
- ``odds_sequences``: the counting unit (``ROUND_CARDS``, ``falling``);
- ``odds_main_game``: Player / Banker / Tie, Dragon 7 and Panda 8, by value-class tables built
  once per rule set from the drawing rules, evaluated on a shoe by ``odds_multisets``' compiled
  plan;
- ``odds_pairs_bonus``: the pair wagers and House Money (closed form over rank counts) and the 21
  Baccarat Bonus ranks (rank and suit counts);
- ``odds_report``: the ``OddsReport`` returned.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

from . import odds_main_game, odds_pairs_bonus
from .cards import ALL_CARDS, Card, Composition
from .engine import RoundFacts
from .errors import CompositionError, RulesError
from .model import BonusRank, Game, Outcome, WagerKind
from .odds_report import OddsReport
from .odds_sequences import ROUND_CARDS, falling
from .wagers import net_multiplier

__all__ = ["OddsReport", "WAGER_FACTS", "clear_caches", "exact_odds", "falling"]

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


def clear_caches() -> None:
    """Forget the composition-independent tables (built on first use per rule set); for
    measuring a cold call."""
    odds_main_game.clear_caches()
    odds_pairs_bonus.clear_caches()
    _MULTIPLIERS.clear()


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
        cat = odds_main_game.punto_banco_categories(composition)
        counts["player"] = cat["player"] + cat["player_panda8"]
        counts["banker"] = cat["banker"] + cat["banker_dragon7"]
        counts["tie"] = cat["tie"]
        pairs = odds_pairs_bonus.pair_counts(composition.rank_counts()[1:], big_n)
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
        cat = odds_main_game.twentyone_categories(
            composition,
            naturals=bool(opts.naturals),
            draw_rule=str(opts.draw_rule),
        )
        counts.update(cat)
        dists["main"] = [(RoundFacts(Outcome(k)), v) for k, v in cat.items()]
        offered = bool(submission.wagers & {WagerKind.PLAYER_BONUS, WagerKind.BANKER_BONUS})
        in_play = offered if bonus_in_play is None else bool(bonus_in_play)
        p_ranks, b_ranks = odds_pairs_bonus.bonus_counts(
            composition,
            bool(opts.naturals),
            str(opts.draw_rule),
            bool(in_play),
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


# Net multipliers by (kind, facts) for the submissions seen last: ``id(submission)`` -> (the
# submission, kept alive so that its id stays its own, and its table). Submissions are frozen.
_MULTIPLIERS: dict[int, tuple[Any, dict[tuple[WagerKind, RoundFacts], Fraction]]] = {}
_MULTIPLIER_SUBMISSIONS = 16


def _multipliers(submission: Any) -> dict[tuple[WagerKind, RoundFacts], Fraction]:
    entry = _MULTIPLIERS.get(id(submission))
    if entry is None or entry[0] is not submission:
        if len(_MULTIPLIERS) >= _MULTIPLIER_SUBMISSIONS:
            _MULTIPLIERS.clear()
        entry = _MULTIPLIERS[id(submission)] = (submission, {})
    return entry[1]


def _wager_stats(
    kind: WagerKind, dist: Iterable[tuple[RoundFacts, int]], submission: Any, total: int
) -> dict[str, Fraction]:
    """A wager's figures from ``net_multiplier`` over ``dist``, summed as integers over a common
    denominator (one Fraction per figure at the end)."""
    known = _multipliers(submission)
    terms: list[tuple[Fraction, int]] = []
    for facts, k in dist:
        if not k:
            continue
        m = known.get((kind, facts))
        if m is None:
            m = known[kind, facts] = Fraction(net_multiplier(kind, facts, submission))
        terms.append((m, k))
    den = math.lcm(*(m.denominator for m, _ in terms)) if terms else 1
    ev_num = sum(m.numerator * (den // m.denominator) * k for m, k in terms)
    win = sum(k for m, k in terms if m > 0)
    lose = sum(k for m, k in terms if m < 0)
    ev = Fraction(ev_num, den * total)
    return {
        "house_edge": -ev,
        "expected": ev,
        "win": Fraction(win, total),
        "push": Fraction(sum(k for m, k in terms if m == 0), total),
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
