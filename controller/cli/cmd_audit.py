"""``shoectl audit``: shuffle integrity and the table's decisions, from a journal (docs/audit.md).

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

``shoectl audit decisions PATH [--json]``: every input of the journal decided again by a new
table under the rules and devices the journal names, each record it makes compared with the
journal's (``controller.table.redecision``). Exit 0 when every one is equal, 1 at the first that
differs (named, with both sides: of the same kind, the fields that differ).

Cards and shuffle: ``--shoes`` takes shoe ids or ``fnmatch`` patterns (comma-separated, repeatable). A file
that is not a journal, a journal without shoes (without entries, for ``decisions``), or a
``--shoes`` that matches nothing: one line on standard error, exit 2. The journal is checked as it is read (``controller.cli.journal_input``): one
that does not verify (an edited, deleted or re-chained entry, a failed SQLite integrity check) is
not audited (exit 1) unless ``--no-verify``.
"""
from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

from controller.audit.journal_audit import PRE_ORDERS, AuditInputError, cards_audit, select_shoes, shuffle_audit
from controller.audit.journal_source import AUDIT_KINDS, ShoeData, collect_shoes
from controller.audit.report import cards_text, shuffle_text
from controller.cli.audit_results import run_results
from controller.cli.charts import plot_target, position_residuals, shuffle_chart
from controller.cli.common import non_negative_int, print_json, submission_for
from controller.journal.chain import canonical_json
from controller.cli.progress import progress_bar
from controller.cli.journal_input import (
    EXIT_DOES_NOT_VERIFY,
    add_journal_input,
    read_checked,
    refuse_output_over_journal,
)
from controller.errors import UsageError, new_file_argument, path_argument
from controller.table.redecision import Redecision, redecide
from controller.signature import is_signed, signature_label
from controller.version import shoectl_version
from shoectl_config.text import quoted, safe

EXIT_OK, EXIT_FAILED = 0, EXIT_DOES_NOT_VERIFY


def register(sub: argparse._SubParsersAction) -> None:
    audit = sub.add_parser("audit", help="a journal's card sets, the randomness of its shuffles, and its decisions "
                                         "decided again",
                           description="Audit the shuffles recorded in a journal, and the table's decisions.")
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
                   "matplotlib: the plot extra)")
    s.set_defaults(func=run_shuffle)

    r = action.add_parser("results", help="each game's outcome frequencies and holds from the rounds dealt, beside "
                                          "the exact figures; the money by wager kind",
                          description="What the journal's rounds yielded, for each Rules Submission they were dealt "
                                      "under: shoes, rounds and cards; each outcome's frequency and each wager's hold "
                                      "per unit staked with 95 % intervals over whole shoes, beside the exact figures of a "
                                      "full shoe (as shoectl simulate gives them); and the money by wager kind: wagers "
                                      "settled, staked, the players' net, hold, commission, won/lost/pushed, returned.")
    add_journal_input(r)
    r.add_argument("--submission", type=path_argument, metavar="FILE|PRESET",
                   help="the Rules Submission of a journal written before it journaled its rules (the rounds "
                        "before its first submission record are counted under it)")
    r.add_argument("--json", action="store_true", help="print one JSON object")
    r.set_defaults(func=run_results)

    d = action.add_parser("decisions", help="decide the journal's inputs again and compare every record the table "
                                            "makes with the journal's (exit 1 at the first that differs)",
                          description="Feed every input of the journal, in order, to a new table under the Rules "
                                      "Submission and the devices the journal names, and compare each record it makes "
                                      "(cards, results, settlements, procedures) with the record the journal holds "
                                      "there. A chain that verifies proves no entry changed; this shows that the "
                                      "records are what the table decides from its inputs.")
    add_journal_input(d)
    d.add_argument("--submission", type=path_argument, metavar="FILE|PRESET",
                   help="the Rules Submission of a journal written before it journaled its rules (the inputs "
                        "before its first submission record are decided by it)")
    d.add_argument("--json", action="store_true", help="print one JSON object")
    d.set_defaults(func=run_decisions)


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
        print(cards_text(safe(str(args.path)), audit))
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
        print(shuffle_text(safe(str(args.path)), audit))
    return EXIT_OK if audit.result.passed else EXIT_FAILED


def run_decisions(args: argparse.Namespace) -> int:
    rules = submission_for(None, args.submission) if args.submission is not None else None
    result = read_checked(args, partial(redecide, rules=rules), progress=f"deciding {Path(args.path).name} again")
    if result is None:
        return EXIT_FAILED
    if not result.entries:
        raise UsageError(f"{args.path}: the journal holds no entries")
    if args.submission is not None and not result.used_given_rules:  # taken without a word, it seemed applied
        print(f"{args.prog}: warning: --submission {args.submission}: not used: the journal names its rules before "
              "its first input, and they decided it", file=sys.stderr)
    if args.json:
        print_json({**result.to_json(), "decided_by": _this_program()})
    else:
        print(decisions_text(safe(str(args.path)), result))
    return EXIT_OK if result.ok else EXIT_FAILED


