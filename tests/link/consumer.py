"""Test helpers for link tests: ``wait_until`` a condition, and ``Consumer``, a thread-safe
``on_event`` callback that keeps every delivered event."""
from __future__ import annotations

import threading
import time


def wait_until(pred, timeout: float = 60.0) -> bool:
    """Poll ``pred`` until it is true or ``timeout`` seconds pass; its last value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.005)
    return pred()


class Consumer:
    def __init__(self) -> None:
        self.events: list = []
        self.lock = threading.Lock()

    def __call__(self, event) -> None:
        with self.lock:
            self.events.append(event)

    def of(self, cls) -> list:
        """The messages of the delivered events that are ``cls`` instances, in order."""
        with self.lock:
            return [e.message for e in self.events if isinstance(e.message, cls)]
