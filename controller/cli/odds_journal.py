"""``shoectl odds --journal PATH [--shoe S] [--round N]``: the exact figures for the cards left in
shoe S after its round N, recomputed from the journal with the edge monitor's own functions
(``controller.table.edge_figures``: the cards out as the table recorded them, ``wager_figures``
of the exact odds on what is left) and compared with the ``edge`` record the monitor journaled
for that round, if any.

The Rules Submission: ``--submission`` / ``--game`` when given; else the journal's ``submission``
record in force at that round; else the one the ``edge`` record names (a preset, or a file that
still exists); else the default, said in a line. The journal is checked as every reader checks it
(``controller.cli.journal_input``). The figures are compared with the ``edge`` record (each wager's
exact ``ev``, and the cards left) only when the Rules Submission valued is the one the record was
made for (the same source, or the same rules as the journal's ``submission`` record); otherwise
``"matches"`` is null and one line says they are not compared. Exit status: 0 the figures (and
they match the journal's, when compared), 1 the journal does not verify or its ``edge`` record
differs from the figures recomputed, 2 a usage or input error (an unknown game, no such shoe or
round, a round after which fewer than six cards are left).
"""
from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from controller.cli.common import print_json, submission_for
from controller.cli.journal_input import EXIT_DOES_NOT_VERIFY, read_checked
from controller.errors import UsageError
from controller.journal.replay import entries_needed
from controller.rules.errors import SubmissionError
from controller.rules.odds import exact_odds
from controller.rules.submission import resolve_submission, submission_from_document
from controller.table.edge_figures import JournalPoint, after_round, edge_payload, edge_percent, wager_figures
from shoectl_config.text import quoted, safe

EXIT_DIFFERS = 1
NOT_COMPARED = "not compared: the journal's figures are for another Rules Submission"


def check_options(args: argparse.Namespace) -> None:
    if args.removed or args.decks is not None:
        raise UsageError("--journal takes the shoe from the journal: give no --removed or --decks with it")
    if args.shoe is not None and not args.shoe.strip():
        raise UsageError("--shoe: give a shoe's id, as `shoectl journal replay PATH` lists them (e.g. T1-S0001)")


def run_journal(args: argparse.Namespace, render_text: Any) -> int:
    """See the module docstring; ``render_text(sub, report)`` is ``shoectl odds``'s own table."""
    check_options(args)
    read = read_checked(args, lambda entries: [after_round(entries, args.shoe, args.round)],
                        keep=entries_needed(args.shoe))
    if read is None:
        return EXIT_DOES_NOT_VERIFY
    point = read[0]
    if point is None:
        raise UsageError(f"{args.path}: {_not_found(args.shoe, args.round)}")
    remaining = point.remaining
    if remaining.composition is None:
        raise UsageError(f"{args.path}: after round {point.round} of shoe {point.shoe}: no figures: {remaining.why}")
    sub, whence = _submission(args, point)
    report = exact_odds(sub, remaining.composition)  # the table and the edge figures, counted once
    wagers = wager_figures(report)
    figures = edge_payload(point.round, sub, remaining, wagers)
    journaled = point.edge
    compared = journaled is not None and (whence != "given" or _same_rules(sub, journaled, point.submission_record))
    matches = _matches(journaled, figures, remaining.unread) if compared else None
    if args.json:
        print_json({"shoe": point.shoe, **figures, "submission_from": whence, "journaled": journaled,
                    "matches": matches, "no_figures_journaled": point.no_figures, "odds": report.to_json()})
    else:
        ranks = "its rank" if remaining.unread == 1 else "their ranks"
        unseen = (f"{remaining.unread} of them never read: {ranks} counted among the unseen cards, with those below "
                  "the cover card" if remaining.unread else "the cards below the cover card are unseen: counted as left")
        print(f"Shoe {point.shoe} after round {point.round}: {figures['remaining']} cards left, {remaining.cards_out} "
              f"out of the shoe ({unseen})")
        if point.no_figures is not None:
            # what surveillance asks about during play is the shoe in play: this moment is not one
            print(f"The table journals no figures for this moment: {point.no_figures}; "
                  "these are the cards as that round left them")
        print(f"Rules Submission: {sub.source} ({whence})")
        print(render_text(sub, report))
        print("")
        if journaled is not None and not compared:
            print(NOT_COMPARED)
        print(f"{'Wager':<14}{'Player edge':>13}  Journaled edge record")
        for name, w in wagers.items():
            mark = "none" if journaled is None else "-" if not compared else (
                "same" if _ev(journaled, name) == w["ev"] else "DIFFERS")
            print(f"{name:<14}{edge_percent(w):>13}  {mark}")
        if matches is False:
            for line in _other_differences(journaled, figures, remaining.unread):
                print(line)
    return EXIT_DIFFERS if matches is False else 0


