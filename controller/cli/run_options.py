"""``shoectl run``'s options checked before anything is opened or created (issue 12): a bad value
is refused with one line and exit 2 while the journal, its log file and the control socket do
not exist yet, so a refused command changes nothing.

- ``emulator_speed``, ``fault_spec`` and ``table_id`` are argparse types: ``--speed fast``,
  ``--faults corrupt=2`` or an empty ``--table-id`` is refused while the arguments are parsed.
- ``check_emulator_options(args, attached)`` refuses the built-in emulator's options (``--speed``,
  ``--faults``, ``--dealt-log``) beside ``--device``, where there is no built-in emulator for them
  to set: silently ignoring them would let an operator believe faults were injected;
  ``check_dealer_options(args)`` settles who drives the table (``--manual``, ``--automated``, ``--device``).
- ``edge_threshold`` too: ``--edge-threshold`` is a bounded decimal (``shoectl_config.numbers``).
- ``check_paths(args, journal)`` refuses, before any of them is created, a journal, log file,
  dealt-cards log or control socket path that is a directory; a log file, dealt-cards log or
  journal that cannot be written or created there (no such folder, read-only, no permission); a
  control socket in a folder that is not there; only the default journal's folder (``var``) is
  created.
"""
from __future__ import annotations

import argparse
import math
import os
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

from controller.cli.common import given_options, not_root_over_another_users_journal
from controller.errors import UsageError
from controller.fsutil import folder_missing, foreign_append_target, write_problem
from controller.journal.connection import require_journal_file
from controller.journal.files import is_journal_file, same_file
from controller.table_ids import TABLE_ID
from shoectl_config.extras import install_hint
from shoectl_config.numbers import NumberError, bounded_decimal
from shoectl_config.text import quoted, readable

__all__ = ["DEFAULT_JOURNAL", "DEFAULT_SPEED", "check_dealer_options", "check_edge_options", "check_emulator_options",
           "check_paths", "edge_threshold", "emulator_speed", "fault_spec", "table_id"]

DEFAULT_SPEED = 20.0  # the built-in emulator's mechanisms, times real time
DEFAULT_JOURNAL = Path("var") / "journal.db"  # its folder is made: a checkout's first `make run`


MIN_SPEED = 0.01  # a hundred times slower than real time: a slower one would seem to hang for ever


def emulator_speed(text: str) -> float:
    """``--speed``: ``max`` (no waiting: ``math.inf``) or a finite number of times real time, at
    least ``MIN_SPEED``; ``inf``, ``nan`` or ``1e999`` are refused, not taken for ``max``."""
    from firmware_bridge.emulator.factory import parse_speed

    try:
        speed = parse_speed(text)
        if math.isinf(speed) and text.strip().lower() != "max":
            raise ValueError("max is spelled max")
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected max or a finite positive number (times real time), "
                                         f"not {quoted(text[:40])}") from None
    if speed < MIN_SPEED:
        raise argparse.ArgumentTypeError(f"at least {MIN_SPEED:g} (a hundred times slower than real time), "
                                         f"not {quoted(text[:40])}")
    return speed


def fault_spec(text: str) -> Any:
    """``--faults``: a ``FaultSpec`` (docs/emulator.md)."""
    from firmware_bridge.emulator.faults import FaultSpec
    from firmware_bridge.errors import FaultSpecError

    try:
        return FaultSpec.parse(text)
    except FaultSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def table_id(text: str) -> str:
    """``--table-id``: 1-32 letters, digits, '.', '_' or '-', starting with a letter or digit."""
    if not TABLE_ID.fullmatch(text):
        raise argparse.ArgumentTypeError(f"expected 1-32 letters, digits, '.', '_' or '-' (e.g. T1), not {quoted(text[:40])}")
    return text


