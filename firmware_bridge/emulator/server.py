"""``DeviceServer``: the pump thread that serves one emulated device over a byte channel.

A subclass supplies the channel (``PtyServer``: a pseudo-terminal behind a stable symlink;
``TcpServer``: a loopback TCP port); this class runs the loop, in one daemon thread per device:

1. wait (``select``) until the host sent bytes, a queued frame is due, the device has something
   to do (``device.next_due``, ``clock.tick_wait``: an idle device is ticked about once a second),
   or the device emitted an event from another thread (its wake listener);
2. under ``device.lock``: ``receive_data`` what arrived (through the host-side line faults, if
   enabled), ``tick()``, take ``outgoing()`` frames;
3. pass each frame through ``LineFaults`` (corrupt / drop / dup) and hold it ``delay`` seconds;
4. write what is due. While unplugged, or with no host connected, frames written are lost (as on
   a cable with nothing at the far end); the device keeps its events, so nothing is lost.

``unplug()`` / ``replug()`` (and the fault ``unplug-every=T`` with ``unplug-for=T``) are carried
out by the pump thread itself, so no descriptor is closed under a ``select``; the calls return
once it is done. ``start()`` opens the channel and starts the thread; ``close()`` stops and
cleans up (idempotent). Servers are context managers.
"""
from __future__ import annotations

import os
import queue
import select
import threading
from collections import deque
from typing import Any

from .clock import Clock, monotonic, tick_period, tick_wait
from .device import EmulatedDevice
from .faults import FaultSpec, LineFaults

__all__ = ["DeviceServer"]

MAX_UNWRITTEN = 64 * 1024  # bytes held for a far end that does not read; more are dropped


