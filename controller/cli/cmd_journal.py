"""``shoectl journal``: verify and export the tamper-evident journal.

``shoectl journal verify PATH [--hmac-key FILE] [--expect-count N] [--expect-last-hash H]
[--anchor SEQ:HASH ...] [--anchors FILE ...] [--json]``: exit 0 when intact (prints the count and
the last hash), 1 naming the first bad entry and why, 2 for a missing, unreadable or
not-a-journal file, or a missing or unusable key (one line on standard error). The anchors file
beside the journal (``PATH.anchors``) is checked too; a verification without any anchor warns.

``shoectl journal export PATH [--format jsonl] [--since SEQ] [--shoe ID] [--round N] [-o FILE]
[--hmac-key FILE] [--no-verify]``: one JSON object per entry (all columns, ``payload`` as an
object, then ``schema_version``) for entries with ``seq > SEQ`` (of shoe ID, of round N: the entries
holding that shoe and round, after the betting before the round: its wagers, no more bets, burns), written only once the whole journal was read and checked
(``controller.cli.journal_input``); with ``-o`` the file is written whole or not at all. A
``--shoe``/``--round`` that selects nothing is refused as ``journal replay`` refuses it (exit 2).

``shoectl journal migrate OLD NEW [--hmac-key FILE]``: a journal of an earlier schema version
(which ``shoectl run`` reads but does not continue) copied into a new journal NEW of the current
version, its chain and anchors unchanged (``controller.journal.migrate``); OLD is never changed.
Exit 0 when done, 1 when OLD does not verify, 2 for a file that cannot be used (NEW existing).

``shoectl journal backup JOURNAL COPY [--hmac-key FILE]``: a copy of a journal, also of one its
table is writing now, that verifies: the anchors first, then one snapshot of the database, then the
copy verified, and only then given its name (``controller.journal.backup``). Exit 0 when done, 1
when the copy does not verify, 2 for a file that cannot be used (COPY existing).

Adding a sub-command (e.g. ``replay``) from another module, without editing this one: in that
module's ``register(sub)`` (``sub`` being the top-level sub-parsers that ``controller.cli.main``
passes to every command module) call::

    from controller.cli.cmd_journal import add_subcommand
    p = add_subcommand(sub, "replay", help="...")
    p.add_argument(...)
    p.set_defaults(func=run_replay)

and list that module in ``controller.cli.main.COMMAND_MODULES``. ``add_subcommand`` creates the
``journal`` parser if this module has not registered it yet, so the order does not matter.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from controller.cli.common import INT64_MAX, current_umask, non_negative_int, positive_int, print_json
from controller.cli.journal_input import (
    EXIT_DOES_NOT_VERIFY,
    add_journal_input,
    copy_text,
    nothing_found,
    read_checked,
    refuse_output_over_journal,
    spooled_text,
    warn,
)
from controller.errors import UsageError, journal_argument, journal_to_read_argument, new_file_argument, path_argument
from controller.fsutil import atomic_writer
from controller.journal import kinds
from controller.journal.anchors import AnchorFile, AnchorLines
from controller.journal.chain import load_hmac_key
from controller.journal.entry import Entry
from controller.journal.errors import JournalDamagedError, JournalError
from controller.journal.files import is_journal_file
from controller.journal.migrate import DoesNotVerify, migrate
from controller.journal.schema import SCHEMA_VERSION
from controller.journal.verification import verify
from controller.journal.verify_report import is_hash, verdict_line
from shoectl_config.text import quoted, safe

EXIT_OK, EXIT_FAILED = 0, EXIT_DOES_NOT_VERIFY
_SUBCOMMANDS_ATTR = "_shoectl_journal_subcommands"


def journal_subparsers(sub: argparse._SubParsersAction) -> argparse._SubParsersAction:
    """The sub-parsers of ``shoectl journal`` (creating the ``journal`` parser on first use)."""
    parser = sub.choices.get("journal")
    if parser is None:
        parser = sub.add_parser(
            "journal", help="verify, export, replay or migrate the tamper-evident journal",
            description="Verify the journal's hash chain, export its entries, replay its shoes and rounds, "
                        "or migrate a journal of an earlier version.")
        action = parser.add_subparsers(dest="journal_command", metavar="SUBCOMMAND", parser_class=type(parser))
        action.required = True
        setattr(parser, _SUBCOMMANDS_ATTR, action)
    action = getattr(parser, _SUBCOMMANDS_ATTR, None)
    if action is None:
        raise RuntimeError("a 'journal' command was registered by something other than controller.cli.cmd_journal")
    return action


def add_subcommand(sub: argparse._SubParsersAction, name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """Add ``shoectl journal NAME`` and return its parser (``kwargs`` go to ``add_parser``)."""
    return journal_subparsers(sub).add_parser(name, **kwargs)


def _hash(text: str) -> str:
    if not is_hash(text.lower()):
        raise argparse.ArgumentTypeError(f"not a SHA-256 hash (64 hex digits): {quoted(text)}")
    return text.lower()


def _anchor(text: str) -> tuple[int, str]:
    seq, sep, digest = text.partition(":")
    try:
        number = positive_int(seq)
    except argparse.ArgumentTypeError:
        number = None
    if not sep or number is None or not is_hash(digest.lower()):
        raise argparse.ArgumentTypeError(f"an anchor is SEQ:HASH (SEQ from 1 to {INT64_MAX}, as printed by the "
                                         f"controller), got {quoted(text[:100])}")
    return number, digest.lower()


def register(sub: argparse._SubParsersAction) -> None:
    js = journal_subparsers(sub)

    v = js.add_parser("verify", help="check the journal's hash chain (and HMAC); exit 1 naming the first bad entry")
    v.add_argument("path", type=journal_to_read_argument, metavar="PATH", help="the journal file")
    v.add_argument("--hmac-key", type=path_argument, metavar="FILE", help="the HMAC key file (required for an HMAC-protected journal)")
    v.add_argument("--expect-count", type=non_negative_int, metavar="N", help="the journal must hold exactly N entries")
    v.add_argument("--expect-last-hash", type=_hash, metavar="H", help="the last entry's hash must be H")
    v.add_argument("--anchor", type=_anchor, action="append", default=[], metavar="SEQ:HASH",
                   help="entry SEQ must have hash HASH (an anchor printed by the controller); repeatable")
    v.add_argument("--anchors", action="append", type=path_argument, metavar="FILE",
                   help="an anchors file to check (repeatable; default: PATH.anchors, if it exists)")
    v.add_argument("--no-integrity-check", action="store_true", help="skip SQLite's quick_check (faster)")
    v.add_argument("--json", action="store_true", help="print the report as one JSON object")
    v.set_defaults(func=run_verify)

    e = js.add_parser("export", help="write the journal's entries as JSON lines")
    add_journal_input(e)
    e.add_argument("--format", choices=["jsonl"], default="jsonl", help="jsonl: one JSON object per entry (default)")
    e.add_argument("--since", type=non_negative_int, default=0, metavar="SEQ",
                   help=f"only entries after SEQ (0 to {INT64_MAX})")
    e.add_argument("--shoe", metavar="ID", help="only the entries of this shoe (its shoe id)")
    e.add_argument("--round", type=positive_int, metavar="N", help="only the entries of round N (of each shoe, or of --shoe)")
    e.add_argument("-o", "--output", type=new_file_argument, metavar="FILE", help="write to FILE (whole or not at all) instead of stdout")
    e.set_defaults(func=run_export)

    mg = js.add_parser("migrate", help=f"copy a journal of an earlier schema version into a new file of version "
                                       f"{SCHEMA_VERSION} (the old file is left as it is)")
    mg.add_argument("old", type=journal_to_read_argument, metavar="OLD", help="the journal to migrate (never changed)")
    mg.add_argument("new", type=journal_argument, metavar="NEW", help="the new journal (must not exist)")
    mg.add_argument("--hmac-key", type=path_argument, metavar="FILE", help="the journal's HMAC key file (required for an HMAC journal)")
    mg.set_defaults(func=run_migrate)

    bk = js.add_parser("backup", help="copy a journal, also while its table writes it, into a new file that "
                                      "verifies (its anchors beside it)")
    bk.add_argument("journal", type=journal_to_read_argument, metavar="JOURNAL", help="the journal to copy (never changed)")
    bk.add_argument("copy", type=journal_argument, metavar="COPY", help="the copy (must not exist; COPY.anchors beside it)")
    bk.add_argument("--hmac-key", type=path_argument, metavar="FILE", help="the journal's HMAC key file (required for an HMAC journal)")
    bk.set_defaults(func=run_backup)

    # `shoectl journal replay` is registered by another module with add_subcommand(sub, "replay", ...)
    # (see the module docstring); nothing to add here.


def run_verify(args: argparse.Namespace) -> int:
    key = load_hmac_key(args.hmac_key) if args.hmac_key else None
    anchor_files = None if args.anchors is None else [_anchors_given(path) for path in args.anchors]
    report = verify(args.path, hmac_key=key, expect_count=args.expect_count,
                    expect_last_hash=args.expect_last_hash, anchors=args.anchor, anchor_files=anchor_files,
                    integrity_check=not args.no_integrity_check)
    if report.needs_key:
        raise UsageError(f"{args.path}: {report.reason} (--hmac-key FILE)")
    if args.json:
        print_json(report.to_json())
    else:
        for line in report.warnings:
            warn(args, line)
        print(verdict_line(args.path, report))
    return EXIT_OK if report.ok else EXIT_FAILED


def _anchors_given(path: str) -> AnchorLines:
    """The anchors file ``--anchors`` names, read once (``verify`` checks what was read). A file
    that holds no anchor at all is the wrong file given, not a bad journal: a usage error."""
    lines = AnchorFile(path).read()
    if not lines.anchors:
        why = f": {lines.bad[0][0]}: {lines.bad[0][1]}" if lines.bad else ""
        raise UsageError(f"--anchors {path}: not an anchors file, no anchor in it{why}")
    return lines


def _into_new_file(args: argparse.Namespace, source: str, target: str, what: str, make: Any) -> Any:
    """``make(source, target, hmac_key=...)`` for ``journal migrate`` and ``backup``: refused when
    ``target`` is the journal or a file beside it (its anchors or -wal: the journal would no longer
    verify); None, its line said, when the result does not verify."""
    if is_journal_file(target, source):
        raise UsageError(f"{target}: that is the journal {source} or a file beside it; give another file for {what}")
    key = load_hmac_key(args.hmac_key) if args.hmac_key else None
    try:
        return make(source, target, hmac_key=key)
    except DoesNotVerify as exc:
        print(f"{args.prog}: error: {exc}", file=sys.stderr)
        return None
    except JournalDamagedError as exc:  # a journal that does not verify, said as every reader says it (exit 1)
        print(f"{args.prog}: error: {safe(str(source))}: FAILED: {exc.reason or exc}; nothing was written",
              file=sys.stderr)
        return None


def run_migrate(args: argparse.Namespace) -> int:
    count = _into_new_file(args, args.old, args.new, "the new journal", migrate)
    if count is None:
        return EXIT_FAILED
    new, old = safe(str(args.new)), safe(str(args.old))
    print(f"{new}: {count} entries of {old} migrated to schema version {SCHEMA_VERSION} (chain and anchors "
          f"unchanged; {old} left as it was)")
    return EXIT_OK


def run_backup(args: argparse.Namespace) -> int:
    from controller.journal.backup import backup

    done = _into_new_file(args, args.journal, args.copy, "the copy", backup)
    if done is None:
        return EXIT_FAILED
    anchors_file = safe(f"{args.copy}.anchors")
    anchors = f"; its {done.anchors} anchor{'s' if done.anchors != 1 else ''} in {anchors_file}" \
        if done.anchors else "; the journal has no anchors file"
    print(f"{safe(str(args.copy))}: a copy of {safe(str(args.journal))} to entry {done.report.last_seq} "
          f"({done.report.last_hash[:16]}...), verified{anchors}")
    return EXIT_OK


def run_export(args: argparse.Namespace) -> int:
    refuse_output_over_journal(args, args.output)
    with spooled_text() as spool:
        keep = None if args.shoe is None else (lambda kind, shoe_id: shoe_id == args.shoe)
        count = read_checked(args, lambda entries: _write_jsonl(_of_round(entries, args.round), spool),
                             since_seq=args.since, keep=keep)
        if count is None:
            return EXIT_FAILED
        if not count and (args.shoe is not None or args.round is not None):
            raise nothing_found(args, "the journal" + (f" after entry {args.since}" if args.since else ""))
        if args.output is None:
            copy_text(spool, sys.stdout)
            return EXIT_OK
        out = Path(args.output)
        try:
            with atomic_writer(out, mode=0o640 & ~current_umask()) as f:  # as the journal: its cards dealt face down
                copy_text(spool, f)
        except OSError as exc:
            if isinstance(exc, JournalError):
                raise
            raise JournalError(f"{out}: cannot write the export: {exc.strerror or exc}") from None
    print(f"{safe(str(out))}: {count} entries")
    return EXIT_OK


# A round's first and last records: the betting for the next round comes after the last (a
# round's late records, its edge figures, may come after that betting began).
_ROUND_BOUNDS = frozenset({kinds.ROUND_START, kinds.ROUND_RESULT, kinds.DISCARD_RACK})


def _of_round(entries: Iterable[Entry], round_no: int | None) -> Iterator[Entry]:
    """``entries``, or those of round ``round_no`` (of each shoe): the entries holding its number,
    and before them the betting that led to it: the entries of its shoe journaled after the round
    before it ended (wagers and who placed them, no more bets, burns), which have no round number
    yet. A forensic review's export of a disputed round lacked every wager's record and operator."""
    if round_no is None:
        yield from entries
        return
    betting: list[Entry] = []
    begun: set[str | None] = set()  # the shoes whose round ``round_no`` has begun
    for e in entries:
        if e.round_no is None:
            if e.shoe_id is None:
                continue  # not of a shoe (a start of the program): not the round's
            if betting and betting[-1].shoe_id != e.shoe_id:
                betting.clear()
            betting.append(e)
        elif e.round_no == round_no:
            if e.shoe_id not in begun:  # the round begins: the betting before it first
                begun.add(e.shoe_id)
                yield from (b for b in betting if b.shoe_id == e.shoe_id)
                betting.clear()
            yield e
        elif e.kind in _ROUND_BOUNDS:  # another round begins or ends: what came before was not this one's
            betting.clear()


def _write_jsonl(entries: Iterable[Entry], stream: IO[str]) -> int:
    count = 0
    try:
        for entry in entries:
            stream.write(entry.to_json_line())
            count += 1
    except OSError as exc:
        if isinstance(exc, JournalError):
            raise
        raise JournalError(f"cannot write the export: {exc.strerror or exc}") from None
    return count


