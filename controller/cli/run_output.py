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
  read back from the journal, on the table's own thread, at each record and notice and once more at
  the end, so they are exactly what was committed, with their ``seq``, ``ts`` and ``hash``. While
  the reader is behind, the journal is the buffer: entries are read when there is room, and all
  that remain at ``close()``; nothing is skipped.
"""
from __future__ import annotations

import contextlib
import sys
import time
from collections import deque
from collections.abc import Callable
from typing import TextIO

import structlog

from controller.cli.common import json_line, point_at_devnull
from controller.cli.stopping import exit_now
from controller.journal import Journal, JournalError
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

    for output in (out, err):
        if not output.finish(give_up) and give_up():
            exit_now("shoectl run", held[0], f"its output was not read within {grace_s:g} s")



class JournalLines:
    """``run --json``: the display hooks (``record``, ``notice``, ``close``) writing the entries
    ``journal`` stores after ``since_seq`` (default: what it held when this was made)."""

    def __init__(self, journal: Journal, out: StdoutLines, since_seq: int | None = None) -> None:
        self.journal = journal
        self.out = out
        self.written_seq = journal.last_seq if since_seq is None else since_seq
        self._notices: deque[tuple[int, str]] = deque(maxlen=NOTICES_HELD)  # (seq it follows, line)

    def record(self, r: TableRecord) -> None:
        self._entries()

    def notice(self, n: Notice) -> None:
        line = json_line({"notice": {"level": n.level, "text": n.text}})
        self._notices.append((self.journal.last_seq, line))
        self._entries()

    def close(self) -> None:
        """Everything not written yet, however far behind the reader is. A journal that cannot be
        read here is reported by the run itself, which reads its anchor next."""
        with contextlib.suppress(JournalError):
            self._entries(always=True)
        self._notices_up_to(None, always=True)

    def _entries(self, *, always: bool = False) -> None:
        if not (always or self.out.has_room()):
            return
        for entry in self.journal.entries(since_seq=self.written_seq):
            if not (self._notices_up_to(entry.seq - 1, always=always)
                    and self.out.write(entry.to_json_line(), always=always)):
                return
            self.written_seq = entry.seq
        self._notices_up_to(self.written_seq, always=always)

    def _notices_up_to(self, seq: int | None, *, always: bool) -> bool:
        """Write the notices that came after entry ``seq`` or before (all with None); False when
        the reader is too far behind for the next."""
        while self._notices and (seq is None or self._notices[0][0] <= seq):
            if not self.out.write(self._notices[0][1], always=always):
                return False
            self._notices.popleft()
        return True

