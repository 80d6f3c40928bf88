"""The console's Tab completion, from the commands table: commands, argument names not yet given,
argument values; and the console's event lines (a refusal once)."""
from __future__ import annotations

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document

from controller.cli.cmd_ctl import EventLines
from controller.cli.common import fitted
from controller.cli.console import CommandCompleter, Console
from controller.rules.model import WagerKind


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch) -> None:
    """A console on a terminal fits its lines to the width; these tests read whole lines."""
    monkeypatch.setattr("controller.cli.console.terminal_columns", lambda: 400)


def completions(text: str) -> list[str]:
    return [c.text for c in CommandCompleter().get_completions(Document(text), CompleteEvent(completion_requested=True))]


def test_commands_then_argument_names_then_values() -> None:
    assert completions("wag") == ["wager "]
    assert completions("no_") == ["no_more_bets"]  # no arguments: nothing to type after it
    assert completions("st") == ["status"]
    assert completions("wager ") == ["seat=", "kind=", "amount="]
    assert completions("wager seat=3 ") == ["kind=", "amount="]  # a name already given is not offered again
    assert completions("wager seat=3 kind=") == [f"kind={k.value} " for k in WagerKind]
    assert completions("wager seat=3 kind=ba") == ["kind=banker ", "kind=banker_pair ", "kind=banker_bonus "]
    assert completions("declare_idle face_up=t") == ["face_up=true "]
    assert completions("sit seat=") == [f"seat={n} " for n in range(1, 10)]
    assert completions("help cu") == ["cut_decline", "cut"]
    assert completions("nonsense ") == [] and completions("wager amount=1") == []


def test_the_warning_that_repeats_a_refusal_is_not_printed_and_own_refusals_are_left_out() -> None:
    lines = EventLines()
    refused = {"type": "refused", "input": "load", "reason": "load is not allowed while the table is cutting",
               "operator": "d1"}
    warning = {"type": "notice", "level": "warning", "text": "load refused: load is not allowed while the table is cutting"}
    assert lines(refused) == "load refused (d1): load is not allowed while the table is cutting"
    assert lines(warning) is None
    assert lines({"type": "notice", "level": "warning", "text": "shoe door open"}) == "warning: shoe door open"
    own = EventLines(own_operator="d1")
    assert own(refused) is None and own(warning) is None
    assert own(dict(refused, operator="fp1")) is not None


def test_a_fault_is_printed_once_not_again_as_its_notice() -> None:
    """A floorperson's review: every fault came out twice ("FAULT: ..." and "fault: ...")."""
    lines = EventLines()
    fault = {"type": "fault", "fault": "jam:shoe", "reason": "shoe card jam"}
    assert lines(fault) == "FAULT: shoe card jam"
    assert lines({"type": "notice", "level": "fault", "text": "shoe card jam"}) is None
    assert lines({"type": "notice", "level": "fault", "text": "the shoe in play is given up"}) == \
        "fault: the shoe in play is given up"  # a fault notice of its own is still said


class _Table:
    """A table's control client that knows one PIN for fp1."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    def command(self, operator: str, pin: str, command: str, args: dict) -> dict:
        self.sent.append((command, pin))
        if pin == "0000":  # the fifth in a row: its words say "wrong PIN", but no try is left to take
            return {"ok": False, "code": "auth", "error": f"wrong PIN, or no operator '{operator}'; 5 failed "
                    "logins in a row: locked out for 5 min"}
        if pin != "2580":
            return {"ok": False, "code": "auth", "error": f"wrong PIN, or no operator '{operator}'; 4 tries left "
                    "before a 5 min lockout", "tries_left": 4}
        return {"ok": True, "records": []}


def test_after_a_wrong_pin_the_console_takes_it_again(capsys) -> None:
    """A floorperson's review: the console kept the wrong PIN it started with, each command used a
    try up, and only leaving the console changed it."""
    from controller.cli.console import Console

    table = _Table()
    console = Console(table, "fp1", "2850", read_pin=lambda prompt: "2580\n")  # type: ignore[arg-type]
    console.handle("sit seat=1")
    assert "4 tries left before a 5 min lockout (`pin` to type it again)" in capsys.readouterr().out
    console.handle("pin")
    console.handle("sit seat=1")
    assert "sit: ok" in capsys.readouterr().out and table.sent == [("sit", "2850"), ("sit", "2580")]
    assert "pin" in console.help(None)
    locked = Console(table, "fp1", "0000", read_pin=lambda prompt: "2580\n")  # type: ignore[arg-type]
    locked.handle("sit seat=1")
    out = capsys.readouterr().out
    assert "locked out for 5 min" in out and "`pin`" not in out  # the hint follows tries_left, not the words


def test_an_empty_pin_typed_at_the_console_keeps_the_one_it_had(capsys) -> None:
    """Sent, an empty PIN would only use up one of the operator's tries."""
    from controller.cli.console import Console

    table = _Table()
    console = Console(table, "fp1", "2580", read_pin=lambda prompt: "  \n")  # type: ignore[arg-type]
    console.handle("pin")
    assert "no PIN: the PIN is unchanged" in capsys.readouterr().out
    console.handle("sit seat=1")
    assert table.sent == [("sit", "2580")]


