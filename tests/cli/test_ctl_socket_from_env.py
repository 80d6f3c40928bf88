"""An integrator review: `shoectl ctl` and `shoectl console` always looked for the table on
var/journal.sock, while a table run as a service listens on /run/shoectl/control.sock, and the
message when nothing listened ("is `shoectl run` running?") misled while the service ran.
`SHOECTL_SOCKET` is the default for `--socket` (as `SHOECTL_OPERATOR` is for `--operator`);
`--socket` given wins; the message says where the path came from."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_run import run

STATUS = {"ok": True, "status": {"table": "T9", "state": "idle"}, "links": {}}
SERVICE_HINT = ("a table run as a service listens on /run/shoectl/control.sock: "
                "give --socket or set SHOECTL_SOCKET")


@pytest.fixture
def table_at(fake_table: Callable[..., Path]) -> Callable[[str], Path]:
    """``table_at(name)``: a UNIX socket ``name`` that answers every request with a table's status."""
    return lambda name: fake_table(json.dumps(STATUS), name=name)


@pytest.mark.parametrize("command", [["ctl", "status"], ["console"]])
def test_nothing_on_the_sockets_path_from_the_environment_names_it(capsys, monkeypatch, tmp_path: Path,
                                                                   command: list[str]) -> None:
    nowhere = tmp_path / "control.sock"
    monkeypatch.setenv("SHOECTL_SOCKET", str(nowhere))
    monkeypatch.delenv("SHOECTL_OPERATOR", raising=False)
    code, out, err = run(capsys, *command)
    assert (code, out) == (2, "")
    assert err == (f"shoectl {command[0]}: error: no table is listening on {nowhere} "
                   "(is `shoectl run` running? the path came from SHOECTL_SOCKET)\n")


@pytest.mark.parametrize("command", [["ctl", "status"], ["console"]])
def test_the_socket_option_wins_over_the_environment(capsys, monkeypatch, tmp_path: Path,
                                                     command: list[str]) -> None:
    given = tmp_path / "given.sock"
    monkeypatch.setenv("SHOECTL_SOCKET", str(tmp_path / "from-env.sock"))
    monkeypatch.delenv("SHOECTL_OPERATOR", raising=False)
    code, out, err = run(capsys, command[0], "--socket", str(given), *command[1:])
    assert (code, out) == (2, "")
    assert err == f"shoectl {command[0]}: error: no table is listening on {given} (is `shoectl run` running?)\n"


def test_the_table_on_the_environments_socket_answers(capsys, monkeypatch, table_at) -> None:
    monkeypatch.setenv("SHOECTL_SOCKET", str(table_at("service.sock")))
    code, out, err = run(capsys, "ctl", "status")
    assert (code, err) == (0, "")
    assert out.startswith("table T9  state idle")


def test_the_socket_option_reaches_its_table_with_the_environment_set(capsys, monkeypatch, tmp_path: Path,
                                                                      table_at) -> None:
    monkeypatch.setenv("SHOECTL_SOCKET", str(tmp_path / "nothing-here.sock"))
    code, out, err = run(capsys, "ctl", "--socket", str(table_at("given.sock")), "status")
    assert (code, err) == (0, "")
    assert out.startswith("table T9  state idle")


@pytest.mark.parametrize("value", [None, ""])
def test_the_built_in_default_says_where_a_service_listens(capsys, monkeypatch, tmp_path: Path,
                                                           value: str | None) -> None:
    """Unset or empty, the variable is not used: var/journal.sock, and the message says where a
    service's table is, and how to reach it, on one line."""
    monkeypatch.chdir(tmp_path)
    if value is None:
        monkeypatch.delenv("SHOECTL_SOCKET", raising=False)
    else:
        monkeypatch.setenv("SHOECTL_SOCKET", value)
    code, out, err = run(capsys, "ctl", "status")
    assert (code, out) == (2, "")
    assert err == ("shoectl ctl: error: no table is listening on var/journal.sock "
                   f"(is `shoectl run` running? {SERVICE_HINT})\n")


def test_the_help_names_the_variable(capsys) -> None:
    code, out, _ = run(capsys, "ctl", "--help")
    assert code == 0 and "SHOECTL_SOCKET" in " ".join(out.split())


def test_the_service_socket_named_is_the_units() -> None:
    from controller.cli.cmd_ctl import SERVICE_SOCKET
    from controller.cli.cmd_systemd import CONTROL_SOCKET

    assert SERVICE_SOCKET == CONTROL_SOCKET
