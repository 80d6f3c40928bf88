"""``shoectl rules``: deal a round from given cards, show or check a Rules Submission.

``shoectl rules deal --game G --cards AS,9H,... [--bonus] [--json]`` deals one round from those
cards in order. ``--cards -`` reads one round per line from standard input and writes one result
per line; a bad line is reported (as ``{"line": n, "error": ...}`` with ``--json``) and the run
exits 2 at the end. Too few cards: the round is void for insufficient cards (627a.13(e)), exit 2.

``shoectl rules show [FILE|PRESET] [--json]`` prints the Rules Submission as TOML a person can copy
into a file of their own: ``shoectl rules check`` accepts it and it loads to the same submission;
each offered wager's house edge follows as comments. ``--json``: the submission's dict plus
``house_edge``.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from controller.cli.common import GAME_CHOICES, percent, print_json, submission_for
from controller.errors import UsageError, path_argument
from controller.rules.cards import Composition, parse_cards
from controller.rules.engine import RoundResult, deal
from controller.rules.errors import RulesError
from controller.rules.model import Game
from controller.rules.odds import exact_odds
from controller.rules.submission import preset_names
from shoectl_config.text import safe
from shoectl_config.toml_text import toml_document


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="deal a round from given cards; show or check a Rules Submission")
    rs = p.add_subparsers(dest="rules_command", metavar="SUBCOMMAND", parser_class=type(p))
    rs.required = True

    d = rs.add_parser("deal", help="decide one round from cards in the order they leave the shoe")
    d.add_argument("--game", choices=GAME_CHOICES, default=None, help="punto-banco (default), ez-baccarat or 21-baccarat")
    d.add_argument("--submission", type=path_argument, metavar="FILE|PRESET", help="a Rules Submission file or preset name")
    d.add_argument("--cards", required=True, metavar="C1,C2,...|-", help="cards in deal order, or - to read one round per line from stdin")
    d.add_argument("--bonus", action="store_true", help="21 Baccarat: a Bonus Wager is in play (681a.7(f)(2))")
    d.add_argument("--json", action="store_true", help="one JSON object per round")
    d.set_defaults(func=run_deal)

    s = rs.add_parser("show", help="print a Rules Submission (default: the default preset)")
    s.add_argument("submission", nargs="?", type=path_argument, metavar="FILE|PRESET")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=run_show)

    c = rs.add_parser("check", help="validate Rules Submission files; exit 2 on the first bad one")
    c.add_argument("files", nargs="+", type=path_argument, metavar="FILE")
    c.set_defaults(func=run_check)

    pr = rs.add_parser("presets", help="list the shipped presets")
    pr.set_defaults(func=run_presets)


def _deal_line(text: str, sub: Any, bonus: bool) -> tuple[RoundResult, list[Any]]:
    """The round dealt from ``text``'s cards, and the cards after those it used (left in the shoe)."""
    cards = parse_cards(text)
    if not cards:
        raise UsageError("no cards given")
    Composition.standard(sub.decks).remove(cards)  # more copies than the shoe holds is an input error
    r = deal(cards, sub.game, getattr(sub, "twentyone", None), bonus_in_play=bonus)
    return r, cards[r.cards_used:]


def _print_round(r: RoundResult, rest: list[Any], as_json: bool) -> None:
    """The round, and the cards given that it did not use, said (a review of bad inputs read "6
    cards" of 8 given, the last two passed over without a word)."""
    if as_json:
        print_json({**r.to_json(), **({"not_dealt": [str(c) for c in rest]} if rest else {})})
    else:
        print(round_text(r) + (f" ({' '.join(map(str, rest))} not dealt: the round needed no more)" if rest else ""))


