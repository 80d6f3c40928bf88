"""``shoectl console``: the interactive console for dealers and floorpersons (prompt_toolkit).

- The table's events (rounds, settlements, faults, warnings, other operators' refusals, new shoes) are printed
  above the prompt as they happen, never into the line being typed (``patch_stdout``).
- Tab completes the commands, then each command's argument names (``seat=``, ``kind=`` ...) and
  their values (the table's seats and wager kinds, from its status; true/false), from the commands table
  (``controller.table.commands``); the menu shows each argument's help and unit.
- ``help`` lists the commands, ``help COMMAND`` gives its usage, role and arguments
  (``commands.help_text``); ``status`` shows the table; ``pin`` takes the PIN again (after a wrong
  one, or a new one); ``quit``, ``exit`` or Ctrl-D leave; Ctrl-C
  drops the line being typed, or stops waiting for a command's answer (the table may have carried
  it out: the console says so and stays). History with the arrow keys.
- When the table stops (its control socket closes) the console says so once, keeps its prompt
  (``status`` and commands say the table does not answer) and shows the events again, saying so,
  once the table is back (``WATCH_RETRY_S``).
- Without an operator the console shows the table (``status``, the events) and refuses table
  commands in one line; with one, every command is authenticated with the PIN given at the start.
- On a terminal each line is fitted to its width, broken between words (``common.fitted``);
  a script's lines are whole.
- A refusal is printed once: the table's answer to this console's command, not again as the
  event or the warning that echo it (``EventLines``).
- A pasted block of lines is carried out line by line, as typed; after a line that fails, the rest
  are not sent (``handle_typed``).
- Standard input that is not a terminal (a file, a pipe: ``run_lines``) is read as the lines a
  person would type, one command each, with no prompt and no events; the console exits with the
  code of the last command that failed (``shoectl ctl``'s codes), 0 when none did. ``pin`` needs a
  terminal there: the PIN comes from ``--pin-stdin`` (its first line) or ``SHOECTL_PIN``.
"""
from __future__ import annotations

import getpass
import os
import shlex
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.patch_stdout import patch_stdout

from controller.cli.cmd_ctl import (EXIT_OF_CODE, EventLines, ok_line, parse_args, pin_problem, refusal_line,
                                    status_reply_text)
from controller.cli.common import fitted, terminal_columns, write_line
from controller.control.client import ControlClient, TableBusy
from controller.errors import UsageError
from controller.cli.shown_squeeze import ShownSqueeze
from controller.operators.pins import typed_shown
from controller.table.commands import COMMANDS, WAGER_KINDS, Arg, help_text
from shoectl_config.text import quoted, safe

PROMPT = "shoectl> "
INTRO = "shoectl console: `help` lists the commands, `status` shows the table, Tab completes, Ctrl-D leaves."
CONSOLE_COMMANDS = {"status": "the table's state, shoe, hands, wagers and faults",
                    "help": "the commands, or `help COMMAND` for one command's arguments",
                    "pin": "type your PIN again (after a wrong one, or once it was changed)",
                    "quit": "leave the console (the table keeps running)", "exit": "leave the console"}
# shlex.split's reasons for a line it cannot split, in the console's words.
SPLIT_PROBLEMS = {"No closing quotation": "a quote is not closed",
                  "No escaped character": "a backslash at the end of the line escapes nothing"}
SEATS = tuple(str(s) for s in range(1, 10))  # until the table's status names its own: the largest preset table's
WATCH_RETRY_S = 1.0  # how often a console whose table stopped looks for it again
# Why the events stopped, said once, and their return: a table that stopped, or one that runs but
# took no connection more (its connections all in use: it was said to have stopped, a review).
EVENTS_LOST = {"stopped": "* the table stopped: its events show again when it is back",
               "busy": "* the table is too busy to send this console its events (its connections are all in "
                       "use): they show again when it takes one more"}
EVENTS_BACK = {"stopped": "* the table is back: its events show again",
               "busy": "* the table's events show again"}


