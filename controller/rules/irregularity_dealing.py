"""627a.13(e), insufficient cards, and the dealing the 627a.13 decisions call for (pure; no I/O).

Contract:
- ``insufficient_cards(cards_remaining)``: (e) ``VOID_ROUND`` when no round can be completed
  (fewer than 4 cards), else ``None``. ``can_complete_round(n)`` says whether a round is certain to
  complete (at least 6 cards). With 4 or 5 cards a round may or may not complete: the controller
  deals, and voids only when the shoe runs out mid-round, which ``engine.deal`` (and
  ``simulated_round``) report with ``InsufficientCardsError``; ``void_decision_for(exc)`` turns that
  into the (e) decision. A count that is not a whole number 0 or more raises ``RulesError``.
- ``simulated_round(first_card, following)``: deals the (c)(2)/(d) simulated round (no wagers) from
  the disclosed card then ``following``; takes only the cards the round needs.
- ``apply_to_next_round(held, shoe_cards)``: the cards of the next hand, a held (a)/(b) card first.
- ``insufficient_cards``, ``void_decision_for`` and ``simulated_round`` take the game (Punto Banco
  by default) and raise ``GameScopeError`` for 21 Baccarat (``irregularity_decisions.game_in_scope``).
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain

from .cards import Card, parse_card
from .engine import RoundResult, deal
from .errors import InsufficientCardsError, RulesError
from .irregularity_decisions import MAX_ROUND_CARDS, MIN_ROUND_CARDS, Action, Decision, game_in_scope
from .model import Game

__all__ = [
    "apply_to_next_round",
    "can_complete_round",
    "insufficient_cards",
    "simulated_round",
    "void_decision_for",
]

_VOID_REASON = (
    "Insufficient cards remain in the dealing shoe to complete the round: it is void, all wagers "
    "are returned, and the entire set of cards is reshuffled and placed in the shoe before a new "
    "round."
)


def can_complete_round(cards_remaining: int, cards_needed_max: int = MAX_ROUND_CARDS) -> bool:
    """True when a round is certain to complete from ``cards_remaining`` cards (at least
    ``cards_needed_max``, 6 in Punto Banco). False does not mean void: see ``insufficient_cards``."""
    return _count(cards_remaining) >= cards_needed_max


def insufficient_cards(cards_remaining: int, *, game: Game | str = Game.PUNTO_BANCO) -> Decision | None:
    """(e) before dealing: ``VOID_ROUND`` when no round can be completed (fewer than 4 cards).

    With 4 or 5 cards the round may still complete (no draw, or one), so this returns ``None``: the
    controller deals, and if the shoe runs out mid-round ``engine.deal`` raises
    ``InsufficientCardsError`` and ``void_decision_for`` gives the decision. Voiding a round that
    could have completed would not follow (e), which voids a round only when the cards are
    insufficient to complete it.
    """
    game_in_scope(game)
    if _count(cards_remaining) < MIN_ROUND_CARDS:
        return Decision(Action.VOID_ROUND, "627a.13(e)", None, _VOID_REASON)
    return None


def void_decision_for(exc: InsufficientCardsError, *, game: Game | str = Game.PUNTO_BANCO) -> Decision:
    """(e) after the shoe ran out mid-round (``engine.deal`` / ``simulated_round`` raised ``exc``)."""
    game_in_scope(game)
    if not isinstance(exc, InsufficientCardsError):
        raise RulesError(f"expected an InsufficientCardsError, got {type(exc).__name__}")
    return Decision(Action.VOID_ROUND, "627a.13(e)", None, _VOID_REASON)


def _count(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise RulesError(f"cards remaining must be a whole number 0 or more, not {n!r}")
    return n


def simulated_round(
    first_card: Card | str, following: Iterable[Card | str], game: Game | str = Game.PUNTO_BANCO
) -> RoundResult:
    """Deal the simulated round of (c)(2)/(d): ``first_card`` (the disclosed card) is P1, then the
    round takes from ``following`` only the cards it needs (an iterator over the shoe is left
    positioned after them). No wager is accepted or settled; the table records the round as
    simulated and sends its cards to the discard rack. Raises ``InsufficientCardsError`` if the
    cards run out (then ``void_decision_for``)."""
    g = game_in_scope(game)
    return deal(chain((parse_card(first_card),), following), g)


def apply_to_next_round(held: Card | str | None, shoe_cards: Iterable[Card | str]) -> Iterator[Card | str]:
    """The cards for the next hand: the held card of (a)/(b) first (as P1), then the shoe's cards.

    Lazy: it takes from ``shoe_cards`` only as cards are asked for, so
    ``engine.deal(apply_to_next_round(held, shoe))`` uses only what the round needs. ``held`` is
    checked at once (bad card text raises ``CardError`` here, not later).
    """
    if held is None:
        return iter(shoe_cards)
    return chain((parse_card(held),), shoe_cards)
