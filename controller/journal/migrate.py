"""Migrating a journal of an earlier schema version into a new file of the current one.

``migrate(old, new, hmac_key=None) -> int`` (the number of entries) copies every entry of the
version-1 journal ``old`` into a new version-2 journal at ``new``, exactly as stored: the same
columns (``device_id``'s values in ``device_serial``), payloads, timestamps and hashes. The hash
of an entry covers its columns by position, not by name, so the copied chain is the same chain,
and the anchors of ``old`` (same table, same creation time, same hashes) fit ``new``: the anchors
file beside ``old`` is copied beside ``new``. The payloads keep version 1's words (an entry's hash
covers them); ``meta.migrated_entries`` says how many entries were written under version 1, so
that readers read them in those words (``controller.journal.vocabulary``); new entries are
version 2's. ``meta.migrated_from`` and ``meta.migrated`` say from which version and when.

``old`` is read in one snapshot and checked as it is read, as every reader checks a journal: one
that does not verify, a file SQLite finds damaged among them, is not migrated (``DoesNotVerify``, a
JournalError, with ``verify``'s line). ``old`` is never changed; ``new`` (and its anchors file) must not exist: the new journal is built in a temporary
file beside it, checked, and only then given its name, so ``new`` is whole or absent.
"""
from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from controller.fsutil import fsync_dir, new_file_refused, write_new_file
from controller.journal.anchors import anchors_path
from controller.journal.connection import translate
from controller.journal.entry import COLUMNS, format_ts, utc_now
from controller.journal.errors import JournalDamagedError, JournalError
from controller.journal.schema import SCHEMA_VERSION, create_schema_with_meta
from controller.journal.verification import CheckedRead, checked_read, verify
from controller.journal.verify_report import VerifyReport, verdict_line

_BATCH = 2000


class DoesNotVerify(JournalError):
    """The old journal does not verify (``verify``'s line): it is not migrated."""


def migrate(old: str | os.PathLike[str], new: str | os.PathLike[str], *, hmac_key: bytes | None = None,
            clock: Callable[[], datetime] = utc_now) -> int:
    """See the module docstring. Returns how many entries were migrated; JournalError, one line,
    for anything that stops it (nothing is then left at ``new``)."""
    src, dst = Path(old), Path(new)
    check_target(src, dst, "migrated")
    tmp = dst.with_name(f".{dst.name}.migrating-{os.getpid()}")
    remove_db(tmp)
    try:
        try:
            count = _copy(src, tmp, hmac_key, clock)
        except JournalDamagedError as exc:  # as verify says it: a check that failed, not a file to refuse
            raise _not_migrated(src, VerifyReport.damaged(src, exc)) from None
        report = verify(tmp, hmac_key=hmac_key, anchor_files=[anchors_path(src)] if anchors_path(src).exists() else [])
        if not report.ok:
            raise JournalError(f"{dst}: the migrated copy does not verify ({report.reason}); nothing was written")
        publish(tmp, dst, "migrated")
        if anchors_path(src).exists():
            _publish_copy(anchors_path(src), anchors_path(dst))
    finally:
        remove_db(tmp)
    fsync_dir(dst.parent.absolute())
    return count


def check_target(src: Path, dst: Path, done: str) -> None:
    """JournalError unless ``dst`` may become a new journal made from ``src``: its folder exists
    and neither it nor a file beside it does (``done``: migrated, copied)."""
    if not dst.parent.is_dir():
        raise JournalError(f"{dst}: directory {dst.parent} does not exist")
    if dst.exists() or dst.is_symlink():
        raise JournalError(f"{dst}: already exists: a journal is {done} into a new file, never over one")
    for side in ("-wal", "-shm"):
        if Path(f"{dst}{side}").exists():
            raise JournalError(f"{dst}{side}: already exists (left by another journal?): move it away first")
    if anchors_path(dst).exists():
        raise JournalError(f"{anchors_path(dst)}: already exists (the anchors of another journal?): move it away first")
    if src.exists() and src.resolve() == dst.resolve():
        raise JournalError(f"{dst}: the new file must not be the old one")
    # made beside it first: a folder that takes no new file (/proc) blamed the source or a temporary file
    refused = new_file_refused(dst.parent)
    if refused is not None:
        said = f" ({refused.strerror})" if refused.strerror and refused.errno != errno.ENOENT else ""  # ENOENT: of the new file
        raise JournalError(f"{dst}: cannot be made: its folder {dst.parent} takes no new files{said}")


