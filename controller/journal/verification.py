"""Verify a journal file: SQLite integrity, the hash chain (and HMAC), and anchors; and read a
journal while checking it the same way.

``verify(path)`` opens the file read-only and never modifies it. It reports the first bad entry:

- an edited entry (any column, the payload included): its hash does not match;
- a deleted entry: a gap in ``seq``, or (deleted and renumbered) a ``prev_hash`` that does not
  link to the entry before;
- an inserted or reordered entry: a broken ``prev_hash`` link, or a hash that does not match;
- with HMAC: an entry forged with a recomputed hash by someone without the key.

A chain alone cannot detect a truncated tail (the last entries removed) nor, without HMAC, a
journal rewritten from some entry on with recomputed hashes, nor an HMAC journal re-chained with
SHA-256 and relabelled (when no key is given). Anchors kept outside the journal can
(``controller.journal.anchors``): the anchors file beside the journal (``<journal>.anchors``,
written by ``shoectl run``) is read by default, ``anchor_files`` names others (paths, or the
``AnchorLines`` of a file its caller already read); ``anchors=[(seq,
hash), ...]``, ``expect_count`` and ``expect_last_hash`` are anchors given by hand. A verification
without any anchor says so in ``warnings``.

``checked_read(path, ...)`` is the same check as a reader reads: ``read.entries()`` yields every
entry, each checked as it goes by (the check stops at the first failure, the reading does not),
and ``read.report()`` is the verdict once they have all been read. An HMAC journal read without
its key is checked without recomputing the hashes (``links_only``), and said so in ``warnings``.
The verdict, and its line: ``verify_report``.
"""
from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from controller.journal.anchors import AnchorFile, AnchorLines, anchors_path
from controller.journal.chain import GENESIS_HASH, HMAC_SHA256, Hasher, check_key
from controller.journal.chaincheck import BATCH_ROWS, ChainCheck
from controller.journal.connection import first_undecodable_entry, open_readonly_connection, translate, undecodable_column
from controller.journal.entry import Entry, require_row_types, row_to_entry
from controller.journal.errors import JournalDamagedError, JournalError, NotAJournalError, NotAnObjectPayload
from controller.journal.schema import inspect_meta, layout_of
from controller.journal.split_check import FIRST_SHARE_WITH_INTEGRITY, LaterHalf, split_point
from controller.journal.verify_report import VerifyReport, verdict_line
from controller.journal.walcheck import wal_problem

_LAST_SEQ = 2**63 - 1  # SQLite's largest integer: no seq is above it


def require_intact(path: str | os.PathLike[str], *, hmac_key: bytes | None = None) -> VerifyReport | None:
    """For the table about to resume the journal at ``path`` (None when there is none yet):
    JournalError, one line, unless it verifies; else its report (its warnings for the caller to
    say). Resuming feeds every journaled input to the core again, so a journal that does not
    verify would rebuild a state it does not prove."""
    if not Path(path).exists():
        return None
    report = verify(path, hmac_key=hmac_key)
    if not report.ok:
        raise JournalError(f"{verdict_line(path, report)}: the table does not resume from a journal that does "
                           "not verify")
    return report


def verify(path: str | os.PathLike[str], *, hmac_key: bytes | None = None, expect_count: int | None = None,
           expect_last_hash: str | None = None, anchors: Iterable[tuple[int, str]] = (),
           anchor_files: Iterable[str | os.PathLike[str] | AnchorLines] | None = None,
           integrity_check: bool = True, processes: int | None = None) -> VerifyReport:
    """Verify the journal at ``path`` (read-only). Raises JournalError when the file is missing,
    unreadable, locked or not a journal, or an anchors file cannot be read; returns a
    VerifyReport otherwise (a failed one for a file SQLite finds damaged). ``anchor_files=None``: the anchors file beside the journal, if any.
    ``processes``: None checks a long journal's chain in two processes where that is safe and
    pays (``controller.journal.split_check``), 1 in this one, 2 in two; the verdict is the same."""
    try:
        with checked_read(path, hmac_key=hmac_key, expect_count=expect_count, expect_last_hash=expect_last_hash,
                          anchors=anchors, anchor_files=anchor_files, integrity_check=False,
                          key_required=True, warn_unanchored=True) as read:
            read.check_all(processes, integrity_check=integrity_check)
            return read.report()
    except JournalDamagedError as exc:  # the file itself: a check that failed, not a file to refuse
        return VerifyReport.damaged(path, exc)


