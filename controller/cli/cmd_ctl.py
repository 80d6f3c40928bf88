"""``shoectl ctl`` (one command, for scripts) and ``shoectl console`` (interactive) over the control
socket of a running ``shoectl run``.

``shoectl ctl [--socket PATH] [--operator ID] [--pin-stdin] COMMAND [KEY=VALUE ...] [--json]``:
``status`` and ``watch`` need no PIN; every table command (``wager seat=3 kind=banker amount=2500``,
``no_more_bets``, ``order_reshuffle``, ...) is authenticated: the PIN comes from the environment
variable ``SHOECTL_PIN``, one line of standard input with ``--pin-stdin``, or a prompt without echo.

Exit codes: 0 accepted; 1 refused by the table (the reason is printed); 2 usage or input error, or
no table on the socket; 3 authentication failed (unknown operator, wrong PIN, locked out);
4 the operator's role is too low for the command.
"""
from __future__ import annotations

import argparse
import cmd
import getpass
import os
import sys
import threading
from pathlib import Path
from typing import Any

from controller.cli.common import print_json
from controller.control.client import ControlClient
from controller.errors import UsageError
from controller.table.commands import COMMANDS, help_text
from controller.table.display import round_result_text

DEFAULT_SOCKET = Path("var") / "journal.sock"  # shoectl run's default: the default journal's name, .sock
EXIT_REFUSED, EXIT_AUTH, EXIT_FORBIDDEN = 1, 3, 4
_CODE_EXIT = {"refused": EXIT_REFUSED, "auth": EXIT_AUTH, "forbidden": EXIT_FORBIDDEN, "bad_request": 2, "timeout": 1}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ctl", help="give one command to a running table (for scripts)",
                       formatter_class=argparse.RawDescriptionHelpFormatter,
                       epilog="table commands (KEY=VALUE arguments; money in minor units, e.g. cents):\n"
                              + "\n".join(f"  {c.usage()}\n      {c.help}; {c.min_role.label} or above"
                                           for c in COMMANDS.values()))
    p.add_argument("--socket", default=str(DEFAULT_SOCKET), metavar="PATH", help=f"control socket (default {DEFAULT_SOCKET})")
    p.add_argument("--operator", metavar="ID", default=os.environ.get("SHOECTL_OPERATOR"), help="operator id (or SHOECTL_OPERATOR)")
    p.add_argument("--pin-stdin", action="store_true", help="read the PIN from the first line of standard input")
    p.add_argument("--json", action="store_true", help="print the server's reply as JSON")
    p.add_argument("table_command", metavar="COMMAND", help="status, watch, or a table command (listed below)")
    p.add_argument("args", nargs="*", metavar="KEY=VALUE")
    p.set_defaults(func=run)

    c = sub.add_parser("console", help="interactive console for dealers and floorpersons")
    c.add_argument("--socket", default=str(DEFAULT_SOCKET), metavar="PATH")
    c.add_argument("--operator", metavar="ID", default=os.environ.get("SHOECTL_OPERATOR"))
    c.add_argument("--pin-stdin", action="store_true", help="read the PIN from the first line of standard input")
    c.set_defaults(func=run_console)


def parse_args(items: list[str]) -> dict[str, Any]:
    """``["seat=3", "kind=banker", "amount=2500"]`` -> ``{"seat": 3, "kind": "banker", "amount": 2500}``."""
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"argument {item!r}: expected KEY=VALUE")
        if value.lower() in ("true", "false"):
            out[key] = value.lower() == "true"
        else:
            try:
                out[key] = int(value)
            except ValueError:
                out[key] = value
    return out


def _pin(args: argparse.Namespace) -> str:
    if args.pin_stdin:
        line = sys.stdin.readline()
        if not line:
            raise UsageError("--pin-stdin: no PIN on standard input")
        return line.strip()
    env = os.environ.get("SHOECTL_PIN")
    if env:
        return env
    if not sys.stdin.isatty():
        raise UsageError("no PIN: use --pin-stdin, SHOECTL_PIN, or a terminal")
    return getpass.getpass(f"PIN for {args.operator}: ")


def status_text(st: dict[str, Any]) -> str:
    lines = [f"table {st.get('table')}  state {st.get('state')}  shoe {st.get('shoe')}  round {st.get('round')}",
             f"cards dealt {st.get('cards_dealt')}  remaining {st.get('cards_remaining')}"
             f"{'  (cover card reached)' if st.get('cover_reached') else ''}  last outcome {st.get('last_outcome')}"]
    if st.get("player") or st.get("banker"):
        lines.append(f"player {' '.join(st.get('player') or [])}   banker {' '.join(st.get('banker') or [])}")
    if st.get("wagers"):
        lines.append("wagers " + ", ".join(f"seat {w['seat']} {w['kind']} {w['amount']}" for w in st["wagers"]))
    if st.get("faults"):
        lines.append("FAULTS " + "; ".join(st["faults"].values()))
    if st.get("prompt"):
        lines.append(f"prompt: {st['prompt']}")
    return "\n".join(lines)


def event_text(ev: dict[str, Any]) -> str | None:
    t = ev.get("type")
    if t == "round_result":
        return round_result_text(ev.get("shoe"), ev, short=True)
    if t in ("fault", "count_fault"):
        return f"FAULT: {ev.get('reason') or ev.get('problem')}"
    if t == "notice" and ev.get("level") != "info":
        return f"{ev['level']}: {ev['text']}"
    if t in ("refused", "auth_refused"):
        return f"refused ({ev.get('operator', '')}): {ev.get('reason')}"
    if t == "shoe_start":
        return f"new shoe {ev.get('shoe')}"
    return None


