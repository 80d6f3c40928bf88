"""Durable file writes: ``atomic_writer`` (a temporary file in the same directory, fsynced, then
renamed over the target; on any failure the old file is left as it was) and ``fsync_dir``;
``replacement_problem``, why a path must not be written over."""
from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from controller import sqlite_files
from shoectl_config.files import another_owner, regular_file_problem

SQLITE_HEADER = b"SQLite format 3\x00"


def foreign_symlink(path: str | os.PathLike[str]) -> str | None:
    """Why the symbolic link at ``path`` is not followed, or None (no link, or one of this process's
    user or of root): a link another user made may point anywhere, and following it writes there
    with this process's rights (a security review: a stranger's link in /tmp turned root's `-o`
    into a write over a file of /etc, the service account's link beside the journal turned root's
    `operators add` into a new file in /etc/profile.d). The kernel's protected_symlinks guards
    only sticky folders, and only when it is on."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISLNK(st.st_mode) or st.st_uid in (os.geteuid(), 0):
        return None
    return (f"is a symbolic link of another user (uid {st.st_uid}): not followed, as it may point "
            "anywhere; name the file it points to")


def refuse_foreign_symlink(path: str | os.PathLike[str]) -> None:
    """``OSError`` (EPERM) with ``foreign_symlink``'s words for a link another user made."""
    _refuse(path, foreign_symlink(path))


def _refuse(path: str | os.PathLike[str], problem: str | None) -> None:
    if problem is not None:
        raise OSError(errno.EPERM, f"{problem}; nothing was written", os.fspath(path))


def foreign_append_target(path: str | os.PathLike[str]) -> str | None:
    """Why a file this process appends to and keeps (a table's log, a journal's anchors) must not
    be written at ``path``, or None: a link another user made (``foreign_symlink``), or a file of
    another account than this process's or root's, which could read and change what is written
    (a security review: a table's anchors kept in another account's file, mode 0666)."""
    problem = foreign_symlink(path)
    if problem is not None:
        return problem
    try:
        return _owned_by_another(os.stat(path).st_uid)
    except (OSError, ValueError):
        return None  # not there (it is created), or a name the write refuses in its own words


def refuse_foreign_append_target(path: str | os.PathLike[str]) -> None:
    """``OSError`` (EPERM) with ``foreign_append_target``'s words."""
    _refuse(path, foreign_append_target(path))


def refuse_another_owners_file(fd: int, path: str | os.PathLike[str]) -> None:
    """``refuse_foreign_append_target``'s refusal of a file another account owns, for the file
    open at ``fd``: the one written, whatever was at ``path`` when it was looked at."""
    _refuse(path, _owned_by_another(os.fstat(fd).st_uid))


def _owned_by_another(uid: int) -> str | None:
    owner = another_owner(uid)
    return None if owner is None else (f"belongs to {owner}, not to this account: a file another account made is "
                                       "not written to, as that account could read and change it; move it away")


def replacement_problem(path: str | os.PathLike[str], *, side_file: str | None = None) -> str | None:
    """Why a command that writes ``path`` whole must leave what is there (symbolic links
    followed), in words: not a regular file (a device, a socket, a FIFO, a folder), or an SQLite
    database (a journal: an export written over one would destroy it). None when nothing is there
    or it is another regular file. A file named as one a journal keeps beside it is refused too
    (``side_file_problem``; ``side_file``: the suffix of the one its keeper is writing)."""
    beside = side_file_problem(path, own=side_file, run_files=True)
    if beside is not None:
        return f"is {beside}, not a file to write over"
    try:
        st = os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # written "through", it was replaced by a file (a review of bad inputs)
            return "is a symbolic link that loops (it leads back to itself through others)"
        return None  # not there (it is created), or a name the write will refuse in its own words
    except ValueError:
        return None
    problem = regular_file_problem(st.st_mode)
    if problem is not None:
        return problem
    what = journal_file_kind(path)
    return f"is {what}, not a file to write over" if what else None


# The first bytes of a journal's write-ahead log (SQLite's WAL header magic, either byte order of
# its checksums) and of its anchors file (docs/journal.md): a file written over either loses
# committed entries, or the evidence that checks them.
WAL_MAGICS = (b"\x37\x7f\x06\x82", b"\x37\x7f\x06\x83")
ANCHORS_MARK = b"shoectl-journal-anchor/"


# What a journal keeps beside it, by the suffix to its own name (docs/journal.md): SQLite's
# write-ahead log, its index and its rollback journal, the writer's lock, the anchors, the feed's
# cursor, the cursor's lock and the feed's own lock.
JOURNAL_SIDE_SUFFIXES = ("-wal", "-shm", "-journal", ".lock", ".anchors", ".feed-cursor", ".feed-cursor.lock",
                         ".feed.lock")