class CommandCompleter(Completer):
    """Completes the first word (a command), then ``NAME=`` for the command's arguments not yet
    given, then ``NAME=VALUE`` for an argument with known values; after ``help``, a command.
    Seats and wager kinds are the table's once ``see_status`` has had its status (a review: the
    console offered seats 1-9 and every wager kind, which a seven-seat table without bonus
    wagers refuses)."""

    def __init__(self) -> None:
        self.seats: tuple[str, ...] = SEATS
        self.wager_kinds: tuple[str, ...] = WAGER_KINDS

    def see_status(self, status: dict[str, Any]) -> None:
        """The table's seats and the wager kinds it offers, from its status (older tables' lack them)."""
        if isinstance(status.get("seats"), list):
            self.seats = tuple(str(seat) for seat in status["seats"])
        if isinstance(status.get("wager_kinds"), list):
            self.wager_kinds = tuple(str(kind) for kind in status["wager_kinds"])

    def values(self, arg: Arg) -> tuple[str, ...]:
        """The values offered for an argument: the table's wager kinds, its choices, its seats, or true/false."""
        if arg.choices == WAGER_KINDS:
            return self.wager_kinds
        if arg.choices:
            return arg.choices
        return {"seat": self.seats, "flag": ("true", "false")}.get(arg.kind, ())

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        before = document.text_before_cursor
        words = before.split()
        word = document.get_word_before_cursor(WORD=True)
        if len(words) == 0 or (len(words) == 1 and not before[-1:].isspace()):
            for name in [*COMMANDS, *CONSOLE_COMMANDS]:
                if name.startswith(word):
                    more = name == "help" or bool(name in COMMANDS and COMMANDS[name].operator_args)
                    yield Completion(name + (" " if more else ""), -len(word), display=name, display_meta=self._meta(name))
            return
        if words[0] == "help":
            if len(words) == 1 or (len(words) == 2 and word):
                for name in COMMANDS:
                    if name.startswith(word):
                        yield Completion(name, -len(word), display_meta=COMMANDS[name].help)
            return
        command = COMMANDS.get(words[0])
        if command is None:
            return
        if "=" in word:
            name, _, typed = word.partition("=")
            arg = next((a for a in command.operator_args if a.name == name), None)
            for value in self.values(arg) if arg else ():
                if value.startswith(typed):
                    yield Completion(f"{name}={value} ", -len(word), display=value)
            return
        given = {w.partition("=")[0] for w in words[1:]}
        for a in command.operator_args:
            if a.name.startswith(word) and a.name not in given:
                meta = a.help + (f" ({a.unit})" if a.unit else "") + ("" if a.required else ", optional")
                yield Completion(f"{a.name}=", -len(word), display=a.describe(), display_meta=meta)

    @staticmethod
    def _meta(name: str) -> str:
        return COMMANDS[name].help if name in COMMANDS else CONSOLE_COMMANDS[name]