def round_text(r: RoundResult) -> str:
    p = " ".join(map(str, r.player))
    b = " ".join(map(str, r.banker))
    extra = []
    if r.natural:
        extra.append("natural")
    for flag in ("player_pair", "banker_pair"):
        if r.game.is_punto_banco_family and getattr(r, flag):
            extra.append(flag.replace("_", " "))
    if r.game.value == "ez-baccarat":
        extra += [n for n in ("dragon7", "panda8") if getattr(r, n)]
    if r.game.value == "21-baccarat" and r.bonus_in_play:
        extra.append(f"player bonus {r.player_bonus_rank.value}, banker bonus {r.banker_bonus_rank.value}")
    verdict = "tie" if r.outcome.value == "tie" else f"{r.outcome.value} wins"
    tail = f" ({', '.join(extra)})" if extra else ""
    return f"Player {p} = {r.player_total} | Banker {b} = {r.banker_total} -> {verdict}{tail}; {r.cards_used} cards"


def run_deal(args: argparse.Namespace) -> int:
    sub = submission_for(args.game, args.submission)
    if args.bonus and Game(sub.game) is not Game.TWENTYONE:
        raise UsageError(f"--bonus: a Bonus Wager is 21 Baccarat's (681a.7(f)(2)); this round is "
                         f"{Game(sub.game).value}'s")
    if args.cards != "-":
        r, rest = _deal_line(args.cards, sub, args.bonus)
        _print_round(r, rest, args.json)
        return 0
    failed = 0
    for n, line in enumerate(sys.stdin, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            r, rest = _deal_line(line, sub, args.bonus)
        except (RulesError, UsageError) as exc:
            failed += 1
            msg = " ".join(str(exc).split())
            if args.json:
                print_json({"line": n, "error": msg})
            print(f"shoectl rules deal: error: line {n}: {msg}", file=sys.stderr)
            continue
        _print_round(r, rest, args.json)
        sys.stdout.flush()
    return 2 if failed else 0


def run_show(args: argparse.Namespace) -> int:
    """The Rules Submission as TOML (``Submission.to_dict`` without its ``source``, which the
    first comment names), then every offered wager's house edge by exact odds
    (``controller.rules.odds``, as ``shoectl odds``) as comments, with a note for a wager the house
    has no edge on. ``--json``: the submission's dict plus ``house_edge`` (per wager, a fraction of
    the stake)."""
    sub = submission_for(None, args.submission)
    d = sub.to_dict()
    report = exact_odds(sub)
    if args.json:
        print_json({**d, "house_edge": {k: float(w["house_edge"]) for k, w in report.wagers.items()}})
        return 0
    source = d.pop("source")
    print(f"# Rules Submission: {safe(sub.name)} ({safe(source)}). Save it as a file, edit it and")
    print("# check it with `shoectl rules check FILE`; every key: docs/rules-submission.md.")
    print()
    print(toml_document(d))
    print("# House edge by exact odds for a full shoe (`shoectl odds` has the details):")
    width = max(map(len, report.wagers)) + 2
    pays = max(len(report.payouts.get(k, "")) for k in report.wagers) + 2
    for kind, w in report.wagers.items():
        print(f"#   {kind:<{width}}{report.payouts.get(kind, ''):<{pays}}{percent(float(w['house_edge'])):>9}")
    no_edge = [k for k, w in report.wagers.items() if w["house_edge"] <= 0]
    if no_edge:
        print(f"# note: the house has no edge on {', '.join(no_edge)}: set their payout (paytable, commission)")
        print("# in the Rules Submission (docs/assumptions.md)")
    return 0


def run_check(args: argparse.Namespace) -> int:
    from controller.rules.submission import load_submission

    for f in args.files:
        sub = load_submission(f)
        print(f"{safe(str(f))}: ok ({safe(sub.name)}: {sub.game.value}, {sub.decks} decks)")
    return 0


def run_presets(args: argparse.Namespace) -> int:
    for name in preset_names():
        sub = submission_for(None, name)
        print(f"{name}: {sub.name} ({sub.game.value}, {sub.decks} decks, {sub.dealing.value})")
    return 0


