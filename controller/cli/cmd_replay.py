"""``shoectl journal replay PATH [--shoe ID] [--round N] [--edges] [--json] [--hmac-key FILE] [--no-verify]``:
reconstruct every shoe (cut and cover-card positions, burned cards, reconciliation) and every round
(cards in the order they left the shoe, hands, outcome, wagers, settlements) from a journal
(681a.7(l)). ``--edges``: each round with the edge monitor's figures journaled after it (its
``edge`` record and any ``edge_alert``; docs/edge-monitor.md), in JSON as ``edge`` and
``edge_alert`` (null when there is none), in text as a line below the round. The journal is checked as it is read, and nothing is printed before the check is done
(``controller.cli.journal_input``)."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from typing import IO, Any

from controller.cli import cmd_journal
from controller.cli.common import positive_int, print_json
from controller.cli.journal_input import (EXIT_DOES_NOT_VERIFY, add_journal_input, copy_text, nothing_found, read_checked,
                                          spooled_text)
from controller.journal import kinds
from controller.journal.entry import Entry
from controller.journal.replay import entries_needed, replay
from controller.money import money_text
from controller.table.edge_figures import edge_percent, journaled_figures
from controller.journal.clockwatch import clock_step_text, when_text
from controller.table.result_line import void_wagers_text, wager_text
from shoectl_config.text import safe


def register(sub: argparse._SubParsersAction) -> None:
    p = cmd_journal.add_subcommand(sub, "replay", help="reconstruct every shoe and round from a journal")
    add_journal_input(p)
    p.add_argument("--shoe", metavar="ID", help="only this shoe")
    p.add_argument("--round", type=positive_int, metavar="N", help="only round N (of each shoe, or of --shoe)")
    add_round_details(p)
    p.add_argument("--json", action="store_true", help="one JSON object per line")
    p.set_defaults(func=run)


def add_round_details(p: argparse.ArgumentParser) -> None:
    """``--edges`` and ``--wagers``: what a replay (of a journal, or of the floor's store) adds below
    or beside each round."""
    p.add_argument("--edges", action="store_true",
                   help="the edge monitor's figures beside each round: each wager's player edge on the cards left")
    p.add_argument("--wagers", action="store_true",
                   help="below each round, each wager's settlement: seat, wager, result, paid (and the commission taken from it), net")


def run(args: argparse.Namespace) -> int:
    with spooled_text() as spool:
        found = read_checked(args, lambda entries: write_replay(args, entries, spool),
                             keep=entries_needed(args.shoe))
        if found is None:
            return EXIT_DOES_NOT_VERIFY
        if not found and (args.shoe is not None or args.round is not None):
            raise nothing_found(args, "the journal")
        copy_text(spool, sys.stdout)
    return 0


def write_replay(args: argparse.Namespace, entries: Iterable[Entry], out: IO[str]) -> int:
    """Replay ``entries`` into ``out`` as `journal replay` prints it (``args``: shoe, round, json);
    the number of shoes and rounds written. `floor rounds` prints the central store through it."""
    found = 0
    edges = _Edges() if getattr(args, "edges", False) else None
    docs: Iterable[dict] = replay(edges.siphon(entries) if edges else entries, shoe=args.shoe, round=args.round,
                                  hold=True, open_rounds=True)
    for doc in edges.beside(docs) if edges else docs:
        found += 1
        if args.json:
            print_json(doc, stream=out)
        else:
            # safe: a forged entry's ids or cards must not reach the terminal as control characters
            out.write(_steps_before_text(doc) + safe(_text(doc)) + "\n" + _events_text(doc)
                      + (_settlements_text(doc) if getattr(args, "wagers", False) else "")
                      + (_edge_text(doc) if edges and doc["type"] == "round" else ""))
    return found


class _Edges:
    """The ``edge`` and ``edge_alert`` records of a journal, by shoe and round, taken as the entries
    go by; ``beside`` adds them to the round documents (all read first: a round's figures are
    journaled after it)."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, str, Any], dict] = {}

    def siphon(self, entries: Iterable[Entry]) -> Iterator[Entry]:
        for e in entries:
            if e.kind in (kinds.EDGE, kinds.EDGE_ALERT) and e.payload.get("round") == e.round_no:
                # one rule with ``odds --journal`` (``edge_figures.after_round``): a round's first
                # record, whose payload names the round its column does (a review of the monitor)
                self.found.setdefault((e.kind, e.shoe_id, e.round_no), journaled_figures(e))
            yield e

    def beside(self, docs: Iterable[dict]) -> Iterator[dict]:
        for doc in list(docs):
            if doc["type"] == "round":
                key = (doc["shoe"], doc["round"])
                doc = {**doc, "edge": self.found.get((kinds.EDGE, *key)),
                       "edge_alert": self.found.get((kinds.EDGE_ALERT, *key))}
            yield doc


def _edge_text(d: dict) -> str:
    edge, alert = d["edge"], d["edge_alert"]
    if edge is None:
        return "      edge: none journaled\n"
    figures = ", ".join(f"{k} {edge_percent(v)}" for k, v in edge["wagers"].items())
    above = f"; ABOVE {alert['threshold']}: {', '.join(alert['wagers'])}" if alert else ""
    return safe(f"      edge ({edge['remaining']} cards left): {figures}{above}") + "\n"  # names a forger chose


def _recut_text(cuts_before: list[dict]) -> str:
    """`` (a recut; before: at 20 by dealer, second cover 14 from the bottom)``: the cuts a recut
    undid (681a.5(e)), or nothing."""
    if not cuts_before:
        return ""
    before = "; ".join(f"at {c['position']} by {c['by']}" + (f", second cover {c['cover_from_bottom']} from the bottom"
                                                              if c["cover_from_bottom"] is not None else "")
                       for c in cuts_before)
    return f" (recut; before: {before})"


def _reconciled(rec: dict | None, loaded: int | None) -> str:
    if rec is None and loaded is None:  # e.g. the next shoe of a run stopped after --shoes N (a lab's review)
        return "never loaded (being prepared when the journal ends, or given up before its load)"
    if rec is None:
        return "not reconciled yet (in play when the journal ends)"
    if rec.get("ok"):
        return f"reconciled ({rec.get('total')} of {rec.get('expected')} cards)"
    return f"DOES NOT RECONCILE ({rec.get('total')} of {rec.get('expected')} cards)"


# Sums in an event's payload, in minor units there: said in major units, as a round's line says them.
_MONEY_KEYS = frozenset({"amount", "net", "win", "commission"})


def _value(v: object, key: str = "") -> str:
    """A payload's value in words for a person (a surveillance review read `seat null`, `shoe_lost
    false`, `faults ["misread"]` and a JSON object): none, yes and no; a list's items, an object's
    keys and values in brackets; sums in major units."""
    if isinstance(v, str):
        return v
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int) and key in _MONEY_KEYS:
        return money_text(v)
    if isinstance(v, list):
        return ", ".join(_value(item) for item in v) or "none"
    if isinstance(v, dict):
        return "[" + "; ".join(f"{_key(k)} {_value(item, k)}" for k, item in v.items()) + "]"
    return str(v)


