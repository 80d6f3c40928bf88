"""The one-line text of a round's result, as ``shoectl run --display lines`` and the console
print it, and of each wager's settlement, as the console and ``ctl watch`` tell the dealer what
to pay or collect. Kept apart from the live display so that a control client prints it without
loading the terminal library."""
from __future__ import annotations

from typing import Any

from controller.money import money_text
from controller.journal import kinds

__all__ = ["round_result_text", "settlement_text", "wager_text"]


def round_result_text(shoe: Any, p: dict[str, Any], *, short: bool = False) -> str:
    """One line for a ``round_result`` record: the hands, the totals and the outcome (``short``:
    "P"/"B" for the hands, as the console prints them), or VOID with the reason."""
    if p.get("kind") == "void":
        return f"{shoe} round {p['round']}: VOID ({p.get('reason') or 'no reason given'})"
    pl, bk = ("P", "B") if short else ("Player", "Banker")
    number = f"{p['round']}" if short else f"{p['round']:3d}"
    arrow = " -> " if short else "  -> "
    return (f"{shoe} round {number} [{p['kind']}]: {pl} {' '.join(p['player']['cards'])} ({p['player']['total']})"
            f"  {bk} {' '.join(p['banker']['cards'])} ({p['banker']['total']}){arrow}{p['outcome']}")


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


def when_text(ts: object) -> str:
    """A journal time (``2026-12-06T09:39:51.296700Z``) to the second, for a person matching a hand to
    the cameras' clock: ``2026-12-06 09:39:51 UTC``; empty where there is none."""
    return f"{ts[:10]} {ts[11:19]} UTC" if isinstance(ts, str) and len(ts) >= 19 else ""


def clock_step_text(p: dict) -> str:
    """A ``clock_step`` in words: which way and how far the table's clock stepped, and what the times
    after it mean (the entries keep the clock's times; matching them to footage needs the step)."""
    step = p.get("step_ms")
    if not isinstance(step, int) or isinstance(step, bool):
        return f"clock step ({step})"
    way = "back" if step < 0 else "forward"
    if p.get("basis") == "last_entry":
        return (f"the table's clock is {_duration(-step)} behind the journal's last entry ({when_text(p.get('expected'))}) "
                "at this start: the times from here on are at least that far back")
    return (f"the table's clock stepped {way} {_duration(abs(step))} (it should have said {when_text(p.get('expected'))}): "
            "the times from here on are the stepped clock's")


def _duration(ms: int) -> str:
    seconds, ms = divmod(ms, 1000)
    days, seconds = divmod(seconds, 86_400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    parts = [f"{days} d", f"{hours} h", f"{minutes} min", f"{seconds}.{ms // 100} s"]
    first = next((i for i, n in enumerate((days, hours, minutes)) if n), 3)
    return " ".join(parts[first:])  # from the largest unit given: "1 h 0 min 0.0 s"