def _copy(src: Path, tmp: Path, hmac_key: bytes | None, clock: Callable[[], datetime]) -> int:
    """Copy every entry of ``src`` (checked as it is read) into a new journal at ``tmp``."""
    with checked_read(src, hmac_key=hmac_key, key_required=True) as read:
        version = read.layout.version
        if read.needs_key:
            raise JournalError(f"{src}: {read.check.reason} (--hmac-key FILE): the migration checks the whole chain")
        if version == SCHEMA_VERSION:
            raise JournalError(f"{src}: already a schema-version-{SCHEMA_VERSION} journal: nothing to migrate")
        meta = {k: v for k, v in read.meta.items() if k not in ("schema_version", "migrated_from", "migrated_entries")}
        meta.update(schema_version=str(SCHEMA_VERSION), migrated_from=str(version), migrated_entries="0",
                    migrated=format_ts(clock()))  # migrated_entries: set once every entry was read
        conn = sqlite3.connect(tmp, isolation_level=None)
        try:
            create_schema_with_meta(conn, tmp, meta)
            conn.execute("BEGIN IMMEDIATE")
            insert = f"INSERT INTO entries ({', '.join(COLUMNS)}) VALUES ({','.join('?' * len(COLUMNS))})"
            batch: list[tuple[object, ...]] = []
            for row in _rows_read(read, src):
                batch.append(tuple(row))
                if len(batch) >= _BATCH:
                    conn.executemany(insert, batch)
                    batch.clear()
            conn.executemany(insert, batch)
            report = _verdict(read, src)
            if not report.ok:
                raise _not_migrated(src, report)
            conn.execute("UPDATE meta SET value = ? WHERE key = 'migrated_entries'", (str(report.last_seq),))
            conn.execute("COMMIT")
            conn.execute("PRAGMA journal_mode = WAL")  # as the writer keeps it
        except sqlite3.Error as exc:
            raise JournalError(f"{tmp}: cannot write the migrated journal: {exc}") from None
        finally:
            conn.close()
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    return report.last_seq


# SQLite's errors reading ``src`` are the old journal's damage, said as ``translate`` says it (a
# JournalDamagedError: verify's verdict), never taken for an error writing the copy.

def _rows_read(read: CheckedRead, src: Path) -> Iterator[tuple[object, ...]]:
    """``read``'s rows, until SQLite cannot read ``src`` on: then none more once the check has
    failed (SQLite's integrity check found the damage: its verdict is the news)."""
    try:
        yield from read.rows()
    except (sqlite3.Error, MemoryError) as exc:  # MemoryError: a record a damaged page makes huge
        if not read.check.ok:
            return
        if isinstance(exc, MemoryError):
            raise
        raise translate(exc, src, "read the journal") from None


def _verdict(read: CheckedRead, src: Path) -> VerifyReport:
    try:
        return read.report()
    except sqlite3.Error as exc:  # counting the rows of a damaged table
        raise translate(exc, src, "read the journal") from None


def _not_migrated(src: Path, report: VerifyReport) -> DoesNotVerify:
    return DoesNotVerify(f"{verdict_line(src, report)}: a journal that does not verify is not migrated")


def publish(tmp: Path, dst: Path, done: str) -> None:
    """Give ``tmp`` the name ``dst``, failing if ``dst`` appeared meanwhile (a hard link, not a
    rename, cannot replace a file; ``done``: migrated, copied)."""
    try:
        os.link(tmp, dst)
    except FileExistsError:
        raise JournalError(f"{dst}: already exists: a journal is {done} into a new file, never over one") from None
    except OSError as exc:
        raise JournalError(f"{dst}: cannot create the {done} journal: {exc.strerror or exc}") from None


def _publish_copy(src: Path, dst: Path) -> None:
    tmp = dst.with_name(f".{dst.name}.migrating-{os.getpid()}")
    try:
        try:
            write_new_file(tmp, src.read_bytes())  # an anchors file: one line a shoe
        except OSError as exc:
            raise JournalError(f"{src}: cannot copy the anchors beside the new journal: {exc.strerror or exc}") from None
        publish(tmp, dst, "migrated")
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def remove_db(path: Path) -> None:
    for side in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{side}").unlink()
