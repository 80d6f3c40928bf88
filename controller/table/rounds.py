"""Rounds: opening betting, starting a round with the wagers on the layout, simulated rounds
(627a.13(c)(2)/(d)), completing and settling a round (681a.7(h), (l)), and voiding one
(627a.13(e)). Every wager placed is settled, pushed or returned exactly once: here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from controller.journal import kinds
from controller.rules.irregularities import MIN_ROUND_CARDS
from controller.rules.wagers import Wager, settle, void
from controller.table.round import RoundInProgress, SetAside, unnamed

if TYPE_CHECKING:
    from controller.table.core import TableCore


def open_betting(t: TableCore) -> None:
    t.round = None
    if t.aside.simulated:
        start_simulated(t)
        return
    t.show("PLACE BETS")


def begin_round(t: TableCore) -> SetAside | None:
    """The round starts: a normal round with the wagers on the layout and the held card
    (627a.13(a)/(b)) as its first card if there is one; a simulated round (627a.13(c)(2)/(d))
    with no wagers and the disclosed card first. Returns that first card, or None."""
    number, kind = t.shoe_rounds.begin()
    if kind == "simulated":
        first, wagers = t.aside.take_simulated(), []
    else:
        first, (wagers, t.pending_wagers) = t.aside.take_held(), (t.pending_wagers, [])
    t.round = RoundInProgress.begin(number, kind, wagers, t.sub)
    t.record(kinds.ROUND_START, {"round": number, "kind": kind, "wagers": [w.to_json() for w in wagers]})
    if first is not None:
        payload = {"card": str(first.card), "clause": first.clause}
        # 629a.8(c): the hand's first card, face down until its squeeze: journaled, not shown
        t.record(kinds.HELD_CARD_USED, payload, shown=unnamed(payload) if t.deals_face_down() else None)
    return first


def start_simulated(t: TableCore) -> None:
    """627a.13(c)(2)/(d): the disclosed card opens a simulated round "in which wagers may not be
    accepted". The wagers on the layout are returned, or stay there for the next real round, as
    the Rules Submission says (``simulated_round_wagers``)."""
    if t.sub.simulated_round_wagers == "return":
        return_pending_wagers(t)
    t.shoe_rounds.next_simulated()
    t.no_more_bets()


def make_simulated(t: TableCore, r: RoundInProgress, clause: str) -> None:
    """627a.13(d): the round's first card was found face up: the round is a simulated one. Its
    wagers are returned, or put back on the layout for the next real round (Rules Submission)."""
    r.kind = "simulated"
    wagers, r.wagers = r.wagers, []
    if t.sub.simulated_round_wagers == "stay":
        t.pending_wagers = wagers + t.pending_wagers
        t.record(kinds.ROUND_KIND, {"kind": "simulated", "clause": clause, "wagers_kept": [w.to_json() for w in wagers]})
        return
    for s in void(wagers):
        t.record(kinds.SETTLEMENT, s.to_json())
    t.record(kinds.ROUND_KIND, {"kind": "simulated", "clause": clause})


def complete_round(t: TableCore) -> None:
    r = t.round
    r.result = r.engine.result()
    if r.kind == "normal" and not r.settled:
        for s in settle(r.result, r.main_wagers(), t.sub):
            t.record(kinds.SETTLEMENT, s.to_json())
    r.settled = True
    t.shoe_rounds.decided(r, t.pending_wagers)
    t.record(kinds.ROUND_RESULT, {"round": r.number, "kind": r.kind, **r.result.to_json()})
    # 681a.7(l): to the discard rack in an order that permits reconstructing each hand.
    t.record(kinds.DISCARD_RACK, {"cards": [str(c) for c, _, _ in r.cards]})
    end_shoe_if_too_few(t)
    t.round_over()


def end_shoe_if_too_few(t: TableCore) -> None:
    """627a.13(e) voids a round "If there are insufficient cards remaining in the dealing shoe to
    complete" it. Fewer cards left (counted: loaded less dealt, and a card held for the next hand)
    than any round needs (each hand's first two) cannot complete one: no round is begun, the shoe
    ends here as at its cover card (``too_few_cards``). A shoe without a cover card sensor (an
    automatic shoe, 681a.5(h)) opened betting on its last cards and voided the round it could not
    deal (a gaming lab's review). With 4 or 5 left a round may complete, and is dealt."""
    shoe = t.shoe
    left = shoe.remaining if shoe is not None and not shoe.cover_reached else None
    if left is None or left + (t.aside.held is not None) >= MIN_ROUND_CARDS:
        return
    t.record(kinds.TOO_FEW_CARDS, {"cards_left": left, "needed": MIN_ROUND_CARDS, "clause": "627a.13(e)"})
    t.notice("info", f"{left} cards left in the shoe: too few for a round; the shoe ends here (627a.13(e))")
    shoe.cover_reached = True


def _void(t: TableCore, r: RoundInProgress, reason: str) -> None:
    for s in void(r.unsettled_wagers()):
        t.record(kinds.SETTLEMENT, s.to_json())
    r.kind, r.settled = "void", True
    t.record(kinds.ROUND_RESULT, {"round": r.number, "kind": "void", "reason": reason, "cards": r.cards_json()})


# 627a.13(e): why a round the shoe has no cards left for is void (``events.shoe_empty``, or
# ``dealing.next_prompt`` when the shoe said so during a squeeze or House Money)
INSUFFICIENT_CARDS = "627a.13(e): insufficient cards to complete the round"


def void_round(t: TableCore, reason: str) -> None:
    """627a.13(e): the round is void, every wager returned, the entire set reshuffled. A House
    Money Wager settled before the void (629a.8(c)(3): "Prior to dealing a third card") stays
    settled (docs/assumptions.md); the notice says so rather than "all wagers returned"."""
    stands = " (the House Money settled before it stands)" if t.round.house_money else ""
    _void(t, t.round, reason)
    t.notice("warning", f"round void: {reason}; its wagers returned{stands}; the cards are collected and reshuffled")
    t.shoe.cover_reached = True
    t.round_over()


def abandon(t: TableCore, reason: str) -> None:
    """The shoe is gone: a round in progress is void (wagers returned), and so are the wagers
    on the layout."""
    r = t.round
    if r is not None and not r.settled:
        _void(t, r, reason)
    return_pending_wagers(t)


def return_pending_wagers(t: TableCore) -> None:
    """The wagers on the layout go back to their players (the round they were for cannot be
    dealt)."""
    return_wagers(t, t.pending_wagers)
    t.pending_wagers = []


def return_wagers(t: TableCore, wagers: list[Wager]) -> None:
    """``wagers`` go back to their players, each journaled as returned (the caller takes them off
    the layout)."""
    for s in void(wagers):
        t.record(kinds.WAGER_RETURNED, s.to_json())
