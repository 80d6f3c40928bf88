"""The result of ``exact_odds``: one shoe's exact odds, and its JSON form (pure; no I/O).

Contract: an ``OddsReport`` is immutable data. Every figure is exact (integer counts of ordered
six-card sequences and ``Fraction`` probabilities); ``to_json(exact=True)`` gives floats for
reading plus, when ``exact``, the counts and every Fraction as ``"numerator/denominator"`` text.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .cards import Card
from .model import Game

__all__ = ["OddsReport"]


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

