"""A minimal scripted device for the link tests: our protocol on a real pseudo-terminal.

Not the emulator (``firmware_bridge.emulator`` is the faithful one); this is the smallest device
that lets the tests control every byte:

- it serves the master side of ``os.openpty()`` (slave in raw mode) from one thread; the host
  opens ``path``, a stable symlink to the current ``/dev/pts/N``;
- it speaks the protocol through ``DeviceConnection`` (replay, SYNC, EVENT_ACK and
  RESEND_EVENTS are the real core's); application commands are answered by ``_answer``:
  STATUS and HEARTBEAT truthfully, everything else ACK, unless scripted otherwise (``naks``,
  ``drop_replies``, ``damage_replies``, ``mute``, ``on_command``);
- ``emit(event)`` emits an event now (stored until acknowledged, as a device must);
- ``LineFaults`` on what it writes (``faults_out``) and on what it reads (``faults_in``), applied
  per frame;
- ``unplug()`` closes the pty (the host's next read fails) and removes the symlink;
  ``plug()`` makes a new pty behind the same symlink. ``power_cycle=True`` also restarts the
  protocol core (unacknowledged events and the counter kept, as non-volatile storage would;
  ``new_epoch`` restarts the counter instead).

All pty file descriptors are used and closed by the device thread only (control calls are
posted to it), so a descriptor number is never reused under a running ``select``.
"""
from __future__ import annotations

import os
import queue
import select
import threading
import tty
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from firmware_bridge.emulator.faults import FaultSpec, LineFaults
from firmware_bridge.protocol import (
    NEED_DATA,
    Ack,
    AutoReply,
    Capability,
    CardRead,
    Command,
    CommandReceived,
    DeviceConnection,
    DeviceEvent,
    DeviceMode,
    DeviceState,
    Dropped,
    Heartbeat,
    HeartbeatReply,
    Identity,
    Nak,
    NakCode,
    Reply,
    StatusReply,
    StatusRequest,
)

__all__ = ["FakeDevice", "card", "damaged", "default_identity"]


def default_identity(serial: str = "SN-TEST-1", epoch: int = 7, version: int = 1) -> Identity:
    return Identity(protocol_version=version,
                    capabilities=Capability.CARD_RECOGNITION | Capability.FACE_UP_DETECTION,
                    deck_capacity=8, event_epoch=epoch, model="FAKE-SHOE", serial=serial,
                    firmware="0.0.1")


def card(i: int) -> CardRead:
    """The i-th card of a repeating stack, counter left to the device (0)."""
    return CardRead(rank=i % 13 + 1, suit=i % 4, face_up=False, position=i % 416 + 1,
                    timestamp_ms=1000 + i)


def damaged(frame: bytes) -> bytes:
    """``frame`` with one byte in its middle changed, never into a 0x00 delimiter: the host's
    decoder drops it (bad CRC or COBS)."""
    data = bytearray(frame)
    middle = len(data) // 2
    data[middle] ^= 0x55 if data[middle] != 0x55 else 0xAA
    return bytes(data)


def _frames(data: bytes) -> list[bytes]:
    """Split at the 0x00 delimiters, keeping each delimiter with its frame."""
    out, start = [], 0
    while True:
        end = data.find(b"\x00", start)
        if end < 0:
            if start < len(data):
                out.append(data[start:])
            return out
        out.append(data[start:end + 1])
        start = end + 1


