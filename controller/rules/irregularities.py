"""Minibaccarat irregularities (58 Pa. Code 627a.13) as pure decisions.

Nothing here deals, moves or stores a card: each function looks at the facts of an irregularity and
returns an immutable ``Decision`` saying what the regulation requires. The table controller acts on
it (holds a card, discards, deals a simulated round, voids the round) and journals it
(``Decision.to_json()``). No I/O, no state.

Contract:
- ``card_drawn_in_error(card, *, disclosed)``: (a) not disclosed -> ``NEXT_HAND_FIRST_CARD``;
  (d) disclosed -> ``SIMULATED_ROUND``.
- ``unauthorized_player_third_card(first_four, card, *, disclosed, submission)``: ``first_four`` are
  the round's first four cards in deal order P1 B1 P2 B2. The Player must not have been entitled to
  a third card (a Natural on either hand, or a Player 6-7); if it was, ``NotAnIrregularityError``.
  (b)/(c): the Banker required to draw under 627a.10(c) (the Player having stood: Banker 0-5, no
  Natural) -> ``BANKER_THIRD_CARD``. Otherwise (b) not disclosed -> ``NEXT_HAND_FIRST_CARD``;
  (c) disclosed or found face up -> the Rules Submission's ``unauthorized_third_card``:
  ``"discard"`` (c)(1) ``DISCARD_WITH_ONE_MORE``, ``"simulated-round"`` (c)(2) ``SIMULATED_ROUND``.
- ``face_up_card_in_shoe(card, *, dealt_as_player_third_after=None, submission=None)``: (d)
  ``SIMULATED_ROUND``, except the (c) case: the face-up card was being dealt as a third card to the
  Player who was not entitled to one (pass the round's first four cards) -> as above with
  ``disclosed=True``.
- ``insufficient_cards(cards_remaining)``: (e) ``VOID_ROUND`` when no round can be completed
  (fewer than 4 cards), else ``None``. ``can_complete_round(n)`` says whether a round is certain to
  complete (at least 6 cards). With 4 or 5 cards a round may or may not complete: the controller
  deals, and voids only when the shoe runs out mid-round, which ``engine.deal`` (and
  ``simulated_round``) report with ``InsufficientCardsError``; ``void_decision_for(exc)`` turns that
  into the (e) decision.
- ``simulated_round(first_card, following)``: deals the (c)(2)/(d) simulated round (no wagers) from
  the disclosed card then ``following``; takes only the cards the round needs.
- ``apply_to_next_round(held, shoe_cards)``: the cards of the next hand, a held (a)/(b) card first.

Scope: 627a.13 is Minibaccarat's. It is applied to every Punto Banco game the Rules Submission can
name (``punto-banco``, which also covers Midibaccarat, and ``ez-baccarat``, commission-free
Minibaccarat, 627c.2), which share the tableau. 21 Baccarat (681a) is outside it: every function
raises ``GameScopeError`` for ``21-baccarat``.

Errors: ``NotAnIrregularityError`` and ``GameScopeError`` are ``RulesError`` s; bad card text raises
``CardError``; a missing or wrong Rules Submission, or a first deal that is not four cards, raises
``RulesError``. Valid inputs never raise. See ``docs/irregularities.md``.

This module decides the misdealt cards, (a)-(d), and answers the tableau questions they ask; every
name above is importable from here. ``irregularity_decisions`` holds ``Decision``, ``Action``, the
errors and the scope check; ``irregularity_dealing`` holds (e) and the dealing helpers.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import punto_banco as pb
from .cards import Card, parse_card
from .errors import RulesError
from .irregularity_dealing import (
    apply_to_next_round,
    can_complete_round,
    insufficient_cards,
    simulated_round,
    void_decision_for,
)
from .irregularity_decisions import (
    MAX_ROUND_CARDS,
    MIN_ROUND_CARDS,
    UNAUTHORIZED_THIRD_CARD_OPTIONS,
    Action,
    Decision,
    GameScopeError,
    NotAnIrregularityError,
    game_in_scope,
)
from .model import Game

__all__ = [
    "MIN_ROUND_CARDS",
    "MAX_ROUND_CARDS",
    "UNAUTHORIZED_THIRD_CARD_OPTIONS",
    "Action",
    "Decision",
    "GameScopeError",
    "NotAnIrregularityError",
    "apply_to_next_round",
    "banker_must_draw",
    "can_complete_round",
    "card_drawn_in_error",
    "face_up_card_in_shoe",
    "insufficient_cards",
    "player_entitled_to_third_card",
    "simulated_round",
    "unauthorized_player_third_card",
    "void_decision_for",
]


def _first_four(cards: Sequence[Card | str]) -> tuple[Card, Card, Card, Card]:
    four = tuple(parse_card(c) for c in cards)
    if len(four) != 4:
        raise RulesError(
            f"expected the round's first four cards in deal order P1 B1 P2 B2, got {len(four)}"
        )
    return four  # type: ignore[return-value]


def _totals(four: Sequence[Card]) -> tuple[int, int]:
    return pb.point_count((four[0], four[2])), pb.point_count((four[1], four[3]))


def _option(submission: Any) -> str:
    if submission is None:
        raise RulesError("a Rules Submission is needed to decide 627a.13(c) (irregularities.unauthorized_third_card)")
    game_in_scope(submission.game)
    option = getattr(submission, "unauthorized_third_card", None)
    if option not in UNAUTHORIZED_THIRD_CARD_OPTIONS:
        raise RulesError(
            f"irregularities.unauthorized_third_card must be one of "
            f"{', '.join(UNAUTHORIZED_THIRD_CARD_OPTIONS)}, not {option!r}"
        )
    return option


def _why_not_entitled(pt: int, bt: int) -> str:
    if pb.is_natural(pt) and pb.is_natural(bt):
        return f"both hands are Naturals (Player {pt}, Banker {bt})"
    if pb.is_natural(pt):
        return f"the Player's Hand is a Natural {pt}"
    if pb.is_natural(bt):
        return f"the Banker's Hand is a Natural {bt}"
    return f"the Player's Hand stands on {pt}"


# -- the tableau questions 627a.13(b)/(c) ask -------------------------------------------------


def player_entitled_to_third_card(first_four: Sequence[Card | str]) -> bool:
    """627a.10(a)-(b): no Natural on either hand and the Player's two-card total 0-5."""
    pt, bt = _totals(_first_four(first_four))
    return not (pb.is_natural(pt) or pb.is_natural(bt)) and pb.player_draws(pt)


