"""What each operator command does, once ``controller.table.commands`` has let it through.

A handler is called as ``handler(table, op, **args)`` with arguments already parsed and checked
against their declaration, the operator's role checked, and the table in one of the command's
states. What is left to check depends on the table's contents (a seat's wagers, who is offered
the cut, which faults are active): every handler checks all of that first and raises ``Refused``
before it changes anything, then journals and applies.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.journal import kinds
from controller.money import money_text
from controller.roles import Role
from controller.rules.cards import parse_card
from controller.rules.model import WagerKind
from controller.rules.wagers import Wager, add_house_money
from controller.table import dealing, preparation, rounds, squeeze
from controller.table.errors import Refused
from controller.table.faults import check_operator_clearable, clear_faults
from controller.table.io import OperatorInput
from controller.table.machine import LIVE, ROUND_STATES, state_words

if TYPE_CHECKING:
    from controller.table.core import TableCore

# A restart needs a shoe in play: a new shuffle is already under way in "shuffling", and in
# "inspection" the idle table's cards are spread on the layout, to be washed or put into the
# shuffler by 681a.5(g)(1)-(2) once a player has seen them (``inspection_done``), not by a restart.
RESTART_STATES = tuple(s for s in LIVE + ["count_fault"] if s not in ("shuffling", "inspection"))
# ... and while a fault holds the table in one of them: the shoe is given up once the faults are
# cleared (an examiner's review: a round held by a jam or a misread could be neither voided nor
# given up, only dealt on once the fault was cleared)
RESTART_COMMAND_STATES = (*RESTART_STATES, "fault")
# 681a.7(c): a new dealer signs in between rounds, where a burn can come before the dealer's
# first card: at once when betting, or the burn after the next load is theirs. Not while a round
# is dealt (its dealer completes it) nor while a fault holds the table (docs/assumptions.md), nor
# while a card is being burned: that card may be out of the shoe already, the dealer before's (a
# review of races: a second sign-in then was credited with the first one's burn, and burned none).
SIGN_IN_STATES = tuple(s for s in ["closed", "count_fault", *LIVE] if s not in (*ROUND_STATES[1:], "burning"))


def open_table(t: TableCore, op: OperatorInput) -> None:
    t.open()


def close_table(t: TableCore, op: OperatorInput, reason: str | None = None) -> None:
    """Close the table; a ``reason`` (journaled with the command) is also said in one notice."""
    if t.round is not None:
        raise Refused("a round is in progress")
    if t.pending_wagers:
        raise Refused("there are wagers on the layout: deal the round first")
    t.close()
    if reason:
        t.notice("warning", f"the table is closed by {op.operator}: {reason}")


def sit(t: TableCore, op: OperatorInput, seat: int) -> None:
    """A player takes a free seat; at an idle table's spread cards, the first one to arrive is
    the player who may inspect them (681a.5(g)); while the cut is offered, a seat the offer has
    not yet reached waits for it in its place (681a.5(b))."""
    if seat in t.occupied:
        raise Refused(f"seat {seat} is taken")
    t.occupied.add(seat)
    if t.state == "inspection":
        t.inspection.player_sat(seat)
    # 681a.5(b): a player who sits down at a seat the cut's offer has not yet reached is offered it
    if t.state == "cutting" and t.shoe is not None and t.shoe.admit_to_cut(seat):
        t.record(kinds.CUT_OFFER, {"order": [t.shoe.cut_offeree, *t.shoe.cut_offer], "joined": seat})


def leave(t: TableCore, op: OperatorInput, seat: int) -> None:
    """A player leaves: not while the seat has a wager on the layout or in the round being
    dealt (its cards may still be the seat's to squeeze, its wagers are still to settle)."""
    if seat not in t.occupied:
        raise Refused(f"seat {seat} is empty")
    if any(w.seat == seat for w in t.pending_wagers):
        raise Refused(f"seat {seat} has wagers on the layout")
    if t.round is not None and not t.round.settled and any(w.seat == seat for w in t.round.wagers):
        raise Refused(f"seat {seat} has wagers in the round being dealt; it may leave once the round is settled")
    r = t.round
    if r is not None and r.squeeze_phase is not None and r.holders.get(r.squeeze_phase) == seat:
        # 629a.8(d): the right to turn the cards passes from player to player; a seat given it
        # without a wager that left kept it, the table prompting an empty seat (a review of roles).
        # A hand it held and turned over is passed on when a third card comes (``begin_squeeze``).
        raise Refused(f"seat {seat} holds the cards being turned over; it may relinquish them first, "
                      "or leave once the round is settled")
    t.occupied.discard(seat)
    # 681a.5(b): the stack is offered to the players seated; one who leaves is offered it no more
    if t.state == "cutting" and t.shoe is not None and t.shoe.withdraw_from_cut(seat):
        preparation.offer_next_cut(t)


def wager(t: TableCore, op: OperatorInput, seat: int, kind: str, amount: int) -> None:
    k = WagerKind(kind)
    if not t.sub.offers(k):
        raise Refused(f"the {k.value} wager is not offered at this table")
    w = Wager(seat, k, amount)
    check_limits(t, w)
    t.occupied.add(w.seat)
    t.pending_wagers.append(w)
    t.record(kinds.WAGER, w.to_json())


def take_back(t: TableCore, op: OperatorInput, seat: int, kind: str) -> None:
    """A wager placed by mistake (the wrong seat, kind or amount), taken back before "no more
    bets": the seat's latest wager of that kind goes back to its player, journaled as returned."""
    k = WagerKind(kind)
    mine = [i for i, w in enumerate(t.pending_wagers) if w.seat == seat and w.kind is k]
    if not mine:
        raise Refused(f"seat {seat} has no {k.value} wager on the layout")
    rounds.return_wagers(t, [t.pending_wagers.pop(mine[-1])])


def check_limits(t: TableCore, w: Wager) -> None:
    """The Rules Submission's ``[limits]``: the seat's wagers of ``w``'s kind on the layout, ``w``
    included, within that kind's min and max; all of the seat's wagers within ``table_max``.
    A House Money payout added to a wager (``house_money_add``) is not a wager and not checked."""
    limits = t.sub.limits
    if not limits:
        return
    mine = [x for x in t.pending_wagers if x.seat == w.seat]
    on_kind = sum(x.amount for x in mine if x.kind is w.kind) + w.amount
    lim = limits.wagers.get(w.kind)
    already = f" (seat {w.seat} has {money_text(on_kind - w.amount)} on it)" if on_kind != w.amount else ""
    if lim is not None and on_kind < lim.min:
        raise Refused(f"the {w.kind.value} wager is at least {money_text(lim.min)} at this table{already}")
    if lim is not None and on_kind > lim.max:
        raise Refused(f"the {w.kind.value} wager is at most {money_text(lim.max)} at this table{already}")
    total = sum(x.amount for x in mine) + w.amount
    if limits.table_max is not None and total > limits.table_max:
        raise Refused(f"a seat's wagers come to at most {money_text(limits.table_max)} a round at this table "
                      f"(seat {w.seat} would have {money_text(total)})")


def no_more_bets(t: TableCore, op: OperatorInput) -> None:
    """629a.8(b): "no more bets" before any card is dealt."""
    t.no_more_bets()


# -- the cut (681a.5(b)-(e)) -------------------------------------------------------------------
def cut_decline(t: TableCore, op: OperatorInput, seat: int) -> None:
    t.shoe.check_decline(seat)
    t.record(kinds.CUT_DECLINED, {"seat": seat})
    preparation.offer_next_cut(t)


def cut(t: TableCore, op: OperatorInput, position: int, seat: int | None = None) -> None:
    shoe = t.shoe
    by = shoe.check_cut(position, seat, t.sub.min_cover_depth)
    shoe.cut(position, by)
    t.record(kinds.CUT, {"position": shoe.cut_position, "by": shoe.cut_by, "stack": shoe.stack_size})
    t.show(preparation.cut_prompt(shoe.cut_position))


def cover(t: TableCore, op: OperatorInput, from_bottom: int) -> None:
    shoe = t.shoe
    shoe.check_cover(from_bottom, t.sub.min_cover_depth, t.sub.burn_cards)
    shoe.cover_from_bottom = from_bottom
    t.record(kinds.COVER, {"from_bottom": from_bottom})
    t.show(preparation.cover_prompt(from_bottom))
    t.cut_complete()


def load(t: TableCore, op: OperatorInput) -> None:
    t.load()


def order_recut(t: TableCore, op: OperatorInput) -> None:
    """681a.5(e): "After the cards have been cut and before the cards have been placed in the
    dealing shoe": from the cut (before or after the second cover card) until the load."""
    if t.state == "cutting" and t.shoe.cut_position is None:
        raise Refused("the stack is not cut yet: nothing to recut")
    t.recut()


def order_reshuffle(t: TableCore, op: OperatorInput) -> None:
    """681a.5(e) before loading: reshuffle now; 681a.5(f) after any round: after this round."""
    if t.state in ("ready_to_load", "cutting", "count_fault"):
        # No reshuffle_ordered record here: the operator record says it, and a record added here
        # would fail `audit decisions` on every journal written before (a review of this change)
        t.reshuffle()
        return
    if t.reshuffle_ordered:
        raise Refused("a reshuffle is already ordered: it follows this round")
    between_rounds = t.state == "betting" and t.round is None
    if between_rounds and t.pending_wagers:
        raise Refused("wagers are on the layout: order the reshuffle once this round is dealt (say no more "
                      "bets: it then follows the round), or after it")
    t.reshuffle_ordered = True
    t.record(kinds.RESHUFFLE_ORDERED, {"by": op.operator})
    if between_rounds:
        t.reshuffle()


def dealer_sign_in(t: TableCore, op: OperatorInput, dealer: str) -> None:
    """681a.7(c): each new dealer burns one card before dealing."""
    if t.state == "betting" and t.pending_wagers:
        raise Refused("sign in between rounds, before wagers are placed")
    if t.dealer is not None and _person(dealer) == _person(t.dealer):  # "bob smith" is Bob Smith: no new dealer
        raise Refused(f"{t.dealer} is the dealer signed in already")
    t.dealer = dealer
    # Signed in by the dealer themself: that operator deals here now; by a floorperson for them:
    # the first operator of the dealer's role to act after it.
    t.dealer_operator = op.operator if op.role is Role.DEALER else None
    t.record(kinds.DEALER, {"dealer": dealer})
    if t.state == "betting":
        t.new_dealer()


def _person(name: str) -> str:
    """A person's name as two spellings of it compare: case and spacing aside."""
    return " ".join(name.split()).casefold()


def declare_idle(t: TableCore, op: OperatorInput, face_up: bool = False) -> None:
    """681a.5(g): no gaming activity: spread the cards for inspection, face down unless a player
    asks for them face up."""
    if t.automatic_shoe:
        raise Refused("681a.5(h): an automatic reshuffling shoe is in use; 681a.5(g) does not apply")
    if t.pending_wagers:
        raise Refused("there are wagers on the layout")
    t.inspection.spread(face_up=face_up)  # admitted in betting or ready_to_load: declare_idle goes on
    t.declare_idle()


def manual_shuffle_done(t: TableCore, op: OperatorInput) -> None:
    """681a.5(a), (g)(1): the dealer has shuffled by hand (after a wash for an idle table)."""
    if t.has_shuffler:
        raise Refused("this table uses an automated shuffler")
    n = t.sub.decks * 52
    t.shoe.counted = (n, n)  # a hand shuffle is not counted by a device
    t.record(kinds.MANUAL_SHUFFLE, {"washed": t.inspection.washing, "dealer": t.dealer})
    t.inspection.stack_replaced()
    t.shuffle_done()


# -- the round -----------------------------------------------------------------------------------
def reveal(t: TableCore, op: OperatorInput, hand: str | None = None) -> None:
    squeeze.squeezed_as_shown(t, hand)
    squeeze.reveal(t, f"operator {op.operator}")


def relinquish(t: TableCore, op: OperatorInput, hand: str | None = None, seat: int | None = None) -> None:
    squeeze.squeezed_as_shown(t, hand, seat)
    squeeze.relinquish(t)


def house_money_add(t: TableCore, op: OperatorInput, seat: int, side: str, amount: int) -> None:
    """629a.8(c)(3)(i)(A)-(B): the dealer places all of a winning House Money payout, or the Rules
    Submission's portion of it, on the player's original Player or Banker wager, once; without it
    the payout is handed to the player."""
    r = t.round
    hm = r.check_house_money_add(seat)
    r.wagers = add_house_money(r.wagers, hm, WagerKind(side), amount, t.sub)
    r.house_money_add(seat, WagerKind(side), amount)
    t.record(kinds.HOUSE_MONEY_ADDED, {"seat": seat, "side": side, "amount": amount})


def continue_round(t: TableCore, op: OperatorInput) -> None:
    t.house_money_done()


def card_disclosed(t: TableCore, op: OperatorInput) -> None:
    """The card drawn in error that the table holds for the next hand was disclosed as it was
    dealt (627a.13(c)-(d)); ``dealing.card_disclosed``."""
    dealing.card_disclosed(t)


def void_round(t: TableCore, op: OperatorInput, reason: str | None = None) -> None:
    if t.round is None:
        raise Refused("no round in progress")
    # The words stay those of every journal written before (`audit decisions` compares records
    # whole); who voided it is the operator record's, which `journal replay` shows with the round
    rounds.void_round(t, f"voided by the floorperson: {reason}" if reason else "voided by the floorperson")


# -- faults and floor decisions ---------------------------------------------------------------------
def clear_fault(t: TableCore, op: OperatorInput, key: str | None = None) -> None:
    keys = check_operator_clearable(t.faults, key)
    clear_faults(t, keys, by=op.operator)


def enter_card(t: TableCore, op: OperatorInput, card: str) -> None:
    """A card the shoe could not read, shown to and entered by the floorperson. It keeps its
    place among the cards out (those drawn after it follow it) and its face-up flag (627a.13(d));
    the earliest such card is entered first."""
    c = parse_card(card)
    still_unread = t.aside.enter(c)
    t.record(kinds.CARD_ENTERED, {"card": str(c), "by": op.operator})
    if still_unread:
        return  # another card the shoe could not read still waits
    if t.faults.pop("misread", None) is not None:  # on record, as the fault was (a reader's faults)
        t.record(kinds.FAULT_CLEARED, {"faults": ["misread"], "by": op.operator})
    if t.state == "fault":
        t.maybe_resume()  # the deferred cards, this one among them, follow when no fault holds
    else:
        dealing.apply_deferred(t)


def restart_shoe(t: TableCore, op: OperatorInput, reason: str | None = None) -> None:
    """The shoe in play is gone (the devices were replaced or restarted without their cards): a
    round in progress is void and its wagers returned (as 627a.13(e)), wagers on the layout are
    returned, and a new shoe is shuffled. Without a reason the record says who ordered it. While
    a fault holds the table, the shoe is given up once the faults are cleared (as a shoe a device
    lost is: ``faults.maybe_resume``); a card the shoe could not read is of that shoe, and needs
    no entering any more."""
    why = reason or f"ordered by {op.operator}, no reason given"
    if t.state != "fault":
        preparation.give_up_shoe(t, why)
        return
    if t.saved_state not in RESTART_STATES:
        raise Refused(f"nothing to restart: the table was {state_words(t.saved_state or 'closed')} when the fault "
                      "held it")
    if t.shoe_lost:
        raise Refused(f"the shoe in play is given up already, once the faults are cleared ({t.shoe_lost})")
    t.shoe_lost, t.shoe_lost_ordered = why, True
    t.maybe_resume()  # a misread card is of the shoe given up: at once, when no other fault holds it
    if t.shoe_lost:
        t.notice("fault", f"the shoe in play is given up once the faults are cleared ({why}): its round void, "
                          "its wagers returned, then a new shoe")


def unlock_operator(t: TableCore, op: OperatorInput, operator: str) -> None:
    """A supervisor ends another operator's lockout after wrong PINs (docs/operators.md). The
    table's own state is not touched: accepting the command journals who unlocked whom (its
    ``operator`` record); the control socket, which owns the lockouts, clears them once that is
    stored. Whether the id is in the operators file is checked there too: the file is not the
    table's, and a journal replayed later must decide as it did."""
    if operator == op.operator:
        raise Refused("an operator cannot unlock themselves: another supervisor does it")


def set_submission(t: TableCore, op: OperatorInput, submission: dict[str, Any], source: str = "operator") -> None:
    """At opening (the table closed), a floorperson sets the Rules Submission's choices. The whole
    submission travels in the command (journaled), so replaying it never reads a file."""
    from controller.rules.submission import parse_submission

    new = parse_submission(submission, source)
    if t.deck_capacity is not None and new.decks > t.deck_capacity:
        # checked here, not only at `shoectl run`'s start: a table given rules of more decks opened
        # into a fault, and then could not be resumed with its devices at all (a configuration review)
        raise Refused(f"{new.name} deals {new.decks} decks, and the table's devices hold {t.deck_capacity}")
    t.sub = new
    t.record(kinds.SUBMISSION, {"source": source, **new.to_dict()})
