"""``shoectl audit``: shuffle integrity from a journal (docs/audit.md).

``shoectl audit cards PATH [--shoes ID,...] [--json]``: every dealt shoe's cards (read, unread
and unreadable) against its N-deck composition: extra, foreign, missing cards and reused
positions, by shoe and position. Exit 0 when every card set is complete, 1 when any is not.

``shoectl audit shuffle PATH [--shoes ID,...] [--confidence 0.95|0.99] [--order shuffler|shoe]
[--pre-order fresh|previous|none] [--seed S] [--json]``: the randomness tests over the card orders
of the shoes (positional chi-square, position maximum, adjacency, rising sequences, runs up and
down, serial correlation), each with statistic, df, p-value and pass/fail, and a verdict with
Holm-Bonferroni. Exit 0 on a pass, 1 on a fail. ``--plot FILE`` (``.png`` or ``.svg``, needs
matplotlib; checked before the journal is read) also draws where each rank landed against a
uniform shuffle and each test's p-value against alpha (``controller.cli.charts``).

On a terminal a progress bar on standard error follows the reading of the journal, then the tests
(nothing when standard error is not a terminal).

Both: ``--shoes`` takes shoe ids or ``fnmatch`` patterns (comma-separated, repeatable). A file
that is not a journal, a journal without shoes, or a ``--shoes`` that matches nothing: one line on
standard error, exit 2. The journal is checked as it is read (``controller.cli.journal_input``): one
that does not verify (an edited, deleted or re-chained entry, a failed SQLite integrity check) is
not audited (exit 1) unless ``--no-verify``.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from controller.audit.journal_audit import PRE_ORDERS, AuditInputError, cards_audit, select_shoes, shuffle_audit
from controller.audit.journal_source import AUDIT_KINDS, ShoeData, collect_shoes
from controller.audit.report import cards_text, shuffle_text
from controller.cli.charts import plot_target, position_residuals, shuffle_chart
from controller.cli.common import non_negative_int, print_json
from controller.cli.progress import progress_bar
from controller.cli.journal_input import (
    EXIT_DOES_NOT_VERIFY,
    add_journal_input,
    read_checked,
    refuse_output_over_journal,
)
from controller.errors import UsageError, new_file_argument
from shoectl_config.text import quoted

EXIT_OK, EXIT_FAILED = 0, EXIT_DOES_NOT_VERIFY


def register(sub: argparse._SubParsersAction) -> None:
    audit = sub.add_parser("audit", help="shuffle integrity: card sets and randomness of the shuffles in a journal",
                           description="Audit the shuffles recorded in a journal.")
    action = audit.add_subparsers(dest="audit_command", metavar="SUBCOMMAND", parser_class=type(audit))
    action.required = True

    c = action.add_parser("cards", help="each shoe's cards against its N-deck composition (exit 1 if any is wrong)")
    _common(c)
    c.set_defaults(func=run_cards)

    s = action.add_parser("shuffle", help="statistical randomness tests over the shoes' card orders (exit 1 on a fail)")
    _common(s)
    s.add_argument("--confidence", choices=["0.95", "0.99"], default="0.99",
                   help="confidence level of every test and of the verdict (default 0.99)")
    s.add_argument("--order", choices=["shuffler", "shoe"], default="shuffler",
                   help="audit the shuffler's output (the recorded cut undone; default) or the order in the shoe")
    s.add_argument("--pre-order", choices=PRE_ORDERS, default="fresh",
                   help="the order before each shuffle: fresh decks (the emulator's; default), the previous "
                        "shoe's deal order, or none (skips adjacency and rising sequences)")
    s.add_argument("--seed", type=non_negative_int, default=0, help="seed for filling in unread cards and breaking ties (default 0)")
    s.add_argument("--plot", type=new_file_argument, metavar="FILE", help="also draw where each rank landed (a heat-map against a uniform "
                   "shuffle) and each test's p-value against alpha, as PNG or SVG by FILE's suffix (needs "
                   "matplotlib: pip install 'shoectl[plot]')")
    s.set_defaults(func=run_shuffle)


def _common(p: argparse.ArgumentParser) -> None:
    add_journal_input(p)
    p.add_argument("--shoes", action="append", default=[], metavar="ID,...",
                   help="only these shoes (ids or fnmatch patterns, comma-separated; repeatable)")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def _load(args: argparse.Namespace) -> tuple[list[ShoeData], list[ShoeData]] | None:
    """Every shoe and the selected ones; None when the journal does not verify (said on stderr)."""
    for item in args.shoes:  # an empty one (an unset variable in --shoes "$SHOES") is not "every shoe"
        if not item.replace(",", "").strip():
            raise UsageError(f"--shoes {quoted(item)}: no shoe id in it (ids or patterns such as T1-S0003,T1-S001*)")
    every = read_checked(args, collect_shoes, kinds=AUDIT_KINDS, progress=f"reading {Path(args.path).name}")
    if every is None:
        return None
    if not every:
        raise UsageError(f"{args.path}: no shoes in the journal")
    patterns = [p.strip() for item in args.shoes for p in item.split(",") if p.strip()]
    try:
        return every, select_shoes(every, patterns)
    except AuditInputError as exc:
        raise UsageError(f"{args.path}: {exc}") from None


def run_cards(args: argparse.Namespace) -> int:
    loaded = _load(args)
    if loaded is None:
        return EXIT_FAILED
    _, shoes = loaded
    audit = cards_audit(shoes)
    if not audit.reports:
        why = [f"{shoe}: {reason}" for shoe, reason in audit.skipped if reason != "not dealt"][:3]
        undealt = sum(reason == "not dealt" for _, reason in audit.skipped)
        if undealt and not why:  # e.g. every shoe ended in a count fault: the replay says why
            why = [f"{undealt} shoe{'s' if undealt > 1 else ''} started, none dealt: each ended before its cards "
                   "were dealt (a count fault, a reshuffle ordered); `shoectl journal replay` says why"]
        raise UsageError(f"{args.path}: no dealt shoe to check" + (f" ({'; '.join(why)})" if why else ""))
    if args.json:
        print_json(audit.to_json())
    else:
        print(cards_text(args.path, audit))
    return EXIT_OK if audit.ok else EXIT_FAILED


def run_shuffle(args: argparse.Namespace) -> int:
    refuse_output_over_journal(args, args.plot, option="--plot")
    target = plot_target(args.plot) if args.plot else None
    loaded = _load(args)
    if loaded is None:
        return EXIT_FAILED
    every, shoes = loaded
    try:
        with progress_bar("running the randomness tests", None):
            audit = shuffle_audit(shoes, confidence=float(args.confidence), order=args.order, pre_order=args.pre_order,
                                  seed=args.seed, context=every)
    except AuditInputError as exc:
        raise UsageError(f"{args.path}: {exc}") from None
    if target is not None:
        res = audit.result
        shuffle_chart(target, f"shuffle audit of {Path(args.path).name}: {res.shoes} shoes of {res.decks} decks, "
                              f"{audit.order} order: {'PASS' if res.passed else 'FAIL'} at {res.confidence:.0%}",
                      position_residuals(audit.orders, res.decks), res)
    if args.json:
        print_json(audit.to_json())
    else:
        print(shuffle_text(args.path, audit))
    return EXIT_OK if audit.result.passed else EXIT_FAILED