def test_a_pin_no_operator_can_have_is_not_sent(capsys) -> None:
    """An operator review: `pin` took "abc", and every command after it was a failed login that
    used up one of the operator's tries before the lockout."""
    from controller.cli.console import Console

    table = _Table()
    for typed in ("abc", "12", "1234567890123", "12 34"):
        console = Console(table, "fp1", "2580", read_pin=lambda prompt, typed=typed: typed)  # type: ignore[arg-type]
        console.handle("pin")
        assert capsys.readouterr().out == "not a PIN: a PIN is 4 to 12 digits 0-9: the PIN is unchanged\n"
        console.handle("sit seat=1")
        assert capsys.readouterr().out == "sit: ok\n"
    assert table.sent == [("sit", "2580")] * 4


def test_a_script_is_not_told_to_type_its_pin_again_and_help_for_no_command_fails(capsys) -> None:
    """`pin` needs a terminal, so a script's wrong PIN does not suggest it; `help nosuch` exited 0
    where `nosuch` exits 2."""
    from controller.cli.console import Console

    console = Console(_Table(), "fp1", "2850", terminal=False)  # type: ignore[arg-type]
    assert console.run_lines(["sit seat=1"]) == 3
    out = capsys.readouterr().out
    assert "4 tries left" in out and "`pin`" not in out
    assert console.run_lines(["help nosuch"]) == 2
    assert capsys.readouterr().out == "no command 'nosuch': `help` lists them\n"


def test_ctrl_c_while_the_table_is_asked_keeps_the_console(capsys, monkeypatch) -> None:
    """An operator review: Ctrl-C while a command waited for the table's answer ended the console
    ("shoectl: interrupted", exit 130), and the operator never learnt whether it was carried out."""
    from controller.cli import console as console_module

    lines = iter(["sit seat=1", "sit seat=2"])

    class _Session:
        def __init__(self, *args, **kwargs) -> None:
            pass

        def prompt(self, *args, **kwargs) -> str:
            try:
                return next(lines)
            except StopIteration:
                raise EOFError from None

    class _Interrupted(_Table):
        def command(self, operator: str, pin: str, command: str, args: dict) -> dict:
            if args == {"seat": 1}:
                raise KeyboardInterrupt
            return super().command(operator, pin, command, args)

        def events(self, *, since_start: bool = False):
            return iter(())

    monkeypatch.setattr(console_module, "PromptSession", _Session)
    monkeypatch.setattr(console_module, "WATCH_RETRY_S", 60)
    table = _Interrupted()
    assert console_module.Console(table, "fp1", "2580").run() == 0  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert "interrupted before the table answered: it may have carried out the command (`status` shows the table)" in out
    assert table.sent == [("sit", "2580")] and "sit: ok" in out  # the next line was carried out


def _watched(monkeypatch, streams: list) -> tuple[list[str], list[bool]]:
    """What a watching console says of ``streams``, the event streams its table gives in turn (an
    OSError: connecting fails so), up to their end; and whether each asked for events since start."""
    import threading

    from controller.cli import console as console_module

    said: list[str] = []
    asked_since_start: list[bool] = []
    done = threading.Event()
    left = iter(streams)

    class _Client:
        def events(self, *, since_start: bool = False):
            asked_since_start.append(since_start)
            try:
                stream = next(left)
            except StopIteration:
                done.set()
                raise OSError("stopped") from None
            if isinstance(stream, OSError):
                raise stream
            return iter(stream)

    monkeypatch.setattr(console_module, "WATCH_RETRY_S", 0.01)
    monkeypatch.setattr(console_module, "write_line", said.append)
    console = console_module.Console(_Client(), None, None, terminal=False)  # type: ignore[arg-type]
    threading.Thread(target=console._watch, daemon=True).start()
    assert done.wait(5)
    return said, asked_since_start


