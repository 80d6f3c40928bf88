"""The control socket: operators' commands to a running table, as JSON lines over a UNIX socket.

Protocol (one JSON object per line, UTF-8; docs/control.md):

    -> {"id": 1, "op": "status"}
    <- {"id": 1, "ok": true, "status": {...TableCore.snapshot()...}, "links": {...the devices' lines...}}
    -> {"id": 2, "op": "command", "operator": "d1", "pin": "2580", "command": "wager",
        "args": {"seat": 3, "kind": "banker", "amount": 2500}}
    <- {"id": 2, "ok": true, "records": [...]}            accepted; the records it produced (and
                                                          "said": "...", what it did outside the table)
    <- {"id": 2, "ok": false, "code": "refused", "error": "..."}     the table refused it
    <- {"id": 2, "ok": false, "code": "auth", "error": "..."}        wrong PIN or unknown operator
                                                          (alike; "tries_left": N), locked out, throttled
    <- {"id": 2, "ok": false, "code": "forbidden", "error": "..."}   the operator's role is too low
    <- {"id": 2, "ok": false, "code": "bad_request", "error": "..."} malformed request
    -> {"id": 3, "op": "subscribe"}
    <- {"id": 3, "ok": true, "status": {...}, "surveillance": false} then {"event": {...}} lines for every
       journal record and notice (surveillance's only to its accounts: controller.control.audience)
    <- {"ok": false, "code": "busy", "error": "..."}      on connecting: too many connections
    <- {"ok": false, "code": "idle", "error": "..."}      no request for ``idle_s`` seconds: closed
    <- {"ok": false, "code": "stopping", "error": "..."}  a refusal the stopping table can no longer journal

Every command, accepted or refused, is journaled: accepted and table-refused ones as the table's
input (``input.operator`` + ``refused``), authentication and role refusals as ``auth_refused``,
malformed requests as ``bad_request``, connections shed as ``connection_refused`` (in a flood, a
``refusals_summary`` instead of each one: ``controller.control.refusals``). Requests are validated
at the edge, in the connection's thread (``controller.control.requests``), so nothing a client
sends reaches the table's thread unless it is safe to act on and to journal.

Limits: at most ``max_connections`` at once, three quarters of them from one account (the next is
told ``busy`` and closed: ``controller.control.admission``); a connection
that sends no request for ``idle_s`` seconds (subscriptions excepted) is closed; one that fails
``LOGIN_LIMIT`` logins within ``LOGIN_WINDOW_S`` seconds, or sends ``BAD_LIMIT`` malformed
requests, is told so and closed; a line is at most ``MAX_LINE`` bytes. Connections never take
the table's last ``descriptor_reserve`` file descriptors: the table needs some for its own work
(a device reconnected, a module imported, the edge monitor's worker), so a connection that
would leave fewer is told ``busy`` and closed. Should the process run out all the same, the
accept loop backs off and retries: it never stops accepting while the table runs. The socket
itself (path, ownership, mode, group): ``controller.control.endpoint``.
"""
from __future__ import annotations

import contextlib
import functools
import json
import os
import queue
import socket
import threading
import time
from typing import Any

import structlog

from controller.control.admission import ConnectionSlots
from controller.control.audience import sees_surveillance
from controller.control.auth_refusal import auth_refusal
from controller.control.client import COMMAND_WAIT_S, OPERATORS_GROUP, peer_uid
from controller.control.endpoint import ControlEndpoint
from controller.control.lines import line_report
from controller.control.local_args import table_args
from controller.control.refusals import RefusalJournal
from controller.control.request_lines import MAX_LINE, TOO_LONG, peer_closed, request_lines
from controller.control.requests import BadRequest, Request, parse_request
from controller.descriptors import OUT_OF_DESCRIPTORS, TABLE_RESERVE, capacity_warning
from controller.operators.auth import AuthError, LoginThrottle, NotPermitted, Throttled
from controller.table.commands import MIN_ROLES
from controller.table.io import OperatorInput, TableRecord
from shoectl_config.files import user_name
from controller.journal import kinds

MAX_CONNECTIONS = 64
IDLE_S = 30.0
STOP_WAIT_S = 1.0  # for the connections to end when the table stops
LOGIN_LIMIT, LOGIN_WINDOW_S = 5, 60.0
BAD_LIMIT = 20
_MAX_BACKOFF_S = 1.0
# A refusal the stopping table can no longer journal is not told: this is (RefusalJournal.refused).
_STOPPING = {"ok": False, "code": "stopping", "error": "the table is stopping: nothing was decided; ask again once it runs"}
log = structlog.get_logger()


