"""``shoectl ctl`` (one command, for scripts) and ``shoectl console`` (interactive) over the control
socket of a running ``shoectl run``.

``shoectl ctl [--socket PATH] [--operator ID] [--pin-stdin] COMMAND [KEY=VALUE ...] [--json]``:
``status`` and ``watch`` need no PIN; every table command (``wager seat=3 kind=banker amount=2500``,
``no_more_bets``, ``order_reshuffle``, ...) is authenticated: the PIN comes from the environment
variable ``SHOECTL_PIN``, one line of standard input with ``--pin-stdin``, or a prompt without echo.
The socket is ``--socket``, else the environment variable ``SHOECTL_SOCKET``, else
``var/journal.sock`` (``socket_of``); the operator ``--operator``, else ``SHOECTL_OPERATOR``.

Exit codes: 0 accepted; 1 refused by the table (the reason is printed), or the table stopped while
``watch`` followed it (said in one line); 2 usage or input error, or no table on the socket; 3
authentication failed (wrong PIN or unknown operator, told alike; locked out); 4 the operator's role
is too low for the command.
"""
from __future__ import annotations

import argparse
import getpass
import os
import sys
from pathlib import Path
from typing import Any

from controller.cli.common import fitted, for_the_reader, print_json
from controller.control.client import SERVICE_SOCKET, ControlClient
from controller.control.lines import line_text
from controller.control.requests import BOOL, MAX_TEXT, NUMBERS, parameters
from controller.errors import UsageError, path_argument
from controller.journal import kinds
from controller.journal.replay import ROUTINE_COMMANDS
from controller.operators.pins import PIN_MAX, PIN_MIN, is_pin_shaped, typed_shown
from controller.table.commands import COMMANDS, FLAG_WORDS
from controller.table.io import FAULT_LEVEL
from controller.journal.clockwatch import clock_step_text
from controller.table.result_line import round_result_text, settlement_text, wager_text
from shoectl_config.numbers import whole_number_of
from shoectl_config.text import is_unicode_text, quoted, safe

DEFAULT_SOCKET = Path("var") / "journal.sock"  # shoectl run's default: the default journal's name, .sock
SOCKET_VARIABLE = "SHOECTL_SOCKET"
SOCKET_HELP = (f"control socket (default: {SOCKET_VARIABLE} if set, else {DEFAULT_SOCKET}; "
               f"a table run as a service listens on {SERVICE_SOCKET})")
EXIT_REFUSED, EXIT_AUTH, EXIT_FORBIDDEN = 1, 3, 4
EXIT_OF_CODE = {"refused": EXIT_REFUSED, "auth": EXIT_AUTH, "forbidden": EXIT_FORBIDDEN, "bad_request": 2, "timeout": 1}
# A refusal's code in the words a dealer or a script's reader reads (the code is the protocol's).
REFUSAL_WORDS = {"refused": "refused", "auth": "not accepted", "forbidden": "not allowed",
                 "bad_request": "not understood", "timeout": "no answer in time"}


def refusal_line(command: str, reply: dict) -> str:
    """A refused command's reply as one line for a person: the command, the refusal in words, and
    the table's reason (which may name the command again: said once), printable on one line."""
    reason = safe(str(reply.get("error") or "").removeprefix(f"{command}: ")) or "the table gave no reason"
    return f"{command}: {REFUSAL_WORDS.get(reply.get('code'), 'refused')}: {reason}"


def ok_line(command: str, reply: dict) -> str:
    """An accepted command's reply as one line: ``open: ok``, and what it did outside the table; a
    wager placed or taken back as the table took it, in major units (``wager: ok: seat 2 banker
    0.25``: a dealer's review typed amount=25 for 25.00 and read only "ok")."""
    moved = [f"{wager_text(r)}{' returned' if r['type'] == kinds.WAGER_RETURNED else ''}"
             for r in reply.get("records") or () if isinstance(r, dict)
             and r.get("type") in (kinds.WAGER, kinds.WAGER_RETURNED) and isinstance(r.get("amount"), int)]
    said = [reply["said"]] if reply.get("said") else []
    return f"{command}: ok" + (f": {safe('; '.join(moved + said))}" if moved or said else "")


