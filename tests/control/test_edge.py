"""Nothing a client writes on the control socket can stop the table or make its journal refuse a
record: requests are validated at the edge (issue 9, items 1, 12 and 14, and the same class of
defect for every value a request carries). Each test runs ``shoectl run`` and writes raw bytes on
its real UNIX socket."""
from __future__ import annotations

import json
import os
import pwd
import time

import pytest

from tests.control.running_table import PINS, command_line


def _escaped_line(operator_json: str, command: str = "open", args: str = "{}") -> bytes:
    """A command line whose operator is written as raw JSON text (e.g. a lone surrogate escape)."""
    return (f'{{"id": 7, "op": "command", "operator": {operator_json}, "pin": "1111", "command": "{command}", '
            f'"args": {args}}}\n').encode()


@pytest.mark.slow
@pytest.mark.parametrize("with_operators", [True, False], ids=["operators-file", "no-operators-file"])
def test_operator_ids_that_the_journal_cannot_hold_do_not_stop_the_table(start_table, workdir, with_operators) -> None:
    """Item 1: operator "" or a lone surrogate made the refusal's journal note fail on the table's
    thread, and `shoectl run` exited 1 with a traceback."""
    t = start_table(workdir, operators=with_operators)
    empty = t.ask(_escaped_line('""'))
    assert empty["ok"] is False and empty["code"] == "auth" and empty["id"] == 7
    surrogate = t.ask(_escaped_line('"\\ud800"'))
    assert surrogate["code"] == "bad_request" and "not valid Unicode" in surrogate["error"]
    controls = t.ask(_escaped_line('"\\u0000\\u001b[2J"'))
    assert controls["code"] == "auth" and "\x1b" not in controls["error"]
    t.assert_dealing()
    t.assert_stopped_cleanly()
    refusals = t.journaled("auth_refused")
    # An id that is not a valid operator id stays out of the operator column; the payload shows it escaped.
    assert [(r["_operator"], r["operator"]) for r in refusals] == [(None, ""), (None, "\\x00\\x1b[2J")]
    assert [r["reason"] for r in t.journaled("bad_request")] == ["not a JSON request: a string is not valid Unicode text (a lone surrogate)"]


@pytest.mark.slow
def test_an_authenticated_supervisor_cannot_send_text_the_journal_refuses(start_table, workdir) -> None:
    """Item 1: an authenticated supervisor with a lone surrogate in an argument stopped the table
    when the command was journaled; control characters reached the journal and the displays."""
    t = start_table(workdir)
    for args in ('{"reason": "\\udc80"}', '{"reason": "a\\u0000b"}'):
        reply = t.ask(_escaped_line('"sup"', "restart_shoe", args).replace(b'"1111"', f'"{PINS["sup"]}"'.encode()))
        assert reply["code"] == "bad_request", reply
    t.assert_dealing()
    t.assert_stopped_cleanly()
    assert not [r for r in t.journaled("input.operator") if r["_operator"] == "sup"]


@pytest.mark.slow
def test_deeply_nested_json_is_answered_and_journaled(start_table, workdir) -> None:
    """Items 12 and 14: a deeply nested line under 64 KiB raised RecursionError in the connection
    thread (no reply, a traceback on stderr); malformed requests were not journaled."""
    t = start_table(workdir)
    deep = b"[" * 30000 + b"]" * 30000 + b"\n"
    reply = t.ask(deep)
    assert reply is not None and reply["code"] == "bad_request" and "nested" in reply["error"]
    nested_args = command_line("d1", "sit", seat=1).replace(b'{"seat": 1}', b'{"seat": ' + b"[" * 20 + b"]" * 20 + b"}")
    assert t.ask(nested_args)["code"] == "bad_request"
    unknown = t.ask({"id": "x", "op": "launch"})
    assert unknown == {"id": "x", "ok": False, "code": "bad_request", "error": "\"op\" must be status, command or subscribe, not 'launch'"}
    t.assert_dealing()
    t.assert_stopped_cleanly()
    reasons = [r["reason"] for r in t.journaled("bad_request")]
    assert reasons == ["not a JSON request: nested more than 8 levels deep"] * 2 + ["\"op\" must be status, command or subscribe, not 'launch'"]