def _key(key: object) -> str:
    return str(key).replace("_", " ")


def _steps_before_text(d: dict) -> str:
    """The clock steps a reading of one shoe or round shows nowhere else, before the document whose
    times they change (``replay``'s ``clock_steps_before``), or nothing."""
    steps = d.get("clock_steps_before")
    if not steps:
        return ""
    return "  the times below are a stepped clock's, stepped earlier in the journal:\n" + _events_text({"events": steps})


def _events_text(d: dict) -> str:
    """A line for each of the document's events: the entry, what, who, and its payload (each line
    ``safe``: a forged payload's control characters never reach the terminal raw)."""
    lines = []
    for ev in d.get("events", ()):
        p = dict(ev["payload"])
        if ev["kind"] == kinds.OPERATOR:
            what = f"{_value(p.pop('command', '?'))} " + " ".join(f"{k}={_value(v, k)}" for k, v in (p.pop("args", None) or {}).items())
            for said_elsewhere in ("operator", "operator_role", "state"):
                p.pop(said_elsewhere, None)
        elif ev["kind"] == kinds.CLOCK_STEP:
            step = p.get("step_ms")  # (a forged one in words, as every payload's value)
            what, p = (clock_step_text(p) if type(step) is int else f"clock step ({_value(step)})"), {}
        else:
            what = ev["kind"].replace("_", " ")
        rest = ", ".join(f"{_key(k)} {_value(v, k)}" for k, v in p.items())
        who = _who(ev)
        lines.append(safe(f"      entry {ev['seq']}{who}: {what.strip()}" + (f" ({rest})" if rest else "")) + "\n")
    return "".join(lines)


def _who(ev: dict) -> str:
    """`` by fp1`` for the operator's own act (the command, a refusal of it, a record that names
    them), `` after fp1's command`` for what the table did on it (an irregularity found, a wager
    returned: an examiner read "by fp1" of a card found face up), nothing when no one's."""
    operator = ev.get("operator")
    if not operator:
        return ""
    p = ev["payload"]
    own = ev["kind"] in (kinds.OPERATOR, kinds.REFUSED) or operator in (p.get("by"), p.get("operator"))
    return f" by {operator}" if own else f" after {operator}'s command"


