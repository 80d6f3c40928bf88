"""The rig for the DeviceLink tests over real parts: a pty opened by pyserial, the real protocol
core, a scripted device (fake_device.py), a ``DeviceLink`` on them, a ``Sink`` that records the
events it is handed and ``States`` that records the link's state reports (the ``rig_factory``
fixture that makes them is in conftest.py).

No test asserts a duration: waits are conditions with a generous deadline that only turns a hang
into a failure.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from firmware_bridge.link import DeviceLink, LinkEvent, LinkState
from firmware_bridge.profiles import Timing

from .fake_device import FakeDevice

DEADLINE = 60.0  # seconds before a wait is declared hung (never a performance limit)

TIMING = Timing(response_timeout_ms=200, heartbeat_interval_ms=300, retries=3,
                reconnect_min_ms=10, reconnect_max_ms=200)


def wait_for(predicate: Callable[[], bool], what: str, deadline: float = DEADLINE) -> None:
    end = time.monotonic() + deadline
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


class Sink:
    """A consumer: records events; can fail on chosen counters (once each) or block."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.events: list[LinkEvent] = []
        self.fail_once: set[int] = set()
        self.failures = 0
        self.gate: threading.Event | None = None
        self.entered = threading.Event()

    def __call__(self, event: LinkEvent) -> None:
        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(DEADLINE)
        if event.counter in self.fail_once:
            self.fail_once.discard(event.counter)
            self.failures += 1
            raise RuntimeError(f"journal unavailable for {event.counter}")
        with self.lock:
            self.events.append(event)

    def __len__(self) -> int:
        with self.lock:
            return len(self.events)

    def messages(self) -> list[Any]:
        with self.lock:
            return [e.message for e in self.events]


class States:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: list[tuple[LinkState, str | None]] = []

    def __call__(self, state: LinkState, reason: str | None) -> None:
        with self.lock:
            self.seen.append((state, reason))

    def states(self) -> list[LinkState]:
        with self.lock:
            return [s for s, _ in self.seen]

    def reasons(self) -> str:
        with self.lock:
            return "\n".join(str(r) for _, r in self.seen)


@dataclass
class Rig:
    device: FakeDevice
    link: DeviceLink
    sink: Sink
    states: States


def connected(rig: Rig) -> Rig:
    assert rig.link.wait_connected(DEADLINE), rig.states.reasons()
    return rig