def beside_a_journal(path: str | os.PathLike[str], *, run_files: bool = False) -> str | None:
    """The journal whose side file ``path`` is named as (``JOURNAL_SIDE_SUFFIXES``; with
    ``run_files``, also the log and the socket's lock ``shoectl run`` names after it), when that
    journal is there (an SQLite file); None otherwise. A live journal's ``-shm`` has no mark of
    its own, and a closed one's ``-wal`` is not there: only the name tells."""
    try:
        name = os.fspath(path)
    except TypeError:
        return None
    if not isinstance(name, str):
        return None
    for suffix in JOURNAL_SIDE_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            journal = name[:-len(suffix)]
            if _is_journal(journal):
                return journal
    return _journal_of_run_file(name) if run_files else None


# What ``shoectl run`` names after the journal by default, its suffix replaced
# (``journal.with_suffix``): the log (and the log's rotations, ``.log.1`` ...), the control socket
# and its lock. ``t.log`` is the log of the journal ``t.db`` (or ``t``, or ``t.sqlite``).
RUN_FILE_NAMES = re.compile(r"(.+)(\.log|\.sock)(?:(?<=\.log)\.\d+|(?<=\.sock)\.lock)?")


def _journal_of_run_file(name: str) -> str | None:
    match = RUN_FILE_NAMES.fullmatch(name)
    if match is None:
        return None
    folder, base = os.path.split(match.group(1))
    made = base + match.group(2)  # the name run gives it: the journal's name, its suffix replaced
    try:
        names = sorted(os.listdir(folder or "."))
    except OSError:
        return None
    for other in names:
        if other.startswith(base) and other != made and _with_suffix(other, match.group(2)) == made:
            journal = os.path.join(folder, other)
            if _is_journal(journal):
                return journal
    return None


def _with_suffix(name: str, suffix: str) -> str | None:
    try:
        return Path(name).with_suffix(suffix).name
    except ValueError:
        return None


def _is_journal(path: str) -> bool:
    return os.path.isfile(path) and sqlite_head(path) == SQLITE_HEADER  # (a FIFO is never read)


def side_file_problem(path: str | os.PathLike[str], *, own: str | None = None,
                      run_files: bool = False) -> str | None:
    """``a file the journal J keeps beside it`` when ``path`` is named as one (``beside_a_journal``),
    there or not (SQLite takes a ``-wal`` or ``-shm`` it finds for the journal's own), unless its
    name ends with ``own``, the suffix of the side file its keeper writes (the feed's cursor);
    None otherwise. What a command that writes or appends to a file of the user's naming refuses;
    a command that writes a file whole refuses the log and socket lock ``run`` names after a
    journal too (``run_files``), where a log appended to (``run --log-file``) may be that log."""
    journal = beside_a_journal(path, run_files=run_files)
    if journal is None or (own and os.fspath(path).endswith(own)):
        return None
    return f"a file the journal {journal} keeps beside it"


def journal_file_kind(path: str | os.PathLike[str]) -> str | None:
    """What ``path`` is, in words, when it is a journal or one of the files it keeps beside it:
    an SQLite database, an SQLite write-ahead log, or a journal's anchors file. None otherwise
    (or when it cannot be read)."""
    head = file_head(path, 256)
    if head is None:
        return None
    if head.startswith(SQLITE_HEADER):
        return "an SQLite database (a journal?)"
    if head[:4] in WAL_MAGICS:
        return "an SQLite write-ahead log (a journal's -wal file)"
    if ANCHORS_MARK in head.split(b"\n", 1)[0]:
        return "a journal's anchors file"
    return None


def sqlite_head(path: str | os.PathLike[str]) -> bytes | None:
    """The first bytes of ``path``, as many as ``SQLITE_HEADER`` has (fewer for a shorter file);
    None when it cannot be read (no such file, no permission, no file descriptor left)."""
    return file_head(path, len(SQLITE_HEADER))


def file_head(path: str | os.PathLike[str], size: int) -> bytes | None:
    """The first ``size`` bytes of ``path`` (fewer for a shorter file); None when it cannot be
    read (no such file, no permission, no file descriptor left). A journal this process has open
    keeps SQLite's locks (``controller.sqlite_files``)."""
    return sqlite_files.head(path, size)


def folder_missing(path: str | os.PathLike[str]) -> str | None:
    """``no such folder F`` when nothing at all is at the folder F that ``path`` names a file in,
    else None (a file there instead of a folder is left to the command's own words). For an output
    whose folder is never made: a mistyped path would make one (``/nonexistent/...``)."""
    folder = os.path.dirname(os.fspath(path)) or "."
    return None if os.path.lexists(folder) else f"no such folder {folder}"