class Console:
    """One console session on ``client``; ``operator`` and ``pin`` None for a console that only
    watches. ``run()`` returns when the person leaves; ``run_lines(lines)`` (``terminal=False``:
    no PIN prompt) when the lines end."""

    def __init__(self, client: ControlClient, operator: str | None, pin: str | None,
                 read_pin: Callable[[str], str] | None = None, terminal: bool = True) -> None:
        self.client = client
        self.operator = operator
        self.pin = pin
        dumb = terminal and os.environ.get("TERM") == "dumb"  # (below)
        self.read_pin: Callable[[str], str] | None = read_pin or (
            None if not terminal else getpass.getpass if dumb
            else (lambda prompt: PromptSession().prompt(prompt, is_password=True)))
        self.event_lines = EventLines(own_operator=operator)
        self.squeeze = ShownSqueeze()
        self.completer = CommandCompleter()
        self._watching = False  # the events are followed (``run``), not a script's lines alone
        self.last_code = 0
        # A terminal's lines are fitted to its width, asked at each line (it may be resized); a
        # script's are whole, one message a line.
        self.width: Callable[[], int] | None = terminal_columns if terminal else None
        # A terminal that cannot move its cursor (TERM=dumb): prompt_toolkit drew the events inside
        # the line being typed and its completions wrongly (a review of terminals). There the line
        # is read as the terminal reads it, and an event goes on lines of its own, the prompt after.
        self.dumb = dumb
        self._at_prompt = False

    def say(self, text: str) -> None:
        """One message, as whole lines (``write_line``), fitted to the terminal's width; on a dumb
        terminal at the prompt, on a line of its own and the prompt again (what was typed stays in
        the terminal's line, which Enter sends)."""
        shown = fitted(text, self.width()) if self.width is not None else text
        if self.dumb and self._at_prompt:
            write_line(f"\n{shown}")
            sys.stdout.write(PROMPT)
            sys.stdout.flush()
        else:
            write_line(shown)

    def _typed_lines(self) -> Iterator[str]:
        """The lines typed on a dumb terminal, read as the terminal reads them (no completion,
        no history: it cannot show them), up to Ctrl-D."""
        while True:
            self._at_prompt = True
            try:
                line = input(PROMPT)
            except KeyboardInterrupt:
                write_line("")
                continue
            except EOFError:
                return
            finally:
                self._at_prompt = False
            yield line

    def run(self) -> int:
        self.say(INTRO.replace(", Tab completes", "") if self.dumb else INTRO)
        self._watching = True
        threading.Thread(target=self._watch, daemon=True, name="shoectl-console-watch").start()
        for line in self._typed_lines() if self.dumb else self._prompted_lines():
            try:
                if self.handle_typed(line):
                    break
            except KeyboardInterrupt:  # while the table was asked: its answer is not read
                self.say("interrupted before the table answered: it may have carried out the command "
                         "(`status` shows the table)")
        return 0

    def see_status(self, status: dict[str, Any]) -> None:
        """What the console keeps of the table's status: the squeeze shown, the seats and wager kinds."""
        self.squeeze.see_status(status)
        self.completer.see_status(status)

    def _prompted_lines(self) -> Iterator[str]:
        """The lines typed at prompt_toolkit's prompt (completion, history), up to Ctrl-D."""
        # enable_suspend: Ctrl-Z suspends the console as it does any program (prompt_toolkit's
        # default typed a literal ^Z into the line: a review of terminals)
        session: PromptSession[str] = PromptSession(PROMPT, completer=self.completer, history=InMemoryHistory(),
                                                    complete_while_typing=False, enable_suspend=True)
        while True:
            try:
                # Only while the prompt waits: what the events print then goes above it. A
                # command's answer is printed after it, straight, before the next prompt.
                with patch_stdout(raw=True):
                    line = session.prompt()
            except KeyboardInterrupt:
                continue
            except EOFError:
                return
            yield line

    def handle_typed(self, text: str) -> bool:
        """What the prompt returned: one line, or a pasted block of lines (the terminal's bracketed
        paste hands them over at once; they were one line, refused whole: a review of terminals).
        Each line is carried out as typed, in order; after one that fails, the rest are not sent
        (the person could not read its answer before they went). True when the person leaves."""
        lines = text.splitlines() or [""]
        for i, line in enumerate(lines):
            self.last_code = 0
            if self.handle(line):
                return True
            left = len(lines) - i - 1
            if self.last_code and left:
                self.say(f"the {left} pasted line{'s' if left > 1 else ''} after it {'were' if left > 1 else 'was'} "
                           "not sent")
                return False
        return False

    def run_lines(self, lines: Iterable[str]) -> int:
        """Carry out ``lines`` as typed lines, up to ``quit``, or up to a line whose PIN the table
        refused (a script cannot type another: the same PIN sent with every line after it only used
        up the operator's tries and locked them out, a review); the code of the last that failed."""
        failed = 0
        for line in lines:
            self.last_code = 0
            leave = self.handle(line)
            failed = self.last_code or failed
            if leave:
                break
            if self.last_code == EXIT_OF_CODE["auth"]:
                self.say("the lines after it were not sent: the PIN was refused, and sent again with each it would "
                         "only count as more failed logins")
                break
        return failed

    def _watch(self) -> None:
        """The events, as long as the console runs: the table's stop said once, its return too."""
        stopped: str | None = None  # why the events stopped, once said: a key of EVENTS_LOST
        run, replay = None, False
        while True:
            lost = "stopped"
            try:
                for msg in self.client.events(since_start=replay):
                    if "status" in msg:  # a stream's first line, with the table process's "run"
                        self.see_status(msg["status"])
                        if run is not None and msg.get("run") != run and not replay:
                            # The table started again: what its start decided first (a round voided,
                            # its wagers returned), lost while this console looked for it (a
                            # floorperson review); not for a table that was only busy a moment.
                            replay = True
                            break
                        run, replay = msg.get("run"), False
                        if stopped:
                            self.say(EVENTS_BACK[stopped])
                            stopped = None
                        continue
                    ev = msg.get("event")
                    if ev and (text := self.event_lines(ev)) is not None:
                        self.say(f"* {text}")
                    if ev:
                        self.squeeze.see(ev)
                if replay:
                    continue  # at once, since the table's start
            except TableBusy:
                lost = "busy"
            except (OSError, ValueError):
                pass
            if stopped != lost:  # the stream ended (the socket closed), or could not start: said once
                stopped = lost
                self.say(EVENTS_LOST[lost])
            time.sleep(WATCH_RETRY_S)

    def handle(self, line: str) -> bool:
        """Carry out one typed line; True when the person leaves."""
        line = line.rstrip("\r\n")  # a script's line end is not part of the line (nor escaped by a backslash)
        try:
            words = shlex.split(line)
        except ValueError as exc:  # shlex's words: "No closing quotation", "No escaped character"
            problem = SPLIT_PROBLEMS.get(str(exc), "the line cannot be read")
            self.say(f"{problem}: {safe(line)}")
            self.last_code = 2
            return False
        if not words:
            return False
        command, items = words[0], words[1:]
        most = 1 if command == "help" else 0  # `help COMMAND`; the console's other commands take nothing
        if command in CONSOLE_COMMANDS and len(items) > most:
            takes = "one command's name at most" if most else "nothing after it"
            self.say(f"{command} takes {takes}: {quoted(' '.join(items[most:]))} is not understood")
            self.last_code = 2
            return False
        if command in ("quit", "exit"):
            return True
        try:
            if command == "help":
                self.say(self.help(items[0] if items else None))
            elif command == "status":
                self.say(status_reply_text(self.client.status(), str(self.client.path)))
            elif command == "pin":
                self.new_pin()
            else:
                self.command(command, items)
        except OSError as exc:  # the table went away: say so, stay at the prompt
            self.say(f"the table does not answer: {exc}")
            self.last_code = 2
        except UsageError as exc:  # a reply not understood: said, and the console stays
            self.say(str(exc))
            self.last_code = 2
        return False

    def new_pin(self) -> None:
        """The PIN every command carries from now on, typed again (not echoed)."""
        if self.operator is None:
            self.say("no operator: start the console with --operator ID (or SHOECTL_OPERATOR)")
            self.last_code = 2
            return
        if self.read_pin is None:
            self.say("pin needs a terminal: give the PIN with --pin-stdin or SHOECTL_PIN")
            self.last_code = 2
            return
        try:
            pin = self.read_pin(f"PIN for {self.operator}: ")
        except (EOFError, KeyboardInterrupt):
            self.say("the PIN is unchanged")
            return
        problem = pin_problem(pin.strip())
        if problem is not None:
            self.say(f"{problem}: the PIN is unchanged")
            return
        self.pin = pin.strip()
        self.say("the next commands carry the PIN just typed")

    def help(self, name: str | None) -> str:
        if name is None:
            width = max(map(len, CONSOLE_COMMANDS))
            own = "\n".join(f"  {n:<{width}}  {text}" for n, text in CONSOLE_COMMANDS.items())
            return f"console commands:\n{own}\ntable commands (`help COMMAND` for its arguments):\n{help_text()}"
        if name in CONSOLE_COMMANDS:
            return f"{name}: {CONSOLE_COMMANDS[name]}"
        if name in COMMANDS:
            return help_text(name)
        self.last_code = 2  # as an unknown command is
        return f"no command {typed_shown(name)}: `help` lists them"

    def command(self, command: str, items: Iterable[str]) -> None:
        if command not in COMMANDS:
            self.say(f"unknown command {typed_shown(command)}: `help` lists them")
            self.last_code = 2
            return
        if self.operator is None or self.pin is None:
            self.say("table commands need an operator: start the console with --operator ID (or SHOECTL_OPERATOR)")
            self.last_code = 2
            return
        try:
            args = parse_args(command, list(items))
        except UsageError as exc:
            self.say(str(exc))
            self.last_code = 2
            return
        if command in ShownSqueeze.COMMANDS and not self._watching:
            # A script follows no events: the squeeze it acts on is the table's as the command goes
            # (a review: a piped `reveal` went without its hand).
            self.see_status(self.client.status()["status"])
        reply = self.client.command(self.operator, self.pin, command, self.squeeze.filled(command, args))
        if reply.get("ok"):
            self.say(ok_line(command, reply))
            self.last_code = 0
        else:
            again = " (`pin` to type it again)" if "tries_left" in reply and self.read_pin is not None else ""
            self.say(refusal_line(command, reply) + again)
            self.last_code = EXIT_OF_CODE.get(reply.get("code"), 1)
