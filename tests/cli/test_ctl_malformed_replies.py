"""`shoectl ctl` and `shoectl console` given bad input: a table's malformed reply, a missing command,
a script line that cannot be split, an operator id from the environment that is not UTF-8. Each is
one line in the user's words (exit 2 for usage and input errors), never a Python name nor a raw
control character."""
from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from cli_run import run

STATUS = {"ok": True, "status": {"table": "T1", "state": "idle"}, "links": {}}


@pytest.mark.parametrize(("reply", "said"), [
    ('{"ok": true}', "the table's reply was not understood: it gives no status"),
    ('{"ok": false}', "the table's reply was not understood: it gives no status"),
    ('{"ok": false, "code": "refused", "error": "\\u001b[2Jboom"}', "the table did not give its status: \\x1b[2Jboom"),
])
def test_a_status_reply_without_a_status_is_said_in_words(capsys, fake_table, reply: str, said: str) -> None:
    """A status reply with no status said "the table did not give its status (None)": a Python name."""
    path = fake_table(reply)
    code, out, err = run(capsys, "ctl", "--socket", str(path), "status")
    assert (code, out) == (2, "")
    assert err == f"shoectl ctl: error: {path}: {said}\n"


@pytest.mark.parametrize(("reply", "exit_code", "said"), [
    # the reason's ESC went to the terminal as it was (here: clear the screen)
    ('{"ok": false, "code": "refused", "error": "\\u001b[2Jboom"}', 1, "open: refused: \\x1b[2Jboom"),
    # "open: refused: " and nothing after it
    ('{"ok": false}', 1, "open: refused: the table gave no reason"),
    ('{"ok": false, "code": "auth", "error": null}', 3, "open: not accepted: the table gave no reason"),
])
def test_a_refusal_is_printed_in_words_on_one_line(capsys, monkeypatch, fake_table, reply: str, exit_code: int,
                                                   said: str) -> None:
    """A refusal's reason is printed with its control characters escaped, and a refusal without
    one says so: before, an ESC in the reason reached the terminal and no reason printed nothing."""
    monkeypatch.setenv("SHOECTL_PIN", "1234")
    code, out, err = run(capsys, "ctl", "--socket", str(fake_table(reply)), "--operator", "fp1", "open")
    assert (code, out) == (exit_code, "")
    assert err == f"shoectl ctl: {said}\n"


@pytest.mark.parametrize("reply", ['{"ok": true, "records": "x"}', '{"ok": true}', '{"ok": "yes", "records": []}',
                                   '{"ok": false, "code": 3, "error": "x"}', '{"ok": true, "records": [], "said": 1}'])
@pytest.mark.parametrize("json_output", [False, True])
def test_a_command_reply_of_the_wrong_shape_is_not_taken_for_an_answer(capsys, monkeypatch, fake_table, reply: str,
                                                                       json_output: bool) -> None:
    """`{"ok": true, "records": "x"}` exited 0 as if the table had taken the command; a reply not
    of a command's shape is said in one line, exit 2, as a reply that is not JSON is."""
    monkeypatch.setenv("SHOECTL_PIN", "1234")
    path = fake_table(reply)
    code, out, err = run(capsys, "ctl", "--socket", str(path), "--operator", "fp1", "open",
                         *(["--json"] if json_output else []))
    assert (code, out) == (2, "")
    assert err == f"shoectl ctl: error: {path}: the table's reply was not understood: it is not an answer to a command\n"


def test_the_console_prints_a_refusal_escaped_and_its_missing_reason(capsys, monkeypatch, fake_table) -> None:
    """The console printed the table's reason as it came (an ESC to the terminal), or nothing."""
    monkeypatch.setenv("SHOECTL_PIN", "1234")
    monkeypatch.setattr(sys, "stdin", io.StringIO("open\n"))
    path = fake_table('{"ok": false, "code": "refused", "error": "\\u001b[2Jboom"}', status_too=False)
    code, out, err = run(capsys, "console", "--socket", str(path), "--operator", "fp1")
    assert (code, out, err) == (1, "open: refused: \\x1b[2Jboom\n", "")


def test_ctl_without_a_command_names_only_what_is_required(capsys) -> None:
    """`shoectl ctl` alone said "required: COMMAND, KEY=VALUE", though KEY=VALUE is optional."""
    code, out, err = run(capsys, "ctl")
    assert (code, out) == (2, "")
    assert err == "shoectl ctl: error: the following arguments are required: COMMAND\n"


@pytest.mark.parametrize(("line", "said"), [
    ("close reason='x", "a quote is not closed: close reason='x"),
    ("close reason=x\\", "a backslash at the end of the line escapes nothing: close reason=x\\"),
])
def test_a_console_script_line_that_cannot_be_split_is_said_in_words(capsys, monkeypatch, fake_table, line: str,
                                                                     said: str) -> None:
    """A console script's line with an unclosed quote said "No closing quotation", shlex's text."""
    monkeypatch.setenv("SHOECTL_PIN", "1234")
    monkeypatch.setattr(sys, "stdin", io.StringIO(line + "\n"))
    path = fake_table(json.dumps(STATUS))  # the line is never sent
    code, out, err = run(capsys, "console", "--socket", str(path), "--operator", "fp1")
    assert (code, out, err) == (2, said + "\n", "")


