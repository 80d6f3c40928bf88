"""The event streams of a running table (the control socket's subscribers): each subscriber is a
bounded queue of JSON-ready dicts, fed by the owner thread; a full queue loses the event, so a
slow client never holds the table up."""
from __future__ import annotations

import queue
import threading
from typing import Any

__all__ = ["Subscribers"]


class Subscribers:
    """``add`` / ``remove`` from any thread; ``publish`` from the owner thread. True while there is
    at least one subscriber (a cheap check before building an event)."""

    def __init__(self) -> None:
        self._queues: list[queue.Queue[Any]] = []
        self._lock = threading.Lock()
        self._step_published: int | None = None  # the seq of the last clock_step published

    def add(self, maxsize: int) -> queue.Queue[Any]:
        q: queue.Queue[Any] = queue.Queue(maxsize=maxsize)
        with self._lock:
            self._queues.append(q)
        return q

    def remove(self, q: queue.Queue[Any]) -> None:
        with self._lock:
            if q in self._queues:
                self._queues.remove(q)

    def publish(self, event: dict[str, Any]) -> None:
        with self._lock:
            queues = list(self._queues)
        for q in queues:
            try:
                q.put_nowait(event)
            except queue.Full:
                pass

    def publish_record(self, journal: Any, kind: str, shoe: str | None, round_no: int | None,
                       shown: dict[str, Any]) -> None:
        """A record the owner just journaled, with ``ts``, its journal time (that of its transaction:
        a watcher ties the event to its entry). A ``clock_step`` the journal's writer journaled since
        the last record published comes first, once (the times after it are a stepped clock's)."""
        step = journal.last_step
        if step is not None and step[0] != self._step_published:
            self._step_published = step[0]
            self.publish({"type": "clock_step", "ts": step[1], "shoe": shoe, "round": round_no, **step[2].payload()})
        self.publish({"type": kind, "ts": journal.last_ts, "shoe": shoe, "round": round_no, **shown})

    def __bool__(self) -> bool:
        return bool(self._queues)
