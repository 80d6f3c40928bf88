"""Fixtures of the CLI tests: ``fake_table``, a control socket that answers as a table would."""
from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

STATUS = {"ok": True, "status": {"table": "T1", "state": "idle"}, "links": {}}


@pytest.fixture
def fake_table(tmp_path: Path) -> Iterator[Callable[[str], Path]]:
    """``fake_table(reply)``: a UNIX socket that answers every request with the JSON line
    ``reply`` (None: closes the connection without an answer, as a table killed meanwhile); with
    ``status_too=False``, a ``status`` request with a well-formed status (the console asks for one
    before it starts). ``name``: the socket's file name. Its path is returned."""
    servers: list[tuple[socket.socket, threading.Thread]] = []

    def start(reply: str | None, status_too: bool = True, name: str | None = None) -> Path:
        path = tmp_path / (name or f"t{len(servers)}.sock")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(path))
        server.listen(4)

        def answer() -> None:
            while True:
                try:
                    conn, _ = server.accept()
                except OSError:  # closed at the end of the test
                    return
                with conn:
                    request = json.loads(conn.makefile("rb").readline())
                    line = json.dumps(STATUS) if request.get("op") == "status" and not status_too else reply
                    if line is not None:
                        conn.sendall(line.encode() + b"\n")

        thread = threading.Thread(target=answer, daemon=True)
        thread.start()
        servers.append((server, thread))
        return path

    yield start
    for server, thread in servers:
        server.shutdown(socket.SHUT_RDWR)  # wakes the accept() waiting
        server.close()
        thread.join(5)