def write_problem(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` cannot be appended to or created, in words, or None: no such folder, a file
    or a folder that cannot be written (a read-only file system, or no permission). For a command
    to say before it creates anything, where opening the file would fail only once others exist."""
    folder = os.path.dirname(os.fspath(path)) or "."
    if not os.path.isdir(folder):
        return f"no such folder {folder}"
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            return "cannot be written (a read-only file or file system, or no permission)"
        return None
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"cannot be created: the folder {folder} cannot be written in (read-only, or no permission)"
    return None


def write_synced(fd: int, data: bytes) -> None:
    """Write all of ``data`` at ``fd`` (a short write goes on), then ``fsync`` it."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.fsync(fd)


def write_new_file(path: str | os.PathLike[str], data: bytes, *, mode: int = 0o640) -> None:
    """Make the file ``path``, a temporary name of this process's beside a target, holding
    ``data`` (fsynced): never through a symbolic link nor into a file found there (a name that can
    be guessed, a pid's, may have been planted: a security review saw root's `journal backup` write
    the anchors over a file of its choosing). What is there under that name is removed first (a
    link is removed, not followed); one put there again meanwhile fails the creation."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        write_synced(fd, data)
    finally:
        os.close(fd)


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Make a rename or a new file in ``path`` durable (best effort where directories can't sync)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def new_file_refused(folder: str | os.PathLike[str]) -> OSError | None:
    """Why ``folder`` takes no new file, tried (a file made and removed at once), or None when it
    does. The permission bits would say yes to root on a read-only file system or in ``/proc``."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".shoectl-", suffix=".probe", dir=folder)
    except OSError as exc:
        return exc
    os.close(fd)
    os.unlink(probe)
    return None


def not_replaceable_here(folder: str | os.PathLike[str]) -> str:
    """Why a file that is there cannot be replaced: its new contents are written beside it first,
    and its ``folder`` takes no new file (``/proc``, a read-only file system)."""
    return f"not a file that can be replaced here (its folder {folder} takes no new files); it was left as it is"


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], *, mode: int = 0o644, binary: bool = False,
                  side_file: str | None = None) -> Iterator[IO[Any]]:
    """Yield a file to write ``path``'s new contents into. The file has ``mode`` from the start
    (a secret is never readable by others, even briefly); when the block ends normally it is
    fsynced and renamed over ``path`` and the directory synced; otherwise it is removed. A
    symbolic link stays: the file it points to is replaced. What ``replacement_problem`` refuses
    raises ``OSError`` (EEXIST) with the reason, before anything is written; a link another user
    made is not followed (``refuse_foreign_symlink``)."""
    refuse_foreign_symlink(path)
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    problem = replacement_problem(target, side_file=side_file)
    if problem is not None:
        raise OSError(errno.EEXIST, f"{problem}; it was left as it is", os.fspath(path))
    directory = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:  # named by the file asked for, not by the temporary one
        why = exc.strerror or str(exc)
        if os.path.lexists(target):  # the new contents go beside it first: "No such file" of a file that is there
            why = not_replaceable_here(directory)
        elif not directory.is_dir():
            why = f"no such folder {directory}"
        raise OSError(exc.errno, why, str(target)) from None
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": "\n"})) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.replace(tmp, target)
        except OSError as exc:  # e.g. a folder of that name: named by the file asked for
            raise OSError(exc.errno, exc.strerror, str(target)) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(directory)


# The mode a table's files are made with (the umask taking away more): its owner writes, its group
# reads, everyone else nothing, as the journal itself (a journal holds the cards dealt face down;
# its log, operator ids). Not the group's write bit (a security review: under umask 002 a member of
# the group could empty the anchors that prove a removed tail, or break them so that the table
# refused to resume).
TABLE_FILE_MODE = 0o640
# A lock file's: it holds nothing, and another account of the group takes it in turn (a feed run
# under an account of its own, docs/floor.md: a lock the table's feed made 0640 refused it).
LOCK_FILE_MODE = 0o660


def tighten_to(fd: int, mode: int = TABLE_FILE_MODE) -> None:
    """Take from the open file ``fd`` the group's write bit when it is the only bit ``mode`` does
    not give: a table's file an earlier shoectl made 0660 (less the umask) is 0640 once this one
    writes it, not only a new one. Nothing else is changed: not a device or a pipe given as the
    log (``/dev/null``, a terminal: a review saw root's run take everyone's write bit from
    /dev/null), not a file of another account, not a mode a person chose (0666, 0664)."""
    st = os.fstat(fd)
    now = stat.S_IMODE(st.st_mode)
    if stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid() and now & ~mode == stat.S_IWGRP:
        with contextlib.suppress(OSError):
            os.fchmod(fd, now & mode)
