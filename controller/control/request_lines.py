"""Reading a control connection's request lines, with its time limits: ``request_lines``.

``request_lines(conn, stop, idle_s)`` yields, in order, each request line a client sends (bytes,
without its newline; blank lines skipped) and ``TOO_LONG`` for a whole line longer than
``MAX_LINE`` (refused alone: the connection goes on). It ends when the client closes, when
``stop`` is set, or with the reply that closes the connection: a line with no end in sight
(``TOO_LONG`` as its last item), no request for ``idle_s`` seconds, or a line begun and not ended
within ``LINE_S`` seconds (``{"ok": false, "code": "idle", ...}``, the last item). The idle time
runs from the last request (its consumer has handled it when it asks for the next one); both
limits are checked after every read, so bytes that never make a request do not keep a
connection (a byte now and then, never a newline, held a slot for hours, and 64 such clients
every slot: a concurrency review). ``conn`` reads with a timeout (the server's 0.5 s), which
bounds how late a limit or ``stop`` is seen.

``peer_closed(conn)``: whether the client of a connection that reads no more requests (an event
stream's) has gone, asked without waiting.
"""
from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

__all__ = ["LINE_S", "MAX_LINE", "TOO_LONG", "peer_closed", "request_lines"]

MAX_LINE = 64 * 1024
LINE_S = 10.0  # from a request line's first byte to its newline, at most


class _TooLong:
    """The item for a line longer than ``MAX_LINE``."""


TOO_LONG = _TooLong()


def request_lines(conn: socket.socket, stop: threading.Event,
                  idle_s: float) -> Iterator[bytes | _TooLong | dict[str, Any]]:
    buf = bytearray()
    idle_until = time.monotonic() + idle_s
    line_until = float("inf")  # a line begun must end by then
    while not stop.is_set():
        try:
            data = conn.recv(65536)
        except TimeoutError:
            data = None
        except OSError:
            return
        if data == b"":
            return
        if data:  # what came is served first: a line it ends is in time
            if not buf:
                line_until = time.monotonic() + LINE_S
            buf += data
            start = 0
            while (end := buf.find(b"\n", start)) >= 0:
                line, start = bytes(buf[start:end]), end + 1
                if len(line) > MAX_LINE:
                    yield TOO_LONG
                elif line.strip():
                    yield line
                else:
                    continue
                idle_until = time.monotonic() + idle_s
            del buf[:start]
            if not buf:
                line_until = float("inf")
            elif start:  # a new line begun in the same read
                line_until = time.monotonic() + LINE_S
            if len(buf) > MAX_LINE:  # no end in sight: said, and the connection closed
                yield TOO_LONG
                return
        now = time.monotonic()
        if now >= line_until:
            yield {"ok": False, "code": "idle", "error": f"no whole request line in {LINE_S:g} s: closed"}
            return
        if now >= idle_until:
            yield {"ok": False, "code": "idle", "error": f"no request for {idle_s:g} s: closed"}
            return


def peer_closed(conn: socket.socket) -> bool:
    """Whether the client of ``conn`` closed its end (or the connection failed), asked without
    waiting: an event stream, which reads nothing more, learnt it only when an event failed to
    go, and a quiet table kept every watcher that had left, thread and slot, until all its
    connections were taken (a review of long shifts). Bytes the client sent are left unread."""
    poller = select.poll()
    poller.register(conn, select.POLLIN | select.POLLRDHUP)
    events = poller.poll(0)
    if not events:
        return False
    flags = events[0][1]
    if flags & (select.POLLHUP | select.POLLERR | select.POLLNVAL | select.POLLRDHUP):
        return True
    try:  # readable: bytes, or the end of the stream
        return conn.recv(1, socket.MSG_PEEK) == b""
    except OSError:
        return True