class DeviceServer:
    """Base of the servers. Args: the device, ``faults`` (line faults, delay, unplug-every; with
    ``both-ways=1`` the line faults act on the host's bytes too), ``clock``, ``poll_s`` (the tick
    period while the device waits on a condition; default ``tick_period(device.speed)``)."""

    def __init__(self, device: EmulatedDevice, *, faults: FaultSpec | None = None,
                 clock: Clock = monotonic, poll_s: float | None = None) -> None:
        self.device = device
        self.faults = faults or FaultSpec()
        self.clock = clock
        self.poll_s = tick_period(device.speed) if poll_s is None else poll_s
        self.line = LineFaults.from_spec(self.faults, stream=0)
        self.host_line = self.faults.host_line()
        self.unplugs = 0
        self.bytes_lost = 0
        self._plugged = False
        self._auto_unplugged = False
        self._due: deque[tuple[float, bytes]] = deque()
        self._unwritten = bytearray()
        self._requests: queue.Queue[tuple[str, threading.Event]] = queue.Queue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pump_ident: int | None = None
        self._wake_r, self._wake_w = -1, -1
        self._next_unplug: float | None = None
        self._replug_at: float | None = None
        self.error: BaseException | None = None  # what stopped the pump, if it died

    # --- public --------------------------------------------------------------------------------

    @property
    def port(self) -> str:
        """What a host opens: a tty path, or a ``socket://`` URL for pyserial."""
        raise NotImplementedError

    @property
    def plugged(self) -> bool:
        return self._plugged

    def start(self) -> DeviceServer:
        if self._thread is not None:
            return self
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self._open_channel()
        self._plugged = True
        if self.faults.unplug_every > 0:
            self._next_unplug = self.clock() + self.faults.unplug_every
        self.device.hooks.add_wake_listener(self._wake_from_elsewhere)
        self._thread = threading.Thread(target=self._run, name=f"emulator-{self.device.name}",
                                        daemon=True)
        self._thread.start()
        return self

    def unplug(self, timeout: float = 2.0) -> None:
        """Pull the cable: the host's next read fails; the port disappears until ``replug()``."""
        self._request("unplug", timeout)

    def replug(self, timeout: float = 2.0) -> None:
        """Plug the cable back in (the same ``port`` name)."""
        self._request("replug", timeout)

    def close(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self.device.hooks.remove_wake_listener(self._wake_from_elsewhere)
            self._stop.set()
            self._wake()
            thread.join(timeout=5)
        if self._plugged:
            self._plugged = False
            self._close_channel()
        self._cleanup()
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                os.close(fd)
        self._wake_r = self._wake_w = -1

    def __enter__(self) -> DeviceServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- for subclasses ------------------------------------------------------------------------

    def _open_channel(self) -> None:
        """Create the channel (called on start and replug)."""
        raise NotImplementedError

    def _close_channel(self) -> None:
        """Destroy the channel (called on unplug and close)."""
        raise NotImplementedError

    def _cleanup(self) -> None:
        """Final cleanup after close (temporary directories, ...)."""

    def _read_objects(self) -> list[Any]:
        """File descriptors or sockets to wait on for reading."""
        raise NotImplementedError

    def _on_readable(self, obj: Any) -> bytes:
        """Read from a ready object; return the host's bytes (maybe none)."""
        raise NotImplementedError

    def _write_object(self) -> Any:
        """Where to write device bytes, or ``None`` if nobody is connected."""
        raise NotImplementedError

    def _write(self, obj: Any, data: bytes) -> int:
        """Write without blocking; return how many bytes went."""
        raise NotImplementedError

    # --- the pump ------------------------------------------------------------------------------

    def _request(self, what: str, timeout: float) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._do(what)
            return
        done = threading.Event()
        self._requests.put((what, done))
        self._wake()
        if not done.wait(timeout):
            raise TimeoutError(f"emulator server did not {what} within {timeout} s")

    def _do(self, what: str, auto: bool = False) -> None:
        if what == "unplug" and self._plugged:
            self._plugged = False
            self._close_channel()
            self._unwritten.clear()
            self.unplugs += 1
        elif what == "replug" and not self._plugged:
            self._open_channel()
            self._plugged = True
        self._auto_unplugged = auto and what == "unplug"

    def _wake(self) -> None:
        if self._wake_w >= 0:
            try:
                os.write(self._wake_w, b"\0")
            except OSError:
                pass

    def _wake_from_elsewhere(self) -> None:
        """The device emitted an event: wake the pump to send it, unless the pump emitted it
        itself (it sends what its own step made)."""
        if threading.get_ident() != self._pump_ident:
            self._wake()

    def _run(self) -> None:
        self._pump_ident = threading.get_ident()
        try:
            while not self._stop.is_set():
                self._cycle()
        except BaseException as exc:  # keep the reason for tests and the CLI
            self.error = exc
            raise

    def _cycle(self) -> None:
        now = self.clock()
        self._serve_requests()
        self._auto_plug(now)
        with self.device.lock:
            due = self.device.next_due(now)
        timeout = tick_wait(due, now, self.poll_s, frame_due=self._due[0][0] if self._due else None,
                            on_the_clock=self.faults.unplug_every > 0)
        rlist: list[Any] = [self._wake_r]
        wlist: list[Any] = []
        if self._plugged:
            rlist += self._read_objects()
            target = self._write_object()
            if self._unwritten and target is not None:
                wlist.append(target)
        readable, writable, _ = select.select(rlist, wlist, [], timeout)
        received = bytearray()
        for obj in readable:
            if obj == self._wake_r:
                try:
                    os.read(self._wake_r, 512)
                except BlockingIOError:
                    pass
            elif self._plugged:
                received += self._on_readable(obj)
        self._step(bytes(received))
        self._flush()

    def _serve_requests(self) -> None:
        while True:
            try:
                what, done = self._requests.get_nowait()
            except queue.Empty:
                return
            self._do(what)
            done.set()

    def _auto_plug(self, now: float) -> None:
        spec = self.faults
        if spec.unplug_every <= 0:
            return
        if self._plugged and self._next_unplug is not None and now >= self._next_unplug:
            self._do("unplug", auto=True)
            self._replug_at = now + spec.unplug_for
        elif not self._plugged and self._auto_unplugged and self._replug_at is not None \
                and now >= self._replug_at:
            self._do("replug")
            self._next_unplug = now + spec.unplug_every

    def _step(self, received: bytes) -> None:
        if received and self.host_line is not None:
            received = self.host_line.apply_received(received)
        frames = self.device.exchange(received)
        if frames:
            self._due.extend(self.line.schedule(frames, self.clock() + self.faults.delay))

    def _flush(self) -> None:
        now = self.clock()
        target = self._write_object() if self._plugged else None
        while self._due and self._due[0][0] <= now:
            _, chunk = self._due.popleft()
            if target is None:
                self.bytes_lost += len(chunk)
            else:
                self._unwritten += chunk
        if target is None or not self._unwritten:
            return
        try:
            sent = self._write(target, bytes(self._unwritten))
        except (BlockingIOError, InterruptedError):
            sent = 0
        except OSError:
            self.bytes_lost += len(self._unwritten)
            self._unwritten.clear()
            return
        del self._unwritten[:sent]
        if len(self._unwritten) > MAX_UNWRITTEN:  # nobody reads: the line loses it
            self.bytes_lost += len(self._unwritten)
            self._unwritten.clear()
