"""What the table owner's inbox carries besides the core's own inputs (``OperatorInput``,
``DeviceStatus``, ``CommandFailed``): the wrappers that tell the owner what to do with an item
(``controller/table/runner.py``)."""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from controller.table.io import OperatorInput

__all__ = ["DeviceItem", "JournalNote", "OperatorItem", "OwnerTask", "Stop", "drain"]


@dataclass
class OperatorItem:
    """An operator command from the control socket: ``reply`` receives the core's outputs.

    Its caller waits for them a while. Whichever comes first decides, under the item's lock: the
    owner ``take``s it (then it is decided and journaled, and its answer comes), or its caller
    ``withdraw``s it (then the owner skips it: never carried out). Before, a command answered
    ``timeout`` was still carried out and journaled later, so giving it again did it twice (a
    concurrency review)."""

    op: OperatorInput
    reply: queue.Queue[Any]
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    _state: str = field(default="queued", compare=False)  # queued, taken or withdrawn

    def take(self) -> bool:
        """The owner takes the command (True), unless its caller withdrew it first (False)."""
        return self._claim("taken")

    def answer(self, timeout: float) -> Any:
        """What the owner put in ``reply`` (the outputs, or an exception). TimeoutError when the
        owner has not taken the command within ``timeout`` (it is withdrawn), or took it but put
        nothing within ``timeout`` more (it may have been journaled)."""
        try:
            return self.reply.get(timeout=timeout)
        except queue.Empty:
            if self.withdraw():
                raise TimeoutError("the table did not take the command in time: it was not carried out") from None
        try:
            return self.reply.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("the table took the command but did not answer in time: the journal says "
                               "whether it was carried out") from None

    def withdraw(self) -> bool:
        """The caller stops waiting: True if the owner had not taken it (now it never will)."""
        return self._claim("withdrawn")

    def _claim(self, state: str) -> bool:
        """The first of ``take`` and ``withdraw`` decides: True if ``state`` is the item's now."""
        with self._lock:
            if self._state == "queued":
                self._state = state
            return self._state == state


@dataclass
class JournalNote:
    """A record to journal on the owner thread (e.g. a command refused before the core saw it)."""

    kind: str
    payload: dict[str, Any]
    operator: str | None = None
    shown: dict[str, Any] | None = None  # the payload as the event streams show it, when less


@dataclass
class DeviceItem:
    """A device event handed over by the link of ``role``; acknowledged by the owner once stored."""

    role: str
    link_event: Any


@dataclass
class OwnerTask:
    """Work a collaborator hands to the owner thread (``call_on_owner``), run between inputs."""

    task: Callable[[], None]


class Stop:
    """The owner stops at this item (``TableRunner.stop``)."""


def drain(inbox: Any, kind: type) -> Iterator[Any]:
    """Take every item queued in ``inbox`` now, yielding those of ``kind`` (the rest are dropped)."""
    while True:
        try:
            item = inbox.get_nowait()
        except queue.Empty:
            return
        if isinstance(item, kind):
            yield item
