"""The control socket's authentication, authorization and per-connection limits, served in this
process (a real ControlServer, Authenticator, operators file and journal; no devices): what a
mutation review found the end-to-end tests did not pin down, and an id of a PIN's shape told back
only when an operator had it (mended)."""
from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.control.server import BAD_LIMIT, LOGIN_LIMIT, ControlServer
from controller.journal import Journal, JournalReader
from controller.operators.auth import Authenticator
from controller.operators.store import add_operator, load_operators
from controller.roles import Role
from controller.rules.submission import default_submission
from controller.table.core import TableCore
from controller.table.runner import TableRunner
from tests.control.running_table import send_and_read

PINS = {"4711": "2580", "d1": "3691", "fp1": "8264"}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Any]:
    """A table served on ``tmp_path/c.sock`` with operators 4711 and d1 (dealers) and fp1
    (floorperson); yields a function that connects a client."""
    ops = tmp_path / "operators.toml"
    add_operator(ops, "4711", Role.DEALER, PINS["4711"])
    add_operator(ops, "d1", Role.DEALER, PINS["d1"])
    add_operator(ops, "fp1", Role.FLOORPERSON, PINS["fp1"])
    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    runner = TableRunner(TableCore(default_submission()), journal)
    server = ControlServer(tmp_path / "c.sock", Authenticator(load_operators(ops), dummy_hashes_per_s=1000))
    server.claim().start(runner)
    owner = threading.Thread(target=runner.run, daemon=True)
    owner.start()
    clients: list[socket.socket] = []

    def connect() -> socket.socket:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(20)
        s.connect(str(tmp_path / "c.sock"))
        clients.append(s)
        return s

    connect.journal_path = tmp_path / "j.db"  # type: ignore[attr-defined]
    try:
        yield connect
    finally:
        for s in clients:
            s.close()
        runner.stop()
        owner.join(10)
        server.close()
        journal.close()


def _command(operator: str, command: str, pin: str | None = None, **args: Any) -> bytes:
    return json.dumps({"id": 1, "op": "command", "operator": operator, "pin": PINS.get(operator, "0000") if pin is None
                       else pin, "command": command, "args": args}).encode() + b"\n"


def test_a_dealer_is_refused_a_floorpersons_command(served) -> None:
    """docs/operators.md: the operator's role is checked against the command's required role;
    `open` needs a floorperson: a dealer with the right PIN is refused (``forbidden``, exit 4)."""
    s = served()
    reply = send_and_read(s, _command("d1", "open"))
    assert reply == {"id": 1, "ok": False, "code": "forbidden",
                     "error": "open needs a floorperson or above; d1 is a dealer"}


def test_failed_logins_on_one_connection_close_it(served) -> None:
    """server.py / docs/control.md: a connection "that fails ``LOGIN_LIMIT`` logins within
    ``LOGIN_WINDOW_S`` seconds ... is told so and closed": the next command is refused, whoever
    it names and whatever its PIN, without being checked."""
    s = served()
    for n in range(LOGIN_LIMIT):
        assert send_and_read(s, _command(f"nobody{n}", "sit", seat=1))["code"] == "auth"
    reply = send_and_read(s, _command("d1", "sit", seat=1))  # the right PIN, on this connection
    assert reply["code"] == "auth" and reply["error"].startswith("too many failed logins on this connection")
    assert s.recv(10) == b""  # and closed


def test_a_forbidden_command_is_not_a_failed_login(served) -> None:
    """docs/control.md: the per-connection limit counts "failed logins"; an operator whose role is
    too low has logged in (``NotPermitted`` is no ``AuthError``), and is told ``forbidden`` each
    time, not throttled."""
    s = served()
    for _ in range(LOGIN_LIMIT + 1):
        assert send_and_read(s, _command("d1", "open"))["code"] == "forbidden"


def test_the_limit_of_malformed_requests_closes_the_connection_at_the_limit(served) -> None:
    """server.py: a connection that "sends ``BAD_LIMIT`` malformed requests, is told so and
    closed": the ``BAD_LIMIT``-th reply says so, and nothing more is read."""
    s = served()
    for _ in range(BAD_LIMIT - 1):
        reply = send_and_read(s, b'{"op": "launch"}\n')
        assert reply["code"] == "bad_request" and "closing it" not in reply["error"]
    last = send_and_read(s, b'{"op": "launch"}\n')
    assert last["error"].endswith(f"{BAD_LIMIT} malformed requests on this connection: closing it")
    assert s.recv(10) == b""


def test_a_wrong_pin_is_told_the_tries_left(served) -> None:
    """docs/control.md: a wrong PIN's reply has ``"tries_left"``."""
    reply = send_and_read(served(), _command("d1", "sit", pin="0000", seat=1))
    assert reply["code"] == "auth" and reply["tries_left"] == 4


