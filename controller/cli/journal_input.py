"""A journal as the input of a command (`journal export|replay`, `audit`, `roadmap`): read in one
consistent snapshot and checked as it is read, exactly as `journal verify` checks it
(``controller.journal.verification.checked_read``), with nothing written before the check is done.

``add_journal_input(parser)`` adds ``PATH``, ``--hmac-key FILE`` and ``--no-verify`` (``option="--journal"``:
the journal as that option, for a command whose journal is optional: ``shoectl odds --journal``).
``read_checked(args, consume, since_seq=, kinds=, keep=)`` gives the entries to ``consume`` and returns
its result once every entry was read and checked; its warnings (an HMAC journal read without its
key, a ``-wal`` file SQLite ignores) go to standard error, one line each. When the journal does not
verify it prints why on one line and returns None (the command exits 1 and writes nothing), or,
with ``--no-verify``, says so on one line and returns the result all the same; a file SQLite finds
damaged is such a journal (with or without ``--no-verify``: nothing can be read of it). An entry whose
payload ``consume`` cannot use (``JournalContentError``) is a ``UsageError`` naming it (exit 2).
``refuse_output_over_journal(args, output)``: a ``-o FILE`` that is the journal itself or one of
the files beside it (``controller.journal.files``), the command's HMAC key, or the operators file
beside the journal (the table's PINs) is refused before anything is read or written.
``nothing_found(args, where)``: the refusal of a ``--shoe``/``--round`` that selects nothing.
"""
from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import IO, TypeVar

from controller.cli.progress import progress_bar
from controller.errors import UsageError, journal_to_read_argument, path_argument
from controller.journal.chain import load_hmac_key
from controller.journal.entry import Entry
from controller.journal.errors import JournalContentError, JournalDamagedError
from controller.journal.files import is_journal_file, same_file
from controller.operators.store import operators_file_beside
from controller.journal.verification import checked_read
from controller.journal.verify_report import verdict_line
from shoectl_config.text import quoted, safe

T = TypeVar("T")
EXIT_DOES_NOT_VERIFY = 1
_SPOOL_IN_MEMORY = 16 * 1024 * 1024


def add_journal_input(parser: argparse.ArgumentParser, option: str | None = None, help: str = "the journal file") -> None:
    if option is None:
        parser.add_argument("path", type=journal_to_read_argument, metavar="PATH", help=help)
    else:
        parser.add_argument(option, dest="path", type=journal_to_read_argument, metavar="PATH", help=help)
    parser.add_argument("--hmac-key", type=path_argument, metavar="FILE",
                        help="the journal's HMAC key file: its hashes are checked too (without it, an HMAC "
                             "journal's chain is checked link by link)")
    parser.add_argument("--no-verify", action="store_true",
                        help="read a journal that does not verify all the same (saying so on standard error)")


def refuse_output_over_journal(args: argparse.Namespace, output: str | None, option: str = "-o") -> None:
    """Raise ``UsageError`` when ``output`` (given as ``option``) names the journal being read or a
    file beside it that it needs: writing there would destroy what the command reads (and the
    chain's evidence)."""
    if not output:
        return
    if is_journal_file(output, args.path):
        raise UsageError(f"{option} {output}: that is the journal {os.fspath(args.path)} or a file beside it; "
                         "give another file to write")
    # A key written over loses the chain's proof for good; the operators file, every PIN (a review).
    inputs = {"the HMAC key": getattr(args, "hmac_key", None),
              "the operators file beside the journal": operators_file_beside(args.path)}
    for what, kept in inputs.items():
        if kept and same_file(output, kept):
            raise UsageError(f"{option} {output}: that is {what}; give another file to write")


def nothing_found(args: argparse.Namespace, where: str) -> UsageError:
    """The refusal of a ``--shoe``/``--round`` that selects nothing in ``where`` (exit 2)."""
    if args.shoe is not None and args.round is not None:
        return UsageError(f"no round {args.round} of shoe {quoted(args.shoe)} in {where}")
    return UsageError(f"no shoe {quoted(args.shoe)} in {where}" if args.shoe is not None else f"no round {args.round} in {where}")


def warn(args: argparse.Namespace, line: str) -> None:
    # safe: a file name's byte that is not UTF-8 as \xff, as the verdict says it (it came as
    # Python's \udcff on standard error and as a replacement character on standard output: a review)
    print(f"{args.prog}: warning: {safe(line)}", file=sys.stderr)


def read_checked(args: argparse.Namespace, consume: Callable[[Iterator[Entry]], T], *, since_seq: int = 0,
                 kinds: Iterable[str] | None = None, keep: Callable[[str, str | None], bool] | None = None,
                 progress: str | None = None) -> T | None:
    """See the module docstring. ``consume`` must not write anything the user sees. ``kinds`` and
    ``keep`` choose the entries it is given (``CheckedRead.entries``). ``progress``: what to call
    the reading in a progress bar on a terminal (``controller.cli.progress``)."""
    key = load_hmac_key(args.hmac_key) if args.hmac_key else None
    try:
        return _read_checked(args, consume, key, since_seq=since_seq, kinds=kinds, keep=keep, progress=progress)
    except JournalDamagedError as exc:
        print(f"{args.prog}: error: {safe(str(args.path))}: FAILED: {exc.reason}; nothing was written", file=sys.stderr)
        return None


def _read_checked(args: argparse.Namespace, consume: Callable[[Iterator[Entry]], T], key: bytes | None, *,
                  since_seq: int, kinds: Iterable[str] | None, keep: Callable[[str, str | None], bool] | None,
                  progress: str | None) -> T | None:
    with checked_read(args.path, hmac_key=key, warn_unanchored=True) as read, progress_bar(progress, read.total) as update:
        entries = read.entries(since_seq=since_seq, kinds=kinds, keep=keep)
        if progress:
            entries = _tracked(entries, update)
        try:
            result = consume(entries)
            for _ in entries:  # what consume did not take is checked all the same
                pass
            update(read.total)
        except Exception as exc:
            if read.check.ok or args.no_verify:
                if isinstance(exc, JournalContentError):
                    raise UsageError(f"{args.path}: {exc}") from None
                raise
            result = None  # an entry it choked on was already found bad: that is the news
        report = read.report()
    for line in report.warnings:
        warn(args, line)
    if report.ok:
        return result
    if not args.no_verify:
        print(f"{args.prog}: error: {verdict_line(args.path, report)}; nothing was written "
              "(--no-verify reads it all the same)", file=sys.stderr)
        return None
    warn(args, f"{verdict_line(args.path, report)}; read all the same (--no-verify)")
    return result


def _tracked(entries: Iterator[Entry], update: Callable[[int], None]) -> Iterator[Entry]:
    for entry in entries:
        update(entry.seq)
        yield entry


@contextlib.contextmanager
def spooled_text() -> Iterator[IO[str]]:
    """A text buffer for output that must be written whole or not at all (in memory up to 16 MiB,
    then in a temporary file)."""
    with tempfile.SpooledTemporaryFile(max_size=_SPOOL_IN_MEMORY, mode="w+", encoding="utf-8", newline="\n") as f:
        yield f  # type: ignore[misc]


def copy_text(spool: IO[str], stream: IO[str]) -> None:
    spool.seek(0)
    shutil.copyfileobj(spool, stream)
    stream.flush()
