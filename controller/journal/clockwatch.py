"""The writer's watch on its wall clock: a step of it journaled where it happened.

Every entry's ``ts`` is the wall clock's time when the writer stores it; ``seq`` orders the
journal and the chain protects it, so a clock that steps (an NTP step, a clock set by hand, a table
computer that booted without one and was set later, a restart on a computer whose clock is behind)
passes every check while each later hand's time points away from its camera footage. The writer
therefore watches its clock (docs/journal.md, "Time"):

- between two transactions, the wall clock's advance is compared with the steady clock's
  (``time.monotonic``, which no one sets); when they differ by more than ``STEP_TOLERANCE_MS``,
  the clock stepped by the difference (``basis`` ``steady_clock``);
- when a writer opens a journal whose last entry's time is later than its clock, the clock is at
  least that far behind (``basis`` ``last_entry``; a process that was not running cannot tell more).

A step is a ``clock_step`` record (``controller.journal.kinds``) that the writer puts before the
entries of the transaction that found it, and a warning in the log. The watch only observes: it
never changes a time the clock gives.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from controller.journal.entry import format_ts, parse_ts

STEP_TOLERANCE_MS = 1000  # more than any wait between reading the two clocks; NTP slews less than this
# A clock earlier than this was never set (a computer without a battery-backed clock, before NTP):
# this program did not exist then.
PLAUSIBLE_FROM = datetime(2026, 1, 1, tzinfo=timezone.utc)
STEADY_CLOCK, LAST_ENTRY = "steady_clock", "last_entry"
_ONE_MS = timedelta(milliseconds=1)


@dataclass(frozen=True)
class ClockStep:
    """The wall clock's step: ``step_ms`` (negative: back) from ``expected``, the time it should
    have given (the previous transaction's time plus the steady clock's advance; or the last
    entry's time), measured on ``basis``."""

    step_ms: int
    expected: str
    basis: str

    def payload(self) -> dict[str, object]:
        return {"step_ms": self.step_ms, "expected": self.expected, "basis": self.basis}

    def log(self, seq: int) -> None:
        """Say it, journaled at entry ``seq``: a warning (a person should set the clock right, and
        may have to tell surveillance)."""
        import structlog  # here: the journal's readers import this module for its words, and log nothing

        structlog.get_logger().warning("the wall clock stepped; journaled as clock_step", entry=seq,
                                       step_ms=self.step_ms, expected=self.expected, basis=self.basis)


class ClockWatch:
    """See the module docstring. ``check(wall)`` before a transaction (``wall``: the clock's time
    now) returns the step found since the last committed one, if any; ``committed()`` after the
    transaction committed makes ``wall`` the new reference (a transaction that failed leaves the
    old one, so that its step is found again by the next)."""

    __slots__ = ("_steady", "_last", "_pending", "_journal_last_ts")

    def __init__(self, steady: Callable[[], float]) -> None:
        self._steady = steady
        self._last: tuple[datetime, float] | None = None
        self._pending: tuple[datetime, float] | None = None
        self._journal_last_ts: str | None = None

    def opened(self, last_ts: str | None, wall: datetime) -> bool:
        """The writer opened a journal whose last entry has time ``last_ts`` (None: empty) with
        its clock at ``wall``: the reference of the first transaction's check (a step between the
        open and the first write is found there, a review), which also compares the clock with
        ``last_ts``. Returns whether the clock is plausible (not before ``PLAUSIBLE_FROM``: a
        clock never set)."""
        self._last, self._journal_last_ts = (wall, self._steady()), last_ts
        return wall >= PLAUSIBLE_FROM

    def check(self, wall: datetime) -> ClockStep | None:
        """(After ``opened``.) The step found at ``wall``, or None."""
        steady = self._steady()
        self._pending = (wall, steady)
        if self._journal_last_ts is not None:  # the first transaction: is the clock behind the journal?
            behind = _ms(wall - parse_ts(self._journal_last_ts))
            if behind < -STEP_TOLERANCE_MS:
                return ClockStep(behind, self._journal_last_ts, LAST_ENTRY)
        last_wall, last_steady = self._last  # type: ignore[misc]  # set by opened
        expected = last_wall + timedelta(seconds=steady - last_steady)
        step = _ms(wall - expected)
        return ClockStep(step, format_ts(expected), STEADY_CLOCK) if abs(step) > STEP_TOLERANCE_MS else None

    def committed(self) -> None:
        self._last, self._pending, self._journal_last_ts = self._pending, None, None


def _ms(delta: timedelta) -> int:
    return delta // _ONE_MS


# -- in words: for replay, ctl watch and the floor's alarms --------------------------------------

def when_text(ts: object) -> str:
    """A journal time (``2026-12-06T09:39:51.296700Z``) to the second, for a person matching a hand to
    the cameras' clock: ``2026-12-06 09:39:51 UTC``; empty where there is none."""
    return f"{ts[:10]} {ts[11:19]} UTC" if isinstance(ts, str) and len(ts) >= 19 else ""


def clock_step_text(p: dict) -> str:
    """A ``clock_step`` in words: which way and how far the table's clock stepped, and what the times
    after it mean (the entries keep the clock's times; matching them to footage needs the step)."""
    step = p.get("step_ms")
    if not isinstance(step, int) or isinstance(step, bool):
        return f"clock step ({step})"
    if p.get("basis") == "last_entry":
        # A writer that was not running cannot tell which clock was wrong (a review of clocks: a
        # clock set right at a restart was said to be the wrong one)
        return (f"the table's clock is {_duration(-step)} behind the journal's last entry ({when_text(p.get('expected'))}) "
                "at this start: either the times from here on are at least that far back, or the entries before "
                "were stamped ahead")
    return (f"the table's clock stepped {step_size_text(step)} (it should have said {when_text(p.get('expected'))}): "
            "the times from here on are the stepped clock's")


def step_size_text(step_ms: int) -> str:
    """Which way and how far a clock stepped: ``back 1 h 0 min 0.0 s``."""
    return f"{'back' if step_ms < 0 else 'forward'} {_duration(abs(step_ms))}"


def _duration(ms: int) -> str:
    seconds, ms = divmod(ms, 1000)
    days, seconds = divmod(seconds, 86_400)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    parts = [f"{days} d", f"{hours} h", f"{minutes} min", f"{seconds}.{ms // 100} s"]
    first = next((i for i, n in enumerate((days, hours, minutes)) if n), 3)
    return " ".join(parts[first:])  # from the largest unit given: "1 h 0 min 0.0 s"
