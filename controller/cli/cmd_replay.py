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
from controller.money import money_text


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
    """One line for a replayed shoe or round, for a person: what the journal does not hold is said
    in words (a shoe not cut, no second cover card), money in major units."""
    if d["type"] == "shoe":
        cut = d["cut"]
        cover = d["cover_from_bottom"]
        parts = [f"shoe {d['shoe']}: " + (f"{d['decks']} decks" if d["decks"] else "decks not recorded"),
                 f"cut at {cut['position']} by {cut['by']}" if cut else "not cut",
                 f"second cover {cover} from the bottom" if cover is not None else "no second cover card",
                 f"burned {' '.join(d['burned']) or '-'}", f"{d['rounds']} rounds"]
        return ", ".join(parts)
    if d["kind"] == "void":
        return f"  {d['shoe']} round {d['round']}: VOID ({d.get('reason') or 'no reason given'}), wagers returned"
    cards = " ".join(f"{c['card']}>{c['to'][0].upper()}" for c in d["cards"])
    net = sum(s["net"] for s in d["settlements"])
    return (f"  {d['shoe']} round {d['round']} [{d['kind']}]: {cards} | P {d['player']['total']} B {d['banker']['total']}"
            f" -> {d['outcome']}; {len(d['wagers'])} wagers, players net {money_text(net, signed=True)}")
