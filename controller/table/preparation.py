"""Preparing a shoe and ending one: shuffle and count (681a.5(a)), the cut offer (681a.5(b)),
loading and the burn prompt (681a.7(a), (c)), the automatic reshuffling shoe (681a.5(h)), the
idle table's inspection (681a.5(g)), and at the end collecting, reconciling and reshuffling
(681a.7(d)). The table machine's callbacks delegate here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from controller.journal import kinds
from controller.table import decks, rounds
from controller.table.checks import count_difference, load_count_problem
from controller.table.shoe import Shoe
from firmware_bridge.protocol import messages as m

if TYPE_CHECKING:
    from controller.table.core import TableCore


def start_shuffle(t: TableCore) -> None:
    """681a.5(a): shuffle with the automated shuffler (or by hand at a table without one)."""
    collect_set_aside(t)
    t.reshuffle_ordered = False
    sid = f"{t.table_id}-S{t.next_shoe:04d}"
    t.next_shoe += 1
    last = t.shoe
    if last is not None and last.collected and last.loaded_count is not None:
        made_of, to_shuffle = last.id, last.count_problem is None
    elif last is not None and last.loaded_count is None:
        # Its stack never reached play (reshuffled, restarted or the table closed before the load):
        # the same cards, still uncounted since they were collected, or the pack that replaced them.
        made_of, to_shuffle = last.made_of, last.collected_to_shuffle and last.count_problem is None
    else:
        made_of, to_shuffle = None, False
    t.shoe = Shoe(sid, t.sub.decks, t.sub.decks * 52, made_of=made_of, collected_to_shuffle=to_shuffle)
    t.shoe_rounds.new_shoe()  # the shoe's, as the scoreboard's and the feed's last round
    t.record(kinds.SHOE_START, {"shoe": sid, "decks": t.sub.decks})
    if t.has_shuffler:
        t.send("shuffler", m.Shuffle(t.sub.decks))
        t.show("SHUFFLING")
    else:
        t.show("WASH AND SHUFFLE" if t.inspection.washing else
               "SHUFFLE COLLECTED" if t.shoe.collected_to_shuffle else "SHUFFLE BY HAND")


def count_ok(t: TableCore) -> bool:
    return t.shoe is not None and t.shoe.counted is not None and t.shoe.counted[0] == t.sub.decks * 52


def report_count_fault(t: TableCore) -> None:
    got, expected = t.shoe.counted
    want = t.sub.decks * 52
    what = count_difference(got, want)
    of_shoe, collected = _collected_from(t.shoe)
    t.shoe.count_problem = f"{what} after the shuffle{of_shoe}"
    t.record(kinds.COUNT_FAULT, {"counted": got, "expected": want, "device_expected": expected, "problem": what,
                                 **collected})
    t.notice("fault", f"card count after the shuffle is {got}, expected {want}: {what}{of_shoe}; "
                      "the table stays closed")
    t.show("COUNT FAULT: CALL FLOOR")  # no longer "SHUFFLING": the shuffle is over, a floorperson decides


def _collected_from(shoe: Shoe) -> tuple[str, dict[str, str]]:
    """681a.7(d)(1): a count of ``shoe``'s stack is the first of the cards collected from
    ``shoe.made_of``: the words and the ``count_fault`` key that name that shoe ("" and none)."""
    if shoe.made_of is None:
        return "", {}
    return f" (the cards collected from shoe {shoe.made_of})", {"collected_from": shoe.made_of}


def stack_delivery(t: TableCore) -> m.Deliver:
    """The DELIVER this table's stack takes: into the shoe at an automatic shoe (681a.5(h)), to
    the dealer for the cut otherwise."""
    return m.Deliver(m.DeliverTarget.SHOE if t.automatic_shoe else m.DeliverTarget.DEALER)


def deliver_to_dealer(t: TableCore) -> None:
    """The shuffled stack goes to the dealer, to be cut (681a.5(a)-(b))."""
    if t.has_shuffler:
        t.send("shuffler", m.Deliver(m.DeliverTarget.DEALER))


def offer_cut(t: TableCore) -> None:
    """681a.5(b): offer the cut from the highest-numbered occupied seat, clockwise."""
    t.shoe.start_cut_offer(list(t.sub.seats), t.occupied)
    t.record(kinds.CUT_OFFER, {"order": list(t.shoe.cut_offer)})
    offer_next_cut(t)


def offer_next_cut(t: TableCore) -> None:
    seat = t.shoe.offer_next()
    t.show(f"OFFER CUT SEAT {seat}" if seat is not None else "DEALER CUTS")


def deliver_to_shoe(t: TableCore) -> None:
    """681a.5(h): an automatic reshuffling shoe: no cut; the stack goes into the shoe."""
    t.record(kinds.CUT_SKIPPED, {"clause": "681a.5(h)", **({"approval": t.approval} if t.approval else {})})
    t.send("shuffler", m.Deliver(m.DeliverTarget.SHOE))


def apply_held(t: TableCore) -> None:
    """A shuffle or a load the devices reported while a fault held the table
    (``events.shuffle_done``, ``events.shoe_loaded``): once the table is back in ``shuffling`` or
    ``loading``, it goes on from it (the count check, then the cut or the burn)."""
    shoe = t.shoe
    if shoe is not None and shoe.shuffle_held and t.state == "shuffling":
        shoe.shuffle_held = False
        t.shuffle_done()
    elif shoe is not None and shoe.load_held and t.state == "loading":
        shoe.load_held = False
        t.loaded()


def report_load_count_fault(t: TableCore) -> None:
    """681a.7(a): the shoe holds another number of cards than the stack prepared under 681a.5:
    the cards are taken out and the table stays closed until a floorperson orders a reshuffle
    (681a.7(d)(1): "to ensure that no cards are missing")."""
    shoe = t.shoe
    of_shoe, collected = _collected_from(shoe)
    shoe.count_problem = f"{count_difference(shoe.loaded_count, shoe.stack_size)} at loading{of_shoe}"
    t.record(kinds.COUNT_FAULT, {"loaded": shoe.loaded_count, "expected": shoe.stack_size,
                             "problem": count_difference(shoe.loaded_count, shoe.stack_size), **collected})
    t.notice("fault", f"{load_count_problem(shoe, shoe.loaded_count)}{of_shoe}; the table stays closed")
    reconcile(t)


def prompt_burn(t: TableCore) -> None:
    """681a.7(c): the first card after a load, and a new dealer's card, go to the discard rack;
    as many as the Rules Submission's ``burn_cards`` (one at 21 Baccarat)."""
    t.burns_due = t.sub.burn_cards
    t.send("shoe", m.GateUnlock())  # the shoe's gate opens once it holds a cut, loaded stack
    t.show(f"BURN {t.next_card_mark()}")


