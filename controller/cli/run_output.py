"""What ``shoectl run`` writes on standard output.

- ``StdoutLines``: lines on standard output, each flushed as it is written. When the reader goes
  away (a closed pipe: ``shoectl run --json | head -n 3``) it calls ``on_gone`` once (``shoectl
  run`` stops the table as cleanly as after ``--shoes N``, and exits 0: the reader had what it
  asked for) and drops every later line. Standard output then points at ``/dev/null``, so the
  interpreter's last flush has nothing to complain about.
- ``JournalLines``: ``shoectl run --json``. Every entry this run journals, in ``seq`` order, as
  ``shoectl journal export`` writes it (``Entry.to_json_line``: one format for both), and each
  notice for the people at the table as a line of its own, ``{"notice": {"level": ..., "text": ...}}``
  (an entry's line starts with ``{"seq":``). The entries are read back from the journal, on the
  table's own thread, at each record and notice and once more at the end, so they are exactly
  what was committed, with their ``seq``, ``ts`` and ``hash``.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
import structlog

from controller.cli.common import print_json
from controller.journal import Journal, JournalError
from controller.table.io import Notice, TableRecord


class StdoutLines:
    """Writes lines on standard output; see the module docstring. ``on_gone`` may be set later."""

    def __init__(self, on_gone: Callable[[], None] | None = None) -> None:
        self.on_gone = on_gone
        self.gone = False
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        """Write ``text`` and a newline (nothing once the reader has gone)."""
        self.write(text + "\n")

    def write(self, text: str) -> None:
        """Write ``text`` as it is and flush (nothing once the reader has gone)."""
        with self._lock:
            if self.gone:
                return
            try:
                sys.stdout.write(text)
                sys.stdout.flush()
            except BrokenPipeError:
                self.gone = True
                _point_stdout_at_devnull()
                structlog.get_logger().info("standard output closed by its reader")
            else:
                return
        if self.on_gone is not None:
            self.on_gone()


def _point_stdout_at_devnull() -> None:
    """What could not be written stays in the stream's buffer; flushed into ``/dev/null`` at exit it
    makes no "Exception ignored ... BrokenPipeError" and no exit status 120."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


class JournalLines:
    """``run --json``: the display hooks (``record``, ``notice``, ``close``) writing the entries
    ``journal`` stores after ``since_seq`` (default: what it held when this was made)."""

    def __init__(self, journal: Journal, out: StdoutLines, since_seq: int | None = None) -> None:
        self.journal = journal
        self.out = out
        self.written_seq = journal.last_seq if since_seq is None else since_seq

    def record(self, r: TableRecord) -> None:
        self._entries()

    def notice(self, n: Notice) -> None:
        self._entries()
        print_json({"notice": {"level": n.level, "text": n.text}}, stream=self.out)

    def close(self) -> None:
        """The entries not written yet (those of inputs that made no record). A journal that cannot
        be read here is reported by the run itself, which reads its anchor next."""
        with contextlib.suppress(JournalError):
            self._entries()

    def _entries(self) -> None:
        if self.out.gone:
            return
        for entry in self.journal.entries(since_seq=self.written_seq):
            self.out.write(entry.to_json_line())
            self.written_seq = entry.seq