def check_emulator_options(args: argparse.Namespace, attached: object) -> None:
    """Raise ``UsageError`` for a built-in emulator option given with attached devices."""
    if not attached:
        return
    given = given_options(args, ("--speed", "--faults", "--dealt-log"))
    if given:
        them = "it" if len(given) == 1 else "them"
        raise UsageError(f"{', '.join(given)}: only for the built-in emulator, which does not run with --device; "
                         f"give {them} to the external emulator instead (shoectl emulate)")


def check_dealer_options(args: argparse.Namespace) -> None:
    """Who drives the table, settled in ``args.manual``: operators with ``--manual``, and with
    ``--device`` unless ``--automated`` (at a real table the automated dealer and floorperson
    would seat invented players and place wagers on its journal); the automated people otherwise.
    ``UsageError`` for ``--require-device`` or ``--automated`` without ``--device``, ``--manual``
    with ``--automated``, and ``--pace`` where no automated dealer deals (the option would be
    ignored without a word)."""
    if args.require_device and not args.device:
        raise UsageError("--require-device: no --device given (this table's devices: --device PROFILE[@PORT] for "
                         "each; without any the built-in emulated table would run)")
    if args.manual and args.automated:
        raise UsageError("--manual, --automated: give one (who drives the table: operators, or the automated dealer)")
    if args.automated and not args.device:
        raise UsageError("--automated: only with --device; without it the built-in emulated table is dealt by the "
                         "automated dealer already (--manual for operators)")
    asked, args.manual = args.manual, args.manual or (bool(args.device) and not args.automated)
    if args.manual and given_options(args, ("--pace",)):
        why = "with --manual" if asked else "with --device and no --automated"
        raise UsageError(f"--pace: the automated dealer's wait between its actions; {why} there is no automated "
                         "dealer (operators deal)")


def edge_threshold(text: str) -> Decimal:
    """``--edge-threshold``: the player edge per unit staked above which the edge monitor raises its
    surveillance notice (docs/edge-monitor.md): a decimal from -1 to 1 with at most 6 places
    (``0.005``: half a percent in the player's favour)."""
    try:
        return bounded_decimal(text, -1, 1, name="threshold")
    except NumberError as exc:
        raise argparse.ArgumentTypeError(f"{exc}; e.g. 0 or 0.005") from None


def check_edge_options(args: argparse.Namespace) -> None:
    """UsageError for the edge monitor's options with ``--no-edge-monitor``: each would be ignored
    without a word (a review of bad inputs: a threshold given to a table that had no monitor)."""
    given = given_options(args, ("--edge-threshold", "--edge-engine")) if args.no_edge_monitor else []
    if given:
        them = "it" if len(given) == 1 else "them"
        raise UsageError(f"{', '.join(given)}: the edge monitor's, and --no-edge-monitor turns it off; give {them} "
                         "without --no-edge-monitor, or leave them out")


EDGE_ENGINE_VARIABLE = "SHOECTL_EDGE_ENGINE"


def edge_engine(args: argparse.Namespace) -> str:
    """The edge monitor's odds engine: ``--edge-engine``, else ``SHOECTL_EDGE_ENGINE``, else
    ``auto`` (numpy when installed). Every engine gives the same exact figures (docs/odds.md);
    ``python`` spares a short run numpy's import (0.14 s of CPU a process)."""
    from controller.rules.engines import ENGINES, numpy_available

    given = args.edge_engine
    value = given or os.environ.get(EDGE_ENGINE_VARIABLE) or "auto"
    where = "--edge-engine" if given else EDGE_ENGINE_VARIABLE
    if value not in ENGINES:
        raise UsageError(f"{where} {quoted(value)}: choose one of {', '.join(ENGINES)}")
    if value == "numpy" and not numpy_available():
        raise UsageError(f"{where} numpy: numpy is not installed ({install_hint('fast')})")
    return value


