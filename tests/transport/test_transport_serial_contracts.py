"""SerialTransport contracts no other test held (found by mutation testing of transport/serial.py):
the line as a manual writes it with 1.5 stop bits, a negative timeout, a cancel that does not
wake later reads, a short write, and the default write timeout."""
from __future__ import annotations

import os
import time
import tty
from collections.abc import Iterator

import pytest

from firmware_bridge.errors import TransportTimeout
from firmware_bridge.transport import SerialTransport


@pytest.fixture
def pty_pair() -> Iterator[tuple[int, str]]:
    master, slave = os.openpty()
    tty.setraw(slave)
    yield master, os.ttyname(slave)
    for fd in (master, slave):
        try:
            os.close(fd)
        except OSError:
            pass


def test_one_and_a_half_stop_bits_are_said_as_a_manual_writes_them() -> None:
    t = SerialTransport("/dev/ttyUSB9", baudrate=9600, bytesize=7, parity="O", stopbits=1.5)
    assert t.line_settings() == "9600 7O1.5"
    assert SerialTransport("/dev/ttyUSB9", baudrate=9600, stopbits=2).line_settings() == "9600 8N2"


def test_a_negative_timeout_is_no_wait_not_an_error(pty_pair: tuple[int, str]) -> None:
    master, path = pty_pair
    with SerialTransport(path) as t:
        assert t.read(-1.0) == b""
        os.write(master, b"ab")
        time.sleep(0.05)
        assert t.read(-0.5) == b"ab"


def test_a_cancelled_read_does_not_leave_the_next_ones_woken(pty_pair: tuple[int, str]) -> None:
    """cancel_read wakes one read (with b""); the reads after it wait their timeout again."""
    _, path = pty_pair
    with SerialTransport(path) as t:
        t.cancel_read()
        assert t.read(5.0) == b""
        start = time.monotonic()
        assert t.read(0.2) == b""
        assert time.monotonic() - start >= 0.15


def test_a_short_write_is_a_timeout() -> None:
    t = SerialTransport("loop://")
    t.open()
    try:
        t._port.write = lambda data: len(data) - 1  # pyserial's answer when its write timeout struck
        with pytest.raises(TransportTimeout, match="wrote 2 of 3 bytes"):
            t.write(b"abc")
    finally:
        t.close()


def test_a_device_that_takes_no_bytes_times_a_write_out_by_default(pty_pair: tuple[int, str]) -> None:
    """DEFAULT_WRITE_TIMEOUT (1 s): "a device that takes no bytes for this long is gone"; without
    one a write to a stalled line would block the link's writer for ever."""
    _, path = pty_pair
    with SerialTransport(path) as t:  # nobody reads the master
        assert t.write_timeout == 1.0
        start = time.monotonic()
        with pytest.raises(TransportTimeout):
            for _ in range(10_000):
                t.write(b"\x55" * 4096)
                assert time.monotonic() - start < 30
