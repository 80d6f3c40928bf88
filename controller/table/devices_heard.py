"""``DevicesHeard``: when a starting table may re-issue its commands and let its people act.

A table that starts on a journal knows the devices it last dealt with (their serials and event
epochs). Until each link has said which device answers now, the table cannot tell whether the
cards it thinks are in a device are still there: a shuffle re-issued to a new shuffler while the
shoe's link is still connecting lets the stack reach a shoe that is then found to be another unit,
and the shoe is given up under the dealer's hands. So the runner re-issues nothing (the resume's
commands) and lets no automated person act until every link has connected once, or until
``wait`` seconds have passed (a device that is not there does not hold the table for longer: its
link goes on reconnecting and the table's fault says so).

What is re-issued then is what the table sent before it stopped, not what it has sent since it
started: people may drive the table before every link has connected (a floorperson opens it
while the shoe's link is still connecting), and the commands that sends are the current ones. A
DELIVER sent again after the shuffler had delivered would be refused (nothing left to deliver)
and hold the table in a fault. So ``sent`` notes each command the table sends while starting, and
``to_reissue`` leaves those out of the resume's commands.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from controller.table.io import DeviceStatus, SendCommand

__all__ = ["DEVICES_WAIT", "DevicesHeard"]

DEVICES_WAIT = 5.0  # seconds a start waits for its devices' first reports at most


class DevicesHeard:
    """The links a starting table still waits to hear from.

    Args:
        roles: the device roles of the table's links.
        wait: seconds after which the table goes on without the ones not heard.
        clock: monotonic seconds.
    """

    def __init__(self, roles: Iterable[str], wait: float = DEVICES_WAIT,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._waiting = set(roles)
        self._clock = clock
        self._until = clock() + wait
        self._sent: set[tuple[str, Any]] = set()  # (device role, message) sent while starting

    def heard(self, status: DeviceStatus) -> None:
        """A link reported; a connect says which device answers (a failed one says nothing yet:
        the device may be enumerating still)."""
        if status.up:
            self._waiting.discard(status.device_role)

    @property
    def ready(self) -> bool:
        """Every link has reported, or the wait is over."""
        return not self._waiting or self._clock() >= self._until

    def time_left(self) -> float:
        """Seconds until the wait is over (0 when ready)."""
        return 0.0 if self.ready else max(self._until - self._clock(), 0.0)

    def sent(self, command: SendCommand) -> None:
        """The table sent ``command`` while starting (before ``ready``)."""
        self._sent.add((command.device_role, command.message))

    def to_reissue(self, outputs: Iterable[Any]) -> list[Any]:
        """The resume's ``outputs`` less the commands the table has sent since it started (the
        same command to the same device: messages compare by their fields)."""
        return [o for o in outputs if not (isinstance(o, SendCommand) and (o.device_role, o.message) in self._sent)]