class _FittedEpilog(argparse.RawDescriptionHelpFormatter):
    """The commands' list as written, each line fitted to the help's width (``fitted``): it ran past
    an 80-column terminal, broken mid-word (a review of terminals)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        shown = fitted(text, width) if sys.stdout.isatty() else text  # into a pipe, as written
        return "".join(indent + line for line in shown.splitlines(keepends=True))


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ctl", help="give one command to a running table (for scripts)",
                       formatter_class=_FittedEpilog,
                       epilog="table commands (KEY=VALUE arguments; money in minor units, e.g. cents):\n"
                              + "\n".join(f"  {c.usage()}\n      {c.help}; {c.min_role.label} or above"
                                           for c in COMMANDS.values()))
    p.add_argument("--socket", type=path_argument, metavar="PATH", help=SOCKET_HELP)
    p.add_argument("--operator", metavar="ID", help="operator id (or SHOECTL_OPERATOR)")
    p.add_argument("--pin-stdin", action="store_true", help="read the PIN from the first line of standard input")
    p.add_argument("--json", action="store_true", help="print the server's reply as JSON (status: the table's status object with the "
                   "devices' lines as \"links\"; watch: one event object per line)")
    p.add_argument("table_command", metavar="COMMAND", help="status, watch, or a table command (listed below)")
    p.add_argument("args", nargs="*", default=[], metavar="KEY=VALUE")  # a default: not listed as required
    p.set_defaults(func=run)

    c = sub.add_parser("console", help="interactive console for dealers and floorpersons",
                       description="The table's events as they happen, above a prompt with Tab completion of the "
                                   "commands and their arguments. Without --operator: status and events only.")
    c.add_argument("--socket", type=path_argument, metavar="PATH", help=SOCKET_HELP)
    c.add_argument("--operator", metavar="ID",
                   help="operator id for table commands (or SHOECTL_OPERATOR); without it the console only watches")
    c.add_argument("--pin-stdin", action="store_true", help="read the PIN from the first line of standard input")
    c.set_defaults(func=run_console)


def parse_args(command: str, items: list[str]) -> dict[str, Any]:
    """``command``'s ``["seat=3", "kind=banker", "amount=2500"]`` -> ``{"seat": 3, "kind": "banker",
    "amount": 2500}``: each value typed as the commands table declares its argument (a whole
    number from ASCII digits, true or false for a flag, text otherwise: ``operator=4711`` stays
    text). A value that is not of its type, or an argument the command does not take, is sent as
    typed, for the table to say what it must be."""
    types = parameters(command)
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"argument {typed_shown(item)}: expected KEY=VALUE")
        if not is_unicode_text(item):  # bytes that are not UTF-8, as the shell passed them
            raise UsageError(f"argument {safe(item)}: not UTF-8 text")
        if key in out:
            raise UsageError(f"argument {quoted(item)}: {key} is given twice")
        out[key] = _typed(types[key][0] if key in types else None, value)
    return out


def operator_of(args: argparse.Namespace) -> str | None:
    """``--operator``, else ``SHOECTL_OPERATOR``, else None; ``UsageError`` naming which of the two
    gave a value that is not UTF-8 text."""
    value, where = (args.operator, "--operator") if args.operator is not None \
        else (os.environ.get("SHOECTL_OPERATOR"), "SHOECTL_OPERATOR")
    if value and not is_unicode_text(value):  # bytes that are not UTF-8, as the shell passed them
        raise UsageError(f"{where} {safe(value)}: not UTF-8 text")
    return value or None


def socket_of(args: argparse.Namespace) -> tuple[str, str]:
    """The control socket's path, ``--socket``, else ``SHOECTL_SOCKET`` (when set and not empty),
    else ``DEFAULT_SOCKET``; and the words ``ControlClient`` adds when no table listens there:
    where the path came from, unless it was given on the command line."""
    if args.socket is not None:
        return args.socket, ""
    if value := os.environ.get(SOCKET_VARIABLE):
        return value, f" the path came from {SOCKET_VARIABLE}"
    # A table run as a service listens elsewhere: the built-in default is wrong for every operator there.
    return str(DEFAULT_SOCKET), (f" a table run as a service listens on {SERVICE_SOCKET}: "
                                 f"give --socket or set {SOCKET_VARIABLE}")


def control_client(args: argparse.Namespace) -> ControlClient:
    """The client for the socket ``socket_of(args)`` names."""
    path, hint = socket_of(args)
    return ControlClient(path, hint=hint)


def _typed(kind: str | None, value: str) -> Any:
    if kind in NUMBERS and (number := whole_number_of(value)) is not None:
        return number  # as the table reads decimal text; anything else stays text: the table says what it must be
    if kind == BOOL and value.lower() in FLAG_WORDS:
        return FLAG_WORDS[value.lower()]  # the table's words for a flag, sent as the socket's JSON boolean
    return value


def _pin(args: argparse.Namespace) -> str:
    if args.pin_stdin:
        try:
            line = sys.stdin.readline()
        except UnicodeDecodeError:  # a standard input read strictly as UTF-8: pin_problem says so
            line = "\udcff"
        if not line.strip():
            raise UsageError("--pin-stdin: no PIN on standard input")
        return pin_problem_refused(line.strip(), "--pin-stdin")
    env = os.environ.get("SHOECTL_PIN")
    if env:
        return pin_problem_refused(env.strip(), "SHOECTL_PIN")
    if not sys.stdin.isatty():
        raise UsageError("no PIN: use --pin-stdin, SHOECTL_PIN, or a terminal")
    try:
        typed = getpass.getpass(f"PIN for {args.operator}: ")
    except EOFError:  # Ctrl-D: the operator changed their mind (a review saw a traceback, exit 1)
        sys.stderr.write("\n")
        raise UsageError("no PIN entered; nothing was sent") from None
    return pin_problem_refused(typed.strip(), "the PIN typed")


def pin_problem(pin: str) -> str | None:
    """Why ``pin`` is not sent at all, or None: one that no operator can have (empty, not
    ``PIN_MIN`` to ``PIN_MAX`` digits: ``operators.pins.check_pin``) would only use up one of the
    operator's tries before the lockout."""
    if not pin:
        return "no PIN"
    if not is_unicode_text(pin):
        return "the PIN is not UTF-8 text"
    if len(pin) > MAX_TEXT:
        return f"a PIN of {len(pin)} characters: no PIN is longer than {MAX_TEXT}"
    if not is_pin_shaped(pin):
        return f"not a PIN: a PIN is {PIN_MIN} to {PIN_MAX} digits 0-9"
    return None


