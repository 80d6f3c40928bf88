"""The control socket: operators' commands to a running table, as JSON lines over a UNIX socket.

Protocol (one JSON object per line, UTF-8; docs/control.md):

    -> {"id": 1, "op": "status"}
    <- {"id": 1, "ok": true, "status": {...TableCore.snapshot()...}}
    -> {"id": 2, "op": "command", "operator": "d1", "pin": "2580", "command": "wager",
        "args": {"seat": 3, "kind": "banker", "amount": 2500}}
    <- {"id": 2, "ok": true, "records": [...]}            accepted; the records it produced
    <- {"id": 2, "ok": false, "code": "refused", "error": "..."}     the table refused it
    <- {"id": 2, "ok": false, "code": "auth", "error": "..."}        unknown operator, wrong PIN, locked out
    <- {"id": 2, "ok": false, "code": "forbidden", "error": "..."}   the operator's role is too low
    <- {"id": 2, "ok": false, "code": "bad_request", "error": "..."} malformed request
    -> {"id": 3, "op": "subscribe"}
    <- {"id": 3, "ok": true} then {"event": {...}} lines for every journal record and notice

Every command, accepted or refused, is journaled with the operator's id and role: accepted and
table-refused ones as the table's input (``input.operator`` + ``refused``), authentication and
role refusals as ``auth_refused`` records. The socket is created with mode 0660 (owner and group).
"""
from __future__ import annotations

import json
import os
import queue
import socket
import stat
import threading
from pathlib import Path
from typing import Any

import structlog

from controller.table.core import PERMISSIONS
from controller.table.io import OperatorInput, Record

SOCKET_MODE = 0o660
MAX_LINE = 64 * 1024
log = structlog.get_logger()


class ControlServer:
    """Serves ``runner`` on the UNIX socket ``path`` with ``authenticator`` (``None``: no
    operators file — only ``status`` and ``subscribe`` are served, commands are refused)."""

    def __init__(self, runner: Any, path: str | os.PathLike[str], authenticator: Any = None) -> None:
        self.runner = runner
        self.path = Path(path)
        self.auth = authenticator
        self._sock: socket.socket | None = None
        self._threads: list[threading.Thread] = []
        self._stop = threading.Event()

    def start(self) -> ControlServer:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() or self.path.is_symlink():
            if not stat.S_ISSOCK(self.path.lstat().st_mode):
                raise OSError(f"{self.path}: exists and is not a socket; refusing to replace it")
            self.path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o117)  # the socket is born 0660: no window where others could connect
        try:
            sock.bind(str(self.path))
        finally:
            os.umask(old)
        os.chmod(self.path, SOCKET_MODE)
        sock.listen(8)
        sock.settimeout(0.2)
        self._sock = sock
        t = threading.Thread(target=self._accept_loop, name="shoectl-control", daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=2)
        if self._sock is not None:
            self._sock.close()
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(conn,), name="shoectl-control-conn", daemon=True)
            t.start()

    # -- one connection ----------------------------------------------------------------------------
    def _serve(self, conn: socket.socket) -> None:
        conn.settimeout(0.5)
        buf = b""
        with conn:
            while not self._stop.is_set():
                try:
                    data = conn.recv(4096)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not data:
                    return
                buf += data
                if len(buf) > MAX_LINE and b"\n" not in buf:
                    self._send(conn, {"ok": False, "code": "bad_request", "error": "request line too long"})
                    return
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    if not line.strip():
                        continue
                    reply = self._handle_line(line, conn)
                    if reply is None:  # a subscription took over the connection
                        return
                    if not self._send(conn, reply):
                        return

    def _send(self, conn: socket.socket, obj: dict[str, Any]) -> bool:
        try:
            conn.sendall(json.dumps(obj, separators=(",", ":"), default=str).encode() + b"\n")
            return True
        except OSError:
            return False

    def _handle_line(self, line: bytes, conn: socket.socket) -> dict[str, Any] | None:
        try:
            req = json.loads(line)
            if not isinstance(req, dict):
                raise ValueError("a request is a JSON object")
        except (ValueError, UnicodeDecodeError) as exc:
            return {"ok": False, "code": "bad_request", "error": f"not a JSON request: {exc}"}
        rid = req.get("id")
        op = req.get("op")
        if op == "status":
            return {"id": rid, "ok": True, "status": self.runner.latest_snapshot}
        if op == "subscribe":
            self._stream(conn, rid)
            return None
        if op == "command":
            return {"id": rid, **self._command(req)}
        return {"id": rid, "ok": False, "code": "bad_request", "error": f"unknown op {op!r} (status, command, subscribe)"}

    def _command(self, req: dict[str, Any]) -> dict[str, Any]:
        command, operator, pin = req.get("command"), req.get("operator"), req.get("pin")
        args = req.get("args") or {}
        if not isinstance(command, str) or not isinstance(operator, str) or not isinstance(pin, str) or not isinstance(args, dict):
            return {"ok": False, "code": "bad_request", "error": "a command needs \"command\", \"operator\", \"pin\" (strings) and \"args\" (an object)"}
        if command not in PERMISSIONS:
            return {"ok": False, "code": "bad_request", "error": f"unknown command {command!r}"}
        if self.auth is None:
            self.runner.note("auth_refused", {"command": command, "operator": operator, "reason": "no operators file"}, operator)
            return {"ok": False, "code": "auth", "error": "this table has no operators file (shoectl run --operators FILE)"}
        from controller.operators.auth import AuthError, NotPermitted

        try:
            who = self.auth.authenticate(operator, pin)
            self.auth.authorize(who, command, PERMISSIONS)
        except NotPermitted as exc:
            self.runner.note("auth_refused", {"command": command, "operator": operator, "code": "forbidden", "reason": str(exc)}, operator)
            return {"ok": False, "code": "forbidden", "error": str(exc)}
        except AuthError as exc:
            self.runner.note("auth_refused", {"command": command, "operator": operator, "code": "auth", "reason": str(exc)}, operator)
            return {"ok": False, "code": "auth", "error": str(exc)}
        if command == "set_submission":
            from controller.rules.errors import RulesError
            from controller.rules.submission import resolve_submission

            try:
                spec = args.get("submission")
                sub = resolve_submission(str(spec) if spec is not None else None)
            except RulesError as exc:
                return {"ok": False, "code": "bad_request", "error": str(exc)}
            args = {"submission": {k: v for k, v in sub.to_dict().items() if k != "source"}, "source": sub.source}
        try:
            outs = self.runner.submit_and_wait(OperatorInput(command, args, who.id, who.role))
        except TimeoutError as exc:
            return {"ok": False, "code": "timeout", "error": str(exc)}
        records = [{"type": o.kind, **o.payload} for o in outs if isinstance(o, Record)]
        refused = next((r for r in records if r["type"] == "refused"), None)
        if refused is not None:
            return {"ok": False, "code": "refused", "error": refused["reason"]}
        return {"ok": True, "records": records}

    def _stream(self, conn: socket.socket, rid: Any) -> None:
        q = self.runner.subscribe()
        try:
            if not self._send(conn, {"id": rid, "ok": True, "status": self.runner.latest_snapshot}):
                return
            while not self._stop.is_set():
                try:
                    event = q.get(timeout=0.5)
                except queue.Empty:
                    continue
                if not self._send(conn, {"event": event}):
                    return
        finally:
            self.runner.unsubscribe(q)
