"""Where a shoe's cards come from when the automated shuffler does not simply shuffle them anew:
preshuffled decks at a table without a shuffler (681a.5(a)), and the batch taken out of the
shuffler after an idle table's inspection, which a player may ask to see spread and reshuffled
(681a.5(g)(2)), and the spread itself, which a player may ask to see face up (681a.5(g)).
Operator command handlers (``controller.table.commands`` admits them); each checks everything
first and raises ``Refused`` before it changes anything.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from controller.journal import kinds
from controller.table.errors import Refused
from controller.table.io import OperatorInput

if TYPE_CHECKING:
    from controller.table.core import TableCore


def preshuffled_decks(t: TableCore, op: OperatorInput, decks: int, seal: str | None = None) -> None:
    """681a.5(a): the dealer shuffles "unless the cards were preshuffled in accordance with
    § 603a.16(u) or (v)". At a table without an automated shuffler the dealer may put a pack of
    preshuffled decks in play instead of shuffling by hand. The pack must hold the table's number
    of decks (``decks``; ``seal``: the pack's seal or lot, for the record). The stack is then offered
    for the cut like any shuffled stack (681a.5(b)-(e)); its count is checked when the shoe reports
    it loaded (681a.7(a)) and its card set when the shoe ends (681a.7(d)(1)), as for a hand
    shuffle. The operator record (command and arguments) is the journal's account of it."""
    if t.has_shuffler:
        raise Refused("this table uses an automated shuffler: its shuffle is under way")
    if t.washing:
        raise Refused("681a.5(g)(1): the inspected cards are washed and shuffled by hand, not replaced")
    if decks != t.sub.decks:
        raise Refused(f"this table deals {t.sub.decks} decks: a pack of {decks} preshuffled decks cannot be used")
    cards = decks * 52
    t.shuffle_count = (cards, cards)  # not counted by a device: the load and the card set are checked
    t.spread_face_up = False
    retired, t.shoe.made_of = t.shoe.made_of, None  # the pack is not the cards collected
    t.shuffle_done()
    if retired:  # 681a.7(d)(1): the last shoe's cards left in it were never counted here
        t.notice("warning", f"the cards of shoe {retired} go out of play without the count of a shuffle or "
                            "a load: count them as they are removed from use")


def inspection_done(t: TableCore, op: OperatorInput, reshuffle_batch: bool = False) -> None:
    """681a.5(g)(1)-(2): after the first player has inspected the spread cards, they are washed and
    shuffled by hand (no automated shuffler), or put into the automated shuffler to be shuffled and
    the batch already in it taken out (``shuffler_batch_removed``). That batch is dealt without
    being spread and reshuffled "unless a player requests otherwise" (``reshuffle_batch``), and only
    "provided that the automated card shuffling device stores a single batch of shuffled cards
    inside the shuffler in a secure manner" (``shuffler_keeps_one_batch``: not a continuous
    shuffler). Otherwise it is spread for inspection (``inspection`` with clause 681a.5(g)(2), face
    up if the first spread was), and the next ``inspection_done`` reshuffles it before it is dealt.

    Refused until a player has sat down since the cards were spread: 681a.5(g) shuffles them
    "after the first player arriving at the table is afforded an opportunity to visually inspect
    the cards"; a player seated before the table went idle is not one arriving."""
    if t.inspecting_seat is None:
        raise Refused("681a.5(g): the cards stay spread until the first player arriving at the table "
                      "has had the chance to inspect them; no player has sat down since they were spread")
    if not t.has_shuffler:
        if reshuffle_batch:
            raise Refused("there is no automated shuffler and so no batch taken out of it: "
                          "the inspected cards are washed and shuffled by hand (681a.5(g)(1))")
        t.washing = True
        t.inspected()
        return
    if t.batch_spread:
        if reshuffle_batch:
            raise Refused("the batch taken out of the shuffler is already spread: inspection_done reshuffles it")
        t.batch_spread = False
        t.inspected()  # the requested reshuffle, in the automated shuffler
        return
    t.record(kinds.SHUFFLER_BATCH_REMOVED, {"clause": "681a.5(g)(2)"})
    if not reshuffle_batch and t.shuffler_keeps_one_batch:
        t.inspected()
        return
    t.batch_spread = True
    show_spread(t)


def spread_face_up(t: TableCore, op: OperatorInput) -> None:
    """681a.5(g): the cards are spread "face down unless a player requests that the cards be spread
    face up": a player who asks once they lie spread (the first to arrive, say) has them turned
    face up, recorded as the spread again (``inspection`` with ``turned``). A batch spread after
    it (681a.5(g)(2)) is spread face up as well."""
    if t.spread_face_up:
        raise Refused("the cards are already spread face up")
    t.spread_face_up = True
    show_spread(t, turned=True)


def show_spread(t: TableCore, *, turned: bool = False) -> None:
    """Record the spread of the cards for inspection (the idle table's, or the batch taken out of
    the shuffler) and show it to the dealer."""
    payload = {"clause": "681a.5(g)(2)" if t.batch_spread else "681a.5(g)", "face_up": t.spread_face_up}
    t.record(kinds.INSPECTION, {**payload, "turned": True} if turned else payload)
    spread = "SPREAD FACE UP" if t.spread_face_up else "SPREAD"
    # the batch out of the shuffler is a second spread: said so, or the display reads as before
    t.show(f"{spread} THE SHUFFLER'S BATCH" if t.batch_spread else spread)