def pin_problem_refused(pin: str, where: str) -> str:
    """``pin``, or ``UsageError`` naming ``where`` it came from."""
    problem = pin_problem(pin)
    if problem is not None:
        raise UsageError(f"{where}: {problem}; nothing was sent")
    return pin


def status_text(st: dict[str, Any]) -> str:
    """The table's status for a person: every value in words or numbers (money in major units),
    nothing shown that the table does not have (no shoe, no hand, no outcome yet)."""
    state = str(st.get("state") or "unknown").replace("_", " ")
    if st.get("shoe") and st.get("shoe_collected"):
        shoe: tuple[str, ...] = (f"no shoe in play (the last, {st['shoe']}, has ended: its cards were collected)",)
    elif st.get("shoe") and st.get("state") == "closed" and st.get("cards_remaining") is None:
        # closed while its stack was prepared (a count fault, say): the next opening starts another
        shoe = (f"no shoe in play (the last, {st['shoe']}, was never loaded: the table closed first)",)
    elif st.get("shoe"):
        cover = "  (cover card reached)" if st.get("cover_reached") else ""
        cover += "  (a reshuffle follows this round)" if st.get("reshuffle_ordered") and not st.get("cover_reached") else ""
        left = st.get("cards_remaining")
        left_text = "not loaded in the shoe yet" if left is None else f"remaining {left}"
        kind = "  (a simulated round: no wagers)" if st.get("round_kind") == "simulated" else ""
        shoe = (f"shoe {st['shoe']}  round {st.get('round') or 0}{kind}",
                f"cards dealt {st.get('cards_dealt') or 0}  {left_text}{cover}")
    else:
        shoe = ("no shoe in play",)
    rules = f" ({st['submission']})" if st.get("submission") else ""
    lines = [f"table {st.get('table')}{rules}  state {state}  {shoe[0]}", *shoe[1:],
             f"last outcome {st['last_outcome']}" if st.get("last_outcome") else "no round decided yet"]
    if st.get("player") or st.get("banker"):
        lines.append(f"player {' '.join(st.get('player') or []) or '-'}   banker {' '.join(st.get('banker') or []) or '-'}")
    if st.get("dealer") or st.get("dealer_operator"):  # the name signed in, and the operator the table holds as dealer
        held = st.get("dealer_operator")
        lines.append(f"dealer {st.get('dealer') or held}" + (f" (operator {held})" if st.get("dealer") and held else ""))
    if st.get("cut_offered_to"):  # 681a.5(b): who may cut now (otherwise only the prompt said)
        lines.append(f"the cut is offered to seat {st['cut_offered_to']}")
    if st.get("seats_taken"):
        lines.append("seats taken " + ", ".join(map(str, st["seats_taken"])))
    if st.get("wagers"):
        lines.append("wagers " + ", ".join(map(wager_text, st["wagers"])))
    if st.get("faults"):
        lines.append("FAULTS " + "; ".join(st["faults"].values()))
    if st.get("shoe_given_up"):  # the prompt may still name a card of it: said over it (a review)
        lines.append(f"SHOE GIVEN UP once the faults are cleared ({st['shoe_given_up']}): its round void, its wagers "
                     "returned, then a new shoe")
    if st.get("count_problem"):
        lines.append(f"COUNT FAULT {st['count_problem']}: a floorperson orders a reshuffle (order_reshuffle), "
                     "restarts the shoe (restart_shoe) or closes the table (close)")
    if st.get("prompt"):
        lines.append(f"prompt: {st['prompt']}")
    return "\n".join(lines)


