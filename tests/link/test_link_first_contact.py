"""A connect whose SYNC gets no reply says what an installer checks (an integrator review):
before, a silent port and one bringing only noise (another baud rate or parity, a device of
another protocol) were both "SYNC got no reply after 4 attempt(s); outcome unknown", protocol
words that name nothing to check. A pty whose other end says nothing, or answers each write with
bytes that make no frame, stands for the line."""
from __future__ import annotations

import os
import threading
import tty

import pytest

from firmware_bridge.link import DeviceLink, LinkState
from firmware_bridge.transport import SerialTransport

from .rig import TIMING, States, wait_for

NOISE = bytes(range(1, 200)) * 2  # no 0x00: no frame boundary, as a line at the wrong baud rate mostly brings


def _line(answer: bytes | None) -> tuple[str, threading.Event, threading.Thread]:
    """A pty's slave path; its master answers every read with ``answer``, or never (None)."""
    master, slave = os.openpty()
    tty.setraw(slave)
    path = os.ttyname(slave)
    stop = threading.Event()

    def serve() -> None:
        os.set_blocking(master, False)
        while not stop.wait(0.01):
            try:
                if os.read(master, 4096) and answer is not None:
                    os.write(master, answer)
            except BlockingIOError:
                continue
            except OSError:
                break
        os.close(master)
        os.close(slave)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    return path, stop, thread


@pytest.mark.parametrize("answer, expected", [
    (None, "no answer (SYNC, sent 4 time(s)): check that the device is on and cabled to this port, and "
           "that this port is the device's"),
    (NOISE, "byte(s) came but no frame of the shoectl protocol (SYNC, sent 4 time(s)): check that the device's "
            "line settings match the profile's (115200 8N1) and the device on this port speaks the shoectl protocol"),
], ids=["silent", "noise"])
def test_a_first_command_unanswered_names_what_to_check(answer: bytes | None, expected: str) -> None:
    path, stop, thread = _line(answer)
    states = States()
    link = DeviceLink(SerialTransport(path, baudrate=115200), on_state=states, on_event=lambda e: None, timing=TIMING)
    link.start()
    try:
        wait_for(lambda: LinkState.DISCONNECTED in states.states(), "the connect given up")
    finally:
        link.stop()
        stop.set()
        thread.join(5)
    reason = next(r for s, r in states.seen if s is LinkState.DISCONNECTED)
    assert reason is not None and reason.endswith(expected), reason
    assert "outcome unknown" not in reason and "got no reply" not in reason
    if answer is None:
        assert "byte(s) came" not in reason