class FakeDevice:
    """A scripted protocol device on a pty. Use as a context manager or ``start()``/``stop()``.

    Attributes for assertions (read them under ``device.lock`` when the device is running):
    ``executed`` (application commands executed, by class name), ``received`` (command frames
    accepted, replays included), ``replayed`` (replies replayed), ``emitted`` (every event with
    its counter, in order), ``conn`` (the ``DeviceConnection``).
    """

    def __init__(self, directory: str | os.PathLike[str], *, name: str = "fake-shoe",
                 identity: Identity | None = None, faults_out: FaultSpec | None = None,
                 faults_in: FaultSpec | None = None, max_unacknowledged: int = 4096) -> None:
        self.path = Path(directory) / name
        self.identity = identity or default_identity()
        self.max_unacknowledged = max_unacknowledged
        self.conn = DeviceConnection(self.identity, max_unacknowledged=max_unacknowledged)
        self.faults_out = LineFaults.from_spec(faults_out, 1) if faults_out else None
        self.faults_in = LineFaults.from_spec(faults_in, 2) if faults_in else None
        self.lock = threading.RLock()
        self.executed: Counter[str] = Counter()
        self.received: Counter[str] = Counter()
        self.replayed = 0
        self.emitted: list[DeviceEvent] = []
        self.naks: dict[type, tuple[NakCode, str]] = {}
        self.drop_replies: Counter[type] = Counter()
        self.damage_replies: Counter[type] = Counter()  # replies sent damaged (not their replays)
        self.mute = False
        self.on_command: Callable[[Command], Reply | None] | None = None
        self.write_drops = 0
        self.write_stall = 0.2  # seconds a write may wait for the host to read before dropping
        self._stalled = False
        self.plugs = 0
        self._master: int | None = None
        self._slave: int | None = None
        self._last_type: type | None = None
        self._calls: queue.Queue[tuple[Callable[[], Any], threading.Event, list[Any]]] = queue.Queue()
        self._wake_r, self._wake_w = os.pipe()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name=f"fake-{name}")
        self._uptime = 0

    # lifecycle

    def start(self, plugged: bool = True) -> FakeDevice:
        self._thread.start()
        if plugged:
            self.plug()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self._call(self._unplug)
            self._stop.set()
            os.write(self._wake_w, b"x")
            self._thread.join()
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> FakeDevice:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # the cable

    def plug(self, *, power_cycle: bool = False, new_epoch: int | None = None,
             identity: Identity | None = None) -> None:
        """Connect a new pty behind ``path``; optionally restart the device first."""
        self._call(lambda: self._plug(power_cycle, new_epoch, identity))

    def unplug(self) -> None:
        """Close the pty (the host sees its next read fail) and remove ``path``."""
        self._call(self._unplug)

    def replug(self, **kwargs: Any) -> None:
        self.unplug()
        self.plug(**kwargs)

    @property
    def plugged(self) -> bool:
        return self._master is not None

    # events

    def emit(self, event: DeviceEvent) -> int:
        """Emit ``event`` (built with counter 0); returns its counter. Written at once when
        plugged; kept until acknowledged either way. Raises EventBufferFullError when full."""
        with self.lock:
            data = self.conn.send(event)
            counter = self.conn.last_event_counter
            self.emitted.append(replace(event, counter=counter))  # type: ignore[type-var]
            self._write(data)
            return counter

    def unacknowledged(self) -> int:
        with self.lock:
            return self.conn.unacknowledged_count

    def last_acknowledged(self) -> int:
        with self.lock:
            return self.conn.last_acknowledged_event

    # internals (device thread)

    def _call(self, fn: Callable[[], Any]) -> Any:
        if threading.current_thread() is self._thread or not self._thread.is_alive():
            return fn()
        done = threading.Event()
        box: list[Any] = []
        self._calls.put((fn, done, box))
        os.write(self._wake_w, b"x")
        done.wait()
        if box and isinstance(box[0], BaseException):
            raise box[0]
        return box[0] if box else None

    def _plug(self, power_cycle: bool, new_epoch: int | None, identity: Identity | None) -> None:
        with self.lock:
            if self._master is not None:
                return
            if identity is not None or new_epoch is not None or power_cycle:
                self._restart(identity, new_epoch)
            master, slave = os.openpty()
            tty.setraw(slave)
            os.set_blocking(master, False)
            tmp = self.path.with_name(self.path.name + ".new")
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass
            os.symlink(os.ttyname(slave), tmp)
            os.replace(tmp, self.path)
            self._master, self._slave = master, slave
            self._stalled = False
            self.plugs += 1

    def _restart(self, identity: Identity | None, new_epoch: int | None) -> None:
        old = self.conn
        ident = identity or self.identity
        if new_epoch is not None:
            ident = replace(ident, event_epoch=new_epoch)
            self.identity = ident
            self.conn = DeviceConnection(ident, max_unacknowledged=self.max_unacknowledged)
            return
        self.identity = ident
        self.conn = DeviceConnection(ident, next_event_counter=old.last_event_counter + 1,
                                     unacknowledged=old.unacknowledged_events(),
                                     last_acknowledged_event=old.last_acknowledged_event,
                                     max_unacknowledged=self.max_unacknowledged)

    def _unplug(self) -> None:
        with self.lock:
            master, slave = self._master, self._slave
            self._master = self._slave = None
            for fd in (master, slave):
                if fd is not None:
                    os.close(fd)
            try:
                self.path.unlink()
            except FileNotFoundError:
                pass

    def _run(self) -> None:
        while not self._stop.is_set():
            fds = [self._wake_r]
            master = self._master
            if master is not None:
                fds.append(master)
            ready, _, _ = select.select(fds, [], [], 0.5)
            if self._wake_r in ready:
                os.read(self._wake_r, 4096)
                self._run_calls()
                continue
            if master is not None and master in ready:
                try:
                    data = os.read(master, 65536)
                except (BlockingIOError, InterruptedError):
                    continue
                except OSError:  # EIO: no slave open (cannot happen: we hold one)
                    continue
                self._receive(data)

    def _run_calls(self) -> None:
        while True:
            try:
                fn, done, box = self._calls.get_nowait()
            except queue.Empty:
                return
            try:
                box.append(fn())
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                box.append(exc)
            done.set()

    def _receive(self, data: bytes) -> None:
        with self.lock:
            if self.faults_in is not None:
                data = b"".join(c for f in _frames(data) for c in self.faults_in.apply(f))
            conn = self.conn
            conn.receive_data(data)
            while True:
                ev = conn.next_event()
                if ev is NEED_DATA:
                    break
                if isinstance(ev, Dropped):
                    continue
                if isinstance(ev, AutoReply):
                    if ev.replayed:
                        self.replayed += 1
                        kind = self._last_type
                    else:
                        kind = type(ev.command) if ev.command is not None else None
                        self._last_type = kind
                    if kind is not None:
                        self.received[kind.__name__] += 1
                    self._reply(kind, ev.data)
                elif isinstance(ev, CommandReceived):
                    kind = type(ev.command)
                    self._last_type = kind
                    self.received[kind.__name__] += 1
                    self._reply(kind, conn.send(self._answer(ev.command)))

    def _answer(self, command: Command) -> Reply:
        kind = type(command)
        if kind in self.naks:
            code, text = self.naks[kind]
            return Nak(code, text)
        if self.on_command is not None:
            reply = self.on_command(command)
            if reply is not None:
                self.executed[kind.__name__] += 1
                return reply
        self.executed[kind.__name__] += 1
        conn = self.conn
        if kind is StatusRequest:
            return StatusReply(state=DeviceState.IDLE, mode=DeviceMode.NORMAL, door_open=False,
                               jam=False, gate_locked=False, cards_in_shoe=0,
                               pending_events=min(conn.unacknowledged_count, 0xFFFF),
                               last_acked_event=conn.last_acknowledged_event)
        if kind is Heartbeat:
            self._uptime += 1
            return HeartbeatReply(token=command.token, uptime_ms=self._uptime,  # type: ignore[attr-defined]
                                  last_event_counter=conn.last_event_counter)
        return Ack()

    def _reply(self, kind: type | None, data: bytes) -> None:
        if kind is not None and self.drop_replies[kind] > 0:
            self.drop_replies[kind] -= 1
            return
        if kind is not None and self.damage_replies[kind] > 0:
            self.damage_replies[kind] -= 1
            data = damaged(data)
        self._write(data)

    def _write(self, data: bytes) -> None:
        """Write to the line (caller holds the lock); faults per frame. Nothing is written when
        unplugged or muted; a full pty buffer is waited on (as a UART waits for its FIFO) for
        ``write_stall`` seconds; then the rest is dropped, and so is everything written until
        the buffer drains (nobody is reading: a line loses bytes then)."""
        master = self._master
        if master is None or self.mute:
            return
        if self._stalled:
            # The last write found nobody reading: drop at once until the line drains.
            _, writable, _ = select.select([], [master], [], 0)
            if not writable:
                self.write_drops += 1
                return
            self._stalled = False
        chunks = [data] if self.faults_out is None else [
            c for f in _frames(data) for c in self.faults_out.apply(f)]
        for chunk in chunks:
            view = memoryview(chunk)
            while view:
                try:
                    n = os.write(master, view)
                except (BlockingIOError, InterruptedError):
                    # A UART waits for its FIFO; give up if nobody reads for a while.
                    _, writable, _ = select.select([], [master], [], self.write_stall)
                    if not writable:
                        self.write_drops += 1
                        self._stalled = True
                        return
                    continue
                except OSError:
                    self.write_drops += 1
                    return
                view = view[n:]
