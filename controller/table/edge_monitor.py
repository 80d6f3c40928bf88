"""The live edge monitor: after each round, every offered wager's exact player edge on the cards
left in the shoe, journaled as an ``edge`` record, and a surveillance notice (an ``edge_alert``
record, a warning notice, a structlog warning) when a wager's player edge is above the threshold
(docs/edge-monitor.md).

Contract: ``EdgeMonitor(threshold).attach(runner)`` before ``runner.run()``; ``close()`` after it.
The monitor keeps out of a card's way as far as a process sharing the interpreter can:

- On the owner thread it only notes the cards out as the runner dispatches the records it has
  committed (``observe``: a dict update per record) and, at a round's result, hands the
  composition to a worker (``submit``: a queue put).
- The worker is a thread by default (``worker="thread"``, ``shoectl-edge``): a round's figures
  take about 0.6 ms of pure Python holding the interpreter's lock. A card's thread that wants the
  lock meanwhile waits until the worker is asked to let go, after the interpreter's switch
  interval (5 ms by default): so while a thread worker runs, the monitor lowers the switch interval
  of its process to ``SWITCH_INTERVAL_S`` (``sys.setswitchinterval``; restored when the last
  monitor closes). That is safe: the interval only says how soon a thread waiting for the lock
  asks the running one for it, never what a thread may do; it costs a few more lock hand-overs
  while two threads both want to run, nothing when one is idle. ``worker="process"`` takes the
  counting out of the interpreter altogether, but on a machine with few cores the extra busy
  process costs the table more: ``benchmarks/bench_edge.py`` measures each beside the monitor
  off (docs/edge-monitor.md).
- The figures come back to the owner thread as an inbox item (``runner.call_on_owner``): the
  owner stays the journal's only writer. While inputs wait in the inbox the item goes to the back
  of the queue (up to ``MAX_YIELDS`` times), so its commit is made in a gap between inputs.

Pending work: a void round gets no figures; figures for a shoe that has ended (reconciled,
restarted, replaced by a new shoe) by the time they arrive are dropped (logged at info); a failed
worker stops the monitor with one warning (the table plays on). When the table stops (its
``on_stopping`` hooks, on the owner thread: ``--rounds N``, ``--shoes N``, a signal) the monitor
waits up to ``DRAIN_TIMEOUT_S`` for the figures still pending and journals those whose shoe is
still in play; a table stopped by an error journals nothing more.
"""
from __future__ import annotations

import multiprocessing
import sys
import threading
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction
from functools import partial
from typing import Any

import structlog

from controller.journal import kinds
from controller.rules.cards import Composition
from controller.table.edge_figures import (
    SHOE_END_KINDS, Remaining, ShoeCards, above, decimal_text, edge_payload, edge_percent,
)
from controller.table.edge_worker import SubmissionDocument, figures, worker_started
from controller.table.io import Notice, TableRecord

log = structlog.get_logger()
WORKERS = ("process", "thread")
MAX_YIELDS = 4          # times the figures let waiting inputs go first (a table dealing flat out has no gap)
ALERT_EVENT = "player edge above the threshold"  # the surveillance notice's log event (a warning by design)
DRAIN_TIMEOUT_S = 2.0  # a few milliseconds of counting; bounded well inside shoectl run's --stop-grace
SWITCH_INTERVAL_S = 0.0002  # how long a card's thread can wait for the lock while a thread worker counts


class _SwitchInterval:
    """The process's switch interval lowered while any thread worker runs (see the module docstring)."""

    lock = threading.Lock()
    users = 0
    saved = 0.0

    @classmethod
    def lower(cls, interval_s: float) -> None:
        with cls.lock:
            if cls.users == 0:
                cls.saved = sys.getswitchinterval()
            cls.users += 1
            sys.setswitchinterval(min(interval_s, cls.saved))

    @classmethod
    def restore(cls) -> None:
        with cls.lock:
            cls.users -= 1
            if cls.users == 0:
                sys.setswitchinterval(cls.saved)


