"""What ``shoectl run`` writes on standard output, without ever making the table wait for its reader.

- ``StdoutLines``: text for standard output, queued by the table's thread and written by a thread
  of its own (``controller.queued_output``). A reader that pauses (``shoectl run --json | less``, a
  log shipper pushing back, a terminal stopped with Ctrl-S) holds only that thread: the table
  deals on, its cards decided and journaled as fast as ever (before, the table's thread wrote
  itself and stopped at the first full pipe, dealer and devices waiting). At most ``LIMIT`` bytes
  wait in memory; past that a line for people is not shown (``line``: the next one that fits says
  how many were not), and a caller that can write later is told no (``write`` returns False). When
  the reader goes away (a closed pipe: ``shoectl run --json | head -n 3``) ``on_gone`` is called
  once (``shoectl run`` stops the table as cleanly as after ``--shoes N``, and exits 0: the reader
  had what it asked for) and every later line is dropped; standard output then points at
  ``/dev/null``, so the interpreter's last flush has nothing to complain about. An output that
  cannot be written (a full disk under ``> file``) is one error in the log and ``write_failed``
  says why; the table deals on (its journal has everything), and ``shoectl run`` ends with a
  line saying so and exit 1. ``finish(give_up)`` waits until the reader has everything (or
  ``give_up()`` says to stop). The run's last line is written ``always``, with the count of lines
  not shown before it: a reader behind at the end gets both.
- ``JournalLines``: ``shoectl run --json``. Every entry this run journals, in ``seq`` order, as
  ``shoectl journal export`` writes it (``Entry.to_json_line``: one format for both), and each
  notice for the people at the table as a line of its own, ``{"notice": {"level": ..., "text": ...}}``
  (an entry's line starts with ``{"seq":``), after the entries journaled before it. The entries are
  read back from the journal, on the table's own thread, at each record and notice, so they are
  exactly what was committed, with their ``seq``, ``ts`` and ``hash``. While the reader is behind,
  the journal is the buffer: entries are read when there is room; nothing is skipped. What the
  reader has not had when the table stops is read from the journal's file once the table has
  closed it (``StdoutLines.rest``, which ``output_read`` calls), as the reader takes it: never the
  whole backlog in memory, and the journal is not held open, locked and unanchored, for a slow
  reader.
"""
from __future__ import annotations

import contextlib
import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import structlog

from controller.cli.common import json_line, point_at_devnull
from controller.cli.stopping import exit_now
from controller.journal import Journal, JournalError, JournalReader
from controller.queued_output import LIMIT, QueuedOutput
from controller.table.io import Notice, TableRecord

NOTICES_HELD = 1000      # notices of --json kept while the reader is behind (the oldest go first)


class StdoutLines:
    """Queues text for standard output; see the module docstring. ``on_gone`` may be set later;
    ``stream`` is read at construction (default ``sys.stdout``)."""

    def __init__(self, on_gone: Callable[[], None] | None = None, *, stream: TextIO | None = None,
                 limit: int = LIMIT) -> None:
        self.on_gone = on_gone
        self.write_failed: str | None = None  # why the output could not be written (not a reader gone)
        # What is left to write once the table has closed (``JournalLines``), given ``give_up``: False
        # when it gave up first (``output_read``).
        self.rest: Callable[[Callable[[], bool]], bool] | None = None
        self._out = QueuedOutput(stream or sys.stdout, name="shoectl-stdout", limit=limit,
                                 on_failure=self._reader_gone)

    @property
    def gone(self) -> bool:
        """True once the reader has gone (or the output could not be written)."""
        return self._out.failed

    @property
    def not_shown(self) -> int:
        """Lines for people not shown since the last that was."""
        return self._out.missed

    @property
    def pending(self) -> int:
        """Bytes queued that the reader has not taken yet."""
        return self._out.pending

    def has_room(self) -> bool:
        """True when less than ``limit`` bytes wait for the reader (and the reader is there)."""
        return self._out.has_room()

    def line(self, text: str, *, always: bool = False) -> None:
        """``text`` and a newline, for people: not shown when the reader is ``limit`` behind,
        unless ``always`` (the run's last line)."""
        self._out.line(text + "\n", "lines not shown: standard output was not read", always=always)

    def write(self, text: str, *, always: bool = False) -> bool:
        """Queue ``text`` as it is; False (nothing queued) when the reader has gone or, unless
        ``always``, when ``limit`` bytes already wait."""
        return self._out.write(text, always=always)

    def wait_for_room(self, give_up: Callable[[], bool] = lambda: False) -> bool:
        """Wait until fewer than ``limit`` bytes wait for the reader; False when the reader has
        gone, or as soon as ``give_up()`` is true."""
        return self._out.wait_for_room(give_up)

    def finish(self, give_up: Callable[[], bool] = lambda: False) -> bool:
        """Wait until the reader has everything queued, then end the writing thread; True if it
        has. Stops waiting, with the thread left blocked, as soon as ``give_up()`` is true."""
        return self._out.finish(give_up)

    def _reader_gone(self, problem: OSError) -> None:
        if self._out.fd is not None:
            point_at_devnull(self._out.fd)
        if not isinstance(problem, BrokenPipeError):  # a full disk under `> file`: the table deals on
            self.write_failed = problem.strerror or str(problem) or "failed"
            structlog.get_logger().error("standard output cannot be written; nothing more is written there",
                                         problem=self.write_failed)
            return
        structlog.get_logger().info("standard output closed by its reader")
        if self.on_gone is not None:
            self.on_gone()