def test_a_pin_shaped_id_is_told_alike_whether_it_is_an_operator_or_not(served) -> None:
    """docs/operators.md: an unknown id is told "exactly what an operator would be told ... so
    neither the reply nor the control socket's event stream (which needs no login) says which ids
    exist" (auth.py: "the replies do not say which ids exist"). An id of digits only is hidden as
    a probable PIN only when it is no operator's: the reply then says whether it is one."""
    known = send_and_read(served(), _command("4711", "sit", pin="0000", seat=1))
    unknown = send_and_read(served(), _command("4712", "sit", pin="0000", seat=1))
    assert known["code"] == unknown["code"] == "auth" and known["tries_left"] == unknown["tries_left"] == 4
    assert known["error"].replace("4711", "ID") == unknown["error"].replace("4712", "ID"), (known, unknown)


def test_a_commands_arguments_are_judged_after_its_login(served) -> None:
    """requests.py: what is wrong with a command's arguments is said "after the login and the role,
    so that who gave it is journaled and a guess at a PIN counts whatever its arguments": a wrong
    PIN with malformed arguments is a failed login (``auth``, with the tries left)."""
    reply = send_and_read(served(), _command("d1", "sit", pin="0000", seat="one"))
    assert reply["code"] == "auth" and reply["tries_left"] == 4


def test_a_known_operators_failed_login_is_journaled_with_the_operator(served) -> None:
    """server.py ``_auth_refused``: only "an unknown id of a PIN's shape (digits only) is neither
    journaled, shown on the streams nor told back"; an operator's id, digits or not, is journaled
    (the journal "keeps what happened": docs/operators.md)."""
    import time

    assert send_and_read(served(), _command("4711", "sit", pin="0000", seat=1))["code"] == "auth"
    deadline = time.monotonic() + 20  # a hang detector: the record is queued for the table's thread
    while True:
        with JournalReader.open(served.journal_path) as reader:
            refused = [e for e in reader.entries() if e.kind == "auth_refused"]
        if refused or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    [record] = refused
    assert record.operator == "4711" and record.payload["operator"] == "4711", (record.operator, record.payload)


def test_a_pin_typed_where_the_command_goes_is_neither_told_back_nor_journaled(served) -> None:
    """A hand-written client put the PIN in "command": the refusal said "unknown command '4826'",
    and the journal's bad_request record kept it (a security review). No command is digits."""
    s = served()
    line = json.dumps({"id": 1, "op": "command", "operator": "d1", "pin": "3691", "command": "4826"}).encode() + b"\n"
    reply = send_and_read(s, line)
    assert reply is not None and reply["code"] == "bad_request" and "4826" not in reply["error"], reply
    assert "text of 4 digits, not shown: they may be a PIN" in reply["error"]
    deadline, refused = time.monotonic() + 10, []
    while not refused and time.monotonic() < deadline:  # journaled by the table's thread
        with JournalReader.open(served.journal_path) as reader:
            refused = [e.payload for e in reader.entries(kinds=["bad_request"])]
        time.sleep(0.02)
    assert refused and not any("4826" in json.dumps(p) for p in refused), refused


@pytest.mark.parametrize("command, args", [("sit", {"seat": "4826"}), ("sit", {"4826": 1}),
                                           ("set_submission", {"submission": "4826"})])
def test_a_pin_typed_where_an_argument_goes_is_neither_told_back_nor_journaled(served, command, args) -> None:
    """As above, for an argument's value or name (a review of that mend), and a Rules Submission's
    name that is no preset and no file: the refusal says what is wrong without the digits."""
    s = served()
    operator = "fp1" if command == "set_submission" else "d1"
    line = json.dumps({"id": 1, "op": "command", "operator": operator, "pin": PINS[operator], "command": command,
                       "args": args}).encode() + b"\n"
    reply = send_and_read(s, line)
    assert reply is not None and reply["code"] == "bad_request" and "4826" not in reply["error"], reply
    assert "text of 4 digits, not shown: they may be a PIN" in reply["error"], reply
    deadline, refused = time.monotonic() + 10, []
    while not refused and time.monotonic() < deadline:
        with JournalReader.open(served.journal_path) as reader:
            refused = [e.payload for e in reader.entries(kinds=["bad_request"])]
        time.sleep(0.02)
    assert refused and not any("4826" in json.dumps(p) for p in refused), refused


def test_ctl_waits_for_the_answer_past_both_of_the_servers_waits(served, monkeypatch) -> None:
    """The server waits ``COMMAND_WAIT_S`` for the table to take a command and as long again for its
    answer, then answers which of the two it was ("not carried out", or "the journal says whether"):
    ctl waited 15 s, so it could give up first and say neither (a chaos review)."""
    from controller.control.client import COMMAND_WAIT_S, ControlClient

    waits: list[float] = []
    submit = TableRunner.submit_and_wait

    def timed(runner: TableRunner, op: Any, timeout: float = -1.0) -> list[Any]:
        waits.append(timeout)
        return submit(runner, op, timeout)

    monkeypatch.setattr(TableRunner, "submit_and_wait", timed)
    reply = send_and_read(served(), _command("d1", "dealer_sign_in", dealer="Ann"))
    assert "ok" in reply and waits == [COMMAND_WAIT_S]
    assert ControlClient("c.sock").timeout > 2 * COMMAND_WAIT_S