def banker_must_draw(first_four: Sequence[Card | str]) -> bool:
    """Is the Banker's Hand required to draw under 627a.10(c) when the Player has not drawn?

    False when either hand is a Natural (627a.10(a): no more cards); otherwise the Banker draws on
    0-5 and stands on 6-7 (``punto_banco.banker_draws(bt, None)``).
    """
    pt, bt = _totals(_first_four(first_four))
    if pb.is_natural(pt) or pb.is_natural(bt):
        return False
    return pb.banker_draws(bt, None)


# -- decisions --------------------------------------------------------------------------------


def card_drawn_in_error(card: Card | str, *, disclosed: bool, game: Game | str = Game.PUNTO_BANCO) -> Decision:
    """A card drawn from the shoe in error (other than an unauthorised Player third card).

    (a) not disclosed: the first card of the next hand. (d) disclosed: the first card of a
    simulated round. For an unauthorised Player third card use ``unauthorized_player_third_card``.
    """
    game_in_scope(game)
    c = parse_card(card)
    if disclosed:
        return Decision(
            Action.SIMULATED_ROUND,
            "627a.13(d)",
            c,
            f"Card {c} was drawn in error and disclosed: it is the first card of a simulated round "
            "in which no wagers are accepted, and its cards then go to the discard rack.",
        )
    return Decision(
        Action.NEXT_HAND_FIRST_CARD,
        "627a.13(a)",
        c,
        # The sentence does not name the card: it is shown to the table, the card is not.
        "A card was drawn in error and not disclosed: it is held, undisclosed, as the first "
        "card of the next hand.",
    )


