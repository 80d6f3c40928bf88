"""The one-line text of a round's result, as ``shoectl run --display lines`` and the console
print it, and of each wager's settlement, as the console and ``ctl watch`` tell the dealer what
to pay or collect. Kept apart from the live display so that a control client prints it without
loading the terminal library."""
from __future__ import annotations

from typing import Any

from controller.money import money_text
from controller.journal import kinds

__all__ = ["round_result_text", "settlement_text", "void_wagers_text", "wager_text"]


def round_result_text(shoe: Any, p: dict[str, Any], *, short: bool = False) -> str:
    """One line for a ``round_result`` record: the hands, the totals and the outcome (``short``:
    "P"/"B" for the hands, as the console prints them), or VOID with the reason."""
    if p.get("kind") == "void":
        return f"{shoe} round {p['round']}: VOID ({p.get('reason') or 'no reason given'})"
    pl, bk = ("P", "B") if short else ("Player", "Banker")
    number = f"{p['round']}" if short else f"{p['round']:3d}"
    arrow = " -> " if short else "  -> "
    return (f"{shoe} round {number} [{p['kind']}]: {pl} {' '.join(p['player']['cards'])} ({p['player']['total']})"
            f"{_bonus_text(p, 'player')}  {bk} {' '.join(p['banker']['cards'])} ({p['banker']['total']})"
            f"{_bonus_text(p, 'banker')}{arrow}{p['outcome']}")


def _bonus_text(p: dict[str, Any], side: str) -> str:
    """21 Baccarat, in a round with a Bonus Wager (``bonus_in_play``): a hand's Bonus cards where a
    card was drawn for the Bonus alone, or its rank won (681a.7(f)(2)): `` bonus 5C 6D 5H: pair``.
    A review of the dealer's console: it said "pay 10.00" on a Banker Bonus Wager beside a hand of
    5C 6D, the card that made the pair not shown; without a Bonus Wager nothing is said of them."""
    hand = p[side]
    cards, rank = hand.get("bonus_cards"), hand.get("bonus_rank")
    if not p.get("bonus_in_play") or not cards or (cards == hand.get("cards") and rank in (None, "none")):
        return ""
    return f" bonus {' '.join(cards)}: {rank or 'none'}"


def wager_text(w: dict[str, Any]) -> str:
    """``seat 4 player 65.00``: a wager's seat, kind and stake in major units (what a forged entry
    lacks is said as ``None``, never a crash: the replay's wagers are checked for their sum only)."""
    return f"seat {w.get('seat')} {w.get('kind')} {money_text(w['amount'])}"


def settlement_text(kind: str, p: dict[str, Any]) -> str:
    """One line for a ``settlement`` or ``wager_returned`` record, money in major units: what the
    dealer pays (the win, a commission withheld said), collects, or gives back."""
    wager = f"  {wager_text(p)}"
    if kind == kinds.WAGER_RETURNED:
        return f"{wager}: returned"
    if p["result"] == "win":
        kept = f" (commission {money_text(p['commission'])} withheld)" if p.get("commission") else ""
        return f"{wager}: pay {money_text(p['win'])}{kept}"
    if p["result"] == "lose":
        return f"{wager}: collect"
    return f"{wager}: push, the stake stays with the player"


def void_wagers_text(settlements: list[dict]) -> str:
    """What became of a void round's wagers: returned (settled as pushes), but a House Money Wager
    decided before the void stands (an examiner read "wagers returned" of a round where two had lost)."""
    decided = [s for s in settlements if s.get("result") != "push"]
    if not decided:
        return "wagers returned"
    net = sum(s["net"] for s in decided)
    return (f"{len(settlements) - len(decided)} wagers returned, {len(decided)} decided before the void "
            f"(players net {money_text(net, signed=True)})")
