"""Cards into rounds: where each card that leaves the shoe goes (the squeeze and House Money:
``controller.table.squeeze``).

``accept_card`` routes every readable card, and records where it went with its position in the
shoe: deferred while a fault holds the table, to the discard rack when 627a.13(c)(1) asks for one
more, burned (681a.7(c)), dealt into the round by the tableau, set aside when found face up
(627a.13(d)), or handled as a card drawn in error (627a.13; at 21 Baccarat, to the discard rack).
A card is never refused: it has left the shoe. After each card the next prompt follows: the next
card, a squeeze (629a.8(c)), House Money (629a.8(c)(3)) or the end of the round.
"""
from __future__ import annotations

import copy
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from controller.journal import kinds
from controller.rules import irregularities as irr
from controller.rules.cards import Card
from controller.rules.model import Game, Target
from controller.table import rounds, squeeze
from controller.table.errors import Refused
from controller.table.round import SetAside, unnamed

if TYPE_CHECKING:
    from controller.table.core import TableCore


def accept_card(t: TableCore, c: Card, *, face_up: bool, position: int, early: bool = False) -> None:
    """Where a card out of the shoe goes (module docstring); ``early``: it came out while its
    round's hands waited at the squeeze or for House Money (``round_waits_for_people``)."""
    st = t.state
    # 627a.13(b)'s held card keeps its place as the next hand's first card whatever is burned
    # (a new dealer's burn, 681a.7(c)): it may still be said disclosed (``card_disclosed``); any
    # other card out takes the place (a floorperson review found it refused after a burn).
    found_face_up = _found_face_up(t, face_up)
    if st == "fault" or round_waits_for_people(t):
        # Nothing is lost: a card that left the shoe while the table was held is applied, in
        # order, when the fault clears. So is the round's next card drawn while its hands wait
        # at the squeeze or for House Money (629a.8(c)): it is that card all the same, dealt when
        # the round goes on (a regulation review: it was held for the next hand, 627a.13(a), and
        # the Banker's third card, or the Player's, came after it).
        t.aside.defer(c, face_up=face_up, position=position, early=early or round_waits_for_people(t, held=True))
        deferred = {"card": str(c), "position": position}
        t.record(kinds.CARD_DEFERRED, deferred, shown=unnamed(deferred))  # shown when it is applied
        return
    # (a card out while a fault holds the table is decided when applied, here again: a burn then too)
    if not (st == "burning" and not found_face_up and not t.aside.discards_owed):
        t.aside.card_out()
    if t.aside.discards_owed:
        if face_up:
            # 627a.13(c)(1) asks for "one additional card, drawn face down ... without disclosing"
            # it: a card that comes out face up is disclosed, a card found face up in the shoe
            # (627a.13(d): it opens a simulated round), and the face-down card is still owed.
            set_aside_found_face_up(t, c, position)
            next_prompt(t)  # the card still owed: BURN
            return
        # 627a.13(c)(1): one more card drawn face down to the discard rack, undisclosed.
        discard(t, c, position, "627a.13(c)(1)", disclosed=False, of_round=t.aside.pay_discard())
        if not t.aside.discards_owed and t.state == "betting" and t.round is None:
            rounds.open_betting(t)  # a simulated round a card found face up meanwhile opens, or PLACE BETS
        else:
            next_prompt(t)
        return
    # Every 21 Baccarat card is dealt face up (681a.7(e)) and 627a.13 is not its section: a card
    # that comes out face up is burned or dealt as any other (docs/irregularities.md).
    if st == "burning":
        # The round before a burn is over: a card after the burn is not its third card (627a.13(c)).
        t.shoe_rounds.take_last()
        if found_face_up:
            # 627a.13(d): a card found face up in the shoe opens a simulated round, whatever the
            # dealer was drawing it for; the burn is still owed.
            set_aside_found_face_up(t, c, position)
            next_prompt(t)  # BURN
            return
        t.shoe.burned.append(str(c))
        t.burns_due -= 1
        owed = {"due": t.burns_due} if t.burns_due > 0 else {}  # the table is still burning (a reader's state)
        t.record(kinds.BURN, {"card": str(c), "position": position, "dealer": t.dealer, **owed})
        if t.burns_due > 0:  # the Rules Submission burns more than one (burn_cards)
            t.show(f"BURN {t.next_card_mark()}")
        else:
            t.burned()
        return
    r = t.round
    if st == "dealing" and r is not None and not r.engine.complete:
        if found_face_up and early and _banker_draws_after_player_stood(len(r.cards), r.engine):
            # 627a.13(c): out early and disclosed, the card the Player was not entitled to is used
            # "as the third card of the Banker's Hand if the Banker's Hand is required to draw" (a
            # regulation review: it was set aside under (d), the Banker given another card)
            decision = irr.unauthorized_player_third_card(tuple(r.first_four()), c, disclosed=True, submission=t.sub)
            irregularity(t, decision, position)
            deal_into_round(t, c, position)
            return
        if found_face_up and r.cards:
            # 627a.13(d): a card found face up in the shoe mid-round is set aside; it opens a
            # simulated round after this one, and this round goes on with the next card.
            set_aside_found_face_up(t, c, position)
            next_prompt(t)
            return
        if found_face_up and not r.cards and r.kind == "normal":
            # 627a.13(d): the disclosed card opens a simulated round: no wagers accepted.
            decision = irr.face_up_card_in_shoe(c, submission=t.sub)
            irregularity(t, decision, position)
            rounds.make_simulated(t, r, decision.clause)
        deal_into_round(t, c, position)
        return
    # A card drawn when none was called for: a card drawn in error (627a.13).
    card_in_error(t, c, face_up, position)