def _other_differences(journaled: Mapping[str, Any], figures: Mapping[str, Any], unread: int) -> list[str]:
    """What differs beyond a wager's figure (those are marked in the table): the cards left, a
    wager the record has that the Rules Submission does not offer (a review: exit 1 with every
    wager marked "same" said nothing of why)."""
    out = []
    if not _same_count(journaled, figures, unread):
        out.append(f"cards left: the edge record says {safe(str(journaled.get('remaining')))}, the journal's cards "
                   f"{figures['remaining']}: DIFFERS")
    for name in sorted(set(journaled.get("wagers") or {}) - set(figures["wagers"])):
        out.append(f"{safe(name)}: in the edge record, not a wager of this Rules Submission: DIFFERS")
    return out


def _not_found(shoe: str | None, round_no: int | None) -> str:
    if shoe is None and round_no is None:
        return "no round has been decided in the journal yet"
    if shoe is None:
        return f"no shoe in the journal has a round {round_no}"
    if round_no is None:
        return f"no decided round of a shoe {quoted(shoe)} in the journal (`shoectl journal replay PATH` lists its shoes)"
    return f"no round {round_no} of a shoe {quoted(shoe)} in the journal"


def _ev(journaled: Mapping[str, Any], name: str) -> Any:
    """A wager's exact expected value in the ``edge`` record (None: the record has no such wager)."""
    return (journaled.get("wagers") or {}).get(name, {}).get("ev")


def _same_count(journaled: Mapping[str, Any], figures: Mapping[str, Any], unread: int) -> bool:
    """The ``edge`` record's cards left are the journal's: the same number, or (a record made
    before 2026-12-07) that number with the ``unread`` cards out counted among them."""
    return journaled.get("remaining") in (figures["remaining"], figures["remaining"] + unread)


def _matches(journaled: Mapping[str, Any], figures: Mapping[str, Any], unread: int) -> bool:
    """The ``edge`` record agrees with the figures recomputed: the same wagers with the same exact
    ``ev`` (the decimal text is only its rendering) and the same number of cards left."""
    recomputed = figures["wagers"]
    return (set(journaled.get("wagers") or {}) == set(recomputed)
            and all(_ev(journaled, name) == w["ev"] for name, w in recomputed.items())
            and _same_count(journaled, figures, unread))


def _same_rules(sub: Any, journaled: Mapping[str, Any], record: Mapping[str, Any] | None) -> bool:
    """``sub`` (given on the command line) is the Rules Submission the ``edge`` record was made for."""
    if str(sub.source) == str(journaled.get("submission")):
        return True
    if record is None:
        return False
    try:
        in_force = submission_from_document(record)
    except SubmissionError:
        return False
    return in_force.same_rules(sub)


def _submission(args: argparse.Namespace, point: JournalPoint) -> tuple[Any, str]:
    """The Rules Submission to value the wagers by, and where it came from."""
    if args.submission or args.game:
        return submission_for(args.game, args.submission), "given"
    if point.submission_record is not None:
        try:
            return submission_from_document(point.submission_record), "the journal's"
        except SubmissionError as exc:  # it names the file the record came from, not the journal
            raise UsageError(f"{args.path}: the journal's submission record does not hold rules that can be "
                             f"used ({exc})") from None
    if point.edge is not None and point.edge.get("submission"):
        named = str(point.edge["submission"])
        try:
            return resolve_submission(named), "named by the journal's edge record"
        except SubmissionError as exc:
            raise UsageError(f"the journal's edge record names the Rules Submission {named}, which cannot be "
                             f"read ({exc}): give it with --submission") from None
    return submission_for(None, None), "the default: the journal names none"
