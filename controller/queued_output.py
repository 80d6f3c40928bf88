"""Text for standard output or standard error, written by a thread of its own, so that the thread
that has something to say never waits for the reader.

A reader that pauses (``shoectl run --json | less``, ``2>&1 | less``, a log shipper pushing back, a
terminal stopped with Ctrl-S) blocks only the writing thread: a running table's cards are decided
and journaled as fast as ever. ``QueuedOutput(stream)`` takes text with ``write`` (at most
``limit`` bytes wait; past that ``write`` says no and queues nothing, unless told ``always``);
``finish(give_up)`` waits until the reader has all of it, or ``give_up()`` says to stop waiting,
and ends the thread; text written after it is written at once, by the caller. ``line(text,
missed)`` is for lines a reader may do without: one that does not fit is counted, and the next
one queued says first how many were not (``... N {missed}``). The first write that fails (the reader gone, a full disk under ``> file``)
calls ``on_failure(error)`` once, on the writing thread; everything after it is dropped.

Written with ``os.write`` on the stream's descriptor, not through the stream: a thread blocked
inside a buffered stream holds its lock, and the interpreter's exit would wait on it for ever. A
stream with no descriptor (a test's ``StringIO``) is written through, on the writing thread.
"""
from __future__ import annotations

import contextlib
import io
import os
import threading
from collections import deque
from collections.abc import Callable
from typing import TextIO

__all__ = ["LIMIT", "QueuedOutput"]

LIMIT = 1 << 20   # bytes that may wait for the reader
_WAIT_S = 0.1     # how often ``finish`` asks whether to give up


class QueuedOutput:
    """See the module docstring. ``name`` names the writing thread (``shoectl-stdout``)."""

    def __init__(self, stream: TextIO, *, name: str, limit: int = LIMIT,
                 on_failure: Callable[[OSError], None] | None = None) -> None:
        self.on_failure = on_failure
        self.failed = False
        self.missed = 0  # ``line``s not queued since the last one that was
        self._stream = stream
        self._fd = _descriptor_of(stream)
        self._name = name
        self._limit = limit
        self._cond = threading.Condition()
        self._chunks: deque[bytes] = deque()
        self._waiting = 0   # bytes queued or being written
        self._closing = False
        self._thread: threading.Thread | None = None
        # Another writer that takes the text instead, saying so (True), on the writing thread: the
        # live screen, which prints it above itself; written past it, the screen's next redraw
        # painted over it.
        self.divert: Callable[[str], bool] | None = None

    @property
    def fd(self) -> int | None:
        """The descriptor written (None: the stream is written through)."""
        return self._fd

    @property
    def pending(self) -> int:
        """Bytes queued that the reader has not taken yet."""
        return self._waiting

    def has_room(self) -> bool:
        """True when less than ``limit`` bytes wait (and no write has failed)."""
        return not self.failed and self._waiting < self._limit

    def write(self, text: str, *, always: bool = False) -> bool:
        """Queue ``text`` as it is; False (nothing queued) after a failed write or, unless
        ``always``, when ``limit`` bytes already wait."""
        data = text.encode("utf-8", "replace")
        with self._cond:
            if self.failed or (not always and self._waiting >= self._limit):
                return False
            if self._closing:  # after ``finish`` (a line at exit): written here, at once
                return self._write(data) is None
            self._chunks.append(data)
            self._waiting += len(data)
            if self._thread is None:
                self._thread = threading.Thread(target=self._write_out, name=self._name, daemon=True)
                self._thread.start()
            self._cond.notify_all()
        return True

    def wait_for_room(self, give_up: Callable[[], bool] = lambda: False) -> bool:
        """Wait until fewer than ``limit`` bytes wait for the reader; False at once after a failed
        write, or as soon as ``give_up()`` is true."""
        with self._cond:
            while not self.failed and self._waiting >= self._limit:
                if give_up():
                    return False
                self._cond.wait(_WAIT_S)
            return not self.failed

    def line(self, text: str, missed: str, *, always: bool = False) -> None:
        """Queue ``text``, after ``... N {missed}`` when lines were not; count it instead when
        ``limit`` bytes already wait (unless ``always``). Nothing after a failed write."""
        if self.failed:
            return
        if not (always or self.has_room()):
            self.missed += 1
            return
        if self.write(f"... {self.missed} {missed}\n{text}" if self.missed else text, always=always):
            self.missed = 0
        elif not self.failed:
            self.missed += 1

    def finish(self, give_up: Callable[[], bool] = lambda: False) -> bool:
        """Wait until the reader has everything queued, then end the writing thread; True if it
        has. Stops waiting, with the thread left blocked, as soon as ``give_up()`` is true."""
        with self._cond:
            while self._waiting and not self.failed:
                if give_up():
                    return False
                self._cond.wait(_WAIT_S)
            self._closing = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        return not self.failed

    def _write_out(self) -> None:
        while True:
            with self._cond:
                while not self._chunks and not self._closing:
                    self._cond.wait()
                if not self._chunks:
                    return
                data = b"".join(self._chunks)
                self._chunks.clear()
            problem = self._write(data)
            with self._cond:
                self._waiting -= len(data)
                if problem is not None:
                    self.failed = True
                    self._chunks.clear()
                    self._waiting = 0
                self._cond.notify_all()
            if problem is not None and self.on_failure is not None:
                self.on_failure(problem)

    def _write(self, data: bytes) -> OSError | None:
        divert = self.divert  # on the writing thread too: a paused terminal holds it alone (a review)
        if divert is not None and divert(data.decode("utf-8", "replace")):
            return None
        try:
            if self._fd is None:
                self._stream.write(data.decode("utf-8"))
                self._stream.flush()
                return None
            view = memoryview(data)
            while view:
                view = view[os.write(self._fd, view):]
        except OSError as exc:
            return exc
        except ValueError:  # a stream closed under us (its owner's doing): as a reader gone
            return BrokenPipeError()
        return None


def _descriptor_of(stream: TextIO) -> int | None:
    """The descriptor under ``stream``, its buffered text flushed first; None when it has none."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    with contextlib.suppress(OSError, ValueError):
        stream.flush()
    return fd