def set_aside_found_face_up(t: TableCore, c: Card, position: int) -> None:
    """627a.13(d): the card found face up in the shoe is on record and set aside; it opens a
    simulated round when no other round is in progress (``rounds.open_betting``)."""
    decision = irr.face_up_card_in_shoe(c, submission=t.sub)
    irregularity(t, decision, position)
    t.aside.simulate(SetAside(c, position, decision.clause))


# Why a card goes to the discard rack when 627a.13 gives it no other place (docs/irregularities.md).
TWENTYONE_CARD_IN_ERROR = ("21 Baccarat: a card drawn when none was called for goes to the discard rack, "
                           "as a burn card does (this table's reading: 681a.7 has no clause for it); it may "
                           "have been seen while wagers could be placed")


def card_in_error(t: TableCore, c: Card, face_up: bool, position: int) -> None:
    last = t.shoe_rounds.take_last()
    if t.sub.game is Game.TWENTYONE:
        discard(t, c, position, TWENTYONE_CARD_IN_ERROR)
        t.notice("warning", f"card {c} drawn when none was called for: to the discard rack")
        return
    if (t.state == "betting" and t.round is None and last is not None and last.kind in ("normal", "simulated")
            and len(last.cards) == 4 and not last.third_card_in_error
            and not t.shoe_rounds.wager_placed_since(t.pending_wagers)):
        # The card right after a round that ended on four cards, before any wager for the next
        # round: the dealer drew a third card for the Player when none was authorized
        # (627a.13(b)-(c)). A simulated round's too: its cards are "dealt in accordance with this
        # chapter", 627a.10 included (a regulation review). After a wager it is a card drawn in
        # error before the next hand (docs/irregularities.md, "What the regulation leaves open").
        first_four = tuple(last.first_four())
        decision = irr.unauthorized_player_third_card(first_four, c, disclosed=face_up, submission=t.sub)
        of_round: int | None = last.number  # that round's irregularity, on record with it
    elif ((r := t.round) is not None and r.kind in ("normal", "simulated") and len(r.cards) == 4 and r.engine.complete
          and not r.third_card_in_error):
        # The same card while the round's four cards wait at the squeeze or for House Money
        # (629a.8(c)), the round needing no third card: a third card drawn for the Player when none
        # was authorized (627a.13(b)-(c)), not a card before the next hand (a review took (a)/(d)).
        first_four = tuple(r.first_four())
        decision = irr.unauthorized_player_third_card(first_four, c, disclosed=face_up, submission=t.sub)
        of_round = None  # the round in progress
        r.third_card_in_error = True  # a card after it is drawn in error before the next hand (a review)
    else:
        first_four = ()
        decision = irr.card_drawn_in_error(c, disclosed=face_up, game=t.sub.game)
        of_round = None
    place_in_error(t, SetAside(c, position, decision.clause, of_round, first_four), decision)