@pytest.mark.parametrize("command", ["ctl", "console"])
def test_an_operator_id_from_the_environment_that_is_not_utf8_names_the_variable(capsys, monkeypatch, tmp_path: Path,
                                                                                 command: str) -> None:
    """`SHOECTL_OPERATOR=$'\\xff' shoectl ctl open` blamed `--operator`, which was not given; the
    console did not check it at all."""
    monkeypatch.setenv("SHOECTL_OPERATOR", "\udcff")  # the byte 0xff, as Python reads it from the environment
    monkeypatch.setenv("SHOECTL_PIN", "1234")
    code, out, err = run(capsys, command, "--socket", str(tmp_path / "none.sock"), *(["open"] if command == "ctl" else []))
    assert (code, out) == (2, "")
    assert err == f"shoectl {command}: error: SHOECTL_OPERATOR \\xff: not UTF-8 text\n"
    code, out, err = run(capsys, command, "--socket", str(tmp_path / "none.sock"), "--operator", "\udcff",
                         *(["open"] if command == "ctl" else []))
    assert err == f"shoectl {command}: error: --operator \\xff: not UTF-8 text\n"


def test_watch_says_the_table_stopped_and_exits_1(capsys, fake_table) -> None:
    """An operator review: `ctl watch` ended with exit 0 and no word when the table stopped (its
    event stream closed), as if the watcher had ended it."""
    path = fake_table(json.dumps({"status": {"table": "T1", "state": "closed"}}))
    code, out, err = run(capsys, "ctl", "--socket", str(path), "watch")
    assert code == 1 and "closed" in out
    assert err == f"shoectl ctl: the table stopped: its control socket {path} closed\n"


@pytest.mark.parametrize("status", [{"links": 7}, {"faults": {"a": 5}}, {"faults": "y"}, {"player": 5},
                                    {"links": {"shoe": 5}}, {"wagers": [5]}, {"seats_taken": 3}])
def test_a_status_with_a_field_of_the_wrong_kind_is_one_line_not_a_traceback(capsys, monkeypatch, fake_table,
                                                                                status: dict) -> None:
    """A review of bad inputs: `ctl status` checked the reply's shape, not the kinds inside it, and
    a table's status with a number where a list was due ended in a traceback (exit 1); the
    console's `status` too. Said in one line, exit 2; the console stays at its prompt."""
    links = status.pop("links", {})
    reply = {"ok": True, "status": {"table": "T1", "state": "betting", "shoe": "T1-S0001", **status}, "links": links}
    path = fake_table(json.dumps(reply))
    said = f"{path}: the table's reply was not understood: its status has a field of the wrong kind"
    code, out, err = run(capsys, "ctl", "--socket", str(path), "status")
    assert (code, out, err) == (2, "", f"shoectl ctl: error: {said}\n")
    monkeypatch.setattr(sys, "stdin", io.StringIO("status\nhelp open\n"))
    code, out, err = run(capsys, "console", "--socket", str(path))
    assert code == 2 and out.startswith(f"{said}\nopen\n") and err == ""


def test_watch_says_an_event_it_cannot_read_and_goes_on(capsys, fake_table) -> None:
    """`ctl watch` ended in a traceback (KeyError) at a round_result event without its round; the
    watcher (a surveillance pipe) says it in a line and watches on, until the table closes."""
    path = fake_table(json.dumps({"event": {"type": "round_result"}}))
    code, out, err = run(capsys, "ctl", "--socket", str(path), "watch")
    assert code == 1
    assert out == "(an event the table sent was not understood: round_result, a field of the wrong kind)\n"
    assert err == f"shoectl ctl: the table stopped: its control socket {path} closed\n"


def test_a_table_that_never_answers_is_named_with_the_wait(tmp_path: Path) -> None:
    """A review of bad inputs: a socket that takes the connection and never answers was
    "error: timed out" (Python's words: of what, where?). It names the socket and the wait."""
    import socket

    from controller.control.client import ControlClient, ControlUnavailable

    path = tmp_path / "silent.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as silent:
        silent.bind(str(path))
        silent.listen(1)  # connections wait in the backlog: connected, never answered
        with pytest.raises(ControlUnavailable) as refused:
            ControlClient(path, timeout=0.3).status()
    assert str(refused.value) == f"{path}: the table gave no answer within 0.3 s"


@pytest.mark.parametrize(("op", "said"), [
    ("command", "; whether the command was carried out, the journal says"), ("status", "")])
def test_a_table_that_closes_the_connection_before_answering_says_where_to_look(fake_table, op: str,
                                                                              said: str) -> None:
    """A table stopped or killed while a command was in flight: ctl said "the table closed the
    connection", naming neither the socket nor whether the command was carried out (a chaos review)."""
    from controller.control.client import ControlClient, ControlUnavailable

    path = fake_table(None)
    client = ControlClient(path, timeout=10)
    with pytest.raises(ControlUnavailable) as closed:
        client.command("d1", "2580", "open", {}) if op == "command" else client.status()
    assert str(closed.value) == f"{path}: the table closed the connection before it answered{said}"