def unauthorized_player_third_card(
    first_four: Sequence[Card | str],
    card: Card | str,
    *,
    disclosed: bool,
    submission: Any,
) -> Decision:
    """A third card dealt to the Player's Hand when 627a.10 did not authorise one (627a.13(b)-(c)).

    ``first_four``: the round's first four cards, P1 B1 P2 B2. ``disclosed``: the card was
    disclosed when dealt or found face up in the shoe ((c)); otherwise (b). ``submission``: the Rules
    Submission (its ``game`` and ``unauthorized_third_card``). Raises ``NotAnIrregularityError`` if
    the Player was entitled to the card.
    """
    option = _option(submission)
    four = _first_four(first_four)
    c = parse_card(card)
    pt, bt = _totals(four)
    if player_entitled_to_third_card(four):
        raise NotAnIrregularityError(
            f"the Player's Hand ({pt}, Banker {bt}) is entitled to a third card under 627a.10(b): "
            f"card {c} is the Player's third card, not an irregularity"
        )
    why = _why_not_entitled(pt, bt)
    how = "disclosed" if disclosed else "not disclosed"
    clause = "627a.13(c)" if disclosed else "627a.13(b)"
    if banker_must_draw(four):
        return Decision(
            Action.BANKER_THIRD_CARD,
            clause,
            c,
            f"Card {c} was dealt to the Player in error ({why}) and {how}; the Banker's Hand of {bt} "
            "must draw, so it is the Banker's third card.",
        )
    if pb.is_natural(pt) or pb.is_natural(bt):
        stays = "no more cards are dealt to either hand"
    else:
        stays = f"the Banker's Hand of {bt} stays"
    if not disclosed:
        return Decision(
            Action.NEXT_HAND_FIRST_CARD,
            clause,
            c,
            f"A card was dealt to the Player in error ({why}) and not disclosed; {stays}, so it is "
            "held, undisclosed, as the first card of the next hand.",  # the card unnamed, as above
        )
    if option == "discard":
        return Decision(
            Action.DISCARD_WITH_ONE_MORE,
            UNAUTHORIZED_THIRD_CARD_OPTIONS[option],
            c,
            f"Card {c} was dealt to the Player in error ({why}) and disclosed; {stays}, so it and one "
            "more card drawn face down, not disclosed, go to the discard rack.",
        )
    return Decision(
        Action.SIMULATED_ROUND,
        UNAUTHORIZED_THIRD_CARD_OPTIONS[option],
        c,
        f"Card {c} was dealt to the Player in error ({why}) and disclosed; {stays}, so it is the "
        "first card of a simulated round in which no wagers are accepted.",
    )


def face_up_card_in_shoe(
    card: Card | str,
    *,
    dealt_as_player_third_after: Sequence[Card | str] | None = None,
    submission: Any = None,
    game: Game | str | None = None,
) -> Decision:
    """A card found face up in the dealing shoe.

    (d): the first card of a simulated round. Exception (c): the card was being dealt as a third
    card to a Player not entitled to one; pass the round's first four cards (P1 B1 P2 B2) as
    ``dealt_as_player_third_after`` and the Rules Submission, and the decision is that of
    ``unauthorized_player_third_card(..., disclosed=True)``. If the Player was entitled to that
    card, (c) does not apply and the decision is (d).

    ``game`` defaults to the submission's game, else Punto Banco; a ``game`` that differs from the
    submission's raises ``RulesError``.
    """
    if submission is not None:
        if game is not None and game_in_scope(game) is not Game(submission.game):
            raise RulesError(f"game {Game(game).value} differs from the Rules Submission's {Game(submission.game).value}")
        game = submission.game
    game_in_scope(Game.PUNTO_BANCO if game is None else game)
    c = parse_card(card)
    if dealt_as_player_third_after is not None:
        four = _first_four(dealt_as_player_third_after)
        _option(submission)  # (c) needs the Rules Submission: check it whichever way this goes
        if not player_entitled_to_third_card(four):
            return unauthorized_player_third_card(four, c, disclosed=True, submission=submission)
    return Decision(
        Action.SIMULATED_ROUND,
        "627a.13(d)",
        c,
        f"Card {c} was found face up in the dealing shoe: it is the first card of a simulated round "
        "in which no wagers are accepted, and its cards then go to the discard rack.",
    )
