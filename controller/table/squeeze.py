"""The squeeze and House Money at a table dealing face down (629a.8(c)-(d)): who is handed each
hand's cards and when they are turned over (``begin_squeeze``, ``relinquish``, ``reveal``; a
command for a squeeze the table has moved past is refused, ``squeezed_as_shown``), and House Money
settled on the first four cards, before any third card (``settle_house_money_now``).
``controller.table.dealing`` calls them as the cards come; the transitions (``squeeze_start``,
``squeeze_done``, ``house_money_start``) are the core's.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.journal import kinds
from controller.rules.model import Game, Target, WagerKind
from controller.rules.punto_banco import point_count
from controller.rules.wagers import settle_house_money
from controller.table.errors import Refused

if TYPE_CHECKING:
    from controller.table.core import TableCore
    from controller.table.round import RoundInProgress

HOUSE_MONEY_PROMPT = "HOUSE MONEY"  # 629a.8(c)(3): the House Money Wagers are settled now


# -- squeeze (629a.8(c)(1)-(2), (4)-(6), (d)) ------------------------------------------------------
def begin_squeeze(t: TableCore, hand: str) -> None:
    """Hand ``hand``'s cards, face down, to the player entitled to them."""
    r = t.round
    if hand not in r.holders:
        holder = r.highest_wager_seat(WagerKind(hand), list(t.sub.seats))
        if holder not in r.relinquished:
            r.entitled[hand] = holder
        r.holders[hand] = holder
    if r.holders[hand] in r.relinquished or (r.holders[hand] is not None and r.holders[hand] not in t.occupied):
        # 629a.8(d): a player who gave up "the right to turn over the cards" has given it up "for the
        # remainder of that round of play": the hand (the Banker's, after the Player's was given up)
        # and a third card (629a.8(c)(4)-(5)) pass to the right of that player, as a relinquished
        # hand does (an examiner's review: a third card was handed to that player again); so do
        # they from a seat that left once its hand was turned over (a review of the day's changes).
        r.holders[hand] = r.next_holder(r.holders[hand], list(t.sub.seats), t.occupied, hand)
    r.squeeze_phase = hand
    holder = r.holders[hand]
    t.record(kinds.SQUEEZE, {"hand": hand, "seat": holder})
    if t.state == "dealing":
        t.squeeze_start()
    if holder is None:
        reveal(t, "the dealer (no player holds the hand)")
    else:
        show_squeeze(t)


def show_squeeze(t: TableCore) -> None:
    """The squeeze's prompt: the hand being squeezed and the seat holding it (a player's)."""
    r = t.round
    t.show(f"SQUEEZE {r.squeeze_phase.upper()} SEAT {r.holders[r.squeeze_phase]}")


def in_squeeze(t: TableCore) -> RoundInProgress:
    if t.state != "squeeze" or t.round is None or t.round.squeeze_phase is None:
        raise Refused("no hand is being squeezed")
    return t.round


def squeezed_as_shown(t: TableCore, hand: str | None, seat: int | None = None) -> None:
    """``Refused`` when the squeeze is not the one a command names (``hand``, and for a
    relinquishment the ``seat`` holding the cards): the table moved on since it was shown."""
    r = in_squeeze(t)
    now, holder = r.squeeze_phase, r.holders.get(r.squeeze_phase)
    held_by = f"seat {holder}" if holder is not None else "the dealer"
    if hand is not None and hand != now:
        raise Refused(f"the {hand} hand is not being squeezed: the {now} hand is, held by {held_by}")
    if seat is not None and seat != holder:
        raise Refused(f"seat {seat} does not hold the {now} hand: {held_by} does")


def relinquish(t: TableCore) -> None:
    """629a.8(d): a player who delays the game gives up the cards; the right passes on for the
    remainder of the round; if no player takes it, the dealer turns the cards over."""
    r = in_squeeze(t)
    hand = r.squeeze_phase
    previous = r.holders.get(hand)
    if previous is None:
        raise Refused("the dealer holds the cards")
    if previous == r.entitled.get(hand):
        r.relinquished.add(previous)  # the seat's own right, given up for the round
    else:
        r.declined.setdefault(hand, set()).add(previous)  # a hand offered to it, not accepted
    r.holders[hand] = r.next_holder(previous, list(t.sub.seats), t.occupied, hand)
    t.record(kinds.RELINQUISHED, {"seat": previous, "to": r.holders[hand], "hand": hand})
    if r.holders[hand] is None:
        reveal(t, "the dealer (no player accepted)")
    else:
        show_squeeze(t)


def reveal(t: TableCore, by: str) -> None:
    r = in_squeeze(t)
    hand = r.squeeze_phase
    r.squeezed.add(hand)
    r.squeeze_phase = None
    payload: dict[str, Any] = {"hand": hand, "by": by}
    if t.sub.game is not Game.TWENTYONE:  # 629a.8(c)(1)-(2): the dealer "announce[s] the Point Count" of the hand
        payload["point_count"] = point_count(r.engine.hand(Target(hand)))
    t.record(kinds.REVEALED, payload)
    if hand == "player" and len(r.cards) == 4:
        begin_squeeze(t, "banker")  # 629a.8(c)(2): then the Banker's Hand
        return
    t.squeeze_done()


# -- House Money (629a.8(c)(3)) -------------------------------------------------------------------
def settle_house_money_now(t: TableCore) -> None:
    r = t.round
    r.house_money = settle_house_money(r.first_four(), r.house_money_wagers(), t.sub)
    for s in r.house_money:
        t.record(kinds.SETTLEMENT, s.to_json())
    t.house_money_start()
    t.show(HOUSE_MONEY_PROMPT)
