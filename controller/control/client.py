"""Client side of the control socket (see controller.control.server for the protocol).

``ControlClient(path)``: ``status()``, ``command(operator, pin, command, args)`` (the server's
reply dict), ``events()`` (an iterator over the live event stream). A missing socket or a table
that is not running raises ``ControlUnavailable`` (an OSError: one line, exit 2 in the CLI).
"""
from __future__ import annotations

import itertools
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class ControlUnavailable(OSError):
    """No table answers on the control socket."""


class ControlClient:
    def __init__(self, path: str | Path, timeout: float = 15.0) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._ids = itertools.count(1)

    def _connect(self) -> socket.socket:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        try:
            s.connect(str(self.path))
        except (FileNotFoundError, ConnectionRefusedError):
            s.close()
            raise ControlUnavailable(f"no table is listening on {self.path} (is `shoectl run` running?)") from None
        except PermissionError:
            s.close()
            raise ControlUnavailable(f"{self.path}: permission denied (are you in the shoectl group?)") from None
        return s

    def request(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj = {"id": next(self._ids), **obj}
        with self._connect() as s:
            s.sendall(json.dumps(obj).encode() + b"\n")
            return json.loads(_read_line(s))

    def status(self) -> dict[str, Any]:
        return self.request({"op": "status"})

    def command(self, operator: str, pin: str, command: str, args: dict[str, Any]) -> dict[str, Any]:
        return self.request({"op": "command", "operator": operator, "pin": pin, "command": command, "args": args})

    def events(self) -> Iterator[dict[str, Any]]:
        """The current status first (``{"status": ...}``), then every event as it happens."""
        s = self._connect()
        s.settimeout(None)
        with s:
            s.sendall(json.dumps({"id": next(self._ids), "op": "subscribe"}).encode() + b"\n")
            f = s.makefile("rb")
            for line in f:
                yield json.loads(line)


def _read_line(s: socket.socket) -> bytes:
    buf = b""
    while b"\n" not in buf:
        chunk = s.recv(65536)
        if not chunk:
            raise ControlUnavailable("the table closed the connection")
        buf += chunk
    return buf.split(b"\n", 1)[0]