# Values of the wrong kind, each from an authenticated operator: the table core is never given them.
BAD_VALUES = [
    ("float-amount", "wager", '{"seat": 1, "kind": "banker", "amount": 25.5}', "not a whole number"),
    ("huge-exponent", "wager", '{"seat": 1, "kind": "banker", "amount": 1e999}', "not a whole number"),
    ("nan", "wager", '{"seat": 1, "kind": "banker", "amount": NaN}', "not a whole number"),
    ("infinity", "wager", '{"seat": 1, "kind": "banker", "amount": -Infinity}', "not a whole number"),
    ("many-digits", "wager", '{"seat": 1, "kind": "banker", "amount": ' + "9" * 5000 + "}", "not a whole number"),
    ("beyond-2**53", "wager", '{"seat": 1, "kind": "banker", "amount": 18446744073709551616}', "amount must be a sum in minor units"),
    ("boolean-seat", "sit", '{"seat": true}', "seat must be a seat number"),
    ("text-seat", "sit", '{"seat": "3"}', "seat must be a seat number"),
    ("null-seat", "sit", '{"seat": null}', "seat must be a seat number"),
    ("seat-zero", "sit", '{"seat": 0}', "seat must be a seat number (a whole number from 1), not 0"),
    ("list-amount", "wager", '{"seat": 1, "kind": "banker", "amount": [2500]}', "amount must be a sum in minor units"),
    ("zero-amount", "wager", '{"seat": 1, "kind": "banker", "amount": 0}', "amount must be a sum in minor units"),
    ("number-kind", "wager", '{"seat": 1, "kind": 3, "amount": 2500}', "kind must be printable text"),
    ("missing", "wager", '{"seat": 1, "kind": "banker"}', "missing argument amount"),
    ("unknown-key", "sit", '{"seat": 1, "chair": 2}', "unknown argument 'chair'"),
    ("args-list", "sit", "[1]", '"args" must be an object'),
    ("number-text-cut", "cut", '{"position": "abc"}', "position must be a whole number from 0"),
    ("negative-cut", "cut", '{"position": -5}', "position must be a whole number from 0"),
    ("long-text", "dealer_sign_in", json.dumps({"dealer": "x" * 300}),
     "dealer must be printable text of 1 to 64 characters, not blank, not text of 300 characters, more than 64"),
    ("blank-text", "dealer_sign_in", json.dumps({"dealer": "   "}), "dealer must be printable text of 1 to 64 characters, "
                                                                    "not blank"),
    # the table's own limit, said at the edge (exit 2), not as the table's refusal (a developer's review)
    ("longer-than-the-table-takes", "dealer_sign_in", json.dumps({"dealer": "x" * 65}),
     "dealer must be printable text of 1 to 64"),
    ("escape-text", "dealer_sign_in", '{"dealer": "\\u001b[2J"}', "dealer must be printable text"),
    ("text-flag", "declare_idle", '{"face_up": "yes"}', "face_up must be true or false"),
]


@pytest.mark.slow
def test_values_of_the_wrong_kind_are_refused_at_the_edge(start_table, workdir) -> None:
    """The same class as item 1, for every value a request carries: floats, 1e999, NaN and huge
    numbers as amounts, booleans and text where whole numbers are expected, non-string ids and
    operators. Each is a `bad_request` with the reason; the table keeps dealing; nothing reaches
    the table core."""
    t = start_table(workdir, "--manual")
    for name, command, args, expected in BAD_VALUES:
        operator = "sup"
        line = (f'{{"id": "{name}", "op": "command", "operator": "{operator}", "pin": "{PINS[operator]}", '
                f'"command": "{command}", "args": {args}}}\n').encode()
        reply = t.ask(line)
        assert reply["code"] == "bad_request" and expected in reply["error"], (name, reply)
        assert "float" not in reply["error"] and "TypeError" not in reply["error"], reply
    for bad_id in ('{"a": 1}', "[1]", "1.5", "true", json.dumps("x" * 65)):
        reply = t.ask(f'{{"id": {bad_id}, "op": "status"}}\n'.encode())
        assert reply["code"] == "bad_request" and reply["id"] is None, reply
    for bad_operator in ("5", "null", '["sup"]', json.dumps("s" * 300)):
        reply = t.ask(_escaped_line(bad_operator))
        assert reply["code"] == "bad_request" and '"operator"' in reply["error"], reply
    assert t.ask({"id": 2**53 - 1, "op": "status"})["id"] == 2**53 - 1  # a whole number id is echoed
    # The values never reached the table core: no operator input was journaled, all were refused.
    assert t.journaled("input.operator") == []
    refused = len(BAD_VALUES) + 5 + 4
    t.wait_refusals_counted({"bad_request": refused})
    t.assert_stopped_cleanly()
    assert t.refusals("bad_request") == (10, refused - 10)  # ten one by one in the window, the rest counted


