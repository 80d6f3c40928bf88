"""SharedReading on a real pty opened by pyserial: two threads waiting on one line, the
requester woken first; bytes read once; a closed far end still seen as closed."""
from __future__ import annotations

import os
import threading
import time
import tty
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from firmware_bridge.errors import DeviceDisconnected
from firmware_bridge.transport import SerialTransport
from firmware_bridge.transport.serial_sharing import SharedReading

from .descriptors import open_descriptors

pytestmark = pytest.mark.skipif(not SharedReading.available(), reason="Linux epoll only")

DEADLINE = 30.0  # seconds before a wait is declared hung (never a performance limit)


@pytest.fixture
def line() -> Iterator[tuple[int, SerialTransport]]:
    """(the device's end: the pty master, the host's end: an open SerialTransport)."""
    master, slave = os.openpty()
    tty.setraw(slave)
    transport = SerialTransport(os.ttyname(slave))
    transport.open()
    yield master, transport
    transport.close()
    for fd in (master, slave):
        try:
            os.close(fd)
        except OSError:
            pass


def waiting_in_epoll(thread: threading.Thread) -> bool:
    try:
        with open(f"/proc/self/task/{thread.native_id}/wchan", encoding="ascii") as f:
            return "epoll" in f.read()
    except OSError:
        return False


def start_waiting(wait: object, timeout: float) -> tuple[threading.Thread, list[bool]]:
    """Run ``wait(timeout)`` on a thread; return once the thread sleeps in epoll_wait."""
    result: list[bool] = []
    thread = threading.Thread(target=lambda: result.append(wait(timeout)), daemon=True)  # type: ignore[operator]
    thread.start()
    end = time.monotonic() + DEADLINE
    while not waiting_in_epoll(thread):
        assert time.monotonic() < end, "the waiting thread never reached epoll_wait"
        time.sleep(0.001)
    return thread, result


def test_an_open_serial_port_offers_shared_reading(line: tuple[int, SerialTransport]) -> None:
    _, transport = line
    assert transport.shared_reading is not None
    transport.close()
    assert transport.shared_reading is None


def test_bytes_wake_the_waiting_requester_and_not_the_reader(
        line: tuple[int, SerialTransport]) -> None:
    master, transport = line
    shared = transport.shared_reading
    assert shared is not None
    reader, reader_woke = start_waiting(shared.wait_readable, 1.0)
    requester, requester_woke = start_waiting(shared.wait_first, DEADLINE)
    os.write(master, b"reply")
    requester.join(DEADLINE)
    assert requester_woke == [True]
    assert shared.read_ready() == b"reply"
    reader.join(DEADLINE)
    assert reader_woke == [False]  # it slept through to its timeout


def test_bytes_wake_the_reader_when_no_requester_waits(line: tuple[int, SerialTransport]) -> None:
    master, transport = line
    shared = transport.shared_reading
    assert shared is not None
    reader, reader_woke = start_waiting(shared.wait_readable, DEADLINE)
    os.write(master, b"event")
    reader.join(DEADLINE)
    assert reader_woke == [True]
    assert shared.read_ready() == b"event"


def test_bytes_taken_by_one_side_read_as_nothing_by_the_other(
        line: tuple[int, SerialTransport]) -> None:
    """pyserial's port returns no bytes rather than EAGAIN when nothing is there: that is not a
    closed line."""
    master, transport = line
    shared = transport.shared_reading
    assert shared is not None
    os.write(master, b"once")
    assert shared.wait_first(DEADLINE)
    assert shared.read_ready() == b"once"
    assert shared.read_ready() == b""
    assert transport.is_open


def test_a_closed_far_end_is_reported(line: tuple[int, SerialTransport]) -> None:
    master, transport = line
    shared = transport.shared_reading
    assert shared is not None
    os.close(master)
    assert shared.wait_readable(DEADLINE)
    with pytest.raises(DeviceDisconnected):
        shared.read_ready()


def test_each_side_has_its_own_wake_up(line: tuple[int, SerialTransport]) -> None:
    _, transport = line
    shared = transport.shared_reading
    assert shared is not None
    requester, requester_woke = start_waiting(shared.wait_first, DEADLINE)
    reader, reader_woke = start_waiting(shared.wait_readable, DEADLINE)
    shared.wake_requester()
    requester.join(DEADLINE)
    assert requester_woke == [False] and reader.is_alive()
    transport.cancel_read()
    reader.join(DEADLINE)
    assert reader_woke == [False]


def test_closing_the_line_ends_the_requesters_wait_even_when_the_wake_up_is_lost(
        line: tuple[int, SerialTransport], monkeypatch: pytest.MonkeyPatch) -> None:
    """A link's stop closes the line while a request()'s caller waits on it (a command's reply
    timeout, which may be long). The close's wake-up byte is released with its pipe, and the
    kernel then drops it if the woken thread has not run yet (found in CI: the caller slept on
    for its whole reply timeout). The wait ends within a slice of the close, whichever way that
    race goes: here the wake-up is lost for certain. The reader's wait ends within its own
    timeout (the link's 0.1 s read poll), and any wait begun after the close fails at once."""
    _, transport = line
    shared = transport.shared_reading
    assert shared is not None
    monkeypatch.setattr(shared, "wake_requester", lambda: None)
    outcomes: dict[str, object] = {}

    def wait(name: str, call: object, timeout: float) -> None:
        try:
            outcomes[name] = call(timeout)  # type: ignore[operator]
        except DeviceDisconnected:
            outcomes[name] = "closed"

    threads = [threading.Thread(target=wait, args=item, daemon=True)
               for item in (("requester", shared.wait_first, 10 * DEADLINE),
                            ("reader", shared.wait_readable, 0.5))]
    for thread in threads:
        thread.start()
    end = time.monotonic() + DEADLINE
    while not all(waiting_in_epoll(thread) for thread in threads):
        assert time.monotonic() < end, "the waits never reached epoll_wait"
        time.sleep(0.001)
    transport.close()
    for thread in threads:
        thread.join(DEADLINE)
        assert not thread.is_alive(), "a wait outlived the close of its line"
    assert outcomes["requester"] == "closed"
    assert outcomes["reader"] in ("closed", False)  # the transport's cancel may wake it first
    for call in (shared.wait_first, shared.wait_readable):
        with pytest.raises(DeviceDisconnected):
            call(DEADLINE)