def check_paths(args: argparse.Namespace, journal: Path, hmac_key: bytes | None = None) -> bool:
    """Raise ``UsageError`` (or ``JournalError``) for a path option that could only fail once
    things exist, and for a journal there that the run cannot continue or that does not verify
    (resuming replays it). True when the journal there was verified (read through its ``-wal``
    where it is not readable at rest); False when there is none, or an empty database (an older
    creation's crash, made a journal in place by opening)."""
    if journal.is_dir():  # checked first: "/" has no name to put the control socket's suffix on
        raise UsageError(f"--journal {journal}: is a directory; give a file name")
    control = Path(args.control) if args.control else journal.with_suffix(".sock")
    if control.is_dir():
        raise UsageError(f"--control {control}: is a directory; give a file name")
    missing = folder_missing(control) if args.control else None  # the default's is the journal's
    if missing is not None:
        raise UsageError(f"--control {control}: {missing}")
    for option, value in (("--control", control), ("--log-file", args.log_file), ("--dealt-log", args.dealt_log)):
        if value is not None and is_journal_file(value, journal):  # writing there would destroy the journal
            raise UsageError(f"{option} {value}: that is the journal {journal} or a file beside it; "
                             "give another file")
    log = run_log_path(args, journal)
    if args.dealt_log is not None and same_file(args.dealt_log, log):
        # two writers interleaved in one file: neither the log nor the dealt log could be read (a surveillance review)
        raise UsageError(f"--dealt-log {args.dealt_log}: that is the table's log file; give another file")
    _refuse_writing_an_input(args, journal, log)
    _check_writable(args, journal, log)
    if args.submissions is not None and not Path(args.submissions).is_dir():  # only set_submission would find out
        raise UsageError(f"--submissions {args.submissions}: no such folder (the Rules Submission files a "
                         "floorperson may name)")
    if journal.exists():
        require_journal_file(journal)  # a file that is not a journal: nothing made beside it (lock, log)
        not_root_over_another_users_journal(journal, "table", "shoectl run")
        if journal.stat().st_size == 0:  # never one of ours: a journal is made whole, then linked in
            raise UsageError(f"--journal {journal}: an empty file, not a journal (one cut to nothing?); move it "
                             "aside to start a new table there")
    return _check_journal_there(journal, args.table_id, hmac_key)


# The files a run reads that an output of it must not be: appended to, the HMAC key no longer
# verified its journal and the operators file no longer loaded (a review of logs).
_INPUTS = (("hmac_key", "the journal's HMAC key"), ("operators", "the operators file"),
           ("submission", "the Rules Submission"), ("password_file", "the broker's password file"),
           ("tls_ca", "the broker's CA file"), ("tls_cert", "the TLS certificate"), ("tls_key", "the TLS key"))


def _refuse_writing_an_input(args: argparse.Namespace, journal: Path, log: Path) -> None:
    """UsageError when the log file (``log``, given or the default) or the dealt log is one of the
    files the run reads (``_INPUTS``, and the operators file beside the journal it reads by default)."""
    from controller.operators.store import operators_file_beside

    inputs = [(getattr(args, name, None), what) for name, what in _INPUTS]
    inputs.append((operators_file_beside(journal), "the operators file"))
    for option, value in (("--log-file", log), ("--dealt-log", args.dealt_log)):
        for path, what in inputs:
            if value is not None and path is not None and os.path.exists(path) and same_file(value, path):
                raise UsageError(f"{option} {value}: that is {what} of this run, which it reads; give another file")


def run_log_path(args: argparse.Namespace, journal: Path) -> Path:
    """The run's log file: ``--log-file``, else beside the journal."""
    return Path(args.log_file) if args.log_file else journal.with_suffix(".log")


