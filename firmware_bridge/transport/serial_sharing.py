"""``SharedReading``: two threads waiting on one serial descriptor, the requester woken first.

A link has a reader thread that waits on the line all the time, and, while a command is
outstanding, the command's caller waiting for its reply. Waking the reader and then having it
wake the caller costs a second thread wake-up per reply. Here each side waits in an ``epoll`` of
its own on the same descriptor, both registered ``EPOLLEXCLUSIVE``: the kernel wakes the first
registered waiter that is actually waiting, and only it. The requester's is registered first, so
bytes that arrive while the caller waits wake the caller alone, which reads them itself; when
nobody waits there, they wake the reader.

Which thread wakes is only a matter of speed, never of correctness: whoever wakes reads what is
there (``read_ready``, never blocking) under the link's lock, so the bytes are taken in order,
once; a thread that finds nothing (the other took it) waits again. The one rule: a wait that
returned True must be followed by ``read_ready`` until it returns less than ``MAX_READ`` bytes,
because the other side was not told of those bytes (while nobody waits, both sides are told,
and readiness is level-triggered: it is reported again at each wait until the bytes are taken). Linux only (``select.EPOLLEXCLUSIVE``);
``SharedReading.available()`` says whether it can be used.
"""
from __future__ import annotations

import contextlib
import os
import select
import threading
import time

from firmware_bridge.errors import DeviceDisconnected, os_error_words

__all__ = ["SharedReading"]

MAX_READ = 65536  # bytes returned by one read_ready() at most
# Longest one epoll_wait of the requester lasts (its wait is a command's reply timeout, which may
# be long). close() wakes it through its pipe, but when it releases the pipe before the woken
# thread has run, the kernel drops that readiness and the thread sleeps on: the wait is cut into
# slices so that it sees the close within one slice.
WAIT_SLICE = 0.05  # seconds


class SharedReading:
    """Both waits on the open descriptor ``fd``; ``cancel_fd`` is the transport's cancel pipe
    (read end, non-blocking), which wakes the reader's wait. ``close()`` releases the epolls and
    the requester's wake-up pipe (not ``fd`` nor ``cancel_fd``: the transport's). Making one
    takes four descriptors; OSError when they cannot be had, with none left open."""

    def __init__(self, fd: int, cancel_fd: int, name: str) -> None:
        self._fd = fd
        self._cancel_fd = cancel_fd
        self._name = name
        self._closed = False
        # Held to use the wake-up descriptors by number and to close them: a thread that looked
        # before the close and wrote or read after it reached whatever file had the number by
        # then (a control client's socket, the journal: a review of descriptors across threads).
        self._descriptors = threading.Lock()
        # An OSError (no descriptor left: EMFILE) leaves nothing open: what was made is undone.
        with contextlib.ExitStack() as undo:
            self._wake_r, self._wake_w = os.pipe()
            undo.callback(os.close, self._wake_w)
            undo.callback(os.close, self._wake_r)
            os.set_blocking(self._wake_r, False)
            os.set_blocking(self._wake_w, False)
            exclusive = select.EPOLLIN | select.EPOLLEXCLUSIVE
            # The requester's epoll is registered on the line first: it is woken in preference.
            self._requester = undo.enter_context(select.epoll())
            self._requester.register(fd, exclusive)
            self._requester.register(self._wake_r, select.EPOLLIN)
            self._reader = undo.enter_context(select.epoll())
            self._reader.register(fd, exclusive)
            self._reader.register(cancel_fd, select.EPOLLIN)
            undo.pop_all()  # all made: close() releases them from now on

    @staticmethod
    def available() -> bool:
        return hasattr(select, "epoll") and hasattr(select, "EPOLLEXCLUSIVE")

    def wait_readable(self, timeout: float) -> bool:
        """The reader's wait: True when the line may hold bytes (read them: see the module
        docstring); False after ``timeout`` seconds or when only ``cancel_read()`` woke it."""
        # Not cut in slices: the link joins its reader before it closes the line, so the cancel
        # pipe's wake-up is never released under it, and an idle line wakes it no more often.
        return self._wait(self._reader, self._cancel_fd, timeout, slice_s=timeout)

    def wait_first(self, timeout: float) -> bool:
        """The requester's wait, woken before the reader's: True when the line may hold bytes
        (read them: see the module docstring); False after ``timeout`` seconds or when only
        ``wake_requester()`` woke it."""
        return self._wait(self._requester, self._wake_r, timeout, slice_s=WAIT_SLICE)

    def wake_requester(self) -> None:
        """Make the requester's current or next ``wait_first`` return (False); nothing once
        ``close()`` ran. Never raises."""
        with self._descriptors:
            if self._closed:
                return
            try:
                os.write(self._wake_w, b"x")
            except OSError:  # the pipe is full (already woken)
                pass

    def _wait(self, poll: select.epoll, wake_fd: int, timeout: float, *, slice_s: float) -> bool:
        """Wait in slices of ``slice_s``: True when the line is readable, False once woken
        through ``wake_fd`` or after ``timeout``; ``DeviceDisconnected`` once ``close()`` ran."""
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            if self._closed:
                raise DeviceDisconnected(f"{self._name}: closed while waiting")
            left = deadline - time.monotonic()
            try:
                ready = poll.poll(min(max(left, 0.0), slice_s))
            except (OSError, ValueError) as exc:  # closed under us: the session is over
                raise DeviceDisconnected(f"{self._name}: closed while waiting") from exc
            readable = woken = False
            for fd, _ in ready:
                if fd != wake_fd:
                    readable = True
                    continue
                woken = True
                with self._descriptors:
                    if self._closed:
                        raise DeviceDisconnected(f"{self._name}: closed while waiting")
                    try:
                        os.read(wake_fd, 4096)
                    except OSError:
                        pass
            if readable or woken or left <= slice_s:
                return readable

    def read_ready(self) -> bytes:
        """The bytes waiting now (at most ``MAX_READ``), ``b""`` if none; never blocks. A closed far
        end (readable with no data, or EIO on a pty) raises ``DeviceDisconnected``."""
        data = self._read()
        # A serial port without VMIN also reads b"" when nothing is there (the other thread took
        # it): only a line that is still readable and still gives nothing is closed.
        if not data and select.select([self._fd], [], [], 0)[0]:
            data = self._read()
            if not data:
                raise DeviceDisconnected(f"{self._name}: closed at the device's end")
        return data

    def _read(self) -> bytes:
        try:
            return os.read(self._fd, MAX_READ)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as exc:
            raise DeviceDisconnected(f"{self._name}: device gone ({os_error_words(exc)})") from exc

    def close(self) -> None:
        """Wake a requester still waiting, then release the epolls and the pipe; never raises. A
        requester's wait under way ends within ``WAIT_SLICE`` (``DeviceDisconnected``) even if
        the wake-up is lost with the pipe; the reader's within its own ``timeout``."""
        self.wake_requester()
        with self._descriptors:
            if self._closed:
                return
            self._closed = True
            for poll in (self._requester, self._reader):
                poll.close()
            for fd in (self._wake_r, self._wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass
