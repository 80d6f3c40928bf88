"""What the table owner's inbox carries besides the core's own inputs (``OperatorInput``,
``DeviceStatus``, ``CommandFailed``): the wrappers that tell the owner what to do with an item
(``controller/table/runner.py``)."""
from __future__ import annotations

import queue
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from controller.table.io import OperatorInput

__all__ = ["DeviceItem", "JournalNote", "OperatorItem", "OwnerTask", "Stop", "drain"]


@dataclass
class OperatorItem:
    """An operator command from the control socket: ``reply`` receives the core's outputs."""

    op: OperatorInput
    reply: queue.Queue[Any]


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