def output_read(out: StdoutLines, err: QueuedOutput, held: list[int], grace_s: float) -> None:
    """Wait until the readers of standard output and error have all the run wrote (the table is
    closed by now): as long as they take it; after a stop signal (the one that stopped the table,
    or one now) ``grace_s`` at most, then the one line of a forced exit."""
    deadline: list[float] = []

    def give_up() -> bool:
        if held and not deadline:
            deadline.append(time.monotonic() + grace_s)
        return bool(deadline) and time.monotonic() > deadline[0]

    unread = f"its output was not read within {grace_s:g} s"
    if out.rest is not None and not out.rest(give_up):
        exit_now("shoectl run", held[0], unread)
    for output in (out, err):
        if not output.finish(give_up) and give_up():
            exit_now("shoectl run", held[0], unread)



class JournalLines:
    """``run --json``: the display hooks (``record``, ``notice``, ``close``) writing the entries
    ``journal`` stores after ``since_seq`` (default: what it held when this was made)."""

    def __init__(self, journal: Journal, out: StdoutLines, since_seq: int | None = None) -> None:
        self.journal = journal
        self.out = out
        self.written_seq = journal.last_seq if since_seq is None else since_seq
        self._notices: deque[tuple[int, str]] = deque(maxlen=NOTICES_HELD)  # (seq it follows, line)
        self._path: Path | None = None  # the journal's file, for ``rest``: set by ``close``
        self._until = 0  # the last entry this run journaled: set by ``close``

    def record(self, r: TableRecord) -> None:
        self._entries()

    def notice(self, n: Notice) -> None:
        line = json_line({"notice": {"level": n.level, "text": n.text}})
        self._notices.append((self.journal.last_seq, line))
        self._entries()

    def close(self) -> None:
        """What there is room for; the rest is ``rest``'s, once the journal is closed (a journal
        whose file is gone is read to its end here, while this writer still has it open). A
        journal that cannot be read is reported by the run itself, which reads its anchor next."""
        gone = self.journal.gone is not None
        with contextlib.suppress(JournalError):
            self._entries(always=gone)
        self._until = self.journal.last_seq  # this run's: a table started next on the journal appends its own
        # read again only when the reader is behind (a read-only reader leaves the -wal and -shm: a review)
        self._path = None if gone or self.written_seq >= self._until else self.journal.path
        self.out.rest = self.rest

    def rest(self, give_up: Callable[[], bool]) -> bool:
        """After the journal is closed: the entries not written yet, read from its file (read-only)
        as the reader takes them, then the notices left. False when ``give_up()`` said to stop
        before the reader had them (it is asked while the reader is ``limit`` behind)."""
        path, self._path = self._path, None
        if path is not None:
            try:
                with JournalReader.open(path) as reader:
                    while not self._written_from(reader, until=self._until):
                        if not self.out.wait_for_room(give_up):
                            return self.out.gone  # a reader gone wanted no more; else it was given up on
            except JournalError as exc:  # moved or deleted since the table closed it
                self.out.write_failed = f"the journal's last entries could not be read ({exc})"
                structlog.get_logger().error("standard output lacks the journal's last entries", problem=str(exc),
                                             written_up_to=self.written_seq, journal_up_to=self._until)
        self._notices_up_to(None, always=True)
        return True

    def _written_from(self, source: Journal | JournalReader, *, until: int | None = None, always: bool = False) -> bool:
        """The entries ``source`` holds after the last written (up to ``until``), each after the
        notices before it; True once all are written, False when the output is full first."""
        for entry in source.entries(since_seq=self.written_seq):
            if until is not None and entry.seq > until:
                return True
            if not (self._notices_up_to(entry.seq - 1, always=always)
                    and self.out.write(entry.to_json_line(), always=always)):
                return False
            self.written_seq = entry.seq
        return True

    def _entries(self, *, always: bool = False) -> None:
        if (always or self.out.has_room()) and self._written_from(self.journal, always=always):
            self._notices_up_to(self.written_seq, always=always)

    def _notices_up_to(self, seq: int | None, *, always: bool) -> bool:
        """Write the notices that came after entry ``seq`` or before (all with None); False when
        the reader is too far behind for the next."""
        while self._notices and (seq is None or self._notices[0][0] <= seq):
            if not self.out.write(self._notices[0][1], always=always):
                return False
            self._notices.popleft()
        return True

