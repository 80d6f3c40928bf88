"""Failed logins in a row per id, and the lockouts they lead to: one table for every id tried.

Contract: ``Lockouts(max_failures, lockout_s, max_ids, clock)``; not thread-safe (the
``Authenticator`` calls it under its lock).

- ``holding(id)``: before any PIN is checked, the error to raise instead, or None: ``LockedOut``
  while that id is locked out; ``Throttled`` when the table of ids is full (below).
- ``failed(id)``: count one more failed login and return the error it earns: ``WrongPin`` with the
  tries left, or, at ``max_failures`` in a row, ``LockedOut`` for ``lockout_s`` seconds.
- ``succeeded(id)``: the count starts again.
- ``failures(id)``, ``locked_for(id)``; ``unlock(id)`` clears the id's count and lockout and says
  what it cleared.

Every id is counted alike, whether an operator has it or not, and kept alike: the table holds no
list of the operators. So what an id is told, how many tries it has left and when they come back
never depend on whether it exists (``UnknownOperator.said``), nor on the operators file being
edited in between. A count ends ``lockout_s`` after the id's last failed login (a lockout ends
then too): failed logins further apart than that start again from one. At most ``max_ids`` ids
with a count are kept; they are never dropped early, since that would give their tries back. While
the table is full, a login for any id not in it is refused before its PIN is checked, alike for
all ids (``Throttled``, until the oldest count ends): a flood of failed logins can keep operators
out for as long as it lasts, but never gains a guess nor learns who exists.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from controller.operators.errors import LockedOut, Throttled, WrongPin, duration, shown_id


@dataclass
class _Count:
    failures: int
    last_failed: float
    locked: bool = False


class Lockouts:
    """See the module docstring."""

    def __init__(self, max_failures: int, lockout_s: float, max_ids: int, clock: Callable[[], float]) -> None:
        if max_failures < 1:
            raise ValueError("max_failures must be at least 1")
        if not lockout_s > 0:
            raise ValueError("lockout_s must be more than 0")
        if max_ids < 1:
            raise ValueError("max_ids must be at least 1")
        self.max_failures = int(max_failures)
        self.lockout_s = float(lockout_s)
        self.max_ids = int(max_ids)
        self._clock = clock
        self._counts: OrderedDict[str, _Count] = OrderedDict()  # by last failed login, oldest first

    def holding(self, op_id: str) -> LockedOut | Throttled | None:
        now = self._forget_ended()
        count = self._counts.get(op_id)
        if count is not None:
            return LockedOut(op_id, self._ends(count) - now, count.failures) if count.locked else None
        if len(self._counts) >= self.max_ids:
            oldest = next(iter(self._counts.values()))
            return Throttled(op_id, self._ends(oldest) - now, "at this table")
        return None

    def failed(self, op_id: str) -> WrongPin | LockedOut:
        now = self._forget_ended()
        count = self._counts.pop(op_id, None) or _Count(0, now)
        count.failures += 1
        count.last_failed = now
        self._counts[op_id] = count  # the newest last
        if count.failures >= self.max_failures:
            count.locked = True
            return LockedOut(op_id, self.lockout_s, count.failures, just_now=True)
        return WrongPin(op_id, self.max_failures - count.failures, self.lockout_s)

    def succeeded(self, op_id: str) -> None:
        self._counts.pop(op_id, None)

    def failures(self, op_id: str) -> int:
        """Failed logins in a row so far (0 after a success, or once the count has ended)."""
        self._forget_ended()
        count = self._counts.get(op_id)
        return 0 if count is None else count.failures

    def locked_for(self, op_id: str) -> float:
        """Seconds of lockout left (0.0 when not locked out)."""
        now = self._forget_ended()
        count = self._counts.get(op_id)
        return self._ends(count) - now if count is not None and count.locked else 0.0

    def unlock(self, op_id: str) -> str:
        """Clear the id's count and lockout; say what was cleared, in the operator's words."""
        now = self._forget_ended()
        count = self._counts.pop(op_id, None)
        shown = shown_id(op_id)
        if count is None:
            return f"operator {shown} had no wrong PINs to clear"
        wrong = "1 wrong PIN" if count.failures == 1 else f"{count.failures} wrong PINs"
        if not count.locked:
            return f"operator {shown}: {wrong} in a row cleared"
        return (f"operator {shown} may log in again (locked out after {wrong} in a row, "
                f"with {duration(self._ends(count) - now)} to go)")

    def __len__(self) -> int:
        """How many ids have a count."""
        return len(self._counts)

    def _ends(self, count: _Count) -> float:
        return count.last_failed + self.lockout_s

    def _forget_ended(self) -> float:
        """Drop the counts that have ended (oldest first); the time now."""
        now = self._clock()
        while self._counts:
            oldest = next(iter(self._counts.values()))
            if now < self._ends(oldest):
                break
            self._counts.popitem(last=False)
        return now