# What reading a reply's field of the wrong kind raises (a list where words were due, a number
# where a list was): the reply comes from another program, so it is input, said in words.
_FIELD_OF_THE_WRONG_KIND = (TypeError, AttributeError, KeyError, ValueError, IndexError)


def status_reply_text(reply: dict[str, Any], where: str) -> str:
    """A ``status`` reply for a person: the table's status, then its devices' lines. A field of
    the wrong kind is a ``UsageError`` naming ``where`` (the socket), not a traceback."""
    try:
        links = reply.get("links") or {}
        return "\n".join([status_text(reply["status"]), *(["lines:"] if links else []),
                          *(f"  {line}" for line in line_text(links))])
    except _FIELD_OF_THE_WRONG_KIND:
        raise UsageError(f"{where}: the table's reply was not understood: its status has a field of the wrong "
                         "kind") from None


def event_text(ev: dict[str, Any]) -> str | None:
    t = ev.get("type")
    if t == kinds.ROUND_RESULT:
        return round_result_text(ev.get("shoe"), ev, short=True)
    if t in (kinds.SETTLEMENT, kinds.WAGER_RETURNED):
        # Named by its round: a round's settlements come before its result line, and House Money's
        # right after the round before's (a money review read them as that round's).
        text = settlement_text(t, ev)
        return f"round {ev['round']}: {text.lstrip()}" if ev.get("round") is not None else text
    if t in (kinds.FAULT, kinds.COUNT_FAULT):
        return f"FAULT: {ev.get('reason') or ev.get('problem')}"
    if t == kinds.FAULT_CLEARED:  # by itself (a door closed, a link back) or by an operator: a FAULT line ends
        faults = ", ".join(str(f) for f in ev.get("faults") or ())
        return safe(f"fault cleared: {faults or 'the fault'} (by {ev.get('by') or 'the table'})")
    if t == "notice" and ev.get("level") != "info":
        return f"{ev['level']}: {ev['text']}"
    if t in (kinds.REFUSED, kinds.AUTH_REFUSED):
        who = [str(ev["operator"])] if ev.get("operator") else []
        who += [f"account {ev['account']}"] if ev.get("account") else []  # the system account that typed
        by = f" ({', '.join(who)})" if who else ""
        return f"{ev.get('input') or ev.get('command')} refused{by}: {ev.get('reason')}"
    if t == kinds.SHOE_START:
        return f"new shoe {ev.get('shoe')}"
    if t == kinds.SQUEEZE:  # what `reveal` and `relinquish` act on (the console sends them for it)
        if ev.get("seat") is None:
            return safe(f"squeeze: the {ev.get('hand')} hand, held by no player: the dealer turns it over")
        return safe(f"squeeze: the {ev.get('hand')} hand to seat {ev.get('seat')}")
    if t == kinds.RELINQUISHED:
        to = f"seat {ev['to']}" if ev.get("to") is not None else "the dealer"
        return safe(f"squeeze: seat {ev.get('seat')} gave up the {ev.get('hand')} hand, now {to}'s")
    if t == kinds.CLOCK_STEP:  # the journal's times from here on are a stepped clock's
        return safe(clock_step_text(ev))
    if t == kinds.OPERATOR and ev.get("command") not in ROUTINE_COMMANDS:  # a floor decision another operator took
        args = " ".join(f"{k}={v}" for k, v in (ev.get("args") or {}).items())
        return safe(f"{ev.get('operator')} ({ev.get('operator_role')}): {ev.get('command')}{' ' + args if args else ''}")
    if t == kinds.BAD_REQUEST and ev.get("operator"):  # a logged-in operator's request the table did not understand
        return safe(f"{ev.get('command') or 'a request'} not understood ({ev['operator']}): {ev.get('reason')}")
    return None




