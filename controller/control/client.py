"""Client side of the control socket (see controller.control.server for the protocol).

``ControlClient(path, hint="")``: ``status()``, ``command(operator, pin, command, args)`` (the
server's reply dict), ``events()`` (an iterator over the live event stream). A missing socket, a
table that is not running (``no table is listening on PATH (is `shoectl run` running?HINT)``), a
table too busy to take the connection, or something on the socket that does not answer as a table
raises ``ControlUnavailable`` (an OSError: one line, exit 2 in the CLI): a reply that is not JSON,
or not of the shape its request is answered with (``status`` without a status, a command's reply
without ``ok`` true and a list of records or ``ok`` false, an event that is not one).

Before anything is sent (an operator's PIN above all) the client asks the kernel who listens
(``SO_PEERCRED``): root, this user, or the account that owns the socket's folder. Another account
answering there put its own socket in a folder others may write to, so nothing is sent to it.
"""
from __future__ import annotations

import itertools
import json
import os
import socket
import stat
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shoectl_config.files import group_name, user_name

MAX_REPLY = 16 * 1024 * 1024
SERVICE_SOCKET = "/run/shoectl/control.sock"  # where a table run as a service listens (its unit's --control)
# The control socket's group unless --control-group says: the people who may use ctl and the console. Not the
# service's own group, shoectl, which owns the devices and the journal (docs/deployment.md).
OPERATORS_GROUP = "shoectl-operators"
MAX_PATH_BYTES = 107  # a UNIX socket's path: sockaddr_un.sun_path, less the terminating NUL
# The server waits this long for the table to take a command, and as long again for its answer
# (``TableRunner.submit_and_wait``), then says which of the two it was: the client waits past both
# (at 15 s it gave up first, and could not say whether the command was carried out: a chaos review).
COMMAND_WAIT_S = 10.0
REPLY_WAIT_S = 2 * COMMAND_WAIT_S + 5.0


class ControlUnavailable(OSError):
    """No table answers on the control socket (or it cannot take this connection now)."""


class ConnectionClosed(ControlUnavailable):
    """The table closed the connection before its reply's end."""


_WHETHER = "; whether the command was carried out, the journal says"


class TableBusy(ControlUnavailable):
    """The table runs, but takes no connection more now (its connections, or this account's, are
    all in use; its listen backlog is full)."""


