"""Whether a journal's surveillance notices are the ones its edge figures call for (``audit decisions``).

The edge monitor journals, after a round, an ``edge`` record (every wager's exact player edge, and
since 2026-12-06 the ``threshold`` it was run with), then, when a wager is above that threshold,
an ``edge_alert`` record naming those wagers. Neither is a decision of the table's core, so the
decisions audit does not make them again; this check holds them to each other: an ``edge`` record
whose figures pass its threshold is followed at once by its ``edge_alert`` (one transaction), with
exactly those wagers, and no ``edge_alert`` comes without one. An alert deleted and the chain recomputed passed every check
(a surveillance review). An ``edge`` record without a ``threshold`` (an earlier shoectl's) says
nothing of what was due, and is not held to it; once one carried it, every later one must (a
threshold taken out with the alert passed the check: a review).
"""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from controller.journal import kinds
from controller.table.edge_figures import above, journaled_edge


@dataclass(frozen=True)
class _Due:
    seq: int
    shoe: str | None
    round: Any
    wagers: dict[str, str]
    threshold: str


class AlertsDue:
    """Feed ``take`` the ``edge`` and ``edge_alert`` entries in order, then ``finish``; each returns
    why the journal's notices are not those due (None while they are). While ``pending``, the next
    entry must be the ``edge_alert``: the caller says ``finish()`` at any other (an ``edge`` among
    them). TypeError / ValueError / KeyError for a malformed record (the caller names the entry)."""

    def __init__(self) -> None:
        self._due: _Due | None = None
        # the edge records say their threshold (from the first that did: every later one must), so
        # what was due is known
        self._carried = False

    def take(self, e: Any) -> str | None:
        p = e.payload
        if e.kind == kinds.EDGE:
            threshold = p.get("threshold")
            if not isinstance(threshold, str) and self._carried:
                # a writer that journals the threshold never stops: one taken out hid an alert taken out
                return "an edge record without the threshold every edge record before it carries"
            self._carried = isinstance(threshold, str)
            if self._carried:
                hot = above(journaled_edge(p)["wagers"], Fraction(threshold))
                self._due = _Due(e.seq, e.shoe_id, p["round"], hot, threshold) if hot else None
            return None
        if e.kind != kinds.EDGE_ALERT or not self._carried:
            return None
        due, self._due = self._due, None
        if due is None or (due.shoe, due.round) != (e.shoe_id, p["round"]):
            return "an edge_alert that no edge record calls for (no wager above its threshold after that round)"
        if p.get("wagers") != due.wagers or p.get("threshold") != due.threshold:
            return (f"the edge_alert names other wagers than the edge record of entry {due.seq} calls for "
                    f"({_said(due.wagers)} above {due.threshold})")
        return None

    @property
    def pending(self) -> bool:
        """An ``edge`` record calls for its ``edge_alert``, which comes next (the monitor journals
        both in one transaction): any other entry now is where it is missing."""
        return self._due is not None

    def finish(self) -> str | None:
        """Why the notice an ``edge`` record called for is missing, once no more can come for it."""
        due, self._due = self._due, None
        if due is None:
            return None
        return (f"no edge_alert follows the edge record of entry {due.seq} (round {due.round} of {due.shoe}), whose "
                f"figures call for one: {_said(due.wagers)} above the threshold {due.threshold}")


def _said(wagers: dict[str, str]) -> str:
    return ", ".join(f"{kind} {edge}" for kind, edge in wagers.items())
