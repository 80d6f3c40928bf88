"""Which connections the control socket serves (``ControlServer``'s accept loop asks, one place).

``ConnectionSlots(most, reserve)``: ``take(uid)`` is None when the connection may be served (its
slot taken), else why not, in the client's words: ``most`` connections are open; its account
(``uid``, ``SO_PEERCRED``) holds three quarters of them (``per_account``: one client holding
every slot, a console's among them, left none for the floorperson's: a review); or serving it
would leave the table fewer than ``reserve`` file descriptors (a device reconnected, a module
imported, the edge monitor's worker need some). ``give_back(uid)`` when the connection ends;
``wait_all_back(deadline)`` at the table's stop: every connection's slot back, or the deadline
passed. Not counted per account: root (the machine's administrator, who may stop the table
anyway) and an account the system cannot tell (``uid`` None).
"""
from __future__ import annotations

import collections
import threading
import time

from controller.descriptors import short_of_descriptors

__all__ = ["ConnectionSlots"]


class ConnectionSlots:
    """See the module docstring."""

    def __init__(self, most: int, reserve: int) -> None:
        self.most = int(most)
        self.per_account = max(1, self.most * 3 // 4)
        self.reserve = int(reserve)
        self._slots = threading.BoundedSemaphore(self.most)
        self._lock = threading.Lock()
        self._accounts: collections.Counter[int] = collections.Counter()

    @property
    def busy(self) -> str:
        """The words for a connection refused because ``most`` are open."""
        return f"the table is busy: {self.most} connections are open; try again later"

    def take(self, uid: int | None) -> str | None:
        """See the module docstring."""
        if short_of_descriptors(self.reserve):
            return "the table is short of file descriptors; try again later"
        if not self._slots.acquire(blocking=False):
            return self.busy
        if uid:  # neither root (0) nor unknown (None)
            with self._lock:
                if self._accounts[uid] >= self.per_account:
                    self._slots.release()
                    return (f"the table is busy: this account holds {self.per_account} of its {self.most} "
                            "connections; close some first")
                self._accounts[uid] += 1
        return None

    def give_back(self, uid: int | None) -> None:
        """The connection ``take`` let in has ended."""
        if uid:
            with self._lock:
                self._accounts[uid] -= 1
                if not self._accounts[uid]:
                    del self._accounts[uid]
        self._slots.release()

    def wait_all_back(self, deadline: float) -> None:
        """Until every slot is back (no connection is served any more) or ``deadline``
        (``time.monotonic``) has passed."""
        held = 0
        while held < self.most and self._slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
            held += 1
        for _ in range(held):
            self._slots.release()
