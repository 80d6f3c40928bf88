"""The emulator served over real I/O: pyserial on the real pty path and on socket:// URLs, pyusb's
real find/configure/read/write against the emulated backend, and a whole table over ptys."""
from __future__ import annotations

import array
import errno
import os
import time
from pathlib import Path

import pytest
import serial
import usb.core
import usb.util

from firmware_bridge.emulator import (
    DeviceCard,
    EmulatedUsbBackend,
    FaultSpec,
    LineFaults,
    ManualClock,
    PtyServer,
    EmulatedTable,
    TcpServer,
    build_device,
    read_dealt_log,
    serve_device,
    serve_table,
)
from firmware_bridge.protocol import (
    CardRead,
    Deliver,
    DeliverTarget,
    Display,
    GateUnlock,
    Heartbeat,
    ShoeLoaded,
    Shuffle,
    ShuffleDone,
    StatusRequest,
)

from firmware_bridge.protocol.framing import encode_frame

from .host_support import INF, Host, SerialWire, UsbWire, cards, find_usb, open_port



def wait_until(predicate, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        time.sleep(0.005)


# --- pty -------------------------------------------------------------------------------------


@pytest.fixture
def shoe_on_pty(tmp_path):
    device = build_device("emulated-shoe")
    server = PtyServer(device, link=tmp_path / "shoe").start()
    yield device, server
    server.close()


def test_pyserial_opens_the_pty_link_and_the_handshake_works(shoe_on_pty) -> None:
    device, server = shoe_on_pty
    assert Path(server.port).is_symlink()
    assert os.path.realpath(server.port).startswith("/dev/pts/")
    with open_port(server.port) as port:
        host = Host(SerialWire(port))
        identity = host.handshake()
        assert identity == device.identity
        with device.lock:
            device.load(cards("KD QC"))
        host.ok(GateUnlock())
        with device.lock:
            device.draw()
        read = host.wait_for(CardRead)
        assert (read.rank, read.suit, read.position) == (13, 1, 1)
        assert host.wait_for(ShoeLoaded).card_count == 2


def test_unplug_and_replug_over_the_pty_the_link_follows(shoe_on_pty) -> None:
    device, server = shoe_on_pty
    port = open_port(server.port)
    host = Host(SerialWire(port))
    host.handshake()
    with device.lock:
        device.load(cards("AS 2S 3S"))
    host.ok(GateUnlock())
    with device.lock:
        device.draw()
    host.wait_for(CardRead)
    old_tty = os.path.realpath(server.port)

    server.unplug()
    assert not os.path.lexists(server.port) and not server.plugged
    with pytest.raises(serial.SerialException):
        for _ in range(3):
            port.read(1)

    server.replug()  # the old port is still open, so the new pty gets another number
    new_tty = os.path.realpath(server.port)
    assert new_tty.startswith("/dev/pts/") and new_tty != old_tty
    port.close()
    host.conn.connection_lost()
    with open_port(server.port) as port:
        host.wire = SerialWire(port)
        host.handshake()
        status = host.status()
        assert status.pending_events == 2 and status.cards_in_shoe == 2
        host.resend()
        host.pump(0.1)
        assert [e.counter for e in host.duplicates] == [1, 2]
        host.ack()
        assert host.status().pending_events == 0
    assert server.unplugs == 1


def test_unplug_every_drives_unplug_and_replug(tmp_path) -> None:
    device = build_device("emulated-shuffler")
    faults = FaultSpec.parse("unplug-every=150ms,unplug-for=50ms")
    with serve_device(device, "pty", link=tmp_path / "s", faults=faults) as server:
        seen = []  # the link's presence, sampled
        deadline = time.monotonic() + 30  # a hang detector, never a performance limit
        while server.unplugs < 3 and time.monotonic() < deadline:
            seen.append(os.path.lexists(server.port))
            time.sleep(0.005)
        assert server.unplugs >= 3
        assert True in seen and False in seen[seen.index(True):]
        wait_until(lambda: server.plugged and os.path.lexists(server.port))
        with open_port(server.port) as port:  # plugged again: a host can talk to it
            host = Host(SerialWire(port), timeout=0.05, attempts=10)
            try:
                host.handshake()
            except (TimeoutError, serial.SerialException):
                pytest.skip("unplugged again during the handshake")  # pragma: no cover


@pytest.mark.parametrize("spec", ["corrupt=0.01,drop=0.005,both-ways=1,seed=3", "dup=0.5,both-ways=1,seed=4"])
def test_line_faults_are_survivable_with_retries(tmp_path, spec) -> None:
    """Line faults on both lines (``both-ways=1``): commands and events get through with retries."""
    device = build_device("emulated-shuffler", speed=INF)
    faults = FaultSpec.parse(spec)
    with PtyServer(device, link=tmp_path / "s", faults=faults) as server:
        with open_port(server.port) as port:
            host = Host(SerialWire(port), timeout=0.1, attempts=20)
            host.handshake()
            for _ in range(10):
                host.status()
            host.ok(Shuffle(8))
            for _ in range(20):  # lost events come back on RESEND_EVENTS
                try:
                    done = host.wait_for(ShuffleDone, timeout=0.3)
                    break
                except TimeoutError:
                    host.resend()
            assert done.card_count == 416
            host.ok(Heartbeat(1))
            while host.sequencer.gap:
                host.resend()
                host.pump(0.1)
            assert sorted(e.counter for e in host.events) == [1, 2, 3, 4]
    for line in (server.line, server.host_line):
        assert line.corrupted + line.dropped + line.duplicated > 0
    if "dup" in spec:
        assert host.stale or host.duplicates


def test_a_duplicated_frame_of_the_host_repeats_next_to_itself_never_after_the_next_frame() -> None:
    # One read from the host may hold several frames (a retransmitted command and the next one,
    # on a loaded machine). Duplicating the whole read would put the old command after the new
    # one, which no line does, and the device would rightly run it again as a new command.
    first = encode_frame(0x11, 12, b"\x08")
    second = encode_frame(0x03, 13, b"\x04\x00\x00\x00")
    line = LineFaults.from_spec(FaultSpec.parse("dup=1,seed=1"), stream=1)
    assert line.apply_received(b"\x00" + first + second + second[:5]) == (
        b"\x00\x00" + first + first + second + second + second[:5] + second[:5])
    assert line.duplicated == 4
    assert LineFaults.from_spec(FaultSpec.parse("seed=1")).apply_received(first + second) == first + second


def test_delay_holds_every_frame_back(tmp_path) -> None:
    device = build_device("emulated-shoe")
    with PtyServer(device, link=tmp_path / "s", faults=FaultSpec.parse("delay=60ms")) as server:
        with open_port(server.port) as port:
            host = Host(SerialWire(port), timeout=1.0)
            host.handshake()
            start = time.monotonic()
            host.status()
            assert time.monotonic() - start >= 0.06


# --- TCP -------------------------------------------------------------------------------------


def test_tcp_socket_url(tmp_path) -> None:
    device = build_device("emulated-shuffler", speed=INF)
    with TcpServer(device) as server:
        assert server.port.startswith("socket://127.0.0.1:") and server.tcp_port > 0
        with open_port(server.port) as port:
            host = Host(SerialWire(port))
            assert host.handshake().model == "Emulated batch shuffler"
            host.ok(Shuffle(4))
            assert host.wait_for(ShuffleDone).expected_count == 208
        # a second connection replaces the first; the device's events are still held
        with open_port(server.port) as port:
            host2 = Host(SerialWire(port))
            host2.handshake()
            assert host2.status().pending_events == 4
        server.unplug()
        with pytest.raises(serial.SerialException):
            open_port(server.port)
        server.replug()
        with open_port(server.port) as port:
            Host(SerialWire(port)).handshake()


# --- USB -------------------------------------------------------------------------------------


def endpoints(dev) -> tuple[int, int]:
    intf = dev.get_active_configuration()[(0, 0)]
    addrs = [e.bEndpointAddress for e in intf]
    out = next(a for a in addrs if usb.util.endpoint_direction(a) == usb.util.ENDPOINT_OUT)
    inn = next(a for a in addrs if usb.util.endpoint_direction(a) == usb.util.ENDPOINT_IN)
    return out, inn


def test_pyusb_finds_configures_and_talks_to_the_usb_device() -> None:
    device = build_device("emulated-usb-shuffler", speed=INF)
    backend = EmulatedUsbBackend(device)
    dev = find_usb(backend)
    assert dev is not None
    assert (dev.serial_number, dev.manufacturer, dev.product) == (
        "SHOECTL-EMU-0001", "shoectl", "Emulated USB batch shuffler")
    assert dev.bus == 1 and dev.port_numbers == (1,) and dev.speed == usb.util.SPEED_FULL
    assert "Emulated USB batch shuffler" in str(dev)  # pyusb's full descriptor dump works
    dev.set_configuration()
    assert dev.get_active_configuration().bConfigurationValue == 1
    assert endpoints(dev) == (0x01, 0x81)
    usb.util.claim_interface(dev, 0)
    ep = dev.get_active_configuration()[(0, 0)][1]
    assert ep.wMaxPacketSize == 64 and usb.util.endpoint_type(ep.bmAttributes) == usb.util.ENDPOINT_TYPE_BULK

    with pytest.raises(usb.core.USBTimeoutError):
        dev.read(0x81, 64, timeout=30)
    host = Host(UsbWire(dev, 0x01, 0x81))
    assert host.handshake() == device.identity
    host.ok(Shuffle(8))
    assert host.wait_for(ShuffleDone).card_count == 416

    # a read into a small array fills it and returns the count
    n = host.conn.send(StatusRequest())
    dev.write(0x01, n)
    buf = array.array("B", bytes(4))
    assert dev.read(0x81, buf, timeout=500) == 4
    rest = bytes(dev.read(0x81, 512, timeout=500))
    assert (bytes(buf) + rest).endswith(b"\x00")
    usb.util.dispose_resources(dev)


def test_usb_unplug_gives_errno_19_and_replug_a_new_address() -> None:
    device = build_device("emulated-usb-shuffler", speed=INF)
    backend = EmulatedUsbBackend(device)
    dev = find_usb(backend)
    dev.set_configuration()
    host = Host(UsbWire(dev, 0x01, 0x81))
    host.handshake()
    host.ok(Shuffle(8))
    host.wait_for(ShuffleDone)
    address = dev.address

    backend.unplug()
    for call in (lambda: dev.write(0x01, b"\x00", timeout=50),
                 lambda: dev.read(0x81, 64, timeout=50),
                 lambda: dev.ctrl_transfer(0x80, 0x06, 0x0300, 0, 4)):
        with pytest.raises(usb.core.USBError) as info:
            call()
        assert info.value.errno == errno.ENODEV == 19
    assert find_usb(backend) is None
    usb.util.dispose_resources(dev)  # closing a dead handle does not raise

    backend.replug()
    dev2 = find_usb(backend)
    assert dev2 is not None and dev2.address != address
    with pytest.raises(usb.core.USBError) as info:
        dev.write(0x01, b"\x00", timeout=50)  # the old handle stays dead
    assert info.value.errno == 19
    dev2.set_configuration()
    host.conn.connection_lost()
    host.wire = UsbWire(dev2, 0x01, 0x81)
    host.handshake()
    assert host.status().pending_events == 4  # three progress events and SHUFFLE_DONE, kept
    usb.util.dispose_resources(dev2)


def test_usb_unplug_every_follows_the_injected_clock() -> None:
    clock = ManualClock()
    device = build_device("emulated-usb-shuffler", clock=clock)
    backend = EmulatedUsbBackend(device, clock=clock,
                                 faults=FaultSpec.parse("unplug-every=1s,unplug-for=200ms"))
    assert find_usb(backend) is not None
    clock.advance(1.0)
    assert find_usb(backend) is None
    clock.advance(0.2)
    again = find_usb(backend)
    assert again is not None and again.address != 2 and backend.unplugs == 1


def test_usb_backend_wants_a_usb_profile() -> None:
    with pytest.raises(ValueError, match="not a USB device"):
        EmulatedUsbBackend(build_device("emulated-shoe"))


# --- a table over ptys -------------------------------------------------------------------------


def test_a_served_table_deals_and_writes_the_dealt_log(tmp_path) -> None:
    log = tmp_path / "dealt.log"
    table = EmulatedTable(seed=21, speed=INF, dealt_log=log)
    with serve_table(table, directory=tmp_path / "dev") as served:
        ports = {d["profile"]: d["port"] for d in served.devices()}
        assert ports == {"emulated-shuffler": str(tmp_path / "dev" / "shuffler"),
                         "emulated-shoe": str(tmp_path / "dev" / "shoe")}
        with open_port(ports["emulated-shuffler"]) as sp, open_port(ports["emulated-shoe"]) as hp:
            shuffler, shoe = Host(SerialWire(sp)), Host(SerialWire(hp))
            shuffler.handshake()
            shoe.handshake()
            shuffler.ok(Shuffle(8))
            shuffler.wait_for(ShuffleDone)
            shuffler.ok(Deliver(DeliverTarget.DEALER))
            for prompt in ("CUT 52", "COVER 16", "LOAD"):
                shoe.ok(Display(prompt))
            assert shoe.wait_for(ShoeLoaded).card_count == 416
            shoe.ok(GateUnlock())
            for prompt in ("BURN", "DRAW PLAYER", "DRAW BANKER", "DRAW PLAYER", "DRAW BANKER"):
                shoe.ok(Display(prompt))
            wait_until(lambda: len(shoe.of(CardRead)) == 5 or shoe.pump(0.02))
    reads = shoe.of(CardRead)
    logged = read_dealt_log(log)
    assert [(d.position, d.card) for d in logged] == [
        (r.position, DeviceCard(r.rank, r.suit)) for r in reads]
    assert not any(d.face_up or d.misread for d in logged)


def test_a_usb_profile_whose_interface_is_not_the_first_is_opened_by_its_number() -> None:
    """An integrator review: a profile with `interface = 1` (bInterfaceNumber, as documented) was
    looked up as pyusb's interface *index* 1 ("no interface index 1 alt 0 in configuration 0"):
    the transport finds the interface by its number, on the emulated backend as on a device."""
    import dataclasses

    from firmware_bridge.profiles import get_profile
    from firmware_bridge.transport import UsbTransport

    base = get_profile("emulated-usb-shuffler")
    profile = dataclasses.replace(base, transport=dataclasses.replace(base.transport, interface=1, configuration=2))
    device = build_device(profile, speed=INF)
    transport = UsbTransport(profile.transport, backend=EmulatedUsbBackend(device))
    transport.open()
    try:
        host = Host(UsbWire(transport._dev, 0x01, 0x81))  # the endpoints of the interface the transport claimed
        assert host.handshake() == device.identity
        host.ok(Shuffle(8))
        assert host.wait_for(ShuffleDone).card_count == 416
    finally:
        transport.close()
