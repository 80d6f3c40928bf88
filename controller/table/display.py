"""The live text display of ``shoectl run``: the table's state, the shoe remaining, the current
hands, wagers by seat, the last results, faults, and the roadmaps of the current shoe, redrawn in
place (ANSI) after every decision. ``render(snapshot, rounds)`` is pure; ``LiveDisplay`` keeps the
current shoe's rounds and writes to a terminal."""
from __future__ import annotations

import sys
import threading
from typing import Any, TextIO

from controller.roadmaps import compute, render_text, results_from_rounds

CLEAR = "\x1b[H\x1b[2J"


def round_result_text(shoe: Any, p: dict[str, Any], *, short: bool = False) -> str:
    """One line for a ``round_result`` record: the hands, the totals and the outcome (``short``:
    "P"/"B" for the hands, as the console prints them), or VOID with the reason."""
    if p.get("kind") == "void":
        return f"{shoe} round {p['round']}: VOID ({p.get('reason')})"
    pl, bk = ("P", "B") if short else ("Player", "Banker")
    number = f"{p['round']}" if short else f"{p['round']:3d}"
    arrow = " -> " if short else "  -> "
    return (f"{shoe} round {number} [{p['kind']}]: {pl} {' '.join(p['player']['cards'])} ({p['player']['total']})"
            f"  {bk} {' '.join(p['banker']['cards'])} ({p['banker']['total']}){arrow}{p['outcome']}")


def render(snap: dict[str, Any], rounds: list[dict[str, Any]], notices: list[str]) -> str:
    left = snap.get("cards_remaining")
    lines = [
        f"shoectl  table {snap.get('table')}  {snap.get('submission')}  |  state {snap.get('state')}  |  "
        f"shoe {snap.get('shoe')}  round {snap.get('round')}  |  cards left {left if left is not None else '-'}"
        f"{'  (cover card reached)' if snap.get('cover_reached') else ''}",
    ]
    if snap.get("player") or snap.get("banker"):
        lines.append(f"Player: {' '.join(snap.get('player') or [])}    Banker: {' '.join(snap.get('banker') or [])}")
    last = next((r for r in reversed(rounds) if r.get("kind") != "void"), None)
    if last is not None:
        lines.append(f"Last round {last['round']}: Player {' '.join(last['player']['cards'])} ({last['player']['total']})  "
                     f"Banker {' '.join(last['banker']['cards'])} ({last['banker']['total']})  -> {last['outcome']}")
    wagers = snap.get("wagers") or []
    by_seat: dict[int, list[str]] = {}
    for w in wagers:
        by_seat.setdefault(w["seat"], []).append(f"{w['kind']} {w['amount'] / 100:.2f}")
    lines.append("Wagers: " + ("; ".join(f"seat {s}: {', '.join(v)}" for s, v in sorted(by_seat.items())) or "none"))
    recent = [r["outcome"][0].upper() for r in rounds if r.get("kind") == "normal"][-30:]
    lines.append("Results: " + (" ".join(recent) or "-"))
    faults = snap.get("faults") or {}
    lines.append("Faults: " + ("; ".join(faults.values()) if faults else "none"))
    if snap.get("prompt"):
        lines.append(f"Dealer: {snap['prompt']}")
    for n in notices[-3:]:
        lines.append(f"!! {n}")
    lines.append("")
    lines.append(render_text(compute(results_from_rounds(rounds)), title=f"Roadmaps of {snap.get('shoe')}"))
    return "\n".join(lines)


class LiveDisplay:
    """Collects the current shoe's rounds from the records and redraws after each decision."""

    def __init__(self, snapshot: Any, out: TextIO | None = None) -> None:
        self.snapshot = snapshot
        self.out = out or sys.stdout
        self.rounds: list[dict[str, Any]] = []
        self.notices: list[str] = []
        self.lock = threading.Lock()

    def record(self, r: Any) -> None:
        with self.lock:
            if r.kind == "shoe_start":
                self.rounds = []
            elif r.kind == "round_result":
                self.rounds.append(dict(r.payload))
            elif r.kind not in ("card", "fault", "resumed", "count_fault", "wager", "round_start"):
                return
            self.out.write(CLEAR + render(self.snapshot(), self.rounds, self.notices))
            self.out.flush()

    def notice(self, n: Any) -> None:
        if n.level != "info":
            with self.lock:
                self.notices.append(n.text)
