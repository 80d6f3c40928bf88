"""Test helpers for the emulator tests (no tests here): a minimal host and the wires it talks over,
and the small helpers the model tests share (``INF``, ``connect``, ``nak_code``, ``cards``).

The real link layer is written elsewhere; these few lines drive ``HostConnection`` directly:
send a command, read until its reply (retransmitting on timeout), collect events, acknowledge.
What is new, duplicated or missing is decided by the link's ``EventSequencer``, as in the link.
A *wire* has ``write(bytes)``, ``read() -> bytes`` (short wait) and ``now() -> float``.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import serial
import usb.core

from firmware_bridge.emulator import DeviceCard, EmulatedDevice, ManualClock
from firmware_bridge.emulator.cards import parse_device_card
from firmware_bridge.emulator.loopback import LoopbackTransport
from firmware_bridge.link import EventSequencer
from firmware_bridge.link.sequencer import DUPLICATE, OVERFLOW
from firmware_bridge.profiles import get_profile
from firmware_bridge.protocol import (
    NEED_DATA,
    Command,
    DeviceEvent,
    Dropped,
    EventAck,
    EventReceived,
    HeartbeatReply,
    Hello,
    HostConnection,
    Identity,
    Nak,
    NakCode,
    RemoteProtocolError,
    ReplyReceived,
    Reply,
    ResendEvents,
    StaleReply,
    StatusReply,
    StatusRequest,
    Sync,
)


class DeviceWire:
    """Straight into a sans-I/O model; every read advances the manual clock by ``step``."""

    def __init__(self, device: EmulatedDevice, clock: ManualClock, step: float = 0.01,
                 ticker: Callable[[], None] | None = None) -> None:
        self.device, self.clock, self.step = device, clock, step
        self.ticker = ticker or device.tick

    def write(self, data: bytes) -> None:
        self.device.receive_data(data)

    def read(self) -> bytes:
        self.clock.advance(self.step)
        self.ticker()
        return b"".join(self.device.outgoing())

    def now(self) -> float:
        return self.clock()



def find_usb(backend: Any, product: int = 0x0001) -> Any:
    """The emulated USB device a backend serves (the emulated profiles' vendor id 0x1209), through
    pyusb's own ``usb.core.find``; None when it is unplugged."""
    return usb.core.find(backend=backend, idVendor=0x1209, idProduct=product)


def open_port(path: Any) -> serial.Serial:
    """A pyserial port on the emulated serial device at ``path`` (a pty link), as the shoe's
    profile sets its line."""
    return serial.serial_for_url(str(path), timeout=0.02, **get_profile("emulated-shoe").transport.pyserial_kwargs())


class SerialWire:
    """A pyserial port (a real pty path or a socket:// URL)."""

    def __init__(self, port: Any) -> None:
        self.port = port
        self.port.timeout = 0.02

    def write(self, data: bytes) -> None:
        self.port.write(data)

    def read(self) -> bytes:
        return self.port.read(max(1, self.port.in_waiting))

    def now(self) -> float:
        return time.monotonic()


class UsbWire:
    """pyusb endpoints of a device found through ``usb.core.find(backend=...)``."""

    def __init__(self, dev: Any, ep_out: int, ep_in: int) -> None:
        self.dev, self.ep_out, self.ep_in = dev, ep_out, ep_in

    def write(self, data: bytes) -> None:
        self.dev.write(self.ep_out, data, timeout=100)

    def read(self) -> bytes:
        try:
            return bytes(self.dev.read(self.ep_in, 512, timeout=20))
        except usb.core.USBTimeoutError:
            return b""

    def now(self) -> float:
        return time.monotonic()


class LoopbackWire:
    """A ``LoopbackTransport`` (the link's in-memory transport to the device)."""

    def __init__(self, transport: LoopbackTransport) -> None:
        self.transport = transport

    def write(self, data: bytes) -> None:
        self.transport.write(data)

    def read(self) -> bytes:
        return self.transport.read(0.02)

    def now(self) -> float:
        return time.monotonic()


class Host:
    """A minimal host: one command at a time, retransmission on timeout, events collected."""

    def __init__(self, wire: Any, *, timeout: float = 0.3, attempts: int = 6,
                 conn: HostConnection | None = None) -> None:
        self.wire = wire
        self.timeout = timeout
        self.attempts = attempts
        self.conn = conn or HostConnection()
        self.sequencer = EventSequencer(profile_name="test-host")
        self.events: list[DeviceEvent] = []
        self.retransmitted: list[DeviceEvent] = []
        self.duplicates: list[DeviceEvent] = []
        self.stale: list[StaleReply] = []
        self.dropped: list[Dropped] = []
        self.violations: list[RemoteProtocolError] = []
        self._reply: ReplyReceived | None = None

    # --- commands --------------------------------------------------------------------------------

    def command(self, command: Command) -> Reply:
        """Send ``command``; return its reply (NAK included). Raises ``TimeoutError``."""
        self._reply = None
        self.wire.write(self.conn.send(command))
        for attempt in range(self.attempts):
            if attempt:
                self.wire.write(self.conn.retransmit_bytes())
            deadline = self.wire.now() + self.timeout
            while self.wire.now() < deadline:
                self._feed(self.wire.read())
                if self._reply is not None:
                    return self._reply.reply
        self.conn.abandon_command()
        raise TimeoutError(f"no reply to {command!r}")

    def ok(self, command: Command) -> Reply:
        """``command`` must not be NAKed."""
        reply = self.command(command)
        assert not isinstance(reply, Nak), f"{command!r} -> {reply!r}"
        return reply

    def handshake(self) -> Identity:
        self.wire.write(b"\x00")
        self.ok(Sync())
        identity = self.ok(Hello())
        assert isinstance(identity, Identity)
        return identity

    def status(self) -> StatusReply:
        reply = self.ok(StatusRequest())
        assert isinstance(reply, StatusReply)
        return reply

    def resend(self) -> None:
        self.ok(ResendEvents())

    def ack(self) -> None:
        """Acknowledge every event received so far without a gap."""
        counter = self.sequencer.queued
        if counter:
            self.ok(EventAck(counter))

    # --- events ----------------------------------------------------------------------------------

    def pump(self, seconds: float) -> None:
        deadline = self.wire.now() + seconds
        while self.wire.now() < deadline:
            self._feed(self.wire.read())

    def wait_for(self, cls: type, timeout: float = 3.0,
                 predicate: Callable[[Any], bool] | None = None) -> Any:
        """The first new event of type ``cls`` (matching ``predicate``) received so far or within
        ``timeout``."""
        deadline = self.wire.now() + timeout
        seen = 0
        while True:
            for event in self.events[seen:]:
                if isinstance(event, cls) and (predicate is None or predicate(event)):
                    return event
            seen = len(self.events)
            if self.wire.now() >= deadline:
                raise TimeoutError(f"no {cls.__name__} within {timeout} s; got {self.events!r}")
            self._feed(self.wire.read())

    def of(self, cls: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]

    def _learn(self, reply: Reply) -> None:
        sequencer = self.sequencer
        if isinstance(reply, Identity):
            sequencer.set_epoch(reply.event_epoch)
        elif isinstance(reply, HeartbeatReply) and sequencer.epoch is not None:
            sequencer.note_highest(reply.last_event_counter)

    def _file(self, event: DeviceEvent, retransmitted: bool) -> None:
        sequencer = self.sequencer
        verdict = sequencer.offer(event) if sequencer.epoch is not None else None
        if verdict is DUPLICATE:
            self.duplicates.append(event)
        elif verdict is not OVERFLOW:
            self.events.append(event)
            if retransmitted:
                self.retransmitted.append(event)
        while (ready := sequencer.peek()) is not None:  # this host stores at once
            sequencer.commit(ready)

    def _feed(self, data: bytes) -> None:
        if data:
            self.conn.receive_data(data)
        while True:
            try:
                event = self.conn.next_event()
            except RemoteProtocolError as exc:
                self.violations.append(exc)
                continue
            if event is NEED_DATA:
                return
            if isinstance(event, ReplyReceived):
                self._reply = event
                self._learn(event.reply)
            elif isinstance(event, EventReceived):
                self._file(event.event, event.retransmitted)
            elif isinstance(event, StaleReply):
                self.stale.append(event)
            elif isinstance(event, Dropped):
                self.dropped.append(event)


INF = float("inf")  # the speed that never waits


def connect(device, clock: ManualClock, ticker=None) -> Host:
    """A ``Host`` on ``device`` over a ``DeviceWire``, its handshake done."""
    host = Host(DeviceWire(device, clock, ticker=ticker))
    host.handshake()
    return host


def nak_code(reply) -> NakCode | None:
    """The code of a NAK reply, else None."""
    return reply.code if isinstance(reply, Nak) else None


def cards(text: str) -> list[DeviceCard]:
    """Device cards from text such as ``"AS 10H"``."""
    return [parse_device_card(t) for t in text.split()]


def loaded_shoe(clock: ManualClock, stack, **kwargs) -> tuple[Any, Host]:
    """An emulated shoe (``build_device`` options ``kwargs``) loaded with ``stack``, its gate
    unlocked by a connected host; (the shoe, the host)."""
    from firmware_bridge.emulator import build_device
    from firmware_bridge.protocol import GateUnlock

    shoe = build_device("emulated-shoe", clock=clock, **kwargs)
    host = connect(shoe, clock)
    shoe.load(stack)
    host.ok(GateUnlock())
    return shoe, host


def shuffled_table(clock: ManualClock) -> tuple[Any, Host, Host]:
    """A table at real speed whose shuffler holds a shuffled stack; hosts on the shuffler and the
    shoe."""
    from firmware_bridge.emulator import EmulatedTable
    from firmware_bridge.protocol import Shuffle, ShuffleDone

    table = EmulatedTable(clock=clock, speed=1.0, seed=5)
    shuffler = connect(table.shuffler, clock, ticker=table.tick)
    shoe = connect(table.shoe, clock, ticker=table.tick)
    table.shuffler.shuffle_s = 0.01
    shuffler.ok(Shuffle(8))
    shuffler.wait_for(ShuffleDone)
    return table, shuffler, shoe
