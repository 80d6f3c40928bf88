"""Shared vocabulary of the rules core: games, hands, outcomes, wager kinds, payouts.

Everything here is immutable data. Enums are ``str`` enums whose values are the stable strings used
in JSON output and in Rules Submission files.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from fractions import Fraction

from .errors import RulesError


class Game(str, Enum):
    """The drawing and settlement rules a table plays.

    Minibaccarat (627a) and Midibaccarat (629a) share the Punto Banco tableau; they differ in how the
    cards are dealt (face up / face down with the squeeze), which the Rules Submission sets.
    """

    PUNTO_BANCO = "punto-banco"
    EZ_BACCARAT = "ez-baccarat"
    TWENTYONE = "21-baccarat"

    @property
    def is_punto_banco_family(self) -> bool:
        return self is not Game.TWENTYONE


class Target(str, Enum):
    """Where a card dealt in a round goes."""

    PLAYER = "player"
    BANKER = "banker"
    PLAYER_BONUS = "player_bonus"  # 681a.7(f)(2): counts for the Player Bonus Wager only
    BANKER_BONUS = "banker_bonus"  # 681a.7(f)(2): counts for the Banker Bonus Wager only

    @property
    def hand(self) -> str:
        return "player" if self in (Target.PLAYER, Target.PLAYER_BONUS) else "banker"


class Outcome(str, Enum):
    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"


class Dealing(str, Enum):
    """627a.8(c) / 629a.8(c): initial cards face up, or face down with the squeeze."""

    FACE_UP = "face-up"
    FACE_DOWN = "face-down"


class WagerKind(str, Enum):
    PLAYER = "player"
    BANKER = "banker"
    TIE = "tie"
    PLAYER_PAIR = "player_pair"
    BANKER_PAIR = "banker_pair"
    DRAGON7 = "dragon7"
    PANDA8 = "panda8"
    PLAYER_BONUS = "player_bonus"
    BANKER_BONUS = "banker_bonus"
    HOUSE_MONEY = "house_money"


class BonusRank(str, Enum):
    """21 Baccarat "pair or better" (681a.7(k)(2)-(3)); the ranking is an assumption (681a.3 not
    found): a poker ranking of the hand's two or three cards."""

    NONE = "none"
    PAIR = "pair"
    FLUSH = "flush"
    STRAIGHT = "straight"
    THREE_OF_A_KIND = "three_of_a_kind"
    STRAIGHT_FLUSH = "straight_flush"
    SUITED_THREE_OF_A_KIND = "suited_three_of_a_kind"


_ODDS_RE = re.compile(r"^\s*(\d+)\s*(?::|to|TO|To)\s*(\d+)\s*$", re.ASCII)  # ASCII: no full-width or other digits


@dataclass(frozen=True, slots=True)
class Payout:
    """Payout odds ``win:stake`` ("8:1" pays 8 for each 1 wagered, stake returned)."""

    win: int
    stake: int = 1

    @classmethod
    def parse(cls, text: str) -> Payout:
        """Parse ``"8:1"`` or ``"8 to 1"``; raises ``RulesError`` on anything else."""
        m = _ODDS_RE.match(str(text))
        if not m or int(m.group(2)) == 0:
            raise RulesError(f"payout odds must look like '8:1' or '8 to 1', not {text!r}")
        return cls(int(m.group(1)), int(m.group(2)))

    @property
    def ratio(self) -> Fraction:
        return Fraction(self.win, self.stake)

    def __str__(self) -> str:
        return f"{self.win}:{self.stake}"
