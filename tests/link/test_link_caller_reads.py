"""A request's caller reads its reply off the line itself (``SharedReading``), and the events
that come with it are still delivered in order, exactly once, by the link's own threads.

Real parts: a pty opened by pyserial, the real protocol core, the tests' scripted device. No test
asserts a duration."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest

from firmware_bridge.link import DeviceLink, LinkEvent
from firmware_bridge.profiles import Timing
from firmware_bridge.protocol import Command, Reply, StatusReply, StatusRequest
from firmware_bridge.transport import SerialTransport
from firmware_bridge.transport.serial_sharing import SharedReading

from .consumer import wait_until
from .fake_device import FakeDevice, card

pytestmark = pytest.mark.skipif(not SharedReading.available(), reason="Linux epoll only")

TIMING = Timing(response_timeout_ms=2000, heartbeat_interval_ms=300, retries=3,
                reconnect_min_ms=10, reconnect_max_ms=200)
REQUESTS = 20
EVENTS_PER_REQUEST = 3


@pytest.mark.parametrize("auto_ack", [True, False], ids=["auto-ack", "hand-off"])
def test_events_that_come_with_a_reply_are_delivered_in_order_exactly_once(
        tmp_path: Path, auto_ack: bool) -> None:
    """The device emits events just before each reply, after a pause in which the caller is
    surely waiting on the line: the caller reads them with its reply. Every reply returns, every
    event is delivered once, in order, never on the caller's thread (in hand-off mode on the
    reader, as the hand-off promises), and all are acknowledged."""
    delivered: list[LinkEvent] = []
    threads: set[str] = set()
    links: list[DeviceLink] = []
    pause = threading.Event()

    def consume(event: LinkEvent) -> None:
        threads.add(threading.current_thread().name)
        delivered.append(event)
        if not auto_ack:
            links[0].acknowledge(event.counter, event.epoch)

    with FakeDevice(tmp_path) as device:
        def events_then_reply(command: Command) -> Reply | None:
            if isinstance(command, StatusRequest):
                pause.wait(0.01)  # the caller is in its wait by now
                for _ in range(EVENTS_PER_REQUEST):
                    device.emit(card(len(device.emitted)))
            return None  # the device's usual answer

        device.on_command = events_then_reply
        link = DeviceLink(SerialTransport(str(device.path)), timing=TIMING, on_event=consume,
                          auto_ack=auto_ack)
        links.append(link)
        with link:
            assert link.wait_connected(60)
            # The handshake's STATUS brought events too; those wait for CONNECTED to be heard and
            # go out on the deliverer thread (test_link_events: the hand-off's warm-up event).
            with device.lock:
                early = len(device.emitted)
            assert wait_until(lambda: len(delivered) >= early)
            threads.clear()
            replies = [link.request(StatusRequest()) for _ in range(REQUESTS)]
            with device.lock:
                total = len(device.emitted)
            assert wait_until(lambda: len(delivered) >= total and device.unacknowledged() == 0)
            stats = link.stats
    assert all(isinstance(reply, StatusReply) for reply in replies)
    assert [e.message for e in delivered] == device.emitted
    assert [e.counter for e in delivered] == list(range(1, total + 1))
    assert total >= REQUESTS * EVENTS_PER_REQUEST
    assert stats["caller_reads"] >= 1  # the path under test was taken
    assert threading.current_thread().name not in threads
    if not auto_ack:
        assert all(name.startswith("shoectl-read-") for name in threads), threads


def _switches(thread: threading.Thread) -> int:
    """The thread's voluntary context switches so far: one per wake-up from a wait."""
    with open(f"/proc/self/task/{thread.native_id}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    raise AssertionError("no voluntary_ctxt_switches line")


def test_an_idle_serial_link_wakes_its_reader_about_once_a_second(tmp_path: Path) -> None:
    """Nothing on the line, no heartbeat due: the reader sleeps until the cancel pipe or the
    line wakes it, at most ``SHARED_IDLE_WAIT`` at a time (it woke ten times a second at the
    0.1 s read poll, one table's largest share of idle wake-ups); a stop still ends it at once."""
    from firmware_bridge.link.reader import SHARED_IDLE_WAIT

    quiet = Timing(response_timeout_ms=2000, heartbeat_interval_ms=600_000, retries=3,
                   reconnect_min_ms=10, reconnect_max_ms=200)
    with FakeDevice(tmp_path) as device:
        link = DeviceLink(SerialTransport(str(device.path)), timing=quiet)
        with link:
            assert link.wait_connected(60)
            session = link._commands.session
            assert session is not None and session.reader is not None
            reader = session.reader
            before = _switches(reader)
            threading.Event().wait(2.0)
            woke = _switches(reader) - before
        reader.join(30)
        assert not reader.is_alive()
    assert SHARED_IDLE_WAIT >= 1.0
    # Two waits of a second and, after each, a few waits for the interpreter lock: 2-6 here, 12
    # once under `strace -f` beside two CPU hogs. A 0.1 s poll wakes at least 20 times, more under load.
    assert woke <= 15