def spread_cards(t: TableCore) -> None:
    """681a.5(g): the table declared idle (``actions.declare_idle``: ``Inspection.spread``) spreads
    its cards; a loaded shoe in play is over."""
    end_loaded_shoe(t)
    decks.show_spread(t)


def closed_table(t: TableCore) -> None:
    end_loaded_shoe(t)
    collect_set_aside(t)
    t.send("shoe", m.GateLock())
    t.show("CLOSED")


def end_loaded_shoe(t: TableCore) -> None:
    """A table closed, or declared idle, while a loaded shoe is in play: that shoe is over (the
    next one is shuffled from the entire set): its cards are collected and reconciled
    (681a.7(d)(1); for an idle table 681a.5(g): "removed from the dealing shoe and the discard
    rack"). The UNLOAD prompt takes the cards left out of the shoe, so the next stack can load."""
    if t.shoe is not None and t.shoe.loaded_count is not None and not t.shoe.collected:
        reconcile(t)


def reconcile(t: TableCore) -> None:
    """681a.7(d)(1): collect the cards and prove none is missing. A stack that never reached the
    shoe (a shoe restarted or reshuffled before its load) left nothing in it and no card out of
    it: there is nothing to reconcile, and a reconciliation of 0 cards would be a false alarm."""
    shoe = t.shoe
    if shoe is None:
        return
    collect_set_aside(t)
    shoe.collected = True
    if shoe.loaded_count is None and not shoe.dealt:
        return
    # the cards left in the shoe are counted with the whole set: by the shuffler after the next
    # shuffle, or by the shoe when the next stack, shuffled by hand, is loaded
    t.record(kinds.RECONCILIATION, shoe.reconciliation("shuffler" if t.has_shuffler else "shoe"))
    if shoe.loaded_count is not None:
        t.record(kinds.CARDSET, shoe.cardset().to_json())
    t.unload_due = shoe.id  # until the next stack is loaded: shown again by resume_outputs
    t.show(unload_prompt(shoe.id))


