"""Failed logins in a row per id, and the lockouts they lead to.

Contract: ``Lockouts(max_failures, lockout_s, max_unknown_ids, clock)``; not thread-safe (the
``Authenticator`` calls it under its lock).

- ``know(ids)``: the operators' ids (from the operators file, again after each reload).
- ``holding(id)``: before any PIN is checked, the ``LockedOut`` to raise instead while that id is
  locked out, else None.
- ``failed(id)``: count one more failed login and return the error it earns: ``WrongPin`` with the
  tries left, or, at ``max_failures`` in a row, ``LockedOut`` for ``lockout_s`` seconds.
- ``succeeded(id)``: the count starts again.
- ``failures(id)``, ``locked_for(id)``; ``unlock(id)`` clears the id's count and lockout and says
  what it cleared.

An id that is no operator's is counted, locked out and told exactly as an operator's is
(``UnknownOperator.said``), so the replies do not say which ids exist. A count ends ``lockout_s``
after the id's last failed login (a lockout ends then too), for every id alike; a count moves
with its id when the operators file adds or removes it, so editing the file neither ends nor
reveals one. Memory: operators' counts are kept (there are as many as operators); of the other
ids, the ``max_unknown_ids`` that failed last (the least recently failed forgotten first, so a
flood of invented ids costs bounded memory and never keeps an operator out). The one way left to
tell an unknown id from an operator is that flood: ``max_unknown_ids`` failed logins for other
invented ids within ``lockout_s`` give an unknown id its tries back, where an operator's stay
counted. It is loud (journaled, ``refusals_summary``) and gains no guess at an operator's PIN.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass

from controller.operators.errors import LockedOut, WrongPin, duration, shown_id


@dataclass
class _Count:
    failures: int
    last_failed: float
    locked: bool = False


class Lockouts:
    """See the module docstring."""

    def __init__(self, max_failures: int, lockout_s: float, max_unknown_ids: int, clock: Callable[[], float]) -> None:
        if max_failures < 1:
            raise ValueError("max_failures must be at least 1")
        if not lockout_s > 0:
            raise ValueError("lockout_s must be more than 0")
        if max_unknown_ids < 1:
            raise ValueError("max_unknown_ids must be at least 1")
        self.max_failures = int(max_failures)
        self.lockout_s = float(lockout_s)
        self.max_unknown_ids = int(max_unknown_ids)
        self._clock = clock
        self._known: dict[str, _Count] = {}
        self._unknown: OrderedDict[str, _Count] = OrderedDict()  # by last failed login, oldest first
        self._known_ids: frozenset[str] = frozenset()

    def know(self, ids: Collection[str]) -> None:
        """The operators' ids now: each count moves with its id between the two tables."""
        self._known_ids = frozenset(ids)
        for op_id in [k for k in self._known if k not in self._known_ids]:
            self._unknown[op_id] = self._known.pop(op_id)
        for op_id in [k for k in self._unknown if k in self._known_ids]:
            self._known[op_id] = self._unknown.pop(op_id)
        self._unknown = OrderedDict(sorted(self._unknown.items(), key=lambda item: item[1].last_failed))
        self._bound()

    def holding(self, op_id: str) -> LockedOut | None:
        now = self._forget_ended()
        count = self._table(op_id).get(op_id)
        if count is not None and count.locked:
            return LockedOut(op_id, self._ends(count) - now, count.failures)
        return None

    def failed(self, op_id: str) -> WrongPin | LockedOut:
        now = self._forget_ended()
        table = self._table(op_id)
        count = table.pop(op_id, None) or _Count(0, now)
        count.failures += 1
        count.last_failed = now
        table[op_id] = count  # the newest last
        self._bound()
        if count.failures >= self.max_failures:
            count.locked = True
            return LockedOut(op_id, self.lockout_s, count.failures, just_now=True)
        return WrongPin(op_id, self.max_failures - count.failures, self.lockout_s)

    def succeeded(self, op_id: str) -> None:
        self._table(op_id).pop(op_id, None)

    def failures(self, op_id: str) -> int:
        """Failed logins in a row so far (0 after a success, or once the count has ended)."""
        self._forget_ended()
        count = self._table(op_id).get(op_id)
        return 0 if count is None else count.failures

    def locked_for(self, op_id: str) -> float:
        """Seconds of lockout left (0.0 when not locked out)."""
        now = self._forget_ended()
        count = self._table(op_id).get(op_id)
        return self._ends(count) - now if count is not None and count.locked else 0.0

    def unlock(self, op_id: str) -> str:
        """Clear the id's count and lockout; say what was cleared, in the operator's words."""
        now = self._forget_ended()
        count = self._table(op_id).pop(op_id, None)
        shown = shown_id(op_id)
        if count is None:
            return f"operator {shown} had no wrong PINs to clear"
        wrong = "1 wrong PIN" if count.failures == 1 else f"{count.failures} wrong PINs"
        if not count.locked:
            return f"operator {shown}: {wrong} in a row cleared"
        return (f"operator {shown} may log in again (locked out after {wrong} in a row, "
                f"with {duration(self._ends(count) - now)} to go)")

    def unknown_ids(self) -> int:
        """How many ids that are no operator's have a count."""
        return len(self._unknown)

    def _table(self, op_id: str) -> dict[str, _Count]:
        return self._known if op_id in self._known_ids else self._unknown

    def _ends(self, count: _Count) -> float:
        return count.last_failed + self.lockout_s

    def _bound(self) -> None:
        while len(self._unknown) > self.max_unknown_ids:
            self._unknown.popitem(last=False)

    def _forget_ended(self) -> float:
        """Drop the counts that have ended; the time now."""
        now = self._clock()
        while self._unknown:
            oldest = next(iter(self._unknown.values()))
            if now < self._ends(oldest):
                break
            self._unknown.popitem(last=False)
        for op_id in [k for k, count in self._known.items() if now >= self._ends(count)]:
            del self._known[op_id]
        return now
