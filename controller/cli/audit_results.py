"""``shoectl audit results PATH [--submission FILE|PRESET] [--json]``: what a journal's rounds
yielded, for a gaming lab (``controller.audit.results``; docs/audit.md, "Results").

For each Rules Submission the rounds were dealt under: the shoes, rounds (simulated and void
apart) and cards dealt; each outcome's frequency and each wager's hold per unit staked with 95 %
intervals over whole shoes, beside the exact figures of a full shoe, as ``shoectl simulate`` gives
them for a simulation; and the money the table took by wager kind: wagers settled, staked, the
players' net, the hold, commission, won / lost / pushed, and the wagers returned without a
decision. Exit 0; a journal without a round decided under a journaled Rules Submission: one line,
exit 2 (one that does not verify: exit 1, unless ``--no-verify``).
"""
from __future__ import annotations

import argparse
import math
import sys
from functools import partial
from pathlib import Path
from typing import Any

from controller.audit.results import RESULTS_KINDS, RulesResults, WagerMoney, collect_results
from controller.cli.cmd_simulate import figures, print_agreement, print_figures
from controller.cli.common import percent, print_json, submission_for
from controller.cli.journal_input import EXIT_DOES_NOT_VERIFY, read_checked
from controller.errors import UsageError
from controller.rules.model import WagerKind
from controller.rules.money import money_text
from controller.table.io import jsonable


def run_results(args: argparse.Namespace) -> int:
    given = None
    if args.submission is not None:
        sub = submission_for(None, args.submission)
        given = RulesResults(jsonable(sub.to_dict()), sub)
    groups = read_checked(args, partial(collect_results, given=given), kinds=RESULTS_KINDS,
                          progress=f"reading {Path(args.path).name}")
    if groups is None:
        return EXIT_DOES_NOT_VERIFY
    if given is not None and not given.before_journaled:  # taken without a word, it seemed applied
        print(f"{args.prog}: warning: --submission {args.submission}: not used: the journal names its rules before "
              "its first round", file=sys.stderr)
    if not groups:
        raise UsageError(f"{args.path}: no round decided under a journaled Rules Submission (a journal written "
                         "before tables journaled their rules: name them with --submission)")
    reports = [_report(g) for g in groups]
    if args.json:
        print_json({"path": str(args.path), "rules": reports})
        return 0
    for i, rep in enumerate(reports):
        if i:
            print()
        _print(rep)
    return 0


def _report(g: RulesResults) -> dict[str, Any]:
    sub = g.submission
    tally = g.tally
    outcomes, wagers = figures(sub, tally, g.bonus_tally) if tally.rounds else ({}, {})
    wagers = {name: d for name, d in wagers.items() if not math.isnan(d["value"])}  # a Bonus never in play
    total = WagerMoney()
    for m in g.money.values():
        total.add(m)
    return {"submission": sub.source, "name": sub.name, "game": sub.game.value, "decks": sub.decks,
            "shoes": len(g.shoes), "rounds": tally.rounds, "simulated_rounds": g.simulated, "void_rounds": g.void,
            "cards_dealt": tally.cards_dealt, "outcomes": outcomes, "wagers_per_unit": wagers,
            "money": {kind: g.money[kind].to_json() for kind in sorted(g.money, key=_offered_order)},
            "money_total": total.to_json()}


def _offered_order(kind: str) -> tuple[int, str]:
    """Wager kinds in the rules core's order (player, banker, tie, ...), any other after, by name."""
    order = [k.value for k in WagerKind]
    return (order.index(kind), "") if kind in order else (len(order), kind)


# The money table's columns: heading and least width (the first one left-aligned, the others
# right-aligned). A column widens to keep two spaces before its widest cell: the amounts a table
# takes reach 1,000,000,000.00 a wager and more in a sum (a review read 1,000,000,002.10 staked on
# 3 wagers as "31,000,000,002.10" when the columns ran together).
_MONEY_COLUMNS = (("money", 14), ("settled", 9), ("staked", 16), ("players net", 16), ("hold", 12),
                  ("commission", 14), ("won/lost/pushed", 20), ("returned", 18))


def _money_row(name: str, m: dict[str, Any]) -> list[str]:
    """One row of the money table, its cells as text, in ``_MONEY_COLUMNS``' order."""
    hold = percent(m["hold"]) if m["hold"] is not None else "-"
    returned = f"{m['returned']} ({money_text(m['returned_amount'])})" if m["returned"] else "0"
    return [name, f"{m['settled']:,}", money_text(m["staked"]), money_text(m["players_net"], signed=True), hold,
            money_text(m["commission"]), f"{m['won']}/{m['lost']}/{m['pushed']}", returned]


def _money_columns(rows: list[list[str]]) -> list[str]:
    """The heading and ``rows`` as lines, each column at its least width or wider (``_MONEY_COLUMNS``)."""
    widths = [max(least, *(len(row[i]) + 2 for row in rows)) for i, (_, least) in enumerate(_MONEY_COLUMNS)]
    lines = [[heading for heading, _ in _MONEY_COLUMNS], *rows]
    return [cells[0].ljust(widths[0]) + "".join(cell.rjust(width) for cell, width in zip(cells[1:], widths[1:]))
            for cells in lines]


def _print(rep: dict[str, Any]) -> None:
    others = "".join(f", {n} {what}" for n, what in ((rep["simulated_rounds"], "simulated"),
                                                     (rep["void_rounds"], "void")) if n)
    shoes = f"{rep['shoes']} shoe{'' if rep['shoes'] == 1 else 's'}"
    print(f"{rep['name']} ({rep['game']}, {rep['decks']} decks; {rep['submission']}): {shoes}, "
          f"{rep['rounds']:,} round{'' if rep['rounds'] == 1 else 's'}{others}, {rep['cards_dealt']:,} cards dealt in them")
    if rep["outcomes"]:
        print_figures("outcome", "frequency", rep["outcomes"])
        print_figures("wager (unit)", "hold", rep["wagers_per_unit"])
        print_agreement(rep["outcomes"], rep["wagers_per_unit"])
    rows = [_money_row(name, m) for name, m in [*rep["money"].items(), ("total", rep["money_total"])]]
    print()
    for line in _money_columns(rows):
        print(line)
    riding = rep["money_total"].get("house_money_riding")
    if riding:  # winnings moved on the layout: not staked, at risk all the same (the hold is over both)
        print(f"House Money payouts placed on wagers and decided with them: {money_text(riding)} (not in staked; "
              "the hold is per unit staked or riding)")
