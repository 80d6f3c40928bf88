"""The scoreboard's listening socket, which keeps the table's file descriptors free at accept.

``reserving_socket(sock, reserve)`` wraps a bound, listening TCP socket; asyncio's event loop
calls its ``accept`` in a loop while connections wait. That ``accept``:

- turns away, with the scoreboard's ``503`` (``guarded_http.busy_response``: "the process is
  short of file descriptors"), a connection that leaves the process fewer than ``reserve``
  descriptors (``controller.descriptors``): under ``shoectl run --scoreboard`` a flood must not
  take what the table needs to reopen a device's line or checkpoint its journal. At accept, not
  in the protocol's ``connection_made``: the loop accepts a whole burst (up to its backlog, 2,048
  under uvicorn) before the first protocol hears of its connection;
- when the process has no descriptor left at all (its other work took them), turns the waiting
  connections away the same way with a spare descriptor held for that moment (closed, the
  connection accepted, answered and closed, the spare opened again: libuv's remedy), and says so
  in a warning at most once a second. asyncio's own remedy logs an error with a traceback for
  every connection waiting, and stops accepting for a second while they wait.

Should the spare itself be lost (another thread took its number in the instant it was free), it
is opened again at the next accept; until then asyncio's remedy applies, and
``quiet_out_of_descriptors``, the loop's exception handler, makes it warnings at most once a
second too.
"""
from __future__ import annotations

import asyncio
import os
import socket
import time
from typing import Any

import structlog

from controller.descriptors import OUT_OF_DESCRIPTORS, short_of_descriptors
from controller.scoreboard.guarded_http import busy_response

__all__ = ["quiet_out_of_descriptors", "reserving_socket"]

_SAY_EVERY_S = 1.0
_TURNED_AWAY_PER_CALL = 64  # then the loop's other work runs: a flood cannot hold it in accept
_SHORT = busy_response("the process is short of file descriptors")
log = structlog.get_logger()
_said_at = [float("-inf")]


def _say_out_of_descriptors(exc: OSError) -> None:
    now = time.monotonic()
    if now - _said_at[0] >= _SAY_EVERY_S:
        _said_at[0] = now
        log.warning("scoreboard: out of file descriptors; turning connections away", error=str(exc))


def _turn_away(conn: socket.socket) -> None:
    with conn:
        conn.setblocking(False)
        try:  # a fresh socket's send buffer takes these few bytes at once
            conn.send(_SHORT)
        except OSError:
            pass


def _open_spare() -> int | None:
    try:
        return os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None


class _ReservingSocket(socket.socket):
    """See the module docstring."""

    descriptor_reserve = 0
    _spare: int | None = None

    def accept(self) -> tuple[socket.socket, Any]:
        for _ in range(_TURNED_AWAY_PER_CALL):
            if self._spare is None:
                self._spare = _open_spare()
            try:
                conn, address = super().accept()  # BlockingIOError when none is waiting: the loop's cue
            except OSError as exc:
                if exc.errno not in OUT_OF_DESCRIPTORS or self._spare is None:
                    raise
                _say_out_of_descriptors(exc)
                self._turn_away_with_spare()
                continue
            if not short_of_descriptors(self.descriptor_reserve):
                return conn, address
            _turn_away(conn)
        raise BlockingIOError  # the loop's cue to serve the rest of its work before accepting more

    def _turn_away_with_spare(self) -> None:
        """One waiting connection accepted on the spare's number and turned away; BlockingIOError
        when none waits (the spare is held again either way, unless its number was taken)."""
        assert self._spare is not None
        os.close(self._spare)
        self._spare = None
        try:
            conn, _ = super().accept()
            _turn_away(conn)
        finally:
            self._spare = _open_spare()

    def close(self) -> None:
        if self._spare is not None:
            os.close(self._spare)
            self._spare = None
        super().close()


def reserving_socket(sock: socket.socket, descriptor_reserve: int) -> socket.socket:
    """``sock`` (a bound, listening TCP socket, detached by this call) as a socket whose accept
    keeps ``descriptor_reserve`` descriptors free (see the module docstring)."""
    reserving = _ReservingSocket(sock.family, sock.type, sock.proto, fileno=sock.detach())
    reserving.descriptor_reserve = int(descriptor_reserve)
    reserving._spare = _open_spare()
    return reserving


def quiet_out_of_descriptors(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's exception handler: running out of descriptors is a warning at most once
    a second (see the module docstring); anything else goes to the loop's default handler."""
    exc = context.get("exception")
    if isinstance(exc, OSError) and exc.errno in OUT_OF_DESCRIPTORS:
        _say_out_of_descriptors(exc)
        return
    loop.default_exception_handler(context)
