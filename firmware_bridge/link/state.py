"""Values the link hands to its callers: ``LinkState`` and ``LinkEvent``."""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from firmware_bridge.protocol import DeviceEvent

__all__ = ["LinkEvent", "LinkState"]


class LinkState(str, Enum):
    """Where a ``DeviceLink`` is. ``str`` values, for logs and JSON.

    - ``DISCONNECTED``: not started yet, or the device is gone and a reconnect is scheduled;
    - ``CONNECTING``: opening the transport and running the handshake;
    - ``CONNECTED``: the handshake succeeded; requests are accepted;
    - ``CLOSED``: ``stop()`` was called; terminal.
    """

    DISCONNECTED = "disconnected"
    CONNECTING = "connecting"
    CONNECTED = "connected"
    CLOSED = "closed"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class LinkEvent:
    """One device event as delivered to the consumer, exactly once per ``(epoch, counter)``.

    ``key`` = ``(serial, epoch, counter)`` is what the journal stores events under
    (docs/protocol.md E2). ``message`` is the decoded event (``CardRead``, ``Door``, ...), with
    ``message.counter == counter``. ``profile_name``: the name of the device profile the link
    was made with (the device's serial number for a link made without one).
    """

    profile_name: str
    serial: str
    epoch: int
    counter: int
    message: DeviceEvent

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.serial, self.epoch, self.counter)
