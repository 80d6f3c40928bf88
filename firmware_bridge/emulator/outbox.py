"""What an emulated device has to write: its frames in order, and the events waiting for room.

Contract (``Outbox``, one per device, sans-I/O, not thread-safe: the device's lock covers it):
- ``put(frame)`` queues one complete frame; ``take()`` returns every queued frame, oldest first,
  and empties the queue. Replies and events share the queue, so an event emitted before a reply
  is written before it (protocol D8).
- ``emit(connection, event)`` sends a new event through the device's protocol core (which gives
  it its counter and keeps it until acknowledged) and queues its frame, unless the event store is
  full (``blocked(connection)``, protocol E8): then the event waits, in order, and
  ``flush(connection)`` sends what fits once the host has acknowledged. No event is dropped.
- ``sent`` counts the events sent so far; ``waiting`` the events held back.
"""
from __future__ import annotations

from collections import deque

from firmware_bridge.protocol import DeviceConnection, DeviceEvent

__all__ = ["Outbox"]


class Outbox:
    """The frames to write and the events held back while the event store is full."""

    def __init__(self, max_unacknowledged: int) -> None:
        self.max_unacknowledged = max_unacknowledged
        self.sent = 0
        self._frames: list[bytes] = []
        self._waiting: deque[DeviceEvent] = deque()

    def put(self, frame: bytes) -> None:
        """Queue one complete frame (a reply, or a frame the protocol core answered by itself)."""
        self._frames.append(frame)

    def take(self) -> list[bytes]:
        """Every queued frame, oldest first; the queue is left empty."""
        frames, self._frames = self._frames, []
        return frames

    @property
    def waiting(self) -> int:
        """Events held back until the host acknowledges."""
        return len(self._waiting)

    def blocked(self, connection: DeviceConnection) -> bool:
        """True when a new event must wait: events already wait, or the store is full (E8)."""
        return bool(self._waiting) or connection.unacknowledged_count >= self.max_unacknowledged

    def emit(self, connection: DeviceConnection, event: DeviceEvent) -> bool:
        """Send ``event`` now, or hold it back in order; True if it was sent."""
        if self.blocked(connection):
            self._waiting.append(event)
            return False
        self._send(connection, event)
        return True

    def flush(self, connection: DeviceConnection) -> int:
        """Send the waiting events that fit in the store now; how many were sent."""
        sent = 0
        while self._waiting and connection.unacknowledged_count < self.max_unacknowledged:
            self._send(connection, self._waiting.popleft())
            sent += 1
        return sent

    def _send(self, connection: DeviceConnection, event: DeviceEvent) -> None:
        self._frames.append(connection.send(event))
        self.sent += 1
