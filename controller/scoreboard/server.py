"""Serving the scoreboard app with uvicorn on a socket bound first, on a thread of its own.

- ``listen_address("HOST:PORT")`` is an argparse type: ``127.0.0.1:8080``, ``0.0.0.0:8080``,
  ``[::1]:8080``, port 0 for any free port; anything else is refused with one line.
- ``bind(host, port)`` binds the listening socket before anything else is opened, so a port in
  use is a one-line ``UsageError`` while nothing has changed yet.
- ``ScoreboardServer(app, sock).start()`` serves on a thread (``scoreboard-http``): uvicorn
  installs no signal handlers there, the caller owns stopping. ``stop()`` closes the source
  first, which ends every open event stream, then lets uvicorn finish within ``_STOP_S``
  seconds (it may be called from a signal handler while ``serve()`` runs on another thread).
  ``url`` is where it listens. Connections are capped, must send their request in time and never
  take the process's last ``descriptor_reserve`` file descriptors
  (``controller.scoreboard.guarded_http``, ``controller.scoreboard.listening``); ``warnings``
  says, at start, a limit of open files too low for the cap. A source that gives up
  (``TableSource.give_up``: a broker refusing the credentials) ends the serving, and ``serve()``
  then raises ``UsageError`` with its reason (one line, exit 2).
"""
from __future__ import annotations

import argparse
import asyncio
import errno
import socket
import threading
from typing import Any

from controller.descriptors import TABLE_RESERVE, capacity_warning
from controller.errors import UsageError

__all__ = ["ScoreboardServer", "bind", "listen_address"]

_STOP_S = 2  # seconds uvicorn may take to close its connections once the streams ended


def listen_address(text: str) -> tuple[str, int]:
    """``--listen HOST:PORT`` as (host, port); argparse's one-line error otherwise."""
    host, sep, port = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not (port.isascii() and port.isdigit()) or int(port) > 65535 or len(port) > 5:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, e.g. 127.0.0.1:8080, not {text[:60]!r}")
    try:
        socket.getaddrinfo(host, None, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
    except (socket.gaierror, UnicodeError):
        raise argparse.ArgumentTypeError(f"expected a numeric address such as 127.0.0.1 or 0.0.0.0 before the port, "
                                         f"not {host[:60]!r}") from None
    return host, int(port)


def bind(host: str, port: int, option: str = "--listen") -> socket.socket:
    """The listening socket; UsageError (one line, naming ``option``) when the port is in use or
    the address is not this machine's."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=64)
    except OSError as exc:
        where = f"{option} {'[' + host + ']' if family == socket.AF_INET6 else host}:{port}"
        if exc.errno == errno.EADDRINUSE:
            raise UsageError(f"{where}: the port is in use (another scoreboard or program listens there)") from None
        if exc.errno == errno.EADDRNOTAVAIL:
            raise UsageError(f"{where}: not an address of this machine") from None
        if exc.errno == errno.EACCES:
            raise UsageError(f"{where}: not allowed to listen on this port (ports below 1024 need privileges)") from None
        raise UsageError(f"{where}: cannot listen: {exc.strerror or exc}") from None


class ScoreboardServer:
    """uvicorn serving ``app`` on ``sock`` (see the module docstring); ``source`` the app's
    ``TableSource``, closed by ``stop()``."""

    def __init__(self, app: Any, sock: socket.socket, source: Any, *, descriptor_reserve: int = TABLE_RESERVE) -> None:
        import uvicorn

        from controller.scoreboard.guarded_http import MAX_CONNECTIONS, GuardedH11Protocol
        from controller.scoreboard.listening import reserving_socket

        self._sock = reserving_socket(sock, descriptor_reserve)
        self.source = source
        self._address = self._sock.getsockname()[:2]
        warning = capacity_warning("the scoreboard", MAX_CONNECTIONS, descriptor_reserve)
        self.warnings = [] if warning is None else [warning]
        # loop="asyncio": the reserve is kept by the socket's accept, which uvloop would not call
        config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", http=GuardedH11Protocol,
                                loop="asyncio", timeout_graceful_shutdown=_STOP_S, ws="none")
        self._server = uvicorn.Server(config)
        self._thread: threading.Thread | None = None
        source.on_fatal = self._give_up

    def _give_up(self) -> None:
        self._server.should_exit = True  # uvicorn's main loop looks at it every 0.1 s, from any thread

    @property
    def table_id(self) -> str:
        """The source's first table (a journal's table)."""
        ids = self.source.table_ids()
        return ids[0] if ids else ""

    @property
    def url(self) -> str:
        host, port = self._address
        shown = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host)
        return f"http://{'[' + shown + ']' if ':' in shown else shown}:{port}"

    def start(self) -> ScoreboardServer:
        self._thread = threading.Thread(target=self.serve, name="scoreboard-http", daemon=True)
        self._thread.start()
        return self

    def serve(self) -> None:
        """Serve until ``stop()`` (on the calling thread); the socket is closed when it returns.
        UsageError (one line) when the source gave up (``TableSource.give_up``)."""
        try:
            asyncio.run(self._serve())
        finally:
            self._sock.close()
        if self.source.fatal is not None:
            raise UsageError(self.source.fatal)

    async def _serve(self) -> None:
        from controller.scoreboard.listening import quiet_out_of_descriptors

        asyncio.get_running_loop().set_exception_handler(quiet_out_of_descriptors)
        await self._server.serve(sockets=[self._sock])

    def stop(self) -> None:
        self.source.close()
        self._server.should_exit = True
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(_STOP_S + 3)
