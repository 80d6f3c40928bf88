"""``shoectl odds``: exact odds and house edges by enumeration (``controller.rules.odds``).

``shoectl odds [--game {punto-banco,ez-baccarat,21-baccarat}] [--decks N] [--removed C1,C2,...]
[--submission FILE_OR_PRESET] [--json]``; ``shoectl odds --journal PATH [--shoe S] [--round N]``
values the cards left in a journal's shoe after a round, by default the last one decided
(``controller.cli.odds_journal``).

- ``--game`` picks the game's preset (punto-banco -> minibaccarat, ez-baccarat -> ez-baccarat,
  21-baccarat -> 21-baccarat) unless ``--submission`` is given; then ``--game``, if also given,
  must agree with it. Neither: the default Rules Submission.
- ``--decks`` sets the number of decks in the shoe (default: the submission's).
- ``--removed`` takes cards out of the shoe (comma- or space-separated; may be repeated).
- ``--json`` prints one JSON object (``OddsReport.to_json()``, exact fractions under ``"exact"``).
- ``--engine`` evaluates the counts with numpy (the ``fast`` extra; ``auto``, the default, takes
  it when installed) or in pure Python (the reference): the same exact figures either way.

Every input error (unknown game or card, more copies removed than the shoe holds, a bad deck
count, a bad Rules Submission file) is one line on standard error and exit status 2.
"""
from __future__ import annotations

import argparse
from typing import Any

from controller.cli.common import (
    GAME_CHOICES, given_options, percent, positive_int, print_json, submission_for, whole_number,
)
from controller.cli.journal_input import add_journal_input
from controller.cli.odds_journal import run_journal
from controller.errors import UsageError, path_argument
from controller.rules import odds_main_game
from controller.rules.cards import RANK_TEXT, RANKS, Composition, parse_cards
from controller.rules.odds import OddsReport, exact_odds
from controller.rules.submission import MAX_DECKS, MIN_DECKS
from shoectl_config.text import quoted

_GAME_TITLES = {"punto-banco": "Punto Banco", "ez-baccarat": "EZ Baccarat", "21-baccarat": "21 Baccarat"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "odds",
        help="exact odds and house edges of every wager, by enumeration",
        description="Exact probabilities of every outcome and the house edge of every offered wager, "
        "counted over every ordered six-card sequence the shoe can deal.",
    )
    p.add_argument(
        "--game", metavar="GAME", default=None,
        help=f"{', '.join(GAME_CHOICES)}: use that game's preset (default: the default Rules Submission)",
    )
    p.add_argument(
        "--decks", type=whole_number(MIN_DECKS, MAX_DECKS), metavar="N", default=None,
        help=f"decks in the shoe, {MIN_DECKS}-{MAX_DECKS} (default: the Rules Submission's)",
    )
    p.add_argument(
        "--removed", metavar="C1,C2,...", action="append", default=[],
        help="cards taken out of the shoe, e.g. AS,10H,KD (may be repeated)",
    )
    p.add_argument("--submission", type=path_argument, metavar="FILE_OR_PRESET", help="a Rules Submission file or preset name")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--engine", choices=odds_main_game.ENGINES, default="auto",
                   help="evaluate the counts with numpy (the fast extra) or python (the pure-Python reference); "
                   "the figures are the same (default: auto, numpy when installed)")
    add_journal_input(p, "--journal", help="value the cards left in this journal's shoe after a round (by default "
                      "the last one decided), compared with the edge monitor's record of it")
    p.add_argument("--shoe", metavar="ID", help="with --journal: the shoe (e.g. T1-S0001; default: the last one "
                   "with that round)")
    p.add_argument("--round", type=positive_int, metavar="N", help="with --journal: after this round of the shoe "
                   "(default: its last decided round)")
    p.set_defaults(func=run)


def build_report(args: argparse.Namespace) -> tuple[Any, OddsReport]:
    sub = submission_for(args.game, args.submission)
    shoe = Composition.standard(sub.decks if args.decks is None else args.decks)
    removed = []
    for given in args.removed or []:
        cards = parse_cards(given)
        if not cards:  # an unset variable, or only commas: nothing was meant
            raise UsageError(f"--removed {quoted(given)}: no card in it (cards such as AS,10H,KD)")
        removed += cards
    if removed:
        shoe = shoe.remove(removed)
    return sub, exact_odds(sub, shoe)


def run(args: argparse.Namespace) -> int:
    with odds_main_game.using_engine(args.engine):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    if args.path is not None:
        return run_journal(args, render_text)
    given = given_options(args, ("--shoe", "--round", "--hmac-key")) + (["--no-verify"] if args.no_verify else [])
    if given:  # each would be ignored without a word
        raise UsageError(f"{', '.join(given)}: only with --journal PATH")
    sub, report = build_report(args)
    if args.json:
        print_json(report.to_json())
    else:
        print(render_text(sub, report))
    return 0


REMOVED_LISTED = 12  # more removed cards than this (a journal's shoe late on: hundreds) are counted by rank


def _by_rank(counts: list[int]) -> str:
    """``A 0, 2 1, ..., K 3``: every rank (``Composition.rank_counts`` order)."""
    return ", ".join(f"{RANK_TEXT[rank]} {counts[rank]}" for rank in RANKS)


def _removed_lines(r: OddsReport) -> list[str]:
    """The cards taken out: listed when they are few, else counted by rank beside what is left
    (what surveillance reads late in a shoe)."""
    if len(r.removed) <= REMOVED_LISTED:
        return [f"Removed: {','.join(str(c) for c in r.removed)}"]
    full = Composition.standard(r.decks)
    left = full.remove(r.removed).rank_counts()
    removed = [a - b for a, b in zip(full.rank_counts(), left)]
    return [f"Removed: {len(r.removed)} cards, by rank: {_by_rank(removed)}",
            f"Left: {r.cards} cards, by rank: {_by_rank(left)}"]


def render_text(sub: Any, r: OddsReport) -> str:
    title = _GAME_TITLES.get(r.game.value, r.game.value)
    lines = [
        f"Exact odds: {title}, {r.decks} deck{'s' if r.decks != 1 else ''}, {r.cards} cards"
        f" (Rules Submission {sub.source})",
    ]
    if r.removed:
        lines.extend(_removed_lines(r))
    if r.bonus_in_play is not None:
        lines.append(f"Bonus in play: {'yes' if r.bonus_in_play else 'no'}")
    lines.append(f"Ordered six-card sequences: {r.total_sequences:,}")
    lines.append("")
    width = max([len("Outcome")] + [len(k) for k in r.outcomes]) + 2
    lines.append(f"{'Outcome':<{width}}{'Probability':>12}{'Percent':>12}  {'Sequences':>24}")
    for name, p in r.outcomes.items():
        lines.append(f"{name:<{width}}{float(p):>12.8f}{percent(float(p)):>12}  {r.counts[name]:>24,}")
    if r.wagers:
        lines.append("")
        pw = max([len("Pays")] + [len(r.payouts.get(k, "")) for k in r.wagers]) + 2
        ww = max([len("Wager")] + [len(k) for k in r.wagers]) + 2
        lines.append(
            f"{'Wager':<{ww}}{'Pays':<{pw}}{'House edge':>12}{'Win':>12}{'Push':>12}{'Lose':>12}"
        )
        for name, w in r.wagers.items():
            lines.append(
                f"{name:<{ww}}{r.payouts.get(name, ''):<{pw}}{percent(float(w['house_edge'])):>12}"
                f"{percent(float(w['win'])):>12}{percent(float(w['push'])):>12}{percent(float(w['lose'])):>12}"
            )
    return "\n".join(lines)
