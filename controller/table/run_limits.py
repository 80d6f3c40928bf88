"""``RunLimits``: when a run that was asked for N rounds or N shoes has dealt them.

A round counts when its result is recorded; a shoe when it is reconciled after its deal. A shoe
given up (a device came back as another unit: ``shoe_restarted``, then its reconciliation) is not
a shoe dealt, so ``--shoes 1`` deals a whole shoe after it. A limit is reached only between
rounds: a round started in the same breath as the last one's result (the simulated round a card
found face up in the shoe begins, 627a.13(d)) is finished first, so a run never stops with a round
on the layout.
"""
from __future__ import annotations

from controller.journal import kinds
from controller.table.io import TableRecord

__all__ = ["RunLimits"]


class RunLimits:
    """Counts the rounds and shoes a run dealt; ``reached`` once either limit is (``None``: none)."""

    def __init__(self, rounds: int | None = None, shoes: int | None = None) -> None:
        self.rounds, self.shoes = rounds, shoes
        self.rounds_done = 0
        self.shoes_done = 0
        self._given_up: str | None = None  # the shoe whose reconciliation is not a shoe dealt
        self._round_open = False

    def count(self, record: TableRecord) -> None:
        """Take one of the table's records, in the order the table made them."""
        if record.kind == kinds.ROUND_START:
            self._round_open = True
        elif record.kind == kinds.ROUND_RESULT:
            self.rounds_done += 1
            self._round_open = False
        elif record.kind == kinds.SHOE_RESTARTED:
            self._given_up = record.shoe
        elif record.kind == kinds.RECONCILIATION and record.shoe != self._given_up:
            self.shoes_done += 1

    @property
    def reached(self) -> bool:
        return not self._round_open and (
            (self.rounds is not None and self.rounds_done >= self.rounds)
            or (self.shoes is not None and self.shoes_done >= self.shoes))