@contextlib.contextmanager
def checked_read(path: str | os.PathLike[str], *, hmac_key: bytes | None = None, expect_count: int | None = None,
                 expect_last_hash: str | None = None, anchors: Iterable[tuple[int, str]] = (),
                 anchor_files: Iterable[str | os.PathLike[str] | AnchorLines] | None = None,
                 integrity_check: bool = True, key_required: bool = False,
                 warn_unanchored: bool = False) -> Iterator[CheckedRead]:
    """One consistent, checked read of the journal at ``path`` (see the module docstring).

    ``key_required``: an HMAC journal without its key fails (``needs_key``) instead of being
    checked links only. ``warn_unanchored``: a warning when the journal verifies without any
    anchor having been checked."""
    p = Path(path)
    hasher = Hasher(hmac_key)
    if anchor_files is None:
        beside = anchors_path(p)
        anchor_files = [beside] if beside.exists() else []
    # Before the snapshot: an anchor names an entry committed before it was written, so every
    # anchor read then names one the snapshot holds. Read after it, an anchor of a shoe ended
    # meanwhile named an entry past the snapshot's end: a running table's journal read "truncated?"
    # (a long-run review: 3 exports in 5 of a large one).
    anchor_files = [f if isinstance(f, AnchorLines) else AnchorFile(f).read() for f in anchor_files]
    wal = wal_problem(p)  # before SQLite opens it: what it will ignore
    conn = open_readonly_connection(p)
    try:
        try:
            conn.execute("BEGIN")  # one consistent snapshot, even while the writer appends
            meta = inspect_meta(conn, p)
            if meta is None:
                raise NotAJournalError(f"{p}: not a journal: an empty SQLite database")
            read = CheckedRead(conn, p, meta, [wal.text] if wal and not wal.lost else [])
            read.wal_loss = wal.text if wal and wal.lost else None
            read.prepare(hasher, integrity_check=integrity_check, key_required=key_required,
                         anchors=anchors, anchor_files=anchor_files, expect_count=expect_count,
                         expect_last_hash=expect_last_hash, warn_unanchored=warn_unanchored)
            yield read
        except sqlite3.Error as exc:
            raise translate(exc, p, "read the journal") from None
    finally:
        conn.close()