# Where a card went, as a round's line says it: a Bonus-only card (681a.7(f)(2): it counts for
# the Bonus Wager, not for the hand) is not written as the hand's own card.
_DESTINATIONS = {"player": "P", "banker": "B", "player_bonus": "P(bonus)", "banker_bonus": "B(bonus)"}


def _settlements_text(d: dict) -> str:
    """``--wagers``: a line for each of a round's settlements (seat, wager and stake, result, what was
    paid, the commission, the net), each ``safe``."""
    lines = []
    for s in d.get("settlements", ()) if d["type"] == "round" else ():
        win, commission = s.get("win") or 0, s.get("commission") or 0
        # "won 14.25, commission 0.75" was read as 15.75 paid (a forensic review): what was paid,
        # and, where a commission was taken, from what
        kept = f" ({money_text(win + commission)} less commission {money_text(commission)})" if commission else ""
        lines.append(safe(f"      {wager_text(s)}: {s.get('result')}, paid {money_text(win)}{kept}, "
                          f"net {money_text(s['net'], signed=True)}") + "\n")
    return "".join(lines)


def _wagers_text(wagers: list[dict]) -> str:
    """``2 wagers (seat 4 player 65.00, seat 4 dragon7 15.00)``: each seat, kind and amount."""
    each = ", ".join(map(wager_text, wagers))
    return f"{len(wagers)} wager{'s' if len(wagers) != 1 else ''}" + (f" ({each})" if each else "")


def _text(d: dict) -> str:
    """One line for a replayed shoe or round, for a person: what the journal does not hold is said
    in words (a shoe not cut, no second cover card), money in major units."""
    if d["type"] == "shoe":
        cut = d["cut"]
        cover = d["cover_from_bottom"]
        when = when_text(d.get("started"))
        begun = f" (begun {when})" if when else ""
        parts = [f"shoe {d['shoe']}{begun}: " + (f"{d['decks']} decks" if d["decks"] else "decks not recorded"),
                 (f"cut at {cut['position']} by {cut['by']}" if cut else "not cut") + _recut_text(d["cuts_before"]),
                 f"second cover {cover} from the bottom" if cover is not None else "no second cover card",
                 f"burned {' '.join(d['burned']) or '-'}", f"{d['rounds']} rounds", _reconciled(d["reconciliation"], d["loaded"])]
        if d.get("layout"):
            parts.append(f"{_wagers_text(d['layout'])} on the layout, in no round and not returned")
        return ", ".join(parts)
    when = when_text(d.get("started"))
    name = f"{d['shoe']} round {d['round']}" + (f" ({when})" if when else "")
    cards = " ".join(f"{c['card']}>{_DESTINATIONS.get(c['to'], c['to'])}" for c in d["cards"])
    if d.get("unfinished"):
        # What was settled or returned before the round stopped (a House Money wager, a simulated
        # round's wagers) is said, and listed below: events, --wagers (a review read "none settled").
        settled = len(d["settlements"])
        returned = sum(ev["kind"] == kinds.WAGER_RETURNED for ev in d.get("events", ()))
        done = ", ".join(part for part in (f"{settled} settled" if settled else "",
                                           f"{returned} returned" if returned else "") if part) or "none settled"
        return (f"  {name} [{d['kind']}]: UNFINISHED, no result journaled: {cards or 'no card dealt'}; "
                f"{_wagers_text(d['wagers'])} on it, {done}")
    if d["kind"] == "void":  # its cards too: which were out is what a disputed round is about (a review)
        return (f"  {name}: VOID ({d.get('reason') or 'no reason given'}): {cards or 'no card dealt'}; "
                f"{void_wagers_text(d['settlements'])}")
    return (f"  {name} [{d['kind']}]: {cards} | P {d['player']['total']} B {d['banker']['total']}"
            f" -> {d['outcome']}; " + (_simulated_wagers_text(d) if d["kind"] == "simulated" else _net_text(d)))


def _net_text(d: dict) -> str:
    """``3 wagers, players net +12.50``: a round's wagers and what they won or lost, together."""
    net = sum(s["net"] for s in d["settlements"])
    return f"{len(d['wagers'])} wagers, players net {money_text(net, signed=True)}"


def _simulated_wagers_text(d: dict) -> str:
    """A simulated round decides no wager (627a.13(c)(2), (d)): those on the layout when it began were
    pushed, or kept for the next round, as the Rules Submission says (an examiner read "3 wagers")."""
    if not d["wagers"]:
        return "no wager"
    pushed = sum(s.get("result") == "push" for s in d["settlements"])
    if pushed == len(d["settlements"]) == len(d["wagers"]):
        return f"{pushed} wagers returned as pushes (no wager is decided by a simulated round)"
    if not d["settlements"]:
        return f"{len(d['wagers'])} wagers kept on the layout for the next round (no wager is decided by a simulated round)"
    return _net_text(d)
