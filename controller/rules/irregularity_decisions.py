"""What a 627a.13 (Minibaccarat irregularities) decision is, and which games it covers (pure).

Contract:
- ``Decision(action, clause, card, reason)``: one irregularity decided, immutable; ``action`` is an
  ``Action`` (a plain string value is turned into one); ``to_json()`` is its stable journal form.
- ``Action``: what becomes of the card concerned, or of the round (``VOID_ROUND``).
- ``game_in_scope(game) -> Game``: the game, when 627a.13 covers it (the Punto Banco family:
  ``punto-banco``, ``ez-baccarat``); ``GameScopeError`` for 21 Baccarat, ``RulesError`` for a name
  that is no game.
- ``NotAnIrregularityError`` and ``GameScopeError`` are ``RulesError`` s.
- ``UNAUTHORIZED_THIRD_CARD_OPTIONS``: the Rules Submission's choices for 627a.13(c) and the clause
  each selects; ``MIN_ROUND_CARDS`` / ``MAX_ROUND_CARDS``: the cards a Punto Banco round uses.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from .cards import Card
from .errors import RulesError
from .model import Game

__all__ = [
    "MAX_ROUND_CARDS",
    "MIN_ROUND_CARDS",
    "UNAUTHORIZED_THIRD_CARD_OPTIONS",
    "Action",
    "Decision",
    "GameScopeError",
    "NotAnIrregularityError",
    "game_in_scope",
]

MIN_ROUND_CARDS = 4  # P1 B1 P2 B2, both hands standing
MAX_ROUND_CARDS = 6  # plus a third card to each hand

# Rules Submission values of ``irregularities.unauthorized_third_card`` and the clause each selects.
UNAUTHORIZED_THIRD_CARD_OPTIONS = {"discard": "627a.13(c)(1)", "simulated-round": "627a.13(c)(2)"}


class NotAnIrregularityError(RulesError):
    """The Player was entitled to the third card under 627a.10: it is not an irregularity."""


class GameScopeError(RulesError):
    """627a.13 does not cover the game (21 Baccarat)."""


class Action(str, Enum):
    """What becomes of the card concerned (or of the round, for ``VOID_ROUND``)."""

    NEXT_HAND_FIRST_CARD = "next-hand-first-card"
    """(a), (b): hold the card, undisclosed; it is the first card (P1) of the next hand."""

    BANKER_THIRD_CARD = "banker-third-card"
    """(b), (c): the card is the Banker's third card; the round completes and settles with it."""

    DISCARD_WITH_ONE_MORE = "discard-with-one-more"
    """(c)(1): the disclosed card and one more card drawn face down from the shoe, not disclosed,
    go to the discard rack."""

    SIMULATED_ROUND = "simulated-round"
    """(c)(2), (d): the card is the first card of a simulated round in which no wagers are
    accepted, dealt per the rules (``simulated_round``), then all its cards go to the discard
    rack."""

    VOID_ROUND = "void-round"
    """(e): the round is void, every wager is returned, and the entire set of cards is reshuffled
    and placed in the shoe before a new round."""


@dataclass(frozen=True, slots=True)
class Decision:
    """One irregularity decided. Immutable.

    ``action``: what to do; ``clause``: the clause that requires it (``"627a.13(b)"``); ``card``:
    the card concerned, or ``None`` (a void round); ``reason``: one plain sentence for the dealer
    and the journal.
    """

    action: Action
    clause: str
    card: Card | None
    reason: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "action", Action(self.action))

    def to_json(self) -> dict[str, Any]:
        """Stable JSON form: ``{"action", "clause", "card", "reason"}`` (card as ``"AS"`` or null)."""
        return {
            "action": self.action.value,
            "clause": self.clause,
            "card": None if self.card is None else str(self.card),
            "reason": self.reason,
        }


def game_in_scope(game: Game | str) -> Game:
    """``game`` as a ``Game`` if 627a.13 covers it (see the module docstring)."""
    try:
        g = Game(game)
    except ValueError:
        raise RulesError(f"unknown game {game!r}; known: {', '.join(x.value for x in Game)}") from None
    if not g.is_punto_banco_family:
        raise GameScopeError(
            f"627a.13 (Minibaccarat irregularities) covers the Punto Banco games only "
            f"(punto-banco, ez-baccarat), not {g.value}"
        )
    return g
