"""Opening SQLite connections to a journal file (read-only ones with the fallback for read-only
copies) and translating SQLite's errors into one-line ``JournalError``s."""
from __future__ import annotations

import os
import re
import sqlite3
import urllib.parse
from collections.abc import Callable
from pathlib import Path

from controller import sqlite_files
from controller.descriptors import out_of_descriptors
from controller.fsutil import SQLITE_HEADER, sqlite_head
from controller.journal.errors import (
    JournalDamagedError, JournalError, JournalLockedError, JournalWriteError, NotAJournalError,
)
from controller.journal.schema import check_sqlite_version
from shoectl_config.files import NotARegularFile, require_regular_file

DEFAULT_BUSY_TIMEOUT = 2.0
NO_DESCRIPTOR_LEFT = "the process has no file descriptor left (its limit of open files is reached)"


def sqlite_uri(path: Path, **params: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    # The path's own bytes (os.fsencode): a name that is not UTF-8 reaches SQLite as it is on disk
    return "file:" + urllib.parse.quote(os.fsencode(path.absolute())) + ("?" + query if query else "")


class JournalConnection(sqlite3.Connection):
    """A plain connection (a Python subclass, so that tests can patch ``execute`` at the edge)
    that lets ``controller.sqlite_files`` know when it closes, once noted there."""

    release_files: Callable[[], object] | None = None

    def close(self) -> None:
        super().close()  # a close that failed (another thread's connection) keeps its files held
        if self.release_files is not None:
            self.release_files()


def close_as_the_last(path: Path) -> None:
    """Open the journal at ``path`` read-write, read it and close it: SQLite then removes its
    ``-wal`` and ``-shm`` if no other connection, of any process, has the journal open (the last
    connection's close, under SQLite's own exclusive lock: no one can open it between the look
    and the removal), and leaves them otherwise. Only for a WAL without a frame (nothing is then
    written into the database). Never raises: on any error the files stay."""
    try:
        with sqlite_files.opening() as hold:
            conn = sqlite3.connect(sqlite_uri(path, mode="rw"), uri=True, timeout=0, isolation_level=None,
                                   factory=JournalConnection)
            hold(conn, path)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
    except (sqlite3.Error, OSError, ValueError):
        pass


# sqlite3's error for a TEXT value that is not UTF-8 (written by other means than this package,
# which stores only text it encoded): "Could not decode to UTF-8 column 'payload' with text '...'".
_UNDECODABLE = re.compile(r"could not decode to utf-8 column '([^']*)'", re.IGNORECASE)


def undecodable_column(exc: BaseException) -> str | None:
    """The column named by sqlite3's error for text that is not UTF-8, or None for any other."""
    found = _UNDECODABLE.search(str(exc)) if isinstance(exc, sqlite3.OperationalError) else None
    return found.group(1)[:40] if found else None


def first_undecodable_entry(path: Path | str, after: int = 0) -> tuple[int, str] | None:
    """The first entry after seq ``after`` holding text that is not UTF-8, and that column's
    name; None if there is none. Read through a connection of its own that takes text as bytes:
    for an error message only, never on the way of a journal that reads."""
    try:
        conn = open_readonly_connection(Path(path))
    except JournalError:
        return None
    try:
        conn.text_factory = bytes
        cur = conn.execute("SELECT * FROM entries WHERE seq > ? ORDER BY seq", (after,))
        names = [d[0] for d in cur.description]
        for row in cur:
            for name, value in zip(names, row):
                if type(value) is bytes:
                    try:
                        value.decode("utf-8")
                    except UnicodeDecodeError:
                        return int(row[0]), name
        return None
    except sqlite3.Error:
        return None
    finally:
        conn.close()


def translate(exc: BaseException, path: Path | str, action: str) -> JournalError:
    """A sqlite3 error as a one-line JournalError of the right kind. A UnicodeDecodeError is
    sqlite3's when SQLite's own message quotes a schema that is not UTF-8 text: a damaged file;
    an entry's text that is not UTF-8 is named by its seq."""
    if isinstance(exc, UnicodeDecodeError):
        return NotAJournalError(f"{path}: not a journal: its SQLite schema is damaged (text that is not UTF-8)")
    column = undecodable_column(exc)
    if column is not None:
        found = first_undecodable_entry(path)
        where = f"entry {found[0]}'s {found[1]}" if found else f"text in its {column} column"
        return NotAJournalError(f"{path}: the journal is damaged: {where} is not UTF-8 text; "
                                "run `shoectl journal verify`")
    msg = " ".join(str(exc).split()) or "SQLite gave no reason"
    low = msg.lower()
    where = f"{path}: cannot {action}"
    if "file is not a database" in low or "not a database" in low:
        return NotAJournalError(f"{path}: not a journal: not an SQLite database")
    if "locked" in low or "busy" in low:
        return JournalLockedError(f"{where}: the database is locked by another connection ({msg})")
    if "disk is full" in low or "disk full" in low:
        return JournalWriteError(f"{where}: database or disk is full; nothing was stored")
    if "readonly" in low or "read-only" in low:
        return JournalError(f"{where}: the journal or its directory is read-only ({msg})")
    if "unable to open" in low:
        if out_of_descriptors():
            return JournalError(f"{where}: {NO_DESCRIPTOR_LEFT}")
        parent = Path(path).parent
        if not parent.is_dir():
            return JournalError(f"{where}: directory {parent} does not exist")
        if not os.access(parent, os.W_OK | os.X_OK):
            return JournalError(f"{where}: directory {parent} is read-only (WAL needs to create files beside the journal)")
        if disk_full(path, files=True):
            return JournalWriteError(f"{where}: the disk it is on has no room for another file (no inode left): free "
                                     "some there")
        return JournalError(f"{where}: unable to open the database file")
    if "malformed" in low or "corrupt" in low:
        return JournalDamagedError(f"{where}: the database file is corrupt ({msg})",
                                   f"the database file is corrupt ({msg})")
    if "i/o error" in low:
        if disk_full(path):  # SQLite says a full disk so when it cannot size its -shm (a review of disk faults)
            return JournalWriteError(f"{where}: the disk it is on is full ({msg}): free space there")
        return JournalWriteError(f"{where}: disk I/O error; nothing was stored")
    return JournalError(f"{where}: {msg}")


FULL_BELOW = 1 << 20  # bytes free on a disk this account may write to


def disk_full(path: Path | str, *, files: bool = False) -> bool:
    """Whether the disk that holds ``path`` (its folder, when it is not there) has less than
    ``FULL_BELOW`` bytes free for this account; with ``files``, no inode left for a new file (a
    disk that counts them: tmpfs and ext4 do, some do not and say 0 of 0)."""
    try:
        st = os.statvfs(path if os.path.exists(path) else os.path.dirname(os.path.abspath(path)))
    except OSError:
        return False
    if files:
        return st.f_files > 0 and st.f_favail == 0
    return st.f_bavail * st.f_frsize < FULL_BELOW


def require_journal_file(path: Path) -> None:
    """JournalError unless ``path`` is an existing regular file: a FIFO would block SQLite's open
    forever, a device would never end. ``NotAJournalError`` for a file that is not SQLite (the
    first 16 bytes of one say so; an empty file is a new database), as SQLite's open would say:
    said before the writer makes its lock file beside a file that is not its journal."""
    if not path.exists():
        raise JournalError(f"{path}: no such journal")
    if path.is_dir():
        raise JournalError(f"{path}: is a directory, not a journal")
    try:
        require_regular_file(path)
    except NotARegularFile as exc:
        raise JournalError(str(exc)) from None
    head = sqlite_head(path)  # None: unreadable, or no descriptor left: SQLite's open says why (``translate``)
    if head and head != SQLITE_HEADER:
        raise NotAJournalError(f"{path}: not a journal: not an SQLite database")


def _cannot_create_side_files(exc: sqlite3.Error) -> bool:
    """The error SQLite gives a reader that cannot create the ``-shm`` file beside a WAL database:
    "unable to open database file" (CANTOPEN) or, from 3.40 on, "attempt to write a readonly
    database" (READONLY)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY)
    text = str(exc).lower()
    return "unable to open" in text or "readonly" in text


def open_readonly_connection(path: Path, *, busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
                             live: bool = False) -> sqlite3.Connection:
    """A ``mode=ro`` connection to an existing file. If SQLite cannot open it because the WAL
    index (``-shm``) cannot be created beside it (a read-only copy: a write-protected file or
    directory) and no ``-wal`` file exists (so no writer is active), the file is opened
    ``immutable``. JournalError if missing or unusable.

    ``live=True`` (a reader that follows a journal another process is writing) never falls back
    to ``immutable`` (SQLite would then assume the file never changes and miss what is appended):
    it says instead what the reader lacks. Its connection may be handed to another thread (one
    thread at a time: a follower opened by a command and run on the thread it starts)."""
    check_sqlite_version()
    require_journal_file(path)
    if not os.access(path, os.R_OK):
        raise JournalError(f"{path}: permission denied")
    try:
        with sqlite_files.opening() as hold:
            conn = sqlite3.connect(sqlite_uri(path, mode="ro"), uri=True, timeout=busy_timeout, isolation_level=None,
                                   factory=JournalConnection, check_same_thread=not live)
            try:
                conn.execute("PRAGMA query_only = 1")
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except BaseException:
                conn.close()
                raise
            hold(conn, path)
        return conn
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        side_files = _cannot_create_side_files(exc)
        if side_files and out_of_descriptors():  # not what SQLite's words suggest
            raise JournalError(f"{path}: cannot open the journal: {NO_DESCRIPTOR_LEFT}") from None
        if live and side_files:
            raise JournalError(f"{path}: cannot follow the journal: SQLite cannot create its -wal and -shm files "
                               "beside it (the table is not running); give this user write access to the "
                               "journal's directory (a group shared with the table)") from None
        if not side_files or Path(str(path) + "-wal").exists():
            raise translate(exc, path, "open the journal") from None
    try:
        conn = sqlite3.connect(sqlite_uri(path, mode="ro", immutable="1"), uri=True, isolation_level=None,
                               factory=JournalConnection)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return conn
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        raise translate(exc, path, "open the journal") from None