class CheckedRead:
    """A journal being read and checked in one read transaction (made by ``checked_read``)."""

    def __init__(self, conn: sqlite3.Connection, path: Path, meta: dict[str, str], warnings: list[str]) -> None:
        self._conn = conn
        self.path = path
        self.meta = meta
        self.layout = layout_of(meta)
        self.warnings = warnings
        self._rows_read = 0
        self.check = ChainCheck(meta["table_id"], None)
        self.needs_key = False
        self.links_only = False
        self.anchor_count = 0
        self._expect: tuple[int | None, str | None] = (None, None)
        self._complete = False
        self._warn_unanchored = False
        self._verdict_warned = False  # the verdict's own warnings (no anchor, no entry) were added
        self._opening_anchored = False  # an anchor of entry 0 (the journal's opening) was read
        self.wal_loss: str | None = None  # committed transactions SQLite ignores in the -wal file

    def prepare(self, hasher: Hasher, *, integrity_check: bool, key_required: bool,
                anchors: Iterable[tuple[int, str]], anchor_files: Iterable[AnchorLines],
                expect_count: int | None, expect_last_hash: str | None, warn_unanchored: bool) -> None:
        """The checks before the entries: SQLite's, the key's, the anchors' (``anchor_files``: as
        read before the snapshot, ``checked_read``)."""
        check = self.check
        if integrity_check:
            self.check_integrity()
        failure, needs_key = check_key(self.meta, hasher)
        if needs_key and not key_required:
            self.links_only = True
            self.warnings.append(f"{self.path}: the journal is HMAC-protected; without its key (--hmac-key) only "
                                 "the links of its chain were checked, not its hashes")
        elif failure is not None:
            self.needs_key = needs_key and check.ok  # a failed integrity check comes first
            check.fail(None, failure)
        else:
            check.hasher = hasher
        anchor_map: dict[int, list[tuple[str, str]]] = {}
        for seq, digest in anchors:
            anchor_map.setdefault(seq, []).append((digest.lower(), "--anchor"))
        for lines in anchor_files:
            self._read_anchor_file(lines, anchor_map)
        check.anchors = anchor_map
        self._expect = (expect_count, expect_last_hash)
        self.anchor_count = sum(map(len, anchor_map.values())) + (expect_count is not None) + (expect_last_hash is not None)
        self._warn_unanchored = warn_unanchored and not self.anchor_count

    def _read_anchor_file(self, lines: AnchorLines, anchor_map: dict[int, list[tuple[str, str]]]) -> None:
        if lines.torn_last_line:
            self.warnings.append(lines.torn_last_line)
        for where, reason in lines.bad:
            self.check.fail(None, f"{where}: {reason}")
        hasher = self.check.hasher
        for where, anchor in lines.anchors:
            why = anchor.differs_from(self.meta)
            if why is None and hasher is not None and anchor.algorithm == HMAC_SHA256 and not anchor.signature_holds(hasher):
                why = "its signature does not match the journal's key: forged?"
            if why is None and anchor.seq == 0 and anchor.hash != GENESIS_HASH:
                why = "an anchor of entry 0 must have the genesis hash"
            if why is not None:
                self.check.fail(None, f"{where}: the anchor does not fit this journal: {why}")
            elif anchor.seq:
                anchor_map.setdefault(anchor.seq, []).append((anchor.hash, where))
            else:
                self._opening_anchored = True

    def check_integrity(self) -> None:
        """SQLite's quick_check. Its failure is the verdict, before any other recorded: a file
        SQLite finds damaged explains whatever else is wrong with it."""
        problem = _integrity_problem(self._conn)
        if problem is not None:
            self.check.fail_before(None, problem)
            self.needs_key = False

    def row_batches(self, *, after: int = 0, upto: int | None = None,
                    checked: bool = True) -> Iterator[list[tuple[Any, ...]]]:
        """Every row of ``entries`` in seq order (all columns; with ``after``/``upto``: those with
        ``after < seq <= upto``, the rows before them already checked), in batches, each batch fed
        to the check before it is handed over (``checked=False``: not fed, for rows whose verdict
        the check already holds). A row holding text that is not UTF-8 (which only something
        other than this package writes) cannot be handed over: it is the check's failure, named
        like any other damaged entry, and the rows after it are read on (``--no-verify``)."""
        check = self.check
        select = f"{self.layout.select} WHERE seq > ? AND seq <= ? ORDER BY seq"
        last = _LAST_SEQ if upto is None else upto
        bad: tuple[int, str] | None = None  # an entry ahead whose text is not UTF-8: read up to it, then fail on it
        while True:
            cur = self._conn.execute(select, (after, last if bad is None else bad[0] - 1))
            try:
                while rows := cur.fetchmany(BATCH_ROWS):
                    if checked:
                        check.feed_rows(rows)
                        self._rows_read += len(rows)
                    after = rows[-1][0]
                    yield rows
            except sqlite3.OperationalError as exc:
                if undecodable_column(exc) is None:
                    raise
                bad = first_undecodable_entry(self.path, after)
                if bad is None or bad[0] > last:
                    check.fail(None, "text in the journal is not UTF-8")
                    return
                continue
            if bad is None:
                break
            seq, column = bad
            check.fail(seq, f"entry {seq}: its {column} is not UTF-8 text")
            self._rows_read += 1
            after, bad = seq, None
        self._complete = upto is None

    def check_all(self, processes: int | None = None, *, integrity_check: bool = False) -> None:
        """Read and check every row without handing any over (``verify``; nothing when a check
        before the rows failed), in two processes when ``split_check.split_point`` says so: this
        one checks up to the split, a forked one the rest, and their verdicts are joined (or this
        one checks the rest too, when the other failed). ``integrity_check``: SQLite's quick_check
        first (``check_integrity``); with two processes it runs here while the other one already
        checks its part, and this one's part is the smaller by about what it costs."""
        for _ in self._checked_batches(processes, integrity_check):
            if not self.check.ok:
                break

    def _checked_batches(self, processes: int | None, integrity_check: bool, *,
                         every_row: bool = False) -> Iterator[list[tuple[Any, ...]]]:
        """Every row, checked, in batches: for ``check_all`` until the check fails; with
        ``every_row`` (a reader) all of them, those after a failure too, as ``row_batches`` hands
        them over (a failed check is fed nothing more). Split in two processes, the later half's
        rows are handed over only once both halves' verdicts are joined: a reader is never given a
        row the check has not yet judged while the check still holds."""
        check = self.check
        share = FIRST_SHARE_WITH_INTEGRITY if integrity_check else 0.5
        split = split_point(self._conn, processes, first_share=share) if check.ok else None
        if split is None:
            if integrity_check:
                self.check_integrity()
            if check.ok or every_row:
                yield from self.row_batches()
            return
        k, k_hash, last = split
        with LaterHalf(self.path, self.layout.select, self.meta["table_id"], check.hasher, check.anchors,
                       k, k_hash, last).start() as later:
            if integrity_check:
                self.check_integrity()
            if check.ok:
                yield from self.row_batches(upto=k)
            found = later.result() if check.ok else None
        if found is None or (check.last_seq, check.last_hash) != (k, k_hash):
            # This half failed the check, or the second process failed: this one reads the rest.
            if check.ok or every_row:
                yield from self.row_batches(after=k)
            return
        if found.anchor_said is not None:
            # An anchor of the later half differed before any held there: back to this half's last.
            check.anchor_failure(found.first_bad_seq, found.anchor_said)
        else:
            check.good += found.good
            check.last_seq, check.last_hash = found.last_seq, found.last_hash
            if found.reason is not None:
                check.fail(found.first_bad_seq, found.reason)
        self._rows_read += found.rows
        if every_row:
            yield from self.row_batches(after=k, upto=last, checked=False)
        self._complete = found.reason is None

    @property
    def total(self) -> int:
        """Rows in ``entries``: those read, once all were (counting them costs a pass of its own)."""
        if self._complete:
            return self._rows_read
        return self._conn.execute("SELECT count(*) FROM entries").fetchone()[0]

    def rows(self, processes: int | None = None) -> Iterator[tuple[Any, ...]]:
        """Every row of ``entries`` in seq order (all columns), checked (``row_batches``): a long
        journal's later half in a second process while this one reads and checks the first
        (``processes`` as ``check_all``'s; the rows and the verdict are those of one pass)."""
        for rows in self._checked_batches(processes, integrity_check=False, every_row=True):
            yield from rows

    def entries(self, since_seq: int = 0, kinds: Iterable[str] | None = None,
                keep: Callable[[str, str | None], bool] | None = None,
                processes: int | None = None) -> Iterator[Entry]:
        """The entries with ``seq > since_seq`` (of those ``kinds``; for which ``keep(kind,
        shoe_id)`` is true), in order; every entry is read and checked, those not asked for too
        (``rows``). ``keep`` is asked before an entry is decoded: what it leaves out costs only
        its check. An entry whose payload is not a JSON object is left out, as one whose text is
        not UTF-8 is: the check fails at it or before, which a --no-verify reader says."""
        wanted = None if kinds is None else frozenset([kinds] if isinstance(kinds, str) else kinds)
        for row in self.rows(processes):
            if type(row[0]) is not int:  # unchecked (--no-verify): compared below
                require_row_types(row, self.path)
            if (row[0] > since_seq and (wanted is None or row[2] in wanted)
                    and (keep is None or keep(row[2], row[4]))):
                try:
                    yield row_to_entry(row, self.path, self.layout.entry_version(row[0]))
                except NotAnObjectPayload:
                    if self.check.ok:  # the later half, checked in the other process: said as it is
                        raise

    def report(self) -> VerifyReport:
        """The verdict: after every row was read, or after the check failed."""
        check = self.check
        if check.ok:
            if not self._complete:
                raise RuntimeError("CheckedRead.report() before all the entries were read")
            check.finish(*self._expect)
        if check.ok and self.wal_loss:  # entries acknowledged once, and gone: the journal is not whole
            check.fail(None, self.wal_loss)
        if check.ok and not self._verdict_warned:  # said once, however often the verdict is asked for
            self._verdict_warned = True
            if self._warn_unanchored:  # a failure needs no anchor to be believed
                which = " of any entry (the anchors read hold only the journal's opening)" if self._opening_anchored else ""
                self.warnings.append(f"{self.path}: checked without an anchor{which}: a removed tail, or a rewrite "
                                     "with recomputed hashes, would not show (see docs/journal.md, Anchors)")
            if check.last_seq == 0:
                # A journal's first entries may all be in its -wal: a copy of the file alone holds none (a review).
                self.warnings.append(f"{self.path}: holds no entry: if it is a copy, copy its -wal file with it "
                                     "(docs/journal.md, File and schema)")
        return VerifyReport(
            check.ok, check.good, check.first_bad_seq, check.reason, last_seq=check.last_seq,
            last_hash=check.last_hash, total=self.total, algorithm=self.meta["hash_algorithm"],
            key_id=self.meta.get("key_id"), needs_key=self.needs_key, path=str(self.path),
            anchors=self.anchor_count, links_only=self.links_only,
            warnings=tuple(self.warnings))


def _integrity_problem(conn: sqlite3.Connection) -> str | None:
    """SQLite's quick_check in one line (its report spans several), or None when it is ok."""
    rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check(5)")]
    if rows == ["ok"]:
        return None
    lines = [" ".join(line.split()) for r in rows for line in r.splitlines()]
    lines = [line for line in lines if line and not line.startswith("*** in database")]
    first = lines[0] if lines else "no details"
    more = f" (and {len(lines) - 1} more problem(s))" if len(lines) > 1 else ""
    return f"SQLite integrity check failed: {first}{more}"
