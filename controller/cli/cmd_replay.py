"""``shoectl journal replay PATH [--shoe ID] [--round N] [--json] [--hmac-key FILE] [--no-verify]``:
reconstruct every shoe (cut and cover-card positions, burned cards, reconciliation) and every round
(cards in the order they left the shoe, hands, outcome, wagers, settlements) from a journal
(681a.7(l)). The journal is checked as it is read, and nothing is printed before the check is done
(``controller.cli.journal_input``)."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import IO

from controller.cli import cmd_journal
from controller.cli.common import positive_int, print_json
from controller.cli.journal_input import EXIT_DOES_NOT_VERIFY, add_journal_input, copy_text, read_checked, spooled_text
from controller.journal.entry import Entry
from controller.journal.replay import replay


def register(sub: argparse._SubParsersAction) -> None:
    p = cmd_journal.add_subcommand(sub, "replay", help="reconstruct every shoe and round from a journal")
    add_journal_input(p)
    p.add_argument("--shoe", metavar="ID", help="only this shoe")
    p.add_argument("--round", type=positive_int, metavar="N", help="only round N (of each shoe, or of --shoe)")
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    with spooled_text() as spool:
        found = read_checked(args, lambda entries: _write(args, entries, spool))
        if found is None:
            return EXIT_DOES_NOT_VERIFY
        copy_text(spool, sys.stdout)
    if not found and (args.shoe or args.round is not None):
        print("no such shoe or round in the journal")
    return 0


def _write(args: argparse.Namespace, entries: Iterable[Entry], out: IO[str]) -> int:
    found = 0
    for doc in replay(entries, shoe=args.shoe, round=args.round):
        found += 1
        if args.json:
            print_json(doc, stream=out)
        else:
            out.write(_text(doc) + "\n")
    return found


def _text(d: dict) -> str:
    if d["type"] == "shoe":
        cut = d["cut"] or {}
        return (f"shoe {d['shoe']}: {d['decks']} decks, cut at {cut.get('position')} by {cut.get('by')}, second cover "
                f"{d['cover_from_bottom']} from the bottom, burned {' '.join(d['burned']) or '-'}, {d['rounds']} rounds")
    if d["kind"] == "void":
        return f"  {d['shoe']} round {d['round']}: VOID ({d.get('reason')}), wagers returned"
    cards = " ".join(f"{c['card']}>{c['to'][0].upper()}" for c in d["cards"])
    net = sum(s["net"] for s in d["settlements"])
    return (f"  {d['shoe']} round {d['round']} [{d['kind']}]: {cards} | P {d['player']['total']} B {d['banker']['total']}"
            f" -> {d['outcome']}; {len(d['wagers'])} wagers, players net {net:+d}")