def run(args: argparse.Namespace) -> int:
    client = ControlClient(args.socket)
    if args.table_command == "status":
        reply = client.status()
        print_json(reply["status"]) if args.json else print(status_text(reply["status"]))
        return 0
    if args.table_command == "watch":
        for msg in client.events():
            if "status" in msg:
                print_json(msg["status"]) if args.json else print(status_text(msg["status"]), flush=True)
                continue
            ev = msg.get("event", {})
            if args.json:
                print_json(ev)
                sys.stdout.flush()
            elif (text := event_text(ev)) is not None:
                print(text, flush=True)
        return 0
    if args.table_command not in COMMANDS:
        raise UsageError(f"unknown command {args.table_command!r} (status, watch, {', '.join(sorted(COMMANDS))})")
    if not args.operator:
        raise UsageError("--operator is required for table commands (or set SHOECTL_OPERATOR)")
    reply = client.command(args.operator, _pin(args), args.table_command, parse_args(args.args))
    if args.json:
        print_json(reply)
    if reply.get("ok"):
        if not args.json:
            print(f"{args.table_command}: ok")
        return 0
    if not args.json:
        print(f"shoectl ctl: {args.table_command}: {reply.get('code')}: {reply.get('error')}", file=sys.stderr)
    return _CODE_EXIT.get(reply.get("code"), 1)


class Console(cmd.Cmd):
    """The interactive console: history and tab completion (readline), help per command, and the
    table's events printed as they happen."""

    intro = "shoectl console: `help` lists the commands, `status` shows the table, Ctrl-D leaves."
    prompt = "shoectl> "

    def __init__(self, client: ControlClient, operator: str, pin: str) -> None:
        super().__init__()
        self.client = client
        self.operator = operator
        self.pin = pin
        self.last_code = 0
        self._seats: list[str] = [str(s) for s in range(1, 15)]

    def preloop(self) -> None:
        threading.Thread(target=self._watch, daemon=True, name="shoectl-console-watch").start()

    def _watch(self) -> None:
        try:
            for msg in self.client.events():
                ev = msg.get("event")
                if ev and (text := event_text(ev)) is not None:
                    sys.stdout.write(f"\n* {text}\n{self.prompt}")
                    sys.stdout.flush()
        except (OSError, ValueError):
            sys.stdout.write("\n* the table stopped\n")
            sys.stdout.flush()

    def emptyline(self) -> bool:
        return False

    def do_status(self, arg: str) -> None:
        """status: the table's state, shoe, hands, wagers and faults."""
        print(status_text(self.client.status()["status"]))

    def do_quit(self, arg: str) -> bool:
        """quit: leave the console (the table keeps running)."""
        return True

    do_exit = do_quit

    def do_EOF(self, arg: str) -> bool:  # noqa: N802 - cmd's name for Ctrl-D
        print()
        return True

    def default(self, line: str) -> None:
        words = line.split()
        command, items = words[0], words[1:]
        if command not in COMMANDS:
            print(f"unknown command {command!r}: `help` lists them")
            self.last_code = 2
            return
        try:
            args = parse_args(items)
        except UsageError as exc:
            print(exc)
            self.last_code = 2
            return
        reply = self.client.command(self.operator, self.pin, command, args)
        if reply.get("ok"):
            print(f"{command}: ok")
            self.last_code = 0
        else:
            print(f"{command}: {reply.get('code')}: {reply.get('error')}")
            self.last_code = _CODE_EXIT.get(reply.get("code"), 1)

    def completenames(self, text: str, *ignored: Any) -> list[str]:
        return [c for c in [*COMMANDS, "status", "quit", "help"] if c.startswith(text)]

    def completedefault(self, text: str, line: str, begidx: int, endidx: int) -> list[str]:
        """The command's argument names, then the values of the argument being typed."""
        command = COMMANDS.get(line.split()[0]) if line.split() else None
        if command is None:
            return []
        for a in command.args:
            if text.startswith(f"{a.name}="):
                values = self._seats if a.kind == "seat" else list(a.choices) or (["true", "false"] if a.kind == "flag" else [])
                return [f"{a.name}={v}" for v in values if f"{a.name}={v}".startswith(text)]
        return [f"{a.name}=" for a in command.args if f"{a.name}=".startswith(text)]

    def do_help(self, arg: str) -> None:
        if arg in COMMANDS:
            print(help_text(arg))
            return
        if arg:
            super().do_help(arg)
            return
        print("status, quit, and the table commands (`help COMMAND` for its arguments):")
        print(help_text())


def run_console(args: argparse.Namespace) -> int:
    if not args.operator:
        raise UsageError("--operator is required (or set SHOECTL_OPERATOR)")
    client = ControlClient(args.socket)
    client.status()  # fail early, in one line, when no table is listening
    console = Console(client, args.operator, _pin(args))
    try:
        import readline  # noqa: F401 - history and tab completion for cmd
    except ImportError:  # pragma: no cover - readline is part of CPython on Linux
        pass
    try:
        console.cmdloop()
    except KeyboardInterrupt:
        print()
    return 0

