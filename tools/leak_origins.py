"""A pytest plugin that says where each socket left open was made: ``-p tools.leak_origins``.

``make test`` shows a socket, file or process left open as a ``ResourceWarning`` in its warnings
summary (pyproject.toml), under whichever test was running when the collector freed it: a
socket held in a reference cycle is freed at the next collection, often tests later, in another
module. With this plugin every socket made in the test process (``accept`` included) remembers
the test and the stack that made it; one freed while still open is written, with both, to
``$LEAK_ORIGINS_DIR/<pid>.txt`` (default ``/tmp/leak-origins``). Sockets made in the tests'
subprocesses are not followed. The collector clears weak references before it finalizes, so the
origins are kept by ``id`` (a later socket with the same ``id`` replaces the entry).

    PYTHONPATH=. .venv/bin/python -m pytest -n auto -p tools.leak_origins
    cat /tmp/leak-origins/*.txt
"""
from __future__ import annotations

import os
import socket
import traceback
from typing import Any

_origins: dict[int, tuple[str, str]] = {}
_running = ["(no test yet)"]
_made_by_socket = socket.socket.__init__
_finalize = socket.socket.__del__


def _out_dir() -> str:
    return os.environ.get("LEAK_ORIGINS_DIR", "/tmp/leak-origins")


def _init(self: socket.socket, *args: Any, **kwargs: Any) -> None:
    _made_by_socket(self, *args, **kwargs)
    _origins[id(self)] = (_running[0], "".join(traceback.format_stack(limit=16)[:-1]))


def _del(self: socket.socket) -> None:
    try:
        if self.fileno() != -1:
            made_in, stack = _origins.get(id(self), ("(not seen made)", ""))
            os.makedirs(_out_dir(), exist_ok=True)
            with open(os.path.join(_out_dir(), f"{os.getpid()}.txt"), "a", encoding="utf-8") as out:
                out.write(f"=== left open: {self!r}\n  freed during: {_running[0]}\n"
                          f"  made during: {made_in}\n{stack}\n")
    except Exception:  # a finalizer must not raise; the report is best effort
        pass
    _finalize(self)


def pytest_configure(config: Any) -> None:
    socket.socket.__init__ = _init  # type: ignore[method-assign]
    socket.socket.__del__ = _del  # type: ignore[attr-defined]


def pytest_runtest_setup(item: Any) -> None:
    _running[0] = item.nodeid