def _check_writable(args: argparse.Namespace, journal: Path, log: Path) -> None:
    """UsageError when the journal, the log file or the dealt-cards log cannot be written or
    created where asked: said before anything exists (the dealt log was opened after the journal
    was made and its anchor written, a bad-input review). A journal's folder must exist, but for
    the default one's: a mistyped ``--journal`` would start a new table."""
    for option, value in (("--log-file", args.log_file), ("--dealt-log", args.dealt_log)):
        # appended to with this process's rights: not through another user's link, nor into a file another made
        problem = (foreign_append_target(value) or write_problem(value)) if value is not None else None
        if problem is not None:
            raise UsageError(f"{option} {value}: {problem}")
    if args.log_file is None and (problem := foreign_append_target(log)) is not None:
        raise UsageError(f"{log}: {problem}")  # the default, beside the journal (its folder may be made yet)
    if not journal.parent.is_dir():
        if journal == DEFAULT_JOURNAL or os.path.lexists(journal.parent):
            return  # made here; or not a folder, which the control socket's check says in its words
        raise UsageError(f"--journal {journal}: no such folder {journal.parent} (create it first: a mistyped path "
                         "would start a new table)")
    problem = write_problem(journal)
    if problem is None and not os.access(journal.parent, os.W_OK | os.X_OK):
        problem = "its folder cannot be written in (read-only, or no permission): the journal keeps files beside it"
    if problem is not None:
        raise UsageError(f"--journal {journal}: {problem}")


def _check_journal_there(journal: Path, table_id: str, hmac_key: bytes | None) -> bool:
    """JournalError, before anything is created or opened for writing (opening refuses the same,
    but after making its lock and the log): another table has the journal there open, it is not
    a journal or is damaged (``meta_at_rest``), it is another table's, chained otherwise than
    ``hmac_key`` says, of an earlier schema (``check_meta``), or does not verify; or the anchors
    file beside it holds another journal's anchors (left beside a new journal at the same path).
    Whether the journal there was verified."""
    # Only ``run`` comes here: ``emulate`` shares this module, and need not load the journal's writer
    from controller.journal.anchors import AnchorFile  # noqa: PLC0415
    from controller.journal.chain import Hasher  # noqa: PLC0415
    from controller.journal.files import sqlite_files_undone  # noqa: PLC0415
    from controller.journal.opening import check_meta, refuse_running_writer  # noqa: PLC0415
    from controller.journal.reader import meta_at_rest, meta_through_wal  # noqa: PLC0415
    from controller.journal.verification import require_intact  # noqa: PLC0415
    from controller.journal.errors import JournalError  # noqa: PLC0415
    from controller.journal.walcheck import orphaned_wal  # noqa: PLC0415

    there = journal.exists() and journal.stat().st_size > 0
    if there:
        refuse_running_writer(journal)  # before the control socket's lock is made
    # another journal's last entries: opening refuses them, after its lock and log (a folder that is
    # not there, or not a folder, the control socket's check says in its words)
    orphan = orphaned_wal(journal) if journal.parent.is_dir() else None
    if orphan is not None:
        raise JournalError(orphan)
    meta = meta_at_rest(journal) if there else None  # JournalError: not a journal, damaged
    beside = there and meta is None and any(os.path.lexists(f"{journal}{side}") for side in ("-wal", "-journal"))
    # A refused run leaves no -wal or -shm of its reading
    with sqlite_files_undone(journal):
        if beside:
            # Not readable at rest (its meta perhaps in its -wal): read through it, so that a damaged
            # journal is refused before the lock and the log are made (a -wal a reader left beside a
            # damaged one let them be made: a review of bad inputs), and a whole one checked as below.
            meta = meta_through_wal(journal)  # None: an empty database (an older creation's crash)
        if meta is not None:
            check_meta(journal, meta, table_id, Hasher(hmac_key))
        AnchorFile.beside(journal).refuse_another_journals(meta.get("table_id") if meta else None,
                                                           meta.get("created") if meta else None)
        if meta is None:
            return False  # no journal yet (or an empty database, made one in place): nothing to verify
        report = require_intact(journal, hmac_key=hmac_key)
    if report is not None and report.last_seq == 0:
        # A journal there holding no entry: its entries perhaps in a -wal that was not copied with it, or
        # lost (a recovery drill: the table dealt on from entry 1 without a word). Said as verify says it.
        for warning in report.warnings:
            print(f"shoectl run: warning: {readable(warning)}", file=sys.stderr)
    return True