class ControlClient:
    def __init__(self, path: str | Path, timeout: float = REPLY_WAIT_S, *, hint: str = "") -> None:
        """``hint``: words added to the question when no table is listening on ``path`` (where the
        path came from, where else a table may be), starting with a space; one line."""
        self.path = Path(path)
        self.timeout = timeout
        self.hint = hint
        self._ids = itertools.count(1)

    def _connect(self) -> socket.socket:
        deadline = time.monotonic() + self.timeout
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(self.timeout)
            try:
                s.connect(str(self.path))
            except BlockingIOError:  # the table's listen backlog is full for a moment
                s.close()
                if time.monotonic() >= deadline:
                    raise TableBusy(f"{self.path}: the table is too busy to take a connection") from None
                time.sleep(0.05)
            except OSError as exc:
                s.close()
                raise _unavailable(self.path, exc, self.hint) from None
            else:
                try:
                    refusal = untrusted_listener(s, self.path)
                except BaseException:
                    s.close()
                    raise
                if refusal:
                    s.close()
                    raise ControlUnavailable(refusal)
                return s

    def request(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj = {"id": next(self._ids), **obj}
        with self._connect() as s:
            _send(s, obj)
            whether = _WHETHER if obj.get("op") == "command" else ""
            try:
                line = _read_line(s)
            except TimeoutError:  # Python's own words were "timed out": of what, and where?
                raise ControlUnavailable(f"{self.path}: the table gave no answer within {self.timeout:g} s"
                                         f"{whether}") from None
            except ConnectionClosed:  # a table stopped or killed meanwhile
                raise ControlUnavailable(f"{self.path}: the table closed the connection before it answered"
                                         f"{whether}") from None
            return self._reply(line)

    def status(self) -> dict[str, Any]:
        reply = self.request({"op": "status"})
        if isinstance(reply.get("status"), dict):
            return reply
        if reply.get("ok") is False and isinstance(reply.get("error"), str) and reply["error"]:
            raise ControlUnavailable(f"{self.path}: the table did not give its status: {reply['error']}")
        raise self._not_understood("it gives no status")

    def command(self, operator: str, pin: str, command: str, args: dict[str, Any]) -> dict[str, Any]:
        """The table's reply: ``{"ok": true, "records": [...]}`` (maybe with ``said``) or ``{"ok":
        false, "code", "error"}`` (either may be missing: the CLI says the table gave no reason)."""
        reply = self.request({"op": "command", "operator": operator, "pin": pin, "command": command, "args": args})
        if reply.get("ok") is True:
            shaped = isinstance(reply.get("records"), list) and isinstance(reply.get("said", ""), str | None)
        else:
            shaped = reply.get("ok") is False and all(isinstance(reply.get(k), str | None) for k in ("code", "error"))
        if not shaped:
            raise self._not_understood("it is not an answer to a command")
        return reply

    def events(self, *, since_start: bool = False) -> Iterator[dict[str, Any]]:
        """The current status first (``{"status": ...}``), then every event as it happens;
        ``since_start``: the events since the table started before them (the table keeps its first
        ones: a console whose table came back sees what its start decided)."""
        s = self._connect()
        s.settimeout(None)
        with s:
            _send(s, {"id": next(self._ids), "op": "subscribe", **({"since": "start"} if since_start else {})})
            f = s.makefile("rb")
            for line in f:
                msg = self._reply(line)
                if not (isinstance(msg.get("status"), dict) or isinstance(msg.get("event"), dict)):
                    raise self._not_understood("it is neither the table's status nor an event")
                yield msg

    def _not_understood(self, why: str) -> ControlUnavailable:
        return ControlUnavailable(f"{self.path}: the table's reply was not understood: {why}")

    def _reply(self, line: bytes) -> dict[str, Any]:
        """One reply line as a dict; ``ControlUnavailable`` if it is not a table's, or says the
        table is too busy for this connection."""
        try:
            reply = json.loads(line)
        except (ValueError, RecursionError):  # not JSON, or nested too deep
            reply = None
        if not isinstance(reply, dict):
            raise ControlUnavailable(f"{self.path}: what answers there is not a table (not a JSON reply)")
        if reply.get("code") == "busy":
            raise TableBusy(f"{self.path}: {reply.get('error')}")
        if reply.get("code") in ("idle", "stopping"):
            raise ControlUnavailable(f"{self.path}: {reply.get('error')}")
        return reply


def _send(s: socket.socket, obj: dict[str, Any]) -> None:
    try:
        s.sendall(json.dumps(obj).encode() + b"\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the table closed the connection (e.g. too busy): its reason is in the reply, if any


def _read_line(s: socket.socket) -> bytes:
    buf = b""
    while b"\n" not in buf:
        try:
            chunk = s.recv(65536)
        except ConnectionResetError:
            chunk = b""
        if not chunk:
            raise ConnectionClosed("the table closed the connection")
        buf += chunk
        if len(buf) > MAX_REPLY:
            raise ControlUnavailable("the table's reply is too long")
    return buf.split(b"\n", 1)[0]


def peer_uid(s: socket.socket) -> int | None:
    """The user id of the process at the other end of the connected UNIX socket ``s``, as the
    kernel saw it when that end connected or listened; ``None`` where the system cannot say."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    _pid, uid, _gid = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i")))
    return uid


def untrusted_listener(s: socket.socket, path: Path) -> str:
    """Why the program on the other end of the connected ``s`` is not to be told anything (one
    line), or ``""``: it runs as root, as this user, or as the account that owns the folder the
    socket at ``path`` is in (a table's own folder, /run/shoectl for the service). On a system
    without ``SO_PEERCRED`` there is nothing to ask, and ``""``."""
    uid = peer_uid(s)
    if uid is None:
        return ""
    folder = Path(os.path.realpath(path)).parent
    try:
        owner = os.stat(folder).st_uid
    except OSError:
        owner = None
    if uid in (0, os.geteuid()):
        return ""
    if uid == owner:
        opened = _folder_anyone_could_make(folder, owner)
        if opened is None:
            return ""
        return (f"{path}: the program listening there runs as {user_name(uid)}, who owns {folder}, but {opened} above "
                "it is writable by others than root and you: any of them could have made that folder; nothing was "
                "sent to it (a table's control socket belongs in a folder of the account that runs the table, in "
                "folders others cannot write: /run/shoectl for the service)")
    owner_name = user_name(owner) if owner is not None else "unknown"
    return (f"{path}: the program listening there runs as {user_name(uid)}, not as root, as you, or as the owner of "
            f"{folder} ({owner_name}): nothing was sent to it (a table's control socket belongs in a folder of the "
            "account that runs the table)")


def _folder_anyone_could_make(folder: Path, owner: int) -> Path | None:
    """The folder above ``folder`` (which ``owner`` owns) in which another account than root or
    this user may have made it, or None: going up through ``owner``'s folders, the first of
    another's is root's or this user's, writable by its owner only. An account that could make
    folders in a shared one (/tmp) owns the folder it made there, and would be the "table's
    account" of its own socket (a security review: the default var/journal.sock, asked from a
    shared folder, gave an operator's PIN to another account's listener)."""
    here = folder
    while here.parent != here:
        try:
            st = os.stat(here.parent)
        except OSError:
            return here.parent
        if st.st_uid != owner:
            mine = st.st_uid in (0, os.geteuid()) and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
            return None if mine else here.parent
        here = here.parent
    return None  # the owner's all the way up


def _socket_group(path: Path) -> str:
    """The group whose members may connect to the socket at ``path``: its own, or, where it cannot be
    looked at (a folder this user may not search), the one a table gives it by default."""
    try:
        return group_name(os.stat(path).st_gid)
    except OSError:
        return OPERATORS_GROUP


def _unavailable(path: Path, exc: OSError, hint: str = "") -> ControlUnavailable:
    if isinstance(exc, (FileNotFoundError, ConnectionRefusedError)):
        return ControlUnavailable(f"no table is listening on {path} (is `shoectl run` running?{hint})")
    if isinstance(exc, PermissionError):
        return ControlUnavailable(f"{path}: permission denied (are you in group {_socket_group(path)}?)")
    if len(os.fsencode(path)) > MAX_PATH_BYTES:  # the one limit a table's --control path was held to
        return ControlUnavailable(f"{path}: too long for a UNIX socket path (at most {MAX_PATH_BYTES} bytes); "
                                  "no table listens there")
    return ControlUnavailable(f"{path}: cannot connect ({exc.strerror or exc})")