def _on_number(number: int, make: Callable[[], Any]) -> tuple[Any, list[int]]:
    """``make()`` (which opens a file) run when ``number``, a descriptor a close freed, is the
    lowest free one: the next file this process opens gets it. (what make returned, fillers)."""
    fillers = []
    while (fd := os.open(os.devnull, os.O_RDONLY)) != number:
        assert fd < number, "the descriptor's number was taken meanwhile"
        fillers.append(fd)
    os.close(fd)
    return make(), fillers


def test_a_wake_up_after_the_close_writes_to_no_other_file(line: tuple[int, SerialTransport], tmp_path) -> None:
    """A session lost after the line closed (the link's loss path wakes the requester) wrote its
    byte by number into the old wake-up pipe: by then the number may be another file's (a
    control client's socket, the journal). A review of descriptors across threads."""
    _, transport = line
    shared = transport.shared_reading
    assert shared is not None
    number = shared._wake_w
    transport.close()
    other = tmp_path / "another file"
    fd, fillers = _on_number(number, lambda: os.open(other, os.O_WRONLY | os.O_CREAT, 0o600))
    try:
        assert fd == number
        shared.wake_requester()
        assert other.read_bytes() == b""  # nothing written into the new owner's file
    finally:
        for each in (fd, *fillers):
            os.close(each)


def test_a_requester_woken_as_the_line_closes_reads_no_other_file(line: tuple[int, SerialTransport]) -> None:
    """The requester's wait returned from epoll (its wake-up), then waited for the interpreter
    while the link closed the line, and read its wake-up pipe by number: another file had that
    number by then, and lost the bytes it held (widened here by a pause after the epoll returns).
    The wait now ends as closed, and reads nothing."""
    _, transport = line
    shared = transport.shared_reading
    assert shared is not None
    number, real = shared._wake_r, shared._requester

    class SlowToRun:  # the requester's epoll, its thread slow to run after the wait returns
        def poll(self, timeout: float) -> list[tuple[int, int]]:
            ready = real.poll(timeout)
            if ready:
                time.sleep(0.3)
            return ready

        def close(self) -> None:
            real.close()

    shared._requester = SlowToRun()  # type: ignore[assignment]
    outcome: list[object] = []

    def wait() -> None:
        try:
            outcome.append(shared.wait_first(DEADLINE))
        except DeviceDisconnected as exc:
            outcome.append(exc)

    thread = threading.Thread(target=wait, daemon=True)
    thread.start()
    time.sleep(0.1)
    shared.wake_requester()  # the session lost: the caller woken
    time.sleep(0.05)  # the reader joined
    transport.close()
    (r, w), fillers = _on_number(number, os.pipe)
    try:
        assert r == number
        os.write(w, b"CONTROL REQUEST\n")
        thread.join(DEADLINE)
        assert len(outcome) == 1 and isinstance(outcome[0], DeviceDisconnected), outcome
        assert os.read(r, 64) == b"CONTROL REQUEST\n"  # still there for its owner
    finally:
        for fd in (r, w, *fillers):
            os.close(fd)


def test_a_port_opened_without_descriptors_to_spare_reads_alone_and_leaks_none(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Found in CI (a table run with RLIMIT_NOFILE 40 and its control socket flooded): a
    reconnect whose SharedReading could not get its descriptors (EMFILE) crashed the link's
    connect, leaving the port and what SharedReading had made open, so each retry took more.
    Now the port opens without shared reading (the reader reads through read(), woken by the
    cancel pipe) and a SharedReading that fails leaves nothing open. The EMFILE is simulated
    at the second epoll: a process cannot otherwise run out at exactly that point."""
    import select

    from firmware_bridge.transport import serial_sharing

    made = []
    real_epoll = select.epoll

    def epoll_until_the_second() -> select.epoll:
        if made:
            raise OSError(24, "Too many open files")
        made.append(real_epoll())
        return made[-1]

    master, slave = os.openpty()
    tty.setraw(slave)
    try:
        before = open_descriptors()
        monkeypatch.setattr(serial_sharing.select, "epoll", epoll_until_the_second)
        with pytest.raises(OSError):
            SharedReading(slave, slave, "pty")
        assert made[0].closed and open_descriptors() <= before  # nothing left open
        made.clear()
        transport = SerialTransport(os.ttyname(slave))
        transport.open()
        try:
            assert transport.shared_reading is None
            os.write(master, b"still read")
            assert transport.read(DEADLINE) == b"still read"
        finally:
            transport.close()
        assert open_descriptors() <= before
    finally:
        for fd in (master, slave):
            os.close(fd)
