"""``LoopbackTransport``: a ``Transport`` wired straight to an ``EmulatedDevice`` in memory.

The in-memory counterpart of ``PtyServer`` (as python-can's ``VirtualBus`` is of a real bus):
the host side (``DeviceLink``) uses it exactly as it uses a serial or USB transport, while the
device model runs in the caller's threads — no pseudo-terminal, no pump thread, no ``select``.
Link, runner and table tests use it to be fast and deterministic; the pty and USB paths keep
their own end-to-end tests.

How bytes move:

- ``write(data)``: under ``device.lock``, the device receives the bytes and answers at once; its
  frames (replies and events) are passed through the line faults and queued for reading;
- ``read(timeout)``: ticks the device (so shuffles progress and the dealer acts), returns every
  queued frame that is due, or waits for a ``write``, an event the device emits from another
  thread, or the device's next due (``clock.tick_wait``) until ``timeout`` passes; a quiet line
  returns ``b""`` (the ``Transport`` contract);
- ``unplug()`` / ``replug()``: the cable. While unplugged, ``open``, ``read`` and ``write`` raise
  ``DeviceDisconnected`` and frames the device sends are lost (it keeps its events, as a real
  device does, and resends what was not acknowledged).

Line faults (``corrupt``, ``drop``, ``dup``, ``delay`` of a ``FaultSpec``) apply to the device's
frames through the same ``LineFaults.schedule`` as the servers'. Thread safety: one reader and
one writer at a time, as the contract says; ``cancel_read`` may be called from any thread.
"""
from __future__ import annotations

import threading
from collections import deque

from firmware_bridge.errors import DeviceDisconnected, TransportError
from firmware_bridge.transport.base import Transport

from .clock import Clock, monotonic, tick_period, tick_wait
from .device import EmulatedDevice
from .faults import FaultSpec, LineFaults

__all__ = ["LoopbackTransport"]


class LoopbackTransport(Transport):
    """A byte pipe to ``device`` in the same process (see the module docstring).

    Args:
        device: the emulated device (its ``lock`` is held around every call into it).
        faults: line faults applied to the device's frames, and to the host's bytes with
            ``both-ways=1`` (``None``: a clean line).
        clock: the time source for ``delay`` (``monotonic``; a ``ManualClock`` in tests).
        poll_s: how often a waiting ``read`` ticks a device that waits on a condition (default
            ``tick_period(device.speed)``).
    """

    def __init__(self, device: EmulatedDevice, *, faults: FaultSpec | None = None,
                 clock: Clock = monotonic, poll_s: float | None = None) -> None:
        self.device = device
        self.faults = faults or FaultSpec()
        self.line = LineFaults.from_spec(self.faults, stream=0)
        self.host_line = self.faults.host_line()
        self.clock = clock
        self.poll_s = tick_period(device.speed) if poll_s is None else poll_s
        self.plugged = True
        self.bytes_lost = 0
        self._open = False
        self._due: deque[tuple[float, bytes]] = deque()
        self._wakeup = threading.Condition()
        self._cancelled = False
        self._emitted = False  # an event emitted since ``read`` last ticked the device

    # --- the cable ---------------------------------------------------------------------------

    def unplug(self) -> None:
        """Pull the cable: reads and writes fail until ``replug()``; queued bytes are lost."""
        with self._wakeup:
            self.plugged = False
            self.bytes_lost += sum(len(chunk) for _, chunk in self._due)
            self._due.clear()
            self._wakeup.notify_all()

    def replug(self) -> None:
        """Plug the cable back in; the host must ``open()`` again, as after a real unplug."""
        with self._wakeup:
            self.plugged = True

    # --- Transport ---------------------------------------------------------------------------

    def open(self) -> None:
        if self._open:
            raise TransportError(f"{self.describe()}: already open")
        if not self.plugged:
            raise DeviceDisconnected(f"{self.describe()}: not present")
        self._open = True
        self.device.hooks.add_wake_listener(self._device_emitted)

    def close(self) -> None:
        with self._wakeup:
            if self._open:
                self.device.hooks.remove_wake_listener(self._device_emitted)
            self._open = False
            self._wakeup.notify_all()

    @property
    def is_open(self) -> bool:
        return self._open

    def describe(self) -> str:
        return f"loopback to emulated {self.device.name}"

    def write(self, data: bytes) -> None:
        self._check()
        self._pump(bytes(data))

    def read(self, timeout: float) -> bytes:
        self._check()
        deadline = self.clock() + max(0.0, timeout)
        while True:
            self._pump(b"")
            chunk = self._take_due()
            if chunk:
                return chunk
            with self.device.lock:  # never inside ``_wakeup``: an emit holds the device's lock first
                due = self.device.next_due(self.clock())
            with self._wakeup:
                self._check()
                if self._cancelled:
                    self._cancelled = False
                    return b""
                if self._emitted:  # since the tick above: tick again
                    self._emitted = False
                    continue
                now = self.clock()
                remaining = deadline - now
                if remaining <= 0:
                    return b""
                frame_due = self._due[0][0] if self._due else None
                self._wakeup.wait(min(remaining, tick_wait(due, now, self.poll_s, frame_due=frame_due)))

    def cancel_read(self) -> None:
        with self._wakeup:
            self._cancelled = True
            self._wakeup.notify_all()

    # --- inside ------------------------------------------------------------------------------

    def _device_emitted(self) -> None:
        """An event from the device (maybe from another thread): a waiting ``read`` ticks now."""
        with self._wakeup:
            self._emitted = True
            self._wakeup.notify_all()

    def _check(self) -> None:
        if not self.plugged:
            raise DeviceDisconnected(f"{self.describe()}: unplugged")
        self._require_open()

    def _pump(self, received: bytes) -> None:
        """Feed ``received`` to the device, let time pass, and queue what it sends."""
        if received and self.host_line is not None:
            received = self.host_line.apply_received(received)
        frames = self.device.exchange(received)
        if frames:
            with self._wakeup:
                self._due.extend(self.line.schedule(frames, self.clock() + self.faults.delay))
                self._wakeup.notify_all()

    def _take_due(self) -> bytes:
        now = self.clock()
        out = bytearray()
        with self._wakeup:
            while self._due and self._due[0][0] <= now:
                out += self._due.popleft()[1]
        return bytes(out)