def test_the_console_says_when_the_table_stops_and_when_it_is_back(monkeypatch) -> None:
    """An operator review: when the table stopped, the console's events stopped without a word (a
    stream that ends closed cleanly), and never came back after the table restarted."""
    said, asked_since_start = _watched(monkeypatch, [
        [{"status": {}, "run": "a"}, {"event": {"type": "notice", "level": "warning", "text": "before"}}],  # then it closes
        OSError("no table is listening"),  # not there yet
        [{"status": {}, "run": "b"}, {"event": {"type": "notice", "level": "warning", "text": "not shown"}}],  # a new run
        [{"status": {}, "run": "b"}, {"event": {"type": "notice", "level": "warning", "text": "after"}}],  # since its start
        [{"status": {}, "run": "b"}],  # the same run again (the table was busy a moment): nothing replayed
    ])
    assert said[:5] == ["* warning: before", "* the table stopped: its events show again when it is back",
                        "* the table is back: its events show again", "* warning: after",
                        "* the table stopped: its events show again when it is back"]
    # a table started again: the events its start made before this console found it come first (a
    # floorperson review: a round voided as the table started, its wagers returned, was never shown);
    # a table that was only busy (the same run) replays nothing (a review of that change)
    assert asked_since_start[:5] == [False, False, False, True, False]


def test_other_operators_floor_decisions_and_requests_not_understood_are_shown() -> None:
    """An operator review: the console and `ctl watch` showed no other operator's floor actions (a
    fault cleared, a reshuffle ordered, a round voided, an operator unlocked), nor their requests the
    table did not understand; the routine commands of a round show as their own records."""
    lines = EventLines(own_operator="d1")
    ordered = {"type": "operator", "command": "order_reshuffle", "args": {}, "operator": "fp1",
               "operator_role": "floorperson", "state": "betting"}
    assert lines(ordered) == "fp1 (floorperson): order_reshuffle"
    voided = dict(ordered, command="void_round", args={"reason": "cards fell\x1b[2J"})  # an ESC, shown escaped
    assert lines(voided) == "fp1 (floorperson): void_round reason=cards fell\\x1b[2J"
    assert lines(dict(ordered, command="wager", args={"seat": 1})) is None  # routine: its wager record shows it
    assert lines(dict(ordered, operator="d1")) is None  # this console's own: it prints its answer
    bad = {"type": "bad_request", "code": "bad_request", "reason": "cut: position must be a whole number from 0",
           "command": "cut", "operator": "fp1"}
    assert lines(bad) == "cut not understood (fp1): cut: position must be a whole number from 0"
    assert lines({"type": "bad_request", "code": "bad_request", "reason": "not JSON"}) is None  # no one logged in


def test_a_fault_that_clears_is_said_as_its_fault_was() -> None:
    """A floorperson review: `ctl watch` and the console printed `FAULT: shoe door open`, and nothing
    when the dealer closed the door and the table went on (the journal's `fault_cleared`): the
    floorperson took the table for still held."""
    lines = EventLines(own_operator="d1")
    assert lines({"type": "fault", "fault": "door:shoe", "reason": "shoe door open"}) == "FAULT: shoe door open"
    assert lines({"type": "fault_cleared", "faults": ["door:shoe"], "by": "door closed"}) == \
        "fault cleared: door:shoe (by door closed)"
    assert lines({"type": "fault_cleared", "faults": ["link:shoe"], "by": "reconnect"}) == \
        "fault cleared: link:shoe (by reconnect)"


def test_a_pasted_block_is_carried_out_line_by_line_and_stops_at_a_failure(capsys, monkeypatch) -> None:
    """A review of terminals: a block of commands pasted at the prompt (the terminal hands it over
    at once) was one line, refused whole as `sit: unknown argument 'sit'`. Each line is now a
    command, as typed; after one that fails the rest are not sent (no answer was read before them)."""
    from controller.cli import console as console_module

    table = _Table()
    console = console_module.Console(table, "fp1", "2580")  # type: ignore[arg-type]
    assert console.handle_typed("sit seat=1\nsit seat=2\n\nsit seat=3") is False
    assert table.sent == [("sit", "2580")] * 3
    out = capsys.readouterr().out
    assert out.count("sit: ok") == 3
    table.sent.clear()
    assert console.handle_typed("sit seat=4\nsitt seat=5\nsit seat=5\nsit seat=6") is False
    assert table.sent == [("sit", "2580")]  # the first; the second unknown; the rest never sent
    out = capsys.readouterr().out
    assert out.strip().endswith("the 2 pasted lines after it were not sent")
    assert console.handle_typed("status ok\nquit") is False  # a failed line: the quit after it is not taken
    assert console.handle_typed("sit seat=7\nquit") is True


