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
from controller.table.inspection import AfterInspection
from controller.table.io import OperatorInput

if TYPE_CHECKING:
    from controller.table.core import TableCore


def preshuffled_decks(t: TableCore, op: OperatorInput, decks: int, seal: str | None = None) -> None:
    """681a.5(a): "Immediately prior to commencement of play, unless the cards were preshuffled in
    accordance with § 603a.16(u) or (v) ..., the dealer shall shuffle the cards". At a table
    without an automated shuffler the dealer may put a pack of preshuffled decks in play instead of
    shuffling by hand, before play commences: not in place of the cards of a shoe dealt, which are
    collected and reshuffled "to ensure that no cards are missing" (681a.7(d)(1)-(2); 681a.5(a):
    "after each shoe of cards is dealt ... the dealer shall shuffle the cards"), unless their count
    or card set failed (they are removed from use). The pack must hold the table's number of decks
    (``decks``; ``seal``: the pack's seal or lot, for the record). The stack is then offered for the
    cut like any shuffled stack (681a.5(b)-(e)); its count is checked when the shoe reports it
    loaded (681a.7(a)) and its card set when the shoe ends (681a.7(d)(1)), as for a hand shuffle.
    The operator record (command and arguments) is the journal's account of it."""
    if t.has_shuffler:
        raise Refused("this table uses an automated shuffler: its shuffle is under way")
    if t.inspection.washing:
        raise Refused("681a.5(g)(1): the inspected cards are washed and shuffled by hand, not replaced")
    if t.shoe.collected_to_shuffle:
        raise Refused(f"681a.5(a), 681a.7(d)(1)-(2): the cards of shoe {t.shoe.made_of} are collected and shuffled "
                      "by hand (manual_shuffle_done), so that their count at the load finds a card missing; "
                      "preshuffled decks are put in play before play commences, or in place of cards whose count "
                      "failed")
    if decks != t.sub.decks:
        raise Refused(f"this table deals {t.sub.decks} decks: a pack of {decks} preshuffled decks cannot be used")
    cards = decks * 52
    t.shoe.counted = (cards, cards)  # not counted by a device: the load and the card set are checked
    t.inspection.stack_replaced()  # not washing (refused above)
    retired, t.shoe.made_of = t.shoe.made_of, None  # the pack is not the cards collected
    t.shuffle_done()
    if retired:  # cards whose count failed, removed from use: 681a.7(d)(1) asks that none be missing
        t.notice("warning", f"the cards of shoe {retired} go out of play (their count failed): count them as they "
                            "are removed from use")


def inspection_done(t: TableCore, op: OperatorInput, reshuffle_batch: bool = False) -> None:
    """681a.5(g)(1)-(2): after the first player has inspected the spread cards, they are washed and
    shuffled by hand (no automated shuffler), or put into the automated shuffler to be shuffled and
    the batch already in it taken out (``shuffler_batch_removed``). That batch is dealt unless a
    player asks to see it spread and reshuffled (``reshuffle_batch``) or the shuffler may hold more
    than one batch; it is then spread for inspection (``inspection`` with clause 681a.5(g)(2), face
    up if the first spread was), and the next ``inspection_done`` reshuffles it before it is dealt.
    ``Inspection.done`` decides (and refuses while no player has arrived since the spread)."""
    batch_spread = t.inspection.batch_spread
    after = t.inspection.done(reshuffle_batch=reshuffle_batch, has_shuffler=t.has_shuffler,
                              keeps_one_batch=t.shuffler_keeps_one_batch)
    if t.has_shuffler and not batch_spread:
        t.record(kinds.SHUFFLER_BATCH_REMOVED, {"clause": "681a.5(g)(2)"})
    if after is AfterInspection.SPREAD_BATCH:
        show_spread(t)
    else:
        t.inspected()  # washed and shuffled by hand, or (the spread batch too) in the automated shuffler


def spread_face_up(t: TableCore, op: OperatorInput) -> None:
    """681a.5(g): the cards are spread "face down unless a player requests that the cards be spread
    face up": a player who asks once they lie spread (the first to arrive, say) has them turned
    face up, recorded as the spread again (``inspection`` with ``turned``). A batch spread after
    it (681a.5(g)(2)) is spread face up as well."""
    t.inspection.turn_face_up()
    show_spread(t, turned=True)


def show_spread(t: TableCore, *, turned: bool = False) -> None:
    """Record the spread of the cards for inspection (the idle table's, or the batch taken out of
    the shuffler) and show it to the dealer."""
    t.record(kinds.INSPECTION, t.inspection.record(turned=turned))
    t.show(t.inspection.prompt())
