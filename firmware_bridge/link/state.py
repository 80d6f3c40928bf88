"""Values the link hands to its callers: ``LinkState``, ``LinkEvent`` and ``LinkErrorKind``."""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from firmware_bridge.errors import LinkErrorKind  # the link's callers find it here; defined where the table may import it
from firmware_bridge.protocol import DeviceEvent

__all__ = ["LinkErrorKind", "LinkEvent", "LinkState"]


class LinkState(StrEnum):
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