@pytest.mark.slow
def test_a_cut_position_given_as_text_reaches_no_conversion_on_the_table_thread(start_table, workdir) -> None:
    """A dealer's `cut position="abc"` while cutting was converted with int() on the table's own
    thread: ValueError, and `shoectl run` stopped. Now it is a bad request; the cut then works."""
    t = start_table(workdir, "--manual")
    t.ok(command_line("fp1", "open"))
    assert t.wait_state("cutting") == "cutting", t.journaled("fault")[-3:]
    assert t.ask(command_line("d1", "cut", position="abc"))["code"] == "bad_request"
    assert t.alive()
    t.ok(command_line("d1", "cut", position=120))
    t.assert_stopped_cleanly()



@pytest.mark.slow
def test_an_unknown_side_for_house_money_is_refused_not_raised(start_table, workdir) -> None:
    """`house_money_add side="sideways"` reached `WagerKind(side)` on the table's own thread: a
    ValueError that stopped `shoectl run`. It is not understood (a word outside the declared
    choices, answered by the control socket, as a floor review asked: exit 2 at ``ctl``; the
    table's own check stays behind it), and the table deals on."""
    t = start_table(workdir, "--manual", "--submission", "midibaccarat")
    t.ok(command_line("fp1", "open"))
    assert t.wait_state("cutting") == "cutting", t.journaled("fault")[-3:]
    for command, args in (("cut", {"position": 150}), ("cover", {"from_bottom": 14}), ("load", {})):
        t.ok(command_line("d1", command, **args))
    assert t.wait_state("betting") == "betting"
    for kind in ("banker", "house_money"):
        t.ok(command_line("d1", "wager", seat=1, kind=kind, amount=1000))
    t.ok(command_line("d1", "no_more_bets"))
    deadline = time.monotonic() + 20
    while (state := t.status()["state"]) != "house_money" and time.monotonic() < deadline:
        if state == "squeeze":  # 629a.8(c): the squeezed cards are turned first
            t.ask(command_line("d1", "reveal"))
        time.sleep(0.05)
    assert state == "house_money", state
    reply = t.ask(command_line("d1", "house_money_add", seat=1, side="sideways", amount=100))
    assert reply["code"] == "bad_request" and "side must be one of: player, banker (not 'sideways')" in reply["error"]
    t.ok(command_line("d1", "continue"))
    t.assert_stopped_cleanly()


def test_every_command_has_arguments_the_socket_can_check() -> None:
    """The edge reads each command's argument types from the commands table: a command whose
    arguments it cannot carry would fail at the socket at run time."""
    from controller.control.requests import parameters
    from controller.table.commands import COMMANDS

    kinds = {kind for command in COMMANDS for kind, _, _ in parameters(command).values()}
    assert kinds == {"a whole number from 0 to 100000", "text", "true or false", "a card such as AS, 10H or KD",
                     "a seat number (a whole number from 1)",
                     "a sum in minor units (cents): a whole number from 1 to 1000000000000"}
    assert parameters("wager") == {"seat": ("a seat number (a whole number from 1)", True, False),
                                   "kind": ("text", True, False),
                                   "amount": ("a sum in minor units (cents): a whole number from 1 to 1000000000000",
                                              True, False)}


def test_set_submission_is_described_as_an_operator_gives_it() -> None:
    """An operator names a preset or a file (the server resolves it into the contents the core
    journals, with their source): the socket, ``help`` and docs/control.md say that, not the core's
    ``submission={...} [source=TEXT]``, which an operator could not send."""
    from controller.control.requests import BadRequest, check_args, parameters
    from controller.table.commands import COMMANDS, help_text, markdown_reference

    assert parameters("set_submission") == {"submission": ("text", False, True)}
    with pytest.raises(BadRequest, match="source"):
        check_args("set_submission", {"submission": "midibaccarat", "source": "x"})
    assert COMMANDS["set_submission"].usage() == "set_submission [submission=TEXT]"
    assert "a preset's name, or the name of a file in the table's submissions folder" in help_text("set_submission")
    row = next(line for line in markdown_reference().splitlines() if line.startswith("| `set_submission`"))
    assert "[submission=TEXT]" in row and "source" not in row and "{...}" not in row


