"""``shoectl run --display lines``: the table as one line per event, for people (``--json`` is
``run_output.JournalLines``; the live screen ``controller.table.display``)."""
from __future__ import annotations

from controller.cli.common import for_the_reader
from controller.cli.run_output import StdoutLines
from controller.journal import kinds
from controller.table.io import FAULT_LEVEL, Notice, TableRecord
from controller.table.result_line import round_result_text, void_wagers_text


COUNT_FAULT_NOTICE = object()  # a count fault's record was printed: its notice (the same, in more words) is not


class LineDisplay:
    """Line-per-event output for people (``--display lines``); ``--json`` is ``JournalLines``."""

    def __init__(self, out: StdoutLines) -> None:
        self.out = out
        self.snapshot = None  # the table core's snapshot(), once there is a core
        self._fault_said: object = None  # the fault notice a fault record said already (or an outage line)
        self._settled: list[dict] = []  # the round's settlements so far, for a void round's line

    def _line(self, text: str) -> None:
        """One event's line, fitted to a terminal's width (whole into a pipe or a file: a review of
        terminals saw `[39` / `0 cards left]` under TERM=dumb)."""
        self.out.line(for_the_reader(text))

    def resumed_from_journal(self, snapshot: dict) -> None:
        """The table resumed from its journal with ``snapshot``: what the round in play settled
        before the stop (journaled then, never seen here) counts in its void line (a money review:
        a void after a restart said "wagers returned" of a House Money Wager that had lost)."""
        self._settled = list(snapshot.get("house_money_settled", ()))

    def record(self, r: TableRecord) -> None:
        p = r.payload
        if r.kind == kinds.SETTLEMENT:
            self._settled.append(p)
        elif r.kind == kinds.ROUND_START:
            self._settled = []
        if r.kind == kinds.ROUND_RESULT and p.get("kind") != "void":
            left = self.snapshot().get("cards_remaining") if self.snapshot else None
            self._line(round_result_text(r.shoe, p) + (f"   [{left} cards left]" if left is not None else ""))
        elif r.kind == kinds.ROUND_RESULT:
            self._line(f"{r.shoe} round {p['round']:3d} VOID: {p.get('reason')}; {void_wagers_text(self._settled)}")
        elif r.kind in (kinds.FAULT, kinds.COUNT_FAULT):
            # the notice that follows says it again (a count fault's in more words): not printed
            self._fault_said = p.get("reason") if r.kind == kinds.FAULT else COUNT_FAULT_NOTICE
            if not str(p.get("fault", "")).startswith("link:"):
                # (a device outage is written by its OutageLines: once, not at every retry)
                self._line(f"!! FAULT: {p.get('reason') or p.get('problem')}")
        elif r.kind == kinds.RESUMED:
            self._line(f"   resumed: {p['state']}")
        elif r.kind == kinds.SHOE_START:
            by_hand = self.snapshot is not None and not self.snapshot().get("has_shuffler", True)
            how = "decks to the dealer (a preshuffled pack, or shuffled by hand)" if by_hand else "decks to the shuffler"
            self._line(f"== shoe {p['shoe']}: {p['decks']} {how}")
        elif r.kind == kinds.CUT:
            self._line(f"   cut at {p['position']} by {p['by']}")
        elif r.kind == kinds.RECONCILIATION:
            counted = {"shuffler": " (counted at the next shuffle)", "shoe": " (counted at the next load)"}
            self._line(f"   shoe done: {p['left_shoe']} cards out, {p['remaining_in_shoe']} left"
                          f"{counted.get(p.get('remaining_counted_by'), '')}; "
                          f"{'reconciled' if p['ok'] else 'DOES NOT RECONCILE'}")

    def notice(self, n: Notice) -> None:
        """Warnings, and the faults no fault record said: a shoe given up as its device came back
        new, a shoe empty before its counted cards came out (a review of the emulator: a shoe lost
        between rounds read as an ordinary end of shoe)."""
        if n.level == FAULT_LEVEL:
            said, self._fault_said = self._fault_said, None
            if said is COUNT_FAULT_NOTICE or (said is not None and said == n.text):
                return
        elif n.level != "warning":
            return
        self._line(f"!! {n.text}")

    def close(self) -> None:
        """Nothing to finish: every line was written as it came (the live display draws its last screen)."""