# -- the owner's side ------------------------------------------------------------------------------------
@dataclass
class _Job:
    shoe: str
    round: int
    generation: int
    remaining: Remaining
    submission: Any
    future: Future | None = None
    handled: bool = field(default=False)
    yielded: int = 0


class EdgeMonitor:
    """See the module docstring. ``threshold``: the player edge per unit (``Decimal("0")``: any
    advantage) above which a wager raises the surveillance notice."""

    def __init__(self, threshold: Decimal | Fraction | int = 0, *, worker: str = "thread",
                 switch_interval_s: float | None = SWITCH_INTERVAL_S) -> None:
        """``switch_interval_s``: the process's switch interval while a thread worker runs (None:
        left as it is; the benchmark's comparison)."""
        if worker not in WORKERS:
            raise ValueError(f"worker must be one of {', '.join(WORKERS)}")
        self.threshold = Fraction(threshold)
        shown = Decimal(threshold) if not isinstance(threshold, Fraction) else Decimal(decimal_text(threshold))
        self.threshold_text = format(shown.normalize(), "f")
        self.worker = worker
        self.switch_interval_s = switch_interval_s if worker == "thread" else None
        self._lowered = False
        self.cards = ShoeCards()
        self.generation = 0        # bumped at every shoe start and end: older figures are dropped
        self.runner: Any = None
        self.broken = False
        self.computed = 0          # figures journaled
        self.dropped = 0           # figures dropped (their shoe ended first)
        self._pending: list[_Job] = []
        self._executor: Executor | None = None
        self._warm: Future | None = None  # the worker's first job: starting up, building its tables
        self._tokens: dict[int, tuple[int, Any]] = {}  # id(submission) -> (token, submission)

    # -- wiring ------------------------------------------------------------------------------------
    def prime(self, entries: Any) -> None:
        """Follow a resumed journal's records (``Entry``s) up to now, so the shoe in play is known."""
        for e in entries:
            self.cards.feed_entry(e)

    def prime_from(self, journal: Any) -> None:
        """``prime`` with the records of ``journal`` (a reader) from its last shoe start on: a shoe
        start sets everything the monitor follows afresh, so what came before it changes nothing
        (without one, every record). A resumed table's start reads one shoe, not its whole
        journal a second time."""
        start = journal.last_of_kind(kinds.SHOE_START)
        self.prime(journal.entries(since_seq=start.seq - 1 if start is not None else 0))

    def attach(self, runner: Any) -> EdgeMonitor:
        """Observe every record ``runner`` dispatches (its ``on_record`` hook, kept and called
        first) and start the worker, warmed up with the table's Rules Submission."""
        self.runner = runner
        previous = runner.on_record

        def on_record(r: TableRecord) -> None:
            if previous is not None:
                previous(r)
            self.observe(r)
        runner.on_record = on_record
        runner.on_stopping.append(self.drain)
        if self.worker == "process":
            self._executor = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=worker_started)
        else:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="shoectl-edge")
            if self.switch_interval_s is not None:
                _SwitchInterval.lower(self.switch_interval_s)
                self._lowered = True
        sub = runner.core.sub
        self._warm = self._executor.submit(figures, self._for_worker(sub), Composition.standard(sub.decks))
        return self

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Wait until the worker is up and has built its tables (its first figures come in
        milliseconds then); a table need not wait, a measurement does."""
        self._warm.result(timeout=timeout_s)

    def observe(self, r: TableRecord) -> None:
        """(owner thread) A committed record: note the cards out; at a round's result, submit."""
        self.cards.feed(r.kind, r.payload, r.shoe)
        if r.kind == kinds.SHOE_START or r.kind in SHOE_END_KINDS:
            self.generation += 1
        elif r.kind == kinds.ROUND_RESULT and r.payload.get("kind") != "void" and not self.cards.ended:
            self.submit(r.shoe, r.payload["round"])

    def submit(self, shoe: str, round_no: int) -> None:
        if self.broken or self._executor is None:
            return
        remaining = self.cards.remaining()
        if remaining.composition is None:
            log.info("no edge figures", shoe=shoe, round=round_no, reason=remaining.why)
            return
        sub = self.runner.core.sub
        job = _Job(shoe, round_no, self.generation, remaining, sub)
        try:
            job.future = self._executor.submit(figures, self._for_worker(sub), remaining.composition)
        except RuntimeError as exc:  # a broken pool, or shut down
            self._stop(str(exc))
            return
        self._pending.append(job)
        job.future.add_done_callback(lambda _f: self.runner.call_on_owner(partial(self._arrived, job)))

    def _for_worker(self, sub: Any) -> Any:
        """``sub`` as the worker takes it: the object itself in a thread, a ``SubmissionDocument`` (with a
        token per Rules Submission this monitor has seen) for a process."""
        if self.worker == "thread":
            return sub
        token, _ = self._tokens.setdefault(id(sub), (len(self._tokens) + 1, sub))
        return SubmissionDocument(token, sub.source, {k: v for k, v in sub.to_dict().items() if k != "source"})

    # -- the figures back on the owner thread ----------------------------------------------------------
    def _arrived(self, job: _Job, *, now: bool = False) -> None:
        if job.handled:
            return
        if not now and job.yielded < MAX_YIELDS and not self.runner.inbox.empty():
            job.yielded += 1  # inputs first: the commit waits for a gap, a few inputs at most
            self.runner.call_on_owner(partial(self._arrived, job))
            return
        job.handled = True
        self._pending.remove(job)
        future = job.future
        if future.cancelled():
            return
        exc = future.exception()
        if exc is not None:
            self._stop(str(exc) or type(exc).__name__)
            return
        if job.generation != self.generation:
            self.dropped += 1
            log.info("edge figures dropped: the shoe ended before they came", shoe=job.shoe, round=job.round)
            return
        self.runner.journal_outputs(self.outputs(job.shoe, job.round, job.submission, job.remaining, future.result()))
        self.computed += 1

    def outputs(self, shoe: str, round_no: int, submission: Any, remaining: Remaining,
                wagers: dict[str, dict[str, str]]) -> list[Any]:
        """The ``edge`` record and, when a wager is above the threshold, the ``edge_alert`` record
        and its notice."""
        out: list[Any] = [self._record(kinds.EDGE, edge_payload(round_no, submission, remaining, wagers,
                                                                 self.threshold_text), shoe, round_no)]
        hot = above(wagers, self.threshold)
        if hot:
            out.append(self._record(kinds.EDGE_ALERT, {"round": round_no, "wagers": hot,
                                                       "threshold": self.threshold_text}, shoe, round_no))
            shown = ", ".join(f"{k} {edge_percent(wagers[k])}" for k in hot)
            out.append(Notice("warning", f"surveillance: player edge above {self.threshold_text} after round "
                                         f"{round_no} of {shoe}: {shown}", surveillance=True))
            log.warning(ALERT_EVENT, shoe=shoe, round=round_no, wagers=shown, threshold=self.threshold_text)
        return out

    @staticmethod
    def _record(kind: str, payload: dict[str, Any], shoe: str, round_no: int) -> TableRecord:
        return TableRecord(kind, payload, shoe, round_no)

    def _stop(self, why: str) -> None:
        if not self.broken:
            self.broken = True
            log.warning("edge monitor stopped: its worker failed; the table plays on", error=why)

    # -- stopping --------------------------------------------------------------------------------------
    def drain(self, timeout_s: float = DRAIN_TIMEOUT_S) -> None:
        """(owner thread, as the table stops) Wait up to ``timeout_s`` in all for the figures still
        pending and journal those whose shoe is still in play; the rest are dropped."""
        deadline = time.monotonic() + timeout_s
        for job in list(self._pending):
            try:
                job.future.result(timeout=max(0.0, deadline - time.monotonic()))
            except Exception:  # noqa: BLE001 - a timeout or a failed worker: _arrived says which
                pass
            if job.future.done():
                self._arrived(job, now=True)

    def close(self) -> None:
        """Stop the worker (what it still computes is dropped)."""
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
        if self._lowered:
            self._lowered = False
            _SwitchInterval.restore()
