"""What the table does with each device event and link status.

``EVENT_HANDLERS`` maps each device event's message type to its handler, called as
``handler(table, device_role, event)``; an event with no handler (progress, heartbeats' news)
changes nothing. ``link_status`` handles the runner's report that a link went down or came back.
A command that did not go through: ``command_failures``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from transitions import MachineError

from controller.journal import kinds
from controller.rules.cards import card_from_wire
from controller.table import checks, dealing, preparation, rounds, squeeze
from controller.table.errors import Refused
from controller.table.faults import CLOSE_DOOR, cleared_by_device, drop_fault, held_prompts, raise_fault
from controller.table.io import DeviceInput, DeviceStatus
from controller.table.machine import AWAITING_STACK, GATE_OPEN_STATES
from firmware_bridge.protocol import messages as m

if TYPE_CHECKING:
    from controller.table.core import TableCore


def _held_in(t: TableCore, state: str) -> bool:
    """Whether a fault holds the table in ``state`` (it resumes there once cleared)."""
    return t.state == "fault" and t.saved_state == state


def shuffle_done(t: TableCore, device_role: str, ev: m.ShuffleDone) -> None:
    """The shuffler has shuffled. While a fault holds the table in the middle of the shuffle (the
    shuffler's link back first), the count is kept and the table goes on from it when it resumes
    (``preparation.apply_held``), as ``shoe_loaded`` does: refused, the resume asked for another
    shuffle, which the shuffler, still delivering the first, could refuse (BUSY)."""
    shoe = t.shoe
    held = shoe is not None and _held_in(t, "shuffling")
    again = shoe is not None and t.state in AWAITING_STACK and ev.card_count == t.sub.decks * 52
    if not (held or again or t.state == "shuffling"):
        # Refused as the machine refuses a shuffle's end outside ``shuffling`` (the same verdict a
        # journal recorded before this check came first), and before anything has changed.
        raise MachineError(f"the {device_role}'s SHUFFLE_DONE")
    if shoe is not None:
        shoe.counted = (ev.card_count, ev.expected_count)
        shoe.settled("SHUFFLE")
    if held:
        shoe.shuffle_held = True
        return
    if again:
        # A shuffle asked for again at a reconnect while the first one's SHUFFLE_DONE was still on
        # its way: the shuffler shuffled the undealt stack again before it delivered it (it carries
        # out commands in order), so nothing has been dealt from it and the new order changes
        # nothing. A DELIVER it refused BUSY meanwhile is due: sent now.
        again = "shuffled the stack again (a SHUFFLE sent again at a reconnect)"
        if shoe.delivery_due:
            t.notice("info", f"the {device_role} {again}: delivering it")
            t.send("shuffler", preparation.stack_delivery(t))
        else:
            t.notice("info", f"the {device_role} {again} before it delivered it")
        return
    t.shuffle_done()


def shoe_loaded(t: TableCore, device_role: str, ev: m.ShoeLoaded) -> None:
    """The stack is in the shoe. While a fault holds the table in the middle of a load (a link
    lost, and the shoe's event delivered on its reconnect before the other device is back), the
    load is recorded at once and the table goes on from it when it resumes
    (``preparation.apply_held``): the event is a fact about the shoe, which a refusal would
    lose (it is acknowledged once journaled, so never sent again)."""
    held = _held_in(t, "loading")
    if (t.state != "loading" and not held) or t.shoe is None:
        raise Refused(f"the shoe reports {ev.card_count} cards loaded but no load is under way")
    t.shoe.loaded_count = ev.card_count
    t.shoe.stack_loaded()
    t.unload_due = None
    t.record(kinds.SHOE_LOADED, {"cards": ev.card_count})
    if held:
        t.shoe.load_held = True
        return
    t.loaded()


def cover_card(t: TableCore, device_role: str, ev: m.CoverCard) -> None:
    """681a.7(d): the cover card is set aside; the hand is completed, then the reshuffle."""
    if t.shoe is None:
        raise Refused("a cover card with no shoe in play")
    shoe = t.shoe
    shoe.cover_reached = True
    t.record(kinds.COVER_CARD, {"position": ev.position, "during_round": t.round is not None})
    due = checks.cover_card_due(shoe)
    # No round comes before the reshuffle (``end_shoe_in_a_burn``): in a burn, or while the card
    # 627a.13(c)(1) owes the discard rack is drawn between rounds (the dealer stops there: the
    # table waited for it for ever, an examiner's review).
    drawing_no_round = t.state == "burning" or (t.aside.discards_owed > 0 and t.round is None)
    if due is not None and shoe.dealt < due:
        # 681a.7(d) holds wherever the cover card lies: the shoe ends here. A cover card above
        # the recorded place says the stack is not the one cut and covered (surveillance's case).
        t.record(kinds.COVER_CARD_EARLY, {"expected_after": due, "cards_out": shoe.dealt, "clause": "681a.5(d)"})
        t.notice("warning", f"a cover card came out after {shoe.dealt} cards; the second cover card was placed to come "
                 f"out after {due}: the stack is not as it was cut and covered. Check the shoe"
                 + ("" if drawing_no_round else "; this round is completed, then the cards are reshuffled"))
    if drawing_no_round:  # a burn's cover card, early or not (one at the first card out stalled the table: a review)
        end_shoe_in_a_burn(t, "the cover card came out")
    elif due is None or shoe.dealt >= due:
        t.notice("info", "cover card reached: this round is completed, then the cards are reshuffled")


def end_shoe_in_a_burn(t: TableCore, why: str) -> None:
    """A new dealer's burn (681a.7(c), the Rules Submission's ``burn_cards``), or the card
    627a.13(c)(1) owes the discard rack, reached the cover card, or the shoe's end: no round comes
    before the reshuffle (681a.7(d)), so the cards still to burn are not owed, the wagers on the
    layout go back, and the cards are reshuffled. A burn of 30 took every card left and the table
    then waited in ``burning`` for cards that were not there, ``close`` refused (a configuration
    review)."""
    owed, t.burns_due = t.burns_due + t.aside.discards_owed, 0
    t.aside.cancel_owed()
    t.notice("info", f"{why} during the burn ({owed} cards still to burn): no round comes before the reshuffle; "
             "the cards are reshuffled")
    if t.state == "burning":
        t.burned()
    if t.state == "betting" and t.round is None:  # (a card set aside opens a simulated round first)
        t.reshuffle()  # the wagers on the layout go back with the collected cards (``collect_and_reshuffle``)


def shoe_empty(t: TableCore, device_role: str, ev: m.ShoeEmpty) -> None:
    """No card is left to deal: a round in progress is void (627a.13(e)); between rounds the
    cards are reshuffled now, not at a round that could never be dealt. Cards the controller
    counted as still in the shoe are said to be missing. A shoe emptied of the last shoe's cards
    after it refused the next stack (``_stack_command_failed``) gets the stack now."""
    shoe = t.shoe
    if shoe is not None and shoe.loaded_count is None:  # the last shoe's cards taken out
        refused, shoe.shoe_full = shoe.shoe_full, False
        shoe.emptied = not refused  # for a refusal still on its way (``_stack_command_failed``)
        if refused and t.state == "loading":  # held by a fault: its resume sends the DELIVER (still due)
            t.send("shuffler", preparation.stack_delivery(t))
        return
    if shoe is not None and t.state == "fault" and t.saved_state in GATE_OPEN_STATES and t.round is not None:
        # emptied while a fault held a round: known for when it goes on (``dealing.next_prompt``
        # voids it if it needs a card then; a review: the report was dropped, and the table later
        # asked for cards that were not there)
        shoe.exhausted = shoe.cover_reached = True
        return
    if shoe is None or t.state not in GATE_OPEN_STATES:
        return  # an unloaded shoe, or one emptied while the table was held
    left = (shoe.loaded_count or 0) - shoe.dealt
    shoe.cover_reached = True
    if left > 0:
        t.record(kinds.SHOE_EMPTY, {"cards_counted_in_shoe": left})
        t.notice("fault", f"the shoe is empty, yet {left} cards counted in it never came out")
    if t.round is not None and not t.round.engine.complete:
        shoe.exhausted = True
        if t.state != "fault" and dealing.cards_out_complete_the_round(t):
            return  # its next cards are out, waiting at the squeeze or House Money: the round completes with them
        if t.state == "dealing" or not t.round.house_money_settled:
            # 627a.13(e): "that round shall be void and all wagers shall be returned": at once, in
            # the squeeze of the first four cards too, House Money Wagers with the rest (examiners'
            # reviews: the void waited for House Money to be settled, which then stood)
            rounds.void_round(t, rounds.INSUFFICIENT_CARDS)
        # else House Money was settled on the first four cards, "Prior to dealing a third card"
        # (629a.8(c)(3)), before the shoe said it was empty: the round is void when it next needs a
        # card (``dealing.next_prompt``), and that settlement stands (docs/assumptions.md)
    elif t.aside.discards_owed and t.round is not None:
        # 627a.13(c)(1)'s additional card, owed at the squeeze or House Money, is in no shoe: not
        # owed any more, as in a burn the shoe ends (``end_shoe_in_a_burn``); the round, which needs
        # no card, is completed (a review: the table prompted BURN for ever, the round unsettled)
        t.aside.cancel_owed()
        t.notice("info", "the shoe is empty: the additional card owed to the discard rack (627a.13(c)(1)) is not "
                         "drawn; the round is completed, then the cards are reshuffled")
        dealing.next_prompt(t)
    elif t.state == "betting" and t.round is None:
        t.reshuffle()  # the wagers on the layout go back: the round they were for cannot be dealt (627a.13(e))
    elif t.state == "burning":  # a shoe without a cover card sensor (681a.5(h)) ran out in a burn
        end_shoe_in_a_burn(t, "the shoe ran out")


def door(t: TableCore, device_role: str, ev: m.Door) -> None:
    key = f"door:{device_role}"
    if ev.open:
        raise_fault(t, key, f"{device_role} door open")
        t.send("shoe", m.Display(CLOSE_DOOR))  # not the current prompt: see held_prompts
    else:
        cleared_by_device(t, key, "door closed")


def jam(t: TableCore, device_role: str, ev: m.Jam) -> None:
    raise_fault(t, f"jam:{device_role}", f"{device_role} card jam ({getattr(ev.location, 'name', ev.location)})")


def device_fault(t: TableCore, device_role: str, ev: m.Fault) -> None:
    raise_fault(t, f"fault:{device_role}", f"{device_role} fault {ev.code}: {ev.text}")


def button(t: TableCore, device_role: str, ev: m.ButtonPress) -> None:
    if ev.button == m.ButtonId.REVEAL and t.state == "squeeze":
        squeeze.reveal(t, "reveal button")


def card_read(t: TableCore, device_role: str, ev: m.CardRead) -> None:
    shoe = t.shoe
    if shoe is not None and _holds_no_stack(shoe):
        card_after_the_shoe_ended(t, ev)
        return
    if shoe is not None:
        shoe.card_left(ev.position, ev.rank, ev.suit)
        if checks.missed_cover_card(shoe):
            missed_cover_card(t, device_role)
    if not ev.readable:
        # Its place among the cards out is kept (face up or not) until the floorperson enters it.
        t.aside.defer(None, face_up=ev.face_up, position=ev.position, early=dealing.round_waits_for_people(t, held=True))
        raise_fault(t, "misread", f"card at position {ev.position} could not be read: show it to the floorperson")
        return
    dealing.accept_card(t, card_from_wire(ev.rank, ev.suit), face_up=ev.face_up, position=ev.position)


def shoe_of_input(t: TableCore, inp: DeviceInput) -> str | None:
    """The shoe a device input is journaled under (asked before it is decided): the shoe in play,
    but for a card read once that shoe has ended (collected) and before the next stack is loaded,
    the ended shoe it came out of (``card_after_the_shoe_ended``). It was journaled under the next
    shoe, whose card-set audit then failed for a card it never held (a surveillance review)."""
    shoe = t.shoe
    if shoe is None:
        return None
    if isinstance(inp.event, m.CardRead) and _holds_no_stack(shoe):
        return _ended_shoe(t)
    return shoe.id


def _holds_no_stack(shoe: Any) -> bool:
    """The shoe in play has ended (collected) or was never loaded: a card read now is not its."""
    return shoe.collected or shoe.loaded_count is None


def _ended_shoe(t: TableCore) -> str | None:
    """The shoe whose cards a card out now is of, once the shoe in play holds no stack (None: none)."""
    return t.shoe.id if t.shoe.collected else t.unload_due


def card_after_the_shoe_ended(t: TableCore, ev: m.CardRead) -> None:
    """A card out of the shoe once its shoe has ended (collected and reconciled) and before the
    next stack is loaded: one of the ended shoe's cards still in it (``unload_due``), never a card
    of the stack being prepared, nor the first card of its next hand. It goes to the discard rack
    with the ended shoe's cards, on record under that shoe (681a.7(d)(1)); read from a shoe that
    held no cards, under none."""
    ended = _ended_shoe(t)
    c = card_from_wire(ev.rank, ev.suit) if ev.readable else None
    where = f"shoe {ended}, which has ended" if ended else "a shoe that holds no stack"
    # Whether it came out face up is on record: no hand and no simulated round of the ended shoe
    # can take it (627a.13(a)-(d) place a card of the shoe in play), but a card disclosed at the
    # table is surveillance's fact all the same (a review: the shoe's last card drawn in error
    # after the cover card's round was journaled without it).
    t.record(kinds.DISCARD, {"card": str(c) if c else None, "position": ev.position,
                             "reason": f"drawn from {where}: collected with its cards, not dealt",
                             "disclosed": ev.face_up},
             ended_shoe=ended)
    # The people are told it may be a card on its way when the round was voided or the shoe given
    # up (a review of races read "not dealt" as "never drawn"); the record's words stay (audit
    # decisions compares records whole).
    card = f"card {c or '(unread)'}" + (", face up," if ev.face_up else "")
    t.notice("warning", f"{card} read after shoe {ended} ended (on its way when it ended, at a void or the cover "
             "card, or drawn after it): to the discard rack with its cards, in no hand" if ended else
             f"{card} drawn from a shoe that holds no stack: to the discard rack, in no hand")


def missed_cover_card(t: TableCore, device_role: str) -> None:
    """681a.5(d), 681a.7(d): the card just read lies below the second cover card, yet no cover
    card came out. Dealing stops (the card is kept, applied when the fault clears) until a
    floorperson has checked the shoe; the cover position is reached all the same, so the round
    is completed and then the cards are collected and reshuffled."""
    shoe = t.shoe
    shoe.cover_reached = True
    due = checks.cover_card_due(shoe)
    t.record(kinds.COVER_CARD_MISSING, {"expected_after": due, "cards_out": shoe.dealt, "clause": "681a.7(d)"})
    raise_fault(t, f"cover:{device_role}", f"the {device_role} passed the cover card's position ({due} cards out) and no "
                "cover card came out: check the shoe; after this round the cards are reshuffled")


EVENT_HANDLERS: dict[type, Callable[[Any, str, Any], None]] = {
    m.ShuffleDone: shuffle_done,
    m.ShoeLoaded: shoe_loaded,
    m.CoverCard: cover_card,
    m.ShoeEmpty: shoe_empty,
    m.Door: door,
    m.Jam: jam,
    m.Fault: device_fault,
    m.ButtonPress: button,
    m.CardRead: card_read,
}


# Who sends what (docs/protocol.md): a card leaves the shoe, the shuffle is the shuffler's (the
# shoe's, when the shuffler is built into it). A live link never delivers another: its device's kind
# is checked at the handshake (firmware_bridge/link/identity_check.py) and decides its role. A
# journal's entry that says otherwise (forged or damaged: `audit decisions`, a restart) is refused.
SENDERS = {m.CardRead: "shoe", m.CoverCard: "shoe", m.ShoeLoaded: "shoe", m.ShoeEmpty: "shoe",
           m.ShuffleProgress: "shuffler", m.ShuffleDone: "shuffler"}


def device_event(t: TableCore, device_role: str, ev: Any) -> None:
    kind = type(ev)
    sender = SENDERS.get(kind)
    if sender is not None and device_role != t.device_for(sender):
        raise Refused(f"a {m.wire_name(ev)} from the {device_role}: only the {sender} sends it")
    handler = EVENT_HANDLERS.get(kind)
    if handler is not None:
        handler(t, device_role, ev)


def link_status(t: TableCore, s: DeviceStatus) -> None:
    """A link went down (a fault), or came back: with the device that was there (the table
    resumes), or with another one or the same one without its memory (a new event epoch): then
    whatever that device held is gone. A link that holds its device's events behind some that
    never came (``stalled``) holds the table too, until a floorperson gives them up, or until the
    link delivers that device's events again (``stall_ended``: they came after all)."""
    if s.stall_ended:
        cleared_by_device(t, f"events:{s.device_role}", "events came through again")
        return
    if s.stalled:
        raise_fault(t, f"events:{s.device_role}", f"the {s.device_role}'s {s.reason}: check the {s.device_role}; "
                    f"clear_fault key=events:{s.device_role} gives them up (cards among them are then missing "
                    "from the shoe's count)")
        return
    key = f"link:{s.device_role}"
    if not s.up:
        raise_fault(t, key, f"link to the {s.device_role} lost{': ' + s.reason if s.reason else ''}")
        return
    if s.device_role not in t.links_since_start:
        # A stall a link of an earlier start reported: this link knows nothing of it and would
        # never say it ended (the events did come, journaled, while the table stayed held: a review
        # of the emulator). It reports the stall again if the events still do not come.
        # Not resumed here: the identity below is decided first (another unit is sent nothing).
        t.links_since_start.add(s.device_role)
        drop_fault(t, f"events:{s.device_role}", "the link started anew with the controller")
    drop_fault(t, key, "reconnect")
    why = checks.replaced_identity(t.devices.get(s.device_role), s.serial, s.epoch)
    if s.epoch is not None:
        t.devices[s.device_role] = (s.serial, s.epoch)
    if why is not None:
        device_replaced(t, s, why)
    t.maybe_resume()
    if s.device_role == "shoe" and t.state == "fault":  # still held: what the dealer must do again
        for text in held_prompts(t.faults):
            t.send("shoe", m.Display(text))


def device_replaced(t: TableCore, s: DeviceStatus, why: str) -> None:
    """The device in ``s.device_role`` is not the one that was there: whatever it held is gone."""
    state = t.saved_state if t.state == "fault" else t.state
    lost = bool(state) and checks.cards_lost_with(s.device_role, state, t.automatic_shoe)
    t.record(kinds.DEVICE_REPLACED, {"device_role": s.device_role, "serial": s.serial, "epoch": s.epoch, "reason": why,
                                 "state": state, "shoe_lost": lost})
    if not lost:
        t.notice("warning", f"the {s.device_role} came back as a new device: {why}")
        return
    words = f"the {s.device_role} came back as a new device ({why})"
    if not t.shoe_lost_ordered:  # a floorperson's restart_shoe while a fault held the table: their reason stands
        t.shoe_lost = words
    drop_fault(t, "misread", "shoe given up")  # a card of the lost shoe
    t.notice("fault", f"{words}: the shoe in play is given up")