def test_the_command_reference_in_docs_is_generated_from_the_commands_table() -> None:
    """docs/control.md's command reference is the commands table's own rendering: a command, role,
    state or argument changed in the code and not in the doc fails here (`make docs` rewrites it)."""
    from pathlib import Path

    from controller.table.commands import COMMANDS, markdown_reference

    doc = (Path(__file__).resolve().parents[2] / "docs" / "control.md").read_text(encoding="utf-8")
    assert markdown_reference() in doc
    assert all(f"| `{name}` |" in doc for name in COMMANDS)


@pytest.mark.slow
def test_a_commands_arguments_are_judged_after_its_login_and_its_role(start_table, workdir) -> None:
    """A review found the arguments checked before the PIN and the role: a dealer's
    ``unlock_operator`` without its argument was a bad request, not a role refusal; a wrong PIN
    with a bad argument was no failed login; and the ``bad_request`` record named neither the
    command nor the operator, though docs/control.md says every command is journaled with the
    operator's id."""
    t = start_table(workdir, "--manual")
    assert t.ask(command_line("d1", "unlock_operator"))["code"] == "forbidden"
    guess = t.ask(command_line("d1", "sit", pin="0000", chair=2))
    assert guess["code"] == "auth" and guess["tries_left"] == 4  # a guess at the PIN counts, whatever its arguments
    bad = t.ask(command_line("sup", "sit", chair=2))
    assert bad["code"] == "bad_request" and "unknown argument 'chair'" in bad["error"]
    t.wait_refusals_counted({"bad_request": 1})
    [record] = t.journaled("bad_request")
    assert (record["command"], record["operator"], record["_operator"]) == ("sit", "sup", "sup")
    assert t.journaled("input.operator") == []  # nothing reached the table core
    t.assert_stopped_cleanly()


@pytest.mark.slow
def test_a_pin_typed_as_the_operator_id_is_kept_out_of_the_journal_and_the_event_stream(start_table, workdir) -> None:
    """A security review: a dealer typing a PIN into the id's field had it journaled in the clear,
    in the refusal's operator and reason, shown to every `ctl watch` (which needs no login) and told
    back on the dealer's screen. An unknown id of a PIN's shape is now said by its length only; a
    known id, or one that is not digits only, as before."""
    t = start_table(workdir)
    watcher = t.connect()
    watcher.sendall(b'{"id": 1, "op": "subscribe"}\n')
    stream = watcher.makefile("rb")
    assert b"status" in stream.readline()
    typed_pin = t.ask(command_line("73915084", "open", pin="73915084"))
    assert typed_pin["code"] == "auth" and "73915084" not in typed_pin["error"]  # nor on the dealer's screen
    assert typed_pin["error"].startswith("wrong PIN, or no operator <an id of 8 digits, not shown: it may be a PIN>; ")
    # with a space pasted or keyed around it, as a PIN is read, it is a PIN still (a security review)
    padded = t.ask(command_line("\t73915084 ", "open", pin="73915084"))
    assert padded["code"] == "auth" and "73915084" not in padded["error"]
    typo = t.ask(command_line("fp9", "open", pin="2580"))
    assert typo["code"] == "auth"
    seen = []
    while not any(b"fp9" in line for line in seen):
        seen.append(stream.readline())
    watcher.close()
    t.assert_stopped_cleanly()
    refusals = t.journaled("auth_refused")
    assert [(r["_operator"], r["operator"]) for r in refusals] == [
        (None, "<an id of 8 digits, not shown: it may be a PIN>")] * 2 + [("fp9", "fp9")]
    assert [r["reason"] for r in refusals[:2]] == ["unknown operator <an id of 8 digits, not shown: it may be a PIN>"] * 2
    # who typed is journaled whatever id they tried: the system account of the connection
    assert [r["account"] for r in refusals] == [pwd.getpwuid(os.geteuid()).pw_name] * 3
    assert not any(b"73915084" in line for line in seen) and any(b"an id of 8 digits" in line for line in seen)
    from controller.journal import JournalReader

    with JournalReader.open(t.journal) as reader:
        assert not any("73915084" in json.dumps(e.payload) for e in reader.entries())