def test_a_line_longer_than_the_terminal_is_broken_between_words_under_its_own_indent() -> None:
    """A floorperson review: on an 80-column console a refusal or an event broke wherever the
    terminal's edge fell, mid-word, and its continuation started at the first column."""
    event = "* warning: the shoe's cover card came out at position 62; the round in play is the last of the shoe"
    lines = fitted(event, 40).split("\n")
    assert all(len(line) <= 40 for line in lines) and len(lines) > 2
    assert lines[0].startswith("* warning:") and all(line.startswith("  ") and line[2] != " " for line in lines[1:])
    assert " ".join(line.strip() for line in lines) == event  # every word, none cut
    table = "  seat 3   banker 25.00\n  a short line"
    assert fitted(table, 80) == table  # lines that fit are kept as they are, their columns too
    assert fitted("x" * 30, 12).split("\n") == ["x" * 12, "  " + "x" * 10, "  " + "x" * 8]  # a word longer than a line


def test_the_console_fits_its_answers_to_the_terminal_and_a_script_gets_whole_lines(capsys, monkeypatch) -> None:
    monkeypatch.setattr("controller.cli.console.terminal_columns", lambda: 50)
    Console(_Table(), "fp1", "2850").handle("sit seat=1")
    on_terminal = capsys.readouterr().out.splitlines()
    assert len(on_terminal) > 1 and all(len(line) <= 50 for line in on_terminal)
    Console(_Table(), "fp1", "2850", terminal=False).handle("sit seat=1")
    from_script = capsys.readouterr().out.splitlines()
    whole = " ".join(line.strip() for line in on_terminal)
    assert len(from_script) == 1 and from_script[0] == whole.replace(" (`pin` to type it again)", "")  # no terminal to type it


def test_the_width_is_asked_of_the_terminal_not_of_a_stale_columns(monkeypatch, tmp_path) -> None:
    """A COLUMNS left in the environment (another terminal's, or before a resize) is not the
    console's width when its standard output is a terminal; it is where the output is none."""
    import fcntl
    import os
    import pty
    import struct
    import sys
    import termios

    from controller.cli.common import terminal_columns

    monkeypatch.setenv("COLUMNS", "80")
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 63, 0, 0))
    with open(slave, "w") as tty, open(tmp_path / "out", "w") as plain:
        monkeypatch.setattr(sys, "__stdout__", tty)
        assert terminal_columns() == 63
        monkeypatch.setattr(sys, "__stdout__", plain)
        assert terminal_columns() == 80
    os.close(master)


def test_a_table_too_busy_for_the_console_s_events_is_not_said_to_have_stopped(monkeypatch) -> None:
    """A review: a console whose events connection the table refused because its connections were
    all in use printed "the table stopped" of a table that ran on."""
    from controller.control.client import TableBusy

    said, _ = _watched(monkeypatch, [
        [{"status": {}, "run": "a"}],  # then it closes
        TableBusy("/run/shoectl/T1.sock: this account holds 48 of its 64 connections; close some first"),
        TableBusy("/run/shoectl/T1.sock: the table is too busy to take a connection"),  # said once
        [{"status": {}, "run": "a"}, {"event": {"type": "notice", "level": "warning", "text": "after"}}],
        OSError("no table is listening"),
    ])
    assert said[:4] == [
        "* the table stopped: its events show again when it is back",  # the first stream's end: not known busy
        "* the table is too busy to send this console its events (its connections are all in use): they show "
        "again when it takes one more",
        "* the table's events show again", "* warning: after"]
    assert said[4] == "* the table stopped: its events show again when it is back"


def test_ctl_fits_what_it_prints_to_a_terminal_and_not_to_a_pipe(monkeypatch) -> None:
    """`ctl status` and `ctl watch` on an 80-column terminal broke their lines mid-word, as the
    console did; into a pipe or a file they stay whole, for the program that reads them."""
    import io
    import sys

    from controller.cli.common import for_the_reader

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    line = "* warning: the shoe's cover card came out at position 62; the round in play is the last of the shoe"
    monkeypatch.setattr("controller.cli.common.terminal_columns", lambda: 40)
    monkeypatch.setattr(sys, "stdout", Terminal())
    assert for_the_reader(line) == fitted(line, 40) != line
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert for_the_reader(line) == line


