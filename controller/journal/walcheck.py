"""Whether SQLite will use the ``-wal`` file beside a journal, or silently ignore (part of) it.

SQLite reads a WAL file only if its header is valid, and only its frames up to the first one that
does not belong (another salt) or is damaged (a checksum that does not match); it says nothing
about what it ignores. ``wal_problem(journal_path)`` says it (a ``WalProblem``: one line, and the
committed transactions lost): a ``-wal`` file that is not a WAL file at all (``lost`` 0: it may
have held nothing), or one with committed transactions after a damaged frame or under a damaged
header (``lost`` > 0: what they held is not in the journal), said only when a second reading a moment later finds the same (a running
writer's WAL read while it is written can look damaged once). ``None`` when there is nothing to
say: no ``-wal`` file, an empty one or one of zeros only (preallocated, never written), or one
that ends in the torn, uncommitted frames a crash during a write leaves (those were never
acknowledged).

The format (https://www.sqlite.org/fileformat.html#the_write_ahead_log): a 32-byte header (magic,
version, page size, checkpoint sequence, two salts, a checksum of its first 24 bytes), then
frames of a 24-byte header (page number, database size after a commit or 0, the two salts, a
cumulative checksum) and one page each.
"""
from __future__ import annotations

import os
import shutil
import stat
import struct
import time
from dataclasses import dataclass
from pathlib import Path

from controller.fsutil import fsync_dir

_MAGIC_LE, _MAGIC_BE = 0x377F0682, 0x377F0683  # the checksums' byte order: little or big endian
_VERSION = 3007000
_HEADER = 32
_FRAME_HEADER = 24
_MASK = 0xFFFFFFFF
RECHECK_S = 0.05  # seconds between the two readings of a WAL that looks damaged


@dataclass(frozen=True)
class WalProblem:
    """What SQLite will ignore in a journal's ``-wal`` file: ``text``, one line; ``lost``, the
    committed transactions in what it ignores (0 when none is known)."""

    text: str
    lost: int = 0

    def __str__(self) -> str:
        return self.text


def wal_path(journal_path: str | os.PathLike[str]) -> Path:
    return Path(os.fspath(journal_path) + "-wal")


def _checksum(data: bytes, order: str, s0: int, s1: int) -> tuple[int, int]:
    words = struct.unpack(f"{order}{len(data) // 4}I", data)
    for i in range(0, len(words), 2):
        s0 = (s0 + words[i] + s1) & _MASK
        s1 = (s1 + words[i + 1] + s0) & _MASK
    return s0, s1


def wal_problem(journal_path: str | os.PathLike[str]) -> WalProblem | None:
    """One line about what SQLite will ignore in the journal's ``-wal`` file, or None (above)."""
    wal = wal_path(journal_path)
    try:
        st = os.stat(wal)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return WalProblem(f"{wal}: cannot be checked ({exc.strerror or exc})")
    if not stat.S_ISREG(st.st_mode):
        return WalProblem(f"{wal}: is not a regular file; SQLite cannot use it")
    if st.st_size == 0:
        return None
    problem = _read_problem(wal)
    if problem is None:
        return None
    # A writer at work (a running table) rewrites the file under the reader: a frame written
    # while it was read, or a WAL restarted after its header was read (new frames, another salt,
    # before the last generation's commits), looks damaged for that one reading. What is damaged
    # at rest reads the same a moment later.
    time.sleep(RECHECK_S)
    return problem if _read_problem(wal) == problem else None


def _read_problem(wal: Path) -> WalProblem | None:
    try:
        with open(wal, "rb", opener=lambda p, f: os.open(p, f | os.O_NONBLOCK)) as fh:
            return _frames_problem(wal, fh, os.fstat(fh.fileno()).st_size)
    except OSError as exc:
        return WalProblem(f"{wal}: cannot be checked ({exc.strerror or exc})")


def orphaned_wal(journal_path: str | os.PathLike[str]) -> str | None:
    """One line when a ``-wal`` file that holds anything is beside a journal path that has no
    journal yet, else None. SQLite would read it as the new journal's last transactions: the file
    is another journal's, left behind when that journal was moved or removed without it (its
    last entries, those not yet checkpointed, are in it and nowhere else)."""
    wal = wal_path(journal_path)
    try:
        if os.path.lexists(journal_path) or os.stat(wal).st_size == 0:
            return None
        with open(wal, "rb", opener=lambda p, f: os.open(p, f | os.O_NONBLOCK)) as fh:
            if _only_zeros(fh.read(_HEADER), fh):
                return None
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"{wal}: cannot be checked ({exc.strerror or exc})"
    return (f"{wal}: a WAL file without its journal: it holds the last entries of a journal moved or "
            f"removed without it; put it back beside that journal (moving the journal moves "
            f"{Path(journal_path).name}* together), or move it away, before a new journal starts here")


_MAX_COPIES_A_SECOND = 1000


