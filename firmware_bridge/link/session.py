"""One session of a ``DeviceLink`` and the reply slot of its one outstanding command.

A ``Session`` is one connection: the opened transport, a fresh ``HostConnection`` and the reader
thread that feeds it; a ``Waiter`` is where the reader hands a command's reply to the caller.
"""
from __future__ import annotations

import threading
from collections.abc import Callable

from firmware_bridge.protocol import HostConnection, ReplyReceived
from firmware_bridge.transport import Transport

__all__ = ["MAX_IDLE_WAIT", "Session", "Waiter"]

MAX_IDLE_WAIT = 0.5    # longest a link thread sleeps without re-checking its work (seconds)


class Waiter:
    """The reply slot of the one outstanding command. ``set``, ``nudge`` and ``rearm`` are called
    with the link's lock held (so at most one ``set`` takes effect); ``wait`` blocks on a plain
    lock, the cheapest wake-up."""

    __slots__ = ("seq", "result", "done", "nudged", "_gate", "_open", "_wake", "_owner")

    def __init__(self, seq: int, wake: Callable[[], None] | None = None) -> None:
        self.seq = seq
        self._wake = wake  # also wakes the caller where it waits on the line (SharedReading)
        self._owner = threading.get_ident()
        self.result: ReplyReceived | BaseException | None = None
        self.done = False
        self.nudged = False  # a damaged frame woke the caller during this attempt
        self._gate = threading.Lock()
        self._gate.acquire()
        self._open = False

    def set(self, result: ReplyReceived | BaseException) -> None:
        if not self.done:
            self.result = result
            self.done = True
            self._open_gate()

    def nudge(self) -> None:
        """A frame arrived damaged: it may have been the reply. Wakes the caller once per attempt."""
        if not self.done and not self.nudged:
            self.nudged = True
            self._open_gate()

    def rearm(self) -> None:
        """After a nudge (not done): close the gate again, so ``wait`` waits for the reply."""
        if self._open and not self.done:
            self._gate.acquire()
            self._open = False

    def _open_gate(self) -> None:
        if not self._open:
            self._open = True
            self._gate.release()
            if self._wake is not None and threading.get_ident() != self._owner:
                self._wake()

    @property
    def woken(self) -> bool:
        """Set or nudged, and not rearmed since: what ``wait`` would return at once."""
        return self._open

    def wait(self, timeout: float) -> bool:
        """True when set or nudged, False after ``timeout`` seconds. The gate stays open: a later
        ``wait`` returns at once until ``rearm``."""
        if self._gate.acquire(timeout=max(timeout, 0.0)):
            self._gate.release()
            return True
        return False


class Session:
    """One connection: an open transport, a fresh protocol state and its reader thread."""

    def __init__(self, number: int, transport: Transport, conn: HostConnection) -> None:
        self.number = number
        self.transport = transport
        self.conn = conn
        self.alive = True
        self.last_tx: float | None = None  # when a command was last written on this session
        self.lost_reason: str | None = None
        self.epoch_confirmed = False  # this session's IDENTITY was accepted
        self.epoch_change: tuple[int, int] | None = None  # (old, new) when IDENTITY changed it
        self.unit_change: tuple[str, str] | None = None  # (old serial, new) when another unit answers
        self.lost_at_epoch_change: list[tuple[int, int]] = []  # old-epoch counters never received
        self.reader: threading.Thread | None = None
        # Where the line has ``shared_reading``: the reader's work for a command's waiting caller.
        self.read_for_requester: Callable[[], None] | None = None

