"""Refusals at the control socket, journaled without letting a flood fill the journal.

Contract: ``RefusalJournal(note, *, burst=10, window_s=10.0, summary_every_s=1.0,
clock=time.monotonic)``; ``refused(kind, payload, operator, shown)`` journals one refusal through
``note(kind, payload, operator, shown)`` (``TableRunner.note``, which queues it for the table's own
thread; ``shown``: the payload as the event streams show it, when that is less). The caller has
made the payload safe to journal (``controller.control.requests``).

In each window of ``window_s`` seconds (from the first refusal after the previous window ended)
the first ``burst`` refusals are journaled one by one; the rest are only counted, and a
``refusals_summary`` record says how many were not journaled one by one since the previous
summary (``not_journaled``), by code (``by_code``: auth, forbidden, bad_request, busy, ...), with
up to five of the operator ids tried (``operators``; on the streams as each refusal's ``shown``
form says it). Summaries are written by ``tick()`` (the
server calls it several times a second) at most every ``summary_every_s`` seconds while a flood
lasts, and by ``close()``; so a steady flood costs the journal at most ``burst`` records per window
plus one a second, and memory is bounded (counters per code and five ids). Thread-safe.
``refused`` returns False, and journals and counts nothing, once ``close()`` has run: the table's
owner no longer journals, and the caller must not tell a refusal that no record will show (it
answers that the table is stopping instead).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from controller.journal import kinds

SUMMARY_KIND = kinds.REFUSALS_SUMMARY
MAX_OPERATORS_SHOWN = 5

Note = Callable[[str, dict[str, Any], "str | None", "dict[str, Any] | None"], None]


class RefusalJournal:
    """See the module docstring."""

    def __init__(self, note: Note, *, burst: int = 10, window_s: float = 10.0, summary_every_s: float = 1.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._note = note
        self.burst = int(burst)
        self.window_s = float(window_s)
        self.summary_every_s = float(summary_every_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._window_end: float | None = None
        self._in_window = 0
        self._counted: dict[str, int] = {}
        self._operators: list[str] = []  # the ids tried, as journaled ...
        self._streamed: list[str] = []  # ... and as the streams show them, each list without repeats
        self._last_summary = clock()
        self._closed = False

    def refused(self, kind: str, payload: dict[str, Any], operator: str | None = None,
                shown: dict[str, Any] | None = None) -> bool:
        """Journal this refusal, or count it if the window's ``burst`` is spent: True; False once
        closed (nothing journaled or counted)."""
        with self._lock:
            if self._closed:
                return False
            now = self._clock()
            if self._window_end is None or now >= self._window_end:
                self._window_end = now + self.window_s
                self._in_window = 0
            self._in_window += 1
            if self._in_window > self.burst:
                code = str(payload.get("code") or kind)
                self._counted[code] = self._counted.get(code, 0) + 1
                # Each list on its own: the streams show an id as the refusal's streamed form says
                # it, and count the ids as they show them (an operator's id of a PIN's shape, hidden,
                # is one more hidden id only if no other was: reviews read it in a summary, then
                # counted the hidden entries)
                for ids, tried in ((self._operators, payload.get("operator")),
                                   (self._streamed, (shown or payload).get("operator"))):
                    if isinstance(tried, str) and tried not in ids and len(ids) < MAX_OPERATORS_SHOWN:
                        ids.append(tried)
                return True
            # Under the lock: a ``close`` between the look at ``_closed`` and the note would let a
            # refusal be told whose note comes after the owner's last journaling (a review).
            self._note(kind, payload, operator, shown)
        return True

    def tick(self) -> None:
        """Journal the counts so far if the last summary is ``summary_every_s`` old."""
        with self._lock:
            if self._counted and self._clock() >= self._last_summary + self.summary_every_s:
                self._flush()

    def close(self) -> None:
        """Journal the counts not yet summarized; refuse to journal any more (``refused``)."""
        with self._lock:
            self._flush()
            self._closed = True

    def _flush(self) -> None:
        counted = sum(self._counted.values())
        if counted:
            summary = {"not_journaled": counted, "by_code": dict(sorted(self._counted.items())),
                       "operators": list(self._operators)}
            self._note(SUMMARY_KIND, summary, None,
                       None if self._streamed == self._operators else {**summary, "operators": list(self._streamed)})
        self._counted = {}
        self._operators, self._streamed = [], []
        self._last_summary = self._clock()