def keep_ignored_wal(journal_path: str | os.PathLike[str]) -> Path | None:
    """For a writer about to open the journal (SQLite will overwrite what it ignores) despite a
    ``wal_problem`` that loses no committed transaction: copy the ``-wal`` file to
    ``<journal>-wal.ignored-<UTC time>`` first (``-2``, ``-3``, ... after it when a copy of that
    second is there already: never over an earlier copy). Returns the copy, or None if it could
    not be made."""
    wal = wal_path(journal_path)
    stem = f"{wal.name}.ignored-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}"
    try:
        st = os.stat(wal)
        if not stat.S_ISREG(st.st_mode):
            return None
        with open(wal, "rb") as source:
            for n in range(1, _MAX_COPIES_A_SECOND + 1):
                copy = wal.with_name(stem if n == 1 else f"{stem}-{n}")
                try:
                    # Two opens in one second, or a clock stepped back onto a second already used,
                    # would otherwise overwrite evidence kept before (a review of clocks). The
                    # WAL's own mode: it holds the journal's content, the cards dealt face down.
                    fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, stat.S_IMODE(st.st_mode))
                except FileExistsError:
                    continue
                with open(fd, "wb") as target:
                    os.fchmod(fd, stat.S_IMODE(st.st_mode))  # the umask took bits off at the open
                    shutil.copyfileobj(source, target)
                    target.flush()
                    os.fsync(target.fileno())  # on disk before SQLite writes over the original
                fsync_dir(copy.parent.absolute())
                return copy
    except OSError:
        return None
    return None


def _only_zeros(start: bytes, fh) -> bool:  # noqa: ANN001 - a binary file
    """True when ``start`` and the rest of ``fh`` are all zero bytes: a WAL preallocated by the
    journal's writer (``checkpoints.preallocate_wal``) that no commit has written yet holds
    nothing; SQLite writes a header before its first frame."""
    if start.count(0) != len(start):
        return False
    while chunk := fh.read(1 << 20):
        if chunk.count(0) != len(chunk):
            return False
    return True


def _frames_problem(wal: Path, fh, size: int) -> WalProblem | None:  # noqa: ANN001 - a binary file
    ignored = WalProblem(f"{wal}: not a WAL file ({size} bytes): SQLite ignores it, so whatever it held is not in "
                         "the journal")
    header = fh.read(_HEADER)
    if len(header) < _HEADER:
        return None if _only_zeros(header, fh) else ignored
    magic, version, page_size, _, salt1, salt2, c0, c1 = struct.unpack(">8I", header)
    if magic not in (_MAGIC_LE, _MAGIC_BE) or version != _VERSION or not _is_page_size(page_size):
        return None if _only_zeros(header, fh) else ignored
    order = "<" if magic == _MAGIC_LE else ">"
    if _checksum(header[:24], order, 0, 0) != (c0, c1):
        # A header damaged at rest (it is written in one piece, within one disk sector): its
        # frames, which carry its salts, are all ignored with it.
        lost = _later_commits(fh, page_size, salt1, salt2)
        if lost:
            return WalProblem(f"{wal}: its header is damaged: SQLite ignores the whole file, {lost} committed "
                              "transaction(s) that are not in the journal", lost)
        return ignored
    s = (c0, c1)
    frame = 0
    while True:
        head = fh.read(_FRAME_HEADER)
        page = fh.read(page_size)
        if len(head) < _FRAME_HEADER or len(page) < page_size:
            return None  # the end, or a frame torn by a crash (never committed)
        frame += 1
        _, _, fs1, fs2, fc0, fc1 = struct.unpack(">6I", head)
        if (fs1, fs2) == (salt1, salt2):
            s = _checksum(head[:8] + page, order, *s)
            if s == (fc0, fc1):
                continue
        # SQLite stops here. A commit of this WAL's own further on is a transaction it drops. The
        # damaged frame itself never committed, even when it is a commit frame: a crash during its
        # write tears it (its header written over the page of an earlier, checkpointed frame), and
        # SQLite counts a transaction committed only once that whole frame is written and synced.
        lost = _later_commits(fh, page_size, salt1, salt2)
        if lost:
            return WalProblem(f"{wal}: frame {frame} is damaged: SQLite ignores it and everything after it, "
                              f"{lost} committed transaction(s) that are not in the journal", lost)
        return None


def _later_commits(fh, page_size: int, salt1: int, salt2: int) -> int:  # noqa: ANN001 - a binary file
    count = 0
    while True:
        head = fh.read(_FRAME_HEADER)
        if len(head) < _FRAME_HEADER:
            return count
        fh.seek(page_size, os.SEEK_CUR)
        _, commit, fs1, fs2, _, _ = struct.unpack(">6I", head)
        if commit and (fs1, fs2) == (salt1, salt2):
            count += 1


def _is_page_size(n: int) -> bool:
    return 512 <= n <= 65536 and n & (n - 1) == 0