class _Session:
    """One connection's state."""

    def __init__(self, number: int, uid: int | None) -> None:
        self.number = number
        self.uid = uid  # the client's user id (SO_PEERCRED): its account is named in a refusal's record
        self.bad_requests = 0
        self.closing = False

    @functools.cached_property
    def account(self) -> str:
        """The system account of ``uid`` (a lookup that may ask the network: once a connection)."""
        return user_name(self.uid)


class ControlServer:
    """Serves a table on the UNIX socket ``path`` with ``authenticator`` (``None``: no operators
    file, only ``status`` and ``subscribe`` are served and commands are refused). ``submissions``:
    the folder whose Rules Submission files ``set_submission`` may name, beside the presets
    (``None``: presets only).

    ``claim()`` takes the socket's path (refused while another table answers there; see
    ``ControlEndpoint``) and may be called early, before the table exists; ``start(runner)``
    listens and serves ``runner`` (a ``TableRunner``); ``close()`` stops and removes the socket."""

    def __init__(self, path: Any, authenticator: Any = None, *, max_connections: int = MAX_CONNECTIONS,
                 group: str | None = OPERATORS_GROUP, group_required: bool = False, idle_s: float = IDLE_S,
                 submissions: Any = None, descriptor_reserve: int = TABLE_RESERVE) -> None:
        self.submissions = submissions
        self.descriptor_reserve = int(descriptor_reserve)
        self.endpoint = ControlEndpoint(path, group=group, group_required=group_required)
        self.path = self.endpoint.path
        self.auth = authenticator
        self.max_connections = int(max_connections)
        self.idle_s = float(idle_s)
        self.runner: Any = None
        self._refusals: RefusalJournal | None = None
        self._slots = ConnectionSlots(self.max_connections, self.descriptor_reserve)
        self._login_failures = LoginThrottle(LOGIN_LIMIT, LOGIN_WINDOW_S, max_keys=self.max_connections * 2)
        self._lock = threading.Lock()
        self._numbers = iter(range(1, 2**62))
        self._accept_thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._run_id = f"{os.getpid()}-{time.time_ns()}"  # one table process's start
        self._warnings: list[str] = []

    @property
    def warnings(self) -> list[str]:
        """What the operator should know about the socket (e.g. its group could not be set, or
        the process may open too few files for ``max_connections``)."""
        return self.endpoint.warnings + self._warnings

    def claim(self) -> ControlServer:
        self.endpoint.claim()
        return self

    def start(self, runner: Any) -> ControlServer:
        self.runner = runner
        self._refusals = RefusalJournal(runner.note)
        runner.on_stopping.append(self._stop_serving)  # then the last summary, while the table still journals
        sock = self.endpoint.listen(backlog=self.max_connections)
        sock.settimeout(0.2)
        warning = capacity_warning("the control socket", self.max_connections, self.descriptor_reserve)
        if warning is not None:
            self._warnings.append(warning)
        self._accept_thread = threading.Thread(target=self._accept_loop, args=(sock,), name="shoectl-control", daemon=True)
        self._accept_thread.start()
        return self

    def close(self) -> None:
        self._stop_serving()
        self.endpoint.close()

    def _stop_serving(self) -> None:
        """Serve no more, then journal the refusals counted and not yet summarized. On the table
        owner's way out (``TableRunner.on_stopping``): the connections were served until the socket
        was closed, after the owner's last journaling, and the refusals they were told of then
        were lost at every stop (a concurrency review). The connections end within a read's
        timeout (0.5 s); one still busy after ``STOP_WAIT_S`` is not waited for."""
        self._stop.set()
        if self._accept_thread is not None:
            self._wake_accept()
            self._accept_thread.join(timeout=2)
        self._slots.wait_all_back(time.monotonic() + STOP_WAIT_S)
        if self._refusals is not None:
            self._refusals.close()

    # -- accepting ------------------------------------------------------------------------------------
    def _wake_accept(self) -> None:
        """End the accept loop's wait now rather than at its next timeout (up to 0.2 s that every
        stop of the table would wait): a connection of our own. A listening socket is not woken by
        shutdown() on Linux. If the backlog is full the loop is about to wake anyway."""
        with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.setblocking(False)
            sock.connect(str(self.path))

    def _accept_loop(self, sock: socket.socket) -> None:
        backoff = 0.0
        while not self._stop.is_set():
            self._refusals.tick()
            try:
                conn, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError as exc:
                if self._stop.is_set():
                    return
                # Out of descriptors (or any other accept failure): wait and try again; the
                # pending clients stay in the backlog meanwhile.
                backoff = min(_MAX_BACKOFF_S, backoff * 2 or 0.01)
                if exc.errno not in OUT_OF_DESCRIPTORS or backoff == _MAX_BACKOFF_S:
                    log.warning("control socket: accept failed; retrying", error=str(exc), retry_in=backoff)
                self._stop.wait(backoff)
                continue
            backoff = 0.0
            if self._stop.is_set():  # _wake_accept's connection, or a client too late
                conn.close()
                return
            uid = _peer(conn)
            refused = self._slots.take(uid)
            if refused is not None:
                self._shed(conn, refused)
                continue
            try:
                threading.Thread(target=self._serve, args=(conn, next(self._numbers), uid),
                                 name="shoectl-control-conn", daemon=True).start()
            except RuntimeError as exc:  # cannot start a new thread
                self._slots.give_back(uid)
                log.warning("control socket: cannot serve a connection", error=str(exc))
                self._shed(conn, self._slots.busy)

    def _shed(self, conn: socket.socket, reason: str) -> None:
        told = self._refused(kinds.CONNECTION_REFUSED, {"code": "busy", "reason": reason},
                             {"ok": False, "code": "busy", "error": reason})
        with conn:
            conn.setblocking(False)
            try:
                conn.send(_line(told))
                conn.recv(MAX_LINE)  # what the client sent already: closing on unread data would reset the reply
            except OSError:
                pass

    def _refused(self, kind: str, payload: dict[str, Any], reply: dict[str, Any], operator: str | None = None,
                 shown: dict[str, Any] | None = None) -> dict[str, Any]:
        """``reply`` once its refusal is journaled, else (the table journals no more) ``stopping``."""
        return reply if self._refusals.refused(kind, payload, operator, shown) else dict(_STOPPING)

    # -- one connection -----------------------------------------------------------------------------
    def _serve(self, conn: socket.socket, number: int, uid: int | None) -> None:
        session = _Session(number, uid)
        try:
            with conn:
                conn.settimeout(0.5)
                self._serve_lines(conn, session)
        except Exception as exc:  # noqa: BLE001 - a defect here must not reach the table, nor print a traceback
            log.error("control connection failed", error=f"{type(exc).__name__}: {exc}")
        finally:
            with self._lock:
                self._login_failures.forget(number)
            self._slots.give_back(uid)

    def _serve_lines(self, conn: socket.socket, session: _Session) -> None:
        """Answer each request line (``request_lines``: with its time limits) until the client
        closes, a limit closes the connection, or a subscription takes it over."""
        lines = request_lines(conn, self._stop, self.idle_s)
        for line in lines:
            if isinstance(line, dict):  # a limit's reply: the connection ends with it
                self._send(conn, line)
                return
            reply = self._too_long(session) if line is TOO_LONG else self._handle_line(line, conn, session)
            if reply is None:  # a subscription took over the connection
                return
            if not self._send(conn, reply) or session.closing:
                return

    def _too_long(self, session: _Session) -> dict[str, Any]:
        return self._bad_request(BadRequest(f"request line longer than {MAX_LINE} bytes"), session)

    def _send(self, conn: socket.socket, obj: dict[str, Any]) -> bool:
        try:
            conn.sendall(_line(obj))
            return True
        except OSError:
            return False

    def _handle_line(self, line: bytes, conn: socket.socket, session: _Session) -> dict[str, Any] | None:
        try:
            req = parse_request(line)
        except BadRequest as exc:
            return self._bad_request(exc, session)
        if req.op == "status":
            return {"id": req.rid, "ok": True, "status": self.runner.latest_snapshot,
                    "links": line_report(self.runner.links)}
        if req.op == "subscribe":
            self._stream(conn, req.rid, req.since_start, sees_surveillance(session.uid))
            return None
        return {"id": req.rid, **self._command(req, session)}

    def _bad_request(self, exc: BadRequest, session: _Session, command: str | None = None,
                     operator: str | None = None) -> dict[str, Any]:
        """Journal and answer a malformed request; a command's, once its operator logged in, with
        the command and the operator."""
        session.bad_requests += 1
        reason = str(exc)
        said = {"command": command, "operator": operator} if operator is not None else {}
        if not self._refusals.refused(kinds.BAD_REQUEST, {"code": "bad_request", "reason": reason, **said}, operator):
            session.closing = True  # the table is stopping
            return {"id": exc.rid, **_STOPPING}
        if session.bad_requests >= BAD_LIMIT:
            session.closing = True
            reason += f"; {BAD_LIMIT} malformed requests on this connection: closing it"
        return {"id": exc.rid, "ok": False, "code": "bad_request", "error": reason}

    # -- commands -------------------------------------------------------------------------------------
    def _command(self, req: Request, session: _Session) -> dict[str, Any]:
        command, operator = req.command, req.operator
        if self.auth is None:
            return self._auth_refused(req, session, "auth",
                                      "this table has no operators file (shoectl run --operators FILE)",
                                      reason="no operators file")
        if not self.auth.has_operators():  # its file not there yet, or empty: followed, no restart needed
            return self._auth_refused(req, session, "auth", "this table has no operators yet: add them to its "
                                      "operators file (shoectl operators add ID --role ROLE --file FILE)",
                                      reason="no operators")
        with self._lock:
            wait = self._login_failures.wait(session.number)
        if wait:
            session.closing = True
            return self._auth_refused(req, session, "auth", str(Throttled(operator, wait, "on this connection")))
        try:
            who = self.auth.authenticate(operator, req.pin)
            self.auth.authorize(who, command, MIN_ROLES)
        except NotPermitted as exc:
            return self._auth_refused(req, session, "forbidden", str(exc))
        except AuthError as exc:
            with self._lock:
                self._login_failures.failed(session.number)
            # The person is told exc.said (an unknown id is told what a known one would be);
            # the journal keeps what happened.
            refusal = self._auth_refused(req, session, "auth", exc.said, reason=str(exc))
            tries_left = getattr(exc, "tries_left", None)
            if tries_left is not None and refusal["code"] == "auth":
                refusal["tries_left"] = tries_left
            return refusal
        if req.args_problem is not None:
            return self._bad_request(BadRequest(req.args_problem, req.rid), session, command, who.id)
        try:
            args = table_args(req, self.submissions, self.auth)
        except BadRequest as exc:
            return self._bad_request(exc, session, command, who.id)
        try:
            outs = self.runner.submit_and_wait(OperatorInput(command, args, who.id, who.role), COMMAND_WAIT_S)
        except TimeoutError as exc:
            late = "; the lockout stays (it ends only on an answer): give the command again" \
                if command == "unlock_operator" else ""
            return {"ok": False, "code": "timeout", "error": f"{exc}{late}"}
        records = [{"type": o.kind, **o.payload} for o in outs if isinstance(o, TableRecord)]
        refused = next((r for r in records if r["type"] == kinds.REFUSED), None)
        if refused is not None:
            return {"ok": False, "code": "refused", "error": refused["reason"]}
        reply: dict[str, Any] = {"ok": True, "records": records}
        if command == "unlock_operator":  # journaled by the table: now the lockout it orders ends
            reply["said"] = self.auth.unlock(args["operator"])
        return reply

    def _auth_refused(self, req: Request, session: _Session, code: str, error: str,
                      reason: str | None = None) -> dict[str, Any]:
        """Journal an authentication or role refusal as ``auth_refusal`` says it (what the journal
        keeps, the person is told and the streams show); the reply, once journaled."""
        refusal = auth_refusal(req.operator, req.command, code, error, reason,
                               session.account if session.uid is not None else None,
                               lambda digits: bool(self.auth and self.auth.knows(digits)))
        return self._refused(kinds.AUTH_REFUSED, refusal.payload, refusal.reply, refusal.operator, refusal.streamed)

    def _stream(self, conn: socket.socket, rid: Any, since_start: bool, surveillance: bool) -> None:
        q = self.runner.subscribe(since_start=since_start, surveillance=surveillance)
        try:
            # "run": this table process's, so that a client told apart a table started again (replay its
            # start's events) from one that was only busy for a moment (a review); "surveillance":
            # whether surveillance's events come too (controller.control.audience)
            if not self._send(conn, {"id": rid, "ok": True, "status": self.runner.latest_snapshot, "run": self._run_id,
                                     "surveillance": surveillance}):
                return
            while not self._stop.is_set():
                try:
                    event = q.get(timeout=0.5)
                except queue.Empty:
                    if peer_closed(conn):  # gone while the table was quiet: its slot and thread back
                        return
                    continue
                if not self._send(conn, {"event": event}):
                    return
        finally:
            self.runner.unsubscribe(q)


def _peer(conn: socket.socket) -> int | None:
    """The user id of the process that opened ``conn`` (None where the system cannot say)."""
    try:
        return peer_uid(conn)
    except OSError:
        return None


def _line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), default=str).encode() + b"\n"
