"""Rounds: opening betting, starting a round with the wagers on the layout, simulated rounds
(627a.13(c)(2)/(d)), completing and settling a round (681a.7(h), (l)), and voiding one
(627a.13(e)). Every wager placed is settled, pushed or returned exactly once: here.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from controller.rules.cards import Card
from controller.rules.wagers import settle, void
from controller.table.round import RoundInProgress

if TYPE_CHECKING:
    from controller.table.core import TableCore


def open_betting(t: TableCore) -> None:
    t.round = None
    if t.pending_simulated is not None:
        start_simulated(t)
        return
    t.show("PLACE BETS")


def begin_round(t: TableCore) -> Card | None:
    """The round starts with the wagers on the layout; returns a held card (627a.13(a)/(b))
    that is its first card, if there is one."""
    t.last_round = None
    t.round_count += 1
    wagers, t.pending_wagers = t.pending_wagers, []
    t.round = RoundInProgress.begin(t.round_count, t.next_round_kind, wagers, t.sub)
    t.next_round_kind = "normal"
    t.record("round_start", {"round": t.round_count, "kind": t.round.kind,
                             "wagers": [w.to_json() for w in wagers]})
    if t.held_card is None:
        return None
    held, t.held_card = t.held_card, None
    t.record("held_card_used", {"card": str(held), "clause": "627a.13(a)"})
    return held


def start_simulated(t: TableCore) -> None:
    """627a.13(c)(2)/(d): the disclosed card opens a simulated round without wagers."""
    c, t.pending_simulated = t.pending_simulated, None
    t.next_round_kind = "simulated"
    t.held_card = c
    t.no_more_bets()


def make_simulated(t: TableCore, r: RoundInProgress) -> None:
    r.kind = "simulated"
    for s in void(r.wagers):
        t.record("settlement", s.to_json())
    r.wagers = []
    t.record("round_kind", {"kind": "simulated", "clause": "627a.13(d)"})


def complete_round(t: TableCore) -> None:
    r = t.round
    r.result = r.engine.result()
    if r.kind == "normal" and not r.settled:
        for s in settle(r.result, r.main_wagers(), t.sub):
            t.record("settlement", s.to_json())
    r.settled = True
    t.last_outcome = r.result.outcome.value
    t.record("round_result", {"round": r.number, "kind": r.kind, **r.result.to_json()})
    t.last_round = r
    # 681a.7(l): to the discard rack in an order that permits reconstructing each hand.
    t.record("discard_rack", {"cards": [str(c) for c, _, _ in r.cards]})
    t.round_over()


def _void(t: TableCore, r: RoundInProgress, reason: str) -> None:
    for s in void(r.wagers):
        t.record("settlement", s.to_json())
    r.kind, r.settled = "void", True
    t.record("round_result", {"round": r.number, "kind": "void", "reason": reason, "cards": r.cards_json()})


def void_round(t: TableCore, reason: str) -> None:
    """627a.13(e): the round is void, every wager returned, the entire set reshuffled."""
    _void(t, t.round, reason)
    t.notice("warning", f"round void: {reason}; all wagers returned")
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
    for s in void(t.pending_wagers):
        t.record("wager_returned", s.to_json())
    t.pending_wagers = []