def test_a_usage_line_of_choices_is_broken_after_a_choice_not_inside_one() -> None:
    """A review of terminals: `help wager` on an 80-column console broke `player_bonus` into `pl`
    and `ayer_bonus` (the usage's choices are one word, `kind=player|banker|...`)."""
    from controller.table.commands import COMMANDS, help_text

    for width in (80, 100, 60):
        shown = fitted(help_text("wager"), width).split("\n")
        assert all(len(line) <= width for line in shown)
        usage = "".join(line.strip() for line in shown[:3])
        kinds = next(a for a in COMMANDS["wager"].operator_args if a.name == "kind").choices
        assert all(f"{kind}|" in usage or f"{kind} " in usage for kind in kinds), shown[:3]
        assert all(not line.strip().startswith(tuple(k[1:] for k in kinds)) for line in shown), shown[:3]


def test_on_a_dumb_terminal_the_console_reads_lines_as_the_terminal_does_and_events_get_lines_of_their_own(
        capsys, monkeypatch) -> None:
    """A review of terminals: under TERM=dumb prompt_toolkit drew the events inside the line being
    typed, never showed the prompt again, and showed a completion (`stas`) other than the line it
    held (`status`). There the console reads lines as the terminal does; an event goes on a line
    of its own, the prompt after it."""
    import builtins

    from controller.cli import console as console_module

    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setattr(console_module, "PromptSession", None)  # never used on a dumb terminal
    typed = iter(["help status"])

    def read(prompt: str) -> str:
        print(prompt, end="")
        try:
            return next(typed)
        except StopIteration:
            raise EOFError from None

    monkeypatch.setattr(builtins, "input", read)

    class _Quiet:
        def events(self, *, since_start: bool = False):
            raise OSError("no table")

    console = console_module.Console(_Quiet(), None, None)  # type: ignore[arg-type]
    assert console.dumb and console.read_pin is __import__("getpass").getpass  # no prompt_toolkit for the PIN
    monkeypatch.setattr(console_module.Console, "_watch", lambda self: None)
    assert console.run() == 0
    out = capsys.readouterr().out
    assert out.count("shoectl> ") == 2 and "status: the table's state" in out
    console._at_prompt = True  # an event while a line is being typed
    console.say("* warning: the shoe's gate is locked")
    assert capsys.readouterr().out == "\n* warning: the shoe's gate is locked\nshoectl> "


def test_run_s_lines_are_fitted_to_a_terminal(monkeypatch) -> None:
    """A review of terminals: `run --display lines` (and the live screen's fallback under TERM=dumb)
    broke its round lines mid-word (`[39` / `0 cards left]`) on an 80-column terminal."""
    import io
    import sys

    from controller.cli.run_display import LineDisplay

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    class Lines:
        def __init__(self) -> None:
            self.said: list[str] = []

        def line(self, text: str, *, always: bool = False) -> None:
            self.said.append(text)

    monkeypatch.setattr("controller.cli.common.terminal_columns", lambda: 40)
    monkeypatch.setattr(sys, "stdout", Terminal())
    out = Lines()
    LineDisplay(out).notice(type("N", (), {"level": "warning", "text": "the shoe's cover card came out at position 62",
                                           "key": None})())  # type: ignore[arg-type]
    assert out.said and all(len(line) <= 40 for text in out.said for line in text.split("\n")), out.said


@pytest.mark.parametrize("preset", ["minibaccarat", "21-baccarat"])
def test_seats_and_wager_kinds_are_the_tables_once_its_status_is_seen(preset: str) -> None:
    """A dealer's review: the console offered seats 1-9 and every wager kind, which a seven-seat
    Minibaccarat table refuses (seat 8, banker_bonus). The status names the table's seats and the
    wager kinds its Rules Submission offers; the console completes those from its first status."""
    from controller.rules.submission import load_preset
    from controller.table.core import TableCore

    sub = load_preset(preset)
    status = TableCore(sub).snapshot()
    assert status["seats"] == list(sub.seats) and status["wager_kinds"] == [k.value for k in WagerKind if sub.offers(k)]
    console = Console(_Table(), "fp1", "2580", terminal=False)
    console.see_status(status)

    def offered(text: str) -> list[str]:
        return [c.text for c in console.completer.get_completions(Document(text), CompleteEvent(completion_requested=True))]

    assert offered("sit seat=") == [f"seat={n} " for n in range(1, 8)]
    assert offered("wager seat=3 kind=") == [f"kind={k} " for k in status["wager_kinds"]]
    assert ("kind=banker_bonus " in offered("wager seat=3 kind=ba")) is (preset == "21-baccarat")
    assert offered("take_back seat=1 kind=p")[:1] == ["kind=player "]
