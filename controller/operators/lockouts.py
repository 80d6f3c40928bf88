"""Failed logins in a row per operator id, and the lockouts they lead to.

Contract: ``Lockouts(max_failures, lockout_s, max_unknown_ids, clock)``; not thread-safe (the
``Authenticator`` calls it under its lock).

- ``holding(id)``: the ``LockedOut`` to raise before any PIN is checked while that id is locked
  out, else None (a lockout that has ended is forgotten: the id has ``max_failures`` fresh tries).
- ``failed(id)``: count one more failed login and return the error it earns: ``WrongPin`` with the
  tries left, or, at ``max_failures`` in a row, ``LockedOut`` for ``lockout_s`` seconds.
- ``succeeded(id)``: the count starts again.

Ids that are no operator's are counted and locked out exactly as operators' ids are, so that what
an unknown id is told (``UnknownOperator.said``) is what an operator would be told: the replies do
not say which ids exist. Only the last ``max_unknown_ids`` unknown ids are kept (the least
recently failed forgotten first), so a flood of invented ids costs bounded memory; operators' own
counts are kept until ``keep_only`` drops those no longer in the operators file.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Collection
from dataclasses import dataclass

from controller.operators.errors import LockedOut, WrongPin, duration, shown_id


@dataclass
class _Count:
    failures: int = 0
    locked_until: float | None = None


class Lockouts:
    """See the module docstring."""

    def __init__(self, max_failures: int, lockout_s: float, max_unknown_ids: int, clock: Callable[[], float]) -> None:
        if max_failures < 1:
            raise ValueError("max_failures must be at least 1")
        if not lockout_s > 0:
            raise ValueError("lockout_s must be more than 0")
        self.max_failures = int(max_failures)
        self.lockout_s = float(lockout_s)
        self.max_unknown_ids = int(max_unknown_ids)
        self._clock = clock
        self._known: dict[str, _Count] = {}
        self._unknown: OrderedDict[str, _Count] = OrderedDict()
        self._known_ids: Collection[str] = ()

    def know(self, ids: Collection[str]) -> None:
        """The operators' ids (from the file): their counts are kept, others' bounded. Counts of
        ids no longer among them are dropped."""
        self._known_ids = frozenset(ids)
        self._known = {k: v for k, v in self._known.items() if k in self._known_ids}

    def holding(self, op_id: str) -> LockedOut | None:
        count = self._table(op_id).get(op_id)
        if count is None or count.locked_until is None:
            return None
        left = count.locked_until - self._clock()
        if left > 0:
            return LockedOut(op_id, left, count.failures)
        self._table(op_id).pop(op_id, None)  # the lockout is over: fresh tries
        return None

    def failed(self, op_id: str) -> WrongPin | LockedOut:
        table = self._table(op_id)
        count = table.get(op_id) or _Count()
        count.failures += 1
        table[op_id] = count
        if table is self._unknown:
            self._unknown.move_to_end(op_id)
            while len(self._unknown) > self.max_unknown_ids:
                self._unknown.popitem(last=False)
        if count.failures >= self.max_failures:
            count.locked_until = self._clock() + self.lockout_s
            return LockedOut(op_id, self.lockout_s, count.failures, just_now=True)
        return WrongPin(op_id, self.max_failures - count.failures, self.lockout_s)

    def succeeded(self, op_id: str) -> None:
        self._table(op_id).pop(op_id, None)

    def failures(self, op_id: str) -> int:
        """Failed logins in a row so far (0 after a success or a finished lockout)."""
        count = self._table(op_id).get(op_id)
        if count is None or (count.locked_until is not None and self._clock() >= count.locked_until):
            return 0
        return count.failures

    def locked_for(self, op_id: str) -> float:
        """Seconds of lockout left (0.0 when not locked out)."""
        count = self._table(op_id).get(op_id)
        if count is None or count.locked_until is None:
            return 0.0
        return max(0.0, count.locked_until - self._clock())

    def unlock(self, op_id: str) -> str:
        """Clear the id's count and lockout; say what was cleared, in the operator's words."""
        count = self._table(op_id).pop(op_id, None)
        now = self._clock()
        shown = shown_id(op_id)
        if count is None or (count.locked_until is not None and now >= count.locked_until):
            return f"operator {shown} had no wrong PINs to clear"
        wrong = "1 wrong PIN" if count.failures == 1 else f"{count.failures} wrong PINs"
        if count.locked_until is None:
            return f"operator {shown}: {wrong} in a row cleared"
        return (f"operator {shown} may log in again (locked out after {wrong} in a row, "
                f"with {duration(count.locked_until - now)} to go)")

    def unknown_ids(self) -> int:
        """How many ids that are no operator's are remembered."""
        return len(self._unknown)

    def _table(self, op_id: str) -> dict[str, _Count]:
        return self._known if op_id in self._known_ids else self._unknown