class EventLines:
    """The line to print for a table event, or None. The notice the table gives with every refusal
    and every fault repeats the event's reason: only the event is printed. With ``own_operator``,
    that operator's refusals are left out: the console prints its own commands' answers itself."""

    def __init__(self, own_operator: str | None = None) -> None:
        self.own_operator = own_operator
        self._refusal_notice: str | None = None
        self._fault_reason: str | None = None

    def __call__(self, ev: dict[str, Any]) -> str | None:
        kind = ev.get("type")
        if kind == kinds.FAULT:
            self._fault_reason = ev.get("reason")
        elif kind == "notice" and ev.get("level") == FAULT_LEVEL and ev.get("text") == self._fault_reason:
            self._fault_reason = None
            return None
        own = self.own_operator is not None and ev.get("operator") == self.own_operator
        if kind in (kinds.REFUSED, kinds.AUTH_REFUSED):
            self._refusal_notice = f"{ev.get('input') or ev.get('command')} refused: {ev.get('reason')}"
            if own:
                return None
        elif kind in (kinds.OPERATOR, kinds.BAD_REQUEST) and own:
            return None  # the console prints its own commands' answers
        elif kind == "notice" and ev.get("text") == self._refusal_notice:
            self._refusal_notice = None
            return None
        try:
            return event_text(ev)
        except _FIELD_OF_THE_WRONG_KIND:  # said, and the events that follow are shown
            return f"(an event the table sent was not understood: {safe(str(kind))[:40]}, a field of the wrong kind)"


def run(args: argparse.Namespace) -> int:
    if args.table_command in ("status", "watch") and args.args:
        raise UsageError(f"{args.table_command} takes no arguments, not {' '.join(args.args)}")
    client = control_client(args)
    if args.table_command == "status":
        reply = client.status()
        if args.json:
            print_json({**reply["status"], "links": reply.get("links") or {}})
        else:
            print(for_the_reader(status_reply_text(reply, str(client.path))))
        return 0
    if args.table_command == "watch":
        lines = EventLines()
        for msg in client.events():
            if "status" in msg:
                print_json(msg["status"]) if args.json else print(
                    for_the_reader(status_reply_text({"status": msg["status"]}, str(client.path))), flush=True)
                continue
            ev = msg.get("event", {})
            if args.json:
                print_json(ev)
                sys.stdout.flush()
            elif (text := lines(ev)) is not None:
                print(for_the_reader(text), flush=True)
        # The stream ends only when the table closes it: a watcher (a surveillance pipe, a unit)
        # learns that it stopped, and from the code that it did not end by its own choice.
        print(f"shoectl ctl: the table stopped: its control socket {client.path} closed", file=sys.stderr)
        return 1
    if args.table_command not in COMMANDS:
        raise UsageError(f"unknown command {typed_shown(args.table_command)} (status, watch, {', '.join(sorted(COMMANDS))})")
    args.operator = operator_of(args)
    if not args.operator:
        raise UsageError("--operator is required for table commands (or set SHOECTL_OPERATOR)")
    reply = client.command(args.operator, _pin(args), args.table_command, parse_args(args.table_command, args.args))
    if args.json:
        print_json(reply)
    if reply.get("ok"):
        if not args.json:
            print(ok_line(args.table_command, reply))
        return 0
    if not args.json:
        print(f"shoectl ctl: {refusal_line(args.table_command, reply)}", file=sys.stderr)
    return EXIT_OF_CODE.get(reply.get("code"), 1)


def run_console(args: argparse.Namespace) -> int:
    from controller.cli.console import Console  # prompt_toolkit: only for the console

    args.operator = operator_of(args)
    if args.pin_stdin and not args.operator:  # the PIN line would be read as a command, and shown
        raise UsageError("--pin-stdin needs --operator (or SHOECTL_OPERATOR): without an operator the console "
                         "only watches")
    client = control_client(args)
    client.status()  # fail early, in one line, when no table is listening
    pin = _pin(args) if args.operator else None
    if not sys.stdin.isatty():  # a script: its lines, with no prompt (``Console.run_lines``)
        return Console(client, args.operator, pin, terminal=False).run_lines(sys.stdin)
    return Console(client, args.operator, pin).run()