def unload_prompt(shoe_id: str) -> str:
    """681a.7(d)(1): take the cards left in shoe ``shoe_id`` out. It names the shoe, so that one
    shown again by a resume after the next stack went in (its load not yet reported) leaves that
    stack alone; LOAD names the stack it puts in (``load_prompt``)."""
    return f"UNLOAD {shoe_id}"


def load_prompt(t: TableCore) -> str:
    """681a.7(a): put the cut stack into the shoe, under this shoe's id (``unload_prompt``)."""
    return f"LOAD {t.shoe.id}"


def cut_prompts(t: TableCore) -> list[str]:
    """The cut's prompts made so far for the stack to be loaded (681a.5(c)-(d)), in order: a
    resume before the load shows them again, since any may have been lost with the shoe's link
    (the dealer does nothing for a card already placed)."""
    shoe = t.shoe
    if shoe is None or shoe.cut_position is None or shoe.loaded_count is not None:
        return []
    made = [cut_prompt(shoe.cut_position)]
    if shoe.cover_from_bottom is not None:
        made.append(cover_prompt(shoe.cover_from_bottom))
    return made


def cut_prompt(position: int) -> str:
    """681a.5(c)-(d): the cover card ``position`` cards in from the top; what is above it goes under."""
    return f"CUT {position}"


def cover_prompt(from_bottom: int) -> str:
    """681a.5(d): the second cover card ``from_bottom`` cards above the bottom."""
    return f"COVER {from_bottom}"


def collect_set_aside(t: TableCore) -> None:
    """Cards out of the shoe that wait for a round this shoe will not deal (a held first card, a
    simulated round's first card, cards drawn while a fault held the table, a misread card not yet
    entered) go back with the cards when the shoe ends: the next shoe is shuffled from the entire
    set (681a.7(d)(1)). Each is recorded as discarded, with its position (a misread one without
    its name)."""
    for c, position, why in t.aside.collect():
        t.record(kinds.DISCARD, {"card": str(c) if c else None, "position": position,
                                 "reason": f"{why}: collected with the cards when the shoe ended"})


def collect_and_reshuffle(t: TableCore) -> None:
    """681a.7(d)(1)-(2): collect the cards, prove none is missing, reshuffle. Wagers still on
    the layout (kept through a simulated round) are returned: no round of this shoe is left."""
    t.round = None
    rounds.return_pending_wagers(t)
    reconcile(t)
    start_shuffle(t)


def report_cardset_fault(t: TableCore) -> None:
    """A duplicated, foreign or missing card: the cards are collected and the table stays closed
    until a floorperson has dealt with it and orders a reshuffle (681a.7(d)(1))."""
    t.round = None
    rounds.return_pending_wagers(t)
    reconcile(t)
    problems = "; ".join(t.shoe.cardset().problems)
    t.shoe.count_problem = f"the card set of shoe {t.shoe.id}: {problems}"
    t.record(kinds.COUNT_FAULT, {"problem": problems, "cardset": True})
    t.notice("fault", f"the cards of shoe {t.shoe.id} do not reconcile: {problems}; the table stays closed")


def give_up_shoe(t: TableCore, reason: str) -> None:
    """The shoe in play is gone: void a round in progress (627a.13(e)), return the wagers on the
    layout, collect, reconcile and reshuffle (681a.7(d)(1)-(2))."""
    # The cards drawn while the table was held, a misread one too, are out of the shoe all the
    # same: ``collect_set_aside`` collects them with the others
    t.aside.cancel_owed()
    t.saved_state = None
    rounds.abandon(t, reason)
    t.record(kinds.SHOE_RESTARTED, {"reason": reason})
    t.restart()