def card_disclosed(t: TableCore) -> None:
    """627a.13(c)/(d): the card held for the next hand (drawn face down, the last out of the shoe)
    was "disclosed at the time it is dealt", as the floorperson says: decided again as disclosed,
    (c)'s designated procedure for a Player's unauthorised third card, (d) for any other.
    ``Refused`` (nothing changed) when no such card waits."""
    aside = t.aside.take_latest()
    if aside.first_four:
        decision = irr.unauthorized_player_third_card(aside.first_four, aside.card, disclosed=True, submission=t.sub)
    else:
        decision = irr.card_drawn_in_error(aside.card, disclosed=True, game=t.sub.game)
    place_in_error(t, replace(aside, clause=decision.clause), decision)


def place_in_error(t: TableCore, aside: SetAside, decision: Any) -> None:
    """Where a card drawn in error goes, as ``decision`` says, on record first."""
    c, position, of_round, action = aside.card, aside.position, aside.of_round, decision.action
    if action is irr.Action.NEXT_HAND_FIRST_CARD and t.aside.held is not None:
        t.notice("warning", "a second card drawn in error, not disclosed, while the next hand's first card is held: "
                            "it is the first card of the hand after it (627a.13(a))")
    irregularity(t, decision, position, of_round)
    if action is irr.Action.NEXT_HAND_FIRST_CARD:
        t.aside.hold(aside)
    elif action is irr.Action.SIMULATED_ROUND:
        t.aside.simulate(aside)
    elif action is irr.Action.DISCARD_WITH_ONE_MORE:
        discard(t, c, position, "627a.13(c)(1)", of_round=of_round)
        t.aside.owe_discard(of_round)
        t.show(f"BURN {t.next_card_mark()}")
        return
    elif action is irr.Action.BANKER_THIRD_CARD:  # pragma: no cover - the engine drew it already
        raise Refused("the Banker's third card is dealt by the tableau")
    if t.state == "betting" and t.aside.simulated and t.round is None:
        rounds.start_simulated(t)


def discard(t: TableCore, c: Card, position: int, reason: str, *, disclosed: bool = True,
            of_round: int | None = None) -> None:
    """The card goes to the discard rack, on record with its position in the shoe (and with the
    round decided already that it is an irregularity of, ``of_round``); one not ``disclosed``
    (627a.13(a), (c)(1)) is journaled and not shown (``unnamed``)."""
    payload = {"card": str(c), "position": position, "reason": reason}
    t.record(kinds.DISCARD, payload, shown=None if disclosed else unnamed(payload), of_round=of_round)


def _found_face_up(t: TableCore, face_up: bool) -> bool:
    """A card out face up is one found face up (627a.13(c)-(d)) but at 21 Baccarat, where every
    card is dealt face up (681a.7(e))."""
    return face_up and t.sub.game is not Game.TWENTYONE


def _banker_draws_after_player_stood(cards_out: int, engine: Any) -> bool:
    """A round's four cards are out (``cards_out``) and its next card (``engine``'s) is the
    Banker's: the Player stood. An early card found face up then is the Banker's (``accept_card``)."""
    return cards_out == 4 and engine.next_target() is Target.BANKER


def cards_out_complete_the_round(t: TableCore) -> bool:
    """The cards out early, waiting to be dealt (``CardsAside.deferred``), complete the round in
    progress, or may: one the shoe could not read is decided once entered (``next_prompt`` voids
    the round then if it still needs a card)."""
    r = t.round
    if r is None or not t.aside.deferred:
        return False
    engine = copy.deepcopy(r.engine)  # the round's own is fed the cards when they are dealt
    dealt = len(r.cards)
    for d in t.aside.deferred:
        if engine.complete:
            break
        if d.card is None:
            return True
        if _found_face_up(t, d.face_up) and not (d.early and _banker_draws_after_player_stood(dealt, engine)):
            continue  # set aside when dealt (627a.13(d), ``accept_card``): no card of the round
        engine.feed(d.card)
        dealt += 1
    return engine.complete


def round_waits_for_people(t: TableCore, *, held: bool = False) -> bool:
    """The round in progress still needs a card, and its hands wait at the squeeze or for House
    Money (629a.8(c)): a card out now is its next card, out early. ``held``: a fault holding the
    table there counts too (a card out meanwhile is as early)."""
    r = t.round
    state = t.saved_state if held and t.state == "fault" else t.state
    return state in ("squeeze", "house_money") and r is not None and not r.engine.complete


