"""A copy of a journal, taken while its table runs, that verifies.

``backup(src, dst, hmac_key=None) -> Backup`` copies the journal at ``src`` into a new file at
``dst`` (with ``dst.anchors`` beside it when ``src`` has anchors) and checks the copy as ``shoectl
journal verify`` does. The order is what makes a live copy whole (a review of operations: the
file and then its ``-wal`` copied two seconds apart verified as "malformed" eight times of eight,
the checkpoint having moved pages between them; anchors copied after the database named entries
the copy lacked, "truncated?"):

1. the anchors file first (its whole lines): every anchor in it is of an entry already committed;
2. then the database by SQLite's online backup, in one step: one read snapshot of the file and its
   WAL together, whatever the writer commits meanwhile;
3. then the copy is verified against the copied anchors, and only then given its name (a hard
   link: never over a file), the anchors copy after it.

The copy is 0640 like a new journal (it holds the cards dealt face down). ``dst`` and its anchors
file must not exist. JournalError (one line) for anything that stops it, and nothing is left at
``dst``; ``DoesNotVerify`` when the copy does not verify (the source's own damage, most likely).
"""
from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from controller.fsutil import fsync_dir, write_new_file
from controller.journal.anchors import anchors_path
from controller.journal.connection import disk_full, translate
from controller.journal.errors import JournalError
from controller.journal.migrate import DoesNotVerify, check_target, publish, remove_db
from controller.journal.reader import open_with_meta
from controller.journal.verification import verify
from controller.journal.verify_report import VerifyReport, verdict_line


@dataclass(frozen=True)
class Backup:
    """What ``backup`` copied: the copy's report (``last_seq``, ``last_hash``, the anchors it was
    checked against) and how many anchors were copied."""

    report: VerifyReport
    anchors: int


def backup(src: str | os.PathLike[str], dst: str | os.PathLike[str], *, hmac_key: bytes | None = None) -> Backup:
    """See the module docstring."""
    source, target = Path(src), Path(dst)
    check_target(source, target, "copied")
    tmp = target.with_name(f".{target.name}.copying-{os.getpid()}")
    anchors_tmp = target.with_name(f".{target.name}.anchors.copying-{os.getpid()}")
    remove_db(tmp)
    try:
        count = _copy_anchors(source, anchors_tmp)
        _copy_database(source, tmp, target)
        report = verify(tmp, hmac_key=hmac_key, anchor_files=[anchors_tmp] if count else [])
        if report.needs_key:
            raise JournalError(f"{source}: {report.reason} (--hmac-key FILE): the copy is checked whole")
        if not report.ok:
            raise DoesNotVerify(f"{verdict_line(source, report)}: its copy does not verify; nothing was kept")
        publish(tmp, target, "copied")
        if count:
            publish(anchors_tmp, anchors_path(target), "copied")
    finally:
        remove_db(tmp)
        with contextlib.suppress(OSError):
            anchors_tmp.unlink()
    fsync_dir(target.parent.absolute())
    return Backup(report, count)


def _copy_anchors(source: Path, tmp: Path) -> int:
    """The whole lines of ``source``'s anchors file, as they are now, into ``tmp``; how many."""
    try:
        data = anchors_path(source).read_bytes()
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise JournalError(f"{anchors_path(source)}: cannot read the anchors: {exc.strerror or exc}") from None
    whole = data[:data.rfind(b"\n") + 1]  # a line the table is writing now is left for the next copy
    try:
        write_new_file(tmp, whole)
    except OSError as exc:
        raise JournalError(f"{tmp}: cannot write the copy's anchors: {exc.strerror or exc}") from None
    return whole.count(b"\n")


def _copy_database(source: Path, tmp: Path, target: Path) -> None:
    """``source`` copied into ``tmp`` (beside ``target``), which is fsynced; a full disk is said
    of the copy's, not of the journal's (a review of disk faults: the journal was blamed)."""
    conn, _meta = open_with_meta(source, live=True)
    try:
        os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o640))  # its mode, before SQLite
        out = sqlite3.connect(tmp, isolation_level=None)
        try:
            conn.backup(out)  # all pages in one step: one snapshot of the file and its WAL
            out.execute("PRAGMA journal_mode = WAL")  # as the writer keeps it
        except sqlite3.Error as exc:
            if getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or disk_full(tmp):
                raise translate(exc, target, "write the copy") from None
            raise translate(exc, source, "copy the journal") from None
        finally:
            out.close()
    finally:
        conn.close()
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())