def _this_program() -> dict[str, str]:
    """This program's version and signature (its files hashed: asked for only when shown)."""
    return {"version": shoectl_version(), "signature": signature_label()}


def decisions_text(path: str, r: Redecision) -> str:
    """The decisions audit in words: a verdict line, then, when it failed, the two records side by
    side (of the same kind: only the fields that differ) and which program wrote the journal
    beside the one that decided it again."""
    counts = (f"{r.inputs} inputs decided again, {r.records} records equal ({r.rounds} round results), "
              f"{r.starts} start{'s' if r.starts != 1 else ''}")
    lines = []
    if r.assumed_devices:
        lines.append(f"{path}: the journal does not name its devices everywhere (written by an earlier shoectl): "
                     "decided as the built-in emulator's table there (a batch shuffler and a card-reading shoe)")
    if r.compared_without:
        left = "; ".join(f"{kind} without {', '.join(keys)}" for kind, keys in sorted(r.compared_without.items()))
        lines.append(f"{path}: records written by an earlier program lack keys added since, compared without them: "
                     f"{left}")
    for counted, said in ((r.kinds_not_written, "an earlier program did not write records of kinds added since, "
                                                "passed over"),
                          (r.rounds_not_named, "records written by an earlier program name no round for a card "
                                               "dealt after one, compared without it"),
                          (r.reworded, "records written by another program say in other words what this one "
                                       "decides alike, compared as this one's")):
        if counted:
            lines.append(f"{path}: {said}: " + "; ".join(f"{kind} ({n})" for kind, n in sorted(counted.items())))
    d = r.difference
    if d is None:
        lines.append(f"{path}: decisions ok: {counts}")
        return "\n".join(lines)
    where = f"entry {d.seq}" if d.seq is not None else f"the end (entry {r.last_seq})"
    lines.append(f"{path}: decisions FAILED at {where}: {d.why}")
    journaled, decided = d.journaled, d.decided
    if journaled and decided and journaled["kind"] == decided["kind"] and isinstance(journaled["payload"], dict):
        # the entry's columns, named as the journal names them: a payload's "round" and the column
        # round_no were one line alike (a surveillance review)
        for name, column in (("shoe", "shoe_id"), ("round", "round_no"), ("operator", "operator")):
            if journaled.get(name) != decided.get(name):
                lines.append(f"    column {column}: journal {canonical_json(journaled.get(name))}, "
                             f"decided {canonical_json(decided.get(name))}")
        jp, dp = journaled["payload"], decided["payload"]
        for key in sorted(set(jp) | set(dp)):
            if key not in dp or key not in jp or canonical_json(jp[key]) != canonical_json(dp[key]):
                lines.append(f"    {key}: journal {_value(jp, key)}, decided {_value(dp, key)}")
    else:
        for side, record in (("journal", journaled), ("decided", decided)):
            if record is not None:
                lines.append(f"    {side}: {record['kind']} shoe {record['shoe']} round {record['round']} "
                             f"{canonical_json(record['payload'])}")
    lines.append(_program_line(r.written_by, _this_program()))
    lines.append(f"{path}: decisions FAILED: {counts} before it")
    return "\n".join(lines)


def _program_line(written_by: dict | None, this_program: dict[str, str]) -> str:
    """Whether the program that wrote the journal is the one that decided it again: a gaming lab
    auditing a journal of an earlier build must not read a change of the program's decisions as
    a journal changed (the signature, ``controller.signature``, tells builds of one version apart)."""
    ours = _program_text(this_program)
    signature = written_by.get("signature") if written_by is not None else None
    if not is_signed(signature) or not is_signed(this_program["signature"]):
        # No start journaled, one written before starts named a signature, or one that could not
        # compute its own ("(signature unknown: ...)"): two unknowns are not the same program.
        return (f"    the program that wrote the journal, or this one, cannot be told by its signature; decided again "
                f"by {ours}: a difference may be a change in how the program decides, not in the journal")
    if signature == this_program["signature"]:
        return f"    written and decided again by the same program, {ours}: its own inputs do not decide to the journal's record"
    return (f"    written by {_program_text(written_by)}, decided again by another, {ours}: a difference may be a change "
            "in how the program decides, not in the journal; decide it again with the program that wrote it")


def _program_text(program: dict) -> str:
    signature = program.get("signature")
    return (f"shoectl {safe(str(program.get('version')))} "
            f"({'signature ' + safe(signature) if is_signed(signature) else 'its signature unknown'})")


def _value(payload: dict, key: str) -> str:
    return canonical_json(payload[key]) if key in payload else "(none)"