def apply_deferred(t: TableCore) -> None:
    """The cards that left the shoe while a fault held the table (or early, while the round's
    hands waited: ``round_waits_for_people``), in the order they left it, one at a time: a new
    fault, a squeeze or House Money keeps the rest waiting, and those still waiting when the shoe
    ends are collected with its cards (``preparation.collect_set_aside``)."""
    while t.aside.deferred and t.state != "fault" and not round_waits_for_people(t):
        d = t.aside.next_deferred()
        accept_card(t, d.card, face_up=d.face_up, position=d.position, early=d.early)
    if t.aside.deferred and round_waits_for_people(t):
        # drawn during a fault, now behind a squeeze or House Money a card before them started:
        # out early as much as one drawn at the squeeze (a review: ruled otherwise by the door)
        t.aside.deferred = [d._replace(early=True) for d in t.aside.deferred]


def irregularity(t: TableCore, decision: Any, position: int, of_round: int | None = None) -> None:
    """The decision on record with the card's position in the shoe: a card set aside is out of
    the shoe before any later record places it (the edge monitor counts it out from here). A card
    held undisclosed for the next hand (627a.13(a)-(b)) is not shown; its reason does not name it."""
    payload = {**decision.to_json(), "position": position}
    t.record(kinds.IRREGULARITY, payload,
             shown=unnamed(payload) if decision.action is irr.Action.NEXT_HAND_FIRST_CARD else None, of_round=of_round)
    t.notice("warning", f"{decision.clause}: {decision.reason}")


def deal_into_round(t: TableCore, c: Card, position: int) -> None:
    r = t.round
    target = r.engine.feed(c)
    r.cards.append((c, target, position))
    payload = {"card": str(c), "to": target.value, "position": position, "n": len(r.cards)}
    # 629a.8(c): dealt face down, the card is the squeeze's to turn over; journaled, not streamed
    t.record(kinds.CARD, payload, shown=unnamed(payload) if t.deals_face_down() else None)
    after_card(t)


def after_card(t: TableCore) -> None:
    r = t.round
    n = len(r.cards)
    face_down = t.deals_face_down()
    if n == 4 and face_down and "player" not in r.squeezed:
        squeeze.begin_squeeze(t, "player")
        return
    if n == 4 and not r.house_money_settled:
        r.house_money_settled = True
        if r.house_money_wagers() and r.kind == "normal":
            squeeze.settle_house_money_now(t)
            return
    if face_down and n > 4 and f"third:{n}" not in r.squeezed:
        # 629a.8(c)(4)-(5): a third card goes face down to the player who squeezed that hand.
        r.squeezed.add(f"third:{n}")
        squeeze.begin_squeeze(t, r.cards[-1][1].hand)
        return
    next_prompt(t)


def next_prompt(t: TableCore) -> None:
    r = t.round
    if t.aside.discards_owed or t.state == "burning":  # a card owed to the discard rack, or a burn still due
        t.show(f"BURN {t.next_card_mark()}")
        return
    if r is not None and t.state == "squeeze" and r.squeeze_phase is not None:
        # the owed card paid while a hand waits at the squeeze (627a.13(c)(1)): its prompt again
        squeeze.show_squeeze(t)
        return
    if t.state == "house_money":  # ... or for House Money (a review: BURN stayed on the display)
        t.show(squeeze.HOUSE_MONEY_PROMPT)
        return
    if r is None or t.state != "dealing":
        return
    target = r.engine.next_target()
    if target is not None and t.aside.deferred:
        # a card out early, while the hands waited, is this draw's: dealt once the input's
        # transitions are done (``TableCore.handle``), then the next prompt (a review: DRAW @N
        # named a card still in the shoe, and an empty shoe voided the round the card completes)
        return
    if target is None:
        rounds.complete_round(t)
    elif t.shoe.exhausted:  # the shoe reported itself empty during the squeeze or House Money
        rounds.void_round(t, rounds.INSUFFICIENT_CARDS)
    else:
        t.show(f"DRAW {target.value.upper()} {t.next_card_mark()}")


def continue_round(t: TableCore) -> None:
    r = t.round
    if r is not None and len(r.cards) == 4 and not r.house_money_settled:
        after_card(t)
    else:
        next_prompt(t)
