"""``shoectl operators``: add, list and remove the operators who may work the table.

- ``shoectl operators add ID --role ROLE [--name NAME] [--file PATH] [--pin-stdin] [--replace]``
  asks for the PIN twice without echo (``getpass``), or reads one line from standard input with
  ``--pin-stdin``; the PIN must pass the PIN rules (docs/operators.md).
- ``shoectl operators list [--file PATH] [--json]``: id, role, name, created; never the hash.
  JSON: ``{"file": PATH, "operators": [{"id", "role", "name", "created"}], "warnings": [...]}``.
- ``shoectl operators remove ID [--file PATH]``.

The file defaults to ``var/operators.toml`` in the working directory. Errors: one line, exit 2.
Findings about the file's permissions are printed as warnings on standard error. Nothing this
command prints contains a PIN.
"""
from __future__ import annotations

import argparse
import getpass
import sys
import warnings

from controller.cli.common import print_json
from controller.errors import UsageError, file_argument
from controller.operators.pins import PinError, check_pin
from controller.operators.store import (
    DEFAULT_PATH,
    ID_RULE,
    MAX_NAME,
    ROLE_NAMES,
    Operator,
    OperatorsError,
    add_operator,
    check_name,
    is_operator_id,
    load_operators,
    remove_operator,
    reserved_id,
)
from shoectl_config.text import is_unicode_text, quoted, safe, shell_word


def _operator_id(text: str) -> str:
    """An argparse type: an operator id (``ID_RULE``) a person may have, refused before the file is read."""
    if (why := reserved_id(_any_operator_id(text))) is not None:
        raise argparse.ArgumentTypeError(why)
    return text


def _any_operator_id(text: str) -> str:
    """An argparse type: an operator id (``ID_RULE``), a reserved one too (``operators remove``)."""
    if not is_operator_id(text):
        raise argparse.ArgumentTypeError(f"not a valid operator id: {quoted(text[:40])} ({ID_RULE})")
    return text


def _display_name(text: str) -> str:
    """An argparse type: ``--name``, checked as the operators file checks a name (one printable
    line of at most ``MAX_NAME`` characters), so that a bad one is the option's, not the file's."""
    try:
        check_name(text)  # the file's rule (one owner); said here in the option's words
    except OperatorsError:
        shown = quoted(text[:40]) + ("..." if len(text) > 40 else "")
        why = "an empty name" if not text.strip() else f"a name is one printable line of at most {MAX_NAME} characters"
        raise argparse.ArgumentTypeError(f"{shown}: {why}") from None
    return text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("operators", help="add, list and remove operators (roles and PINs)")
    ops = p.add_subparsers(dest="operators_command", metavar="SUBCOMMAND", parser_class=type(p))
    ops.required = True

    a = ops.add_parser("add", help="add an operator (asks for the PIN twice, without echo)")
    a.add_argument("id", type=_operator_id, metavar="ID", help="operator id: lowercase letters, digits, '_', '-' (at most 32)")
    a.add_argument("--role", required=True, choices=ROLE_NAMES)
    a.add_argument("--name", type=_display_name, help="the operator's name, for display")
    _file_arg(a)
    a.add_argument("--pin-stdin", action="store_true", help="read the PIN as one line from standard input")
    a.add_argument("--replace", action="store_true", help="replace an existing operator (new role and PIN)")
    a.set_defaults(func=run_add)

    ls = ops.add_parser("list", help="list the operators (never their PIN hashes)")
    _file_arg(ls)
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=run_list)

    rm = ops.add_parser("remove", help="remove an operator")
    rm.add_argument("id", type=_any_operator_id, metavar="ID")  # a reserved id too: taken out of an older file
    _file_arg(rm)
    rm.set_defaults(func=run_remove)


def _file_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--file", default=DEFAULT_PATH, type=file_argument, metavar="PATH",
                   help=f"the operators file (default: {DEFAULT_PATH})")


def _warn(args: argparse.Namespace, messages: list[str]) -> None:
    for m in messages:
        print(f"{args.prog}: warning: {m}", file=sys.stderr)


def _read_pin(op_id: str, from_stdin: bool) -> str:
    """The new PIN: one line of standard input, or asked twice without echo (must match)."""
    if from_stdin:
        try:
            line = sys.stdin.readline()
        except UnicodeDecodeError:  # a standard input read strictly as UTF-8
            line = "\udcff"
        if not line.strip():
            raise UsageError("--pin-stdin: no PIN on standard input")
        pin = line.strip()
        if not is_unicode_text(pin):  # bytes that are not UTF-8 (as ``shoectl ctl`` says of them)
            raise UsageError("--pin-stdin: the PIN is not UTF-8 text; nothing was changed")
        check_pin(pin, op_id)
        return pin
    with warnings.catch_warnings():
        # Without a terminal getpass warns (with a line of its source) and reads the PIN echoed.
        warnings.simplefilter("error", getpass.GetPassWarning)
        try:
            pin = getpass.getpass(f"PIN for {op_id}: ")
            check_pin(pin, op_id)  # before asking again
            again = getpass.getpass(f"PIN for {op_id} again: ")
        except EOFError:
            raise UsageError("no PIN entered (use --pin-stdin to give it on standard input)") from None
        except getpass.GetPassWarning:
            raise UsageError("no terminal to ask the PIN on: give it on standard input with --pin-stdin") from None
    if again != pin:
        raise UsageError("the two PINs differ; nothing was changed")
    return pin


def run_add(args: argparse.Namespace) -> int:
    try:
        existed = False  # said before asking for a PIN; add_operator checks again under the lock
        try:
            existing = load_operators(args.file)
        except OperatorsError as exc:
            if exc.reason != "file not found":
                raise
        else:
            existed = args.id in existing
            if existed and not args.replace:
                raise OperatorsError(existing.path or args.file, f"operators.{args.id}",
                                     "already exists (use --replace to change its role, name or PIN)")
        pin = _read_pin(args.id, args.pin_stdin)
        op = add_operator(args.file, args.id, args.role, pin, args.name, replace=args.replace)
    except (OperatorsError, PinError) as exc:
        raise UsageError(str(exc)) from None
    verb = "replaced" if existed else "added"  # --replace of an id not there adds it
    print(f"{verb} operator {op.id} ({op.role.name.lower()}{', ' + op.name if op.name else ''}) in {safe(str(args.file))}")
    return 0


def _row(op: Operator) -> list[str]:
    d = op.to_public()
    return [d["id"], d["role"], d["name"] or "-", d["created"] or "-"]


def run_list(args: argparse.Namespace) -> int:
    try:
        ops = load_operators(args.file)
    except OperatorsError as exc:
        if exc.reason == "file not found":
            raise UsageError(f"{exc} (add the first operator with "
                             f"`shoectl operators add ID --role supervisor --file {shell_word(args.file)}`)") from None
        raise UsageError(str(exc)) from None
    _warn(args, ops.warnings)
    if args.json:
        print_json({"file": str(args.file), "operators": [op.to_public() for op in ops.values()],
                    "warnings": ops.warnings})
        return 0
    if not ops:
        print(f"no operators in {safe(str(args.file))}")
        return 0
    rows = [["ID", "ROLE", "NAME", "CREATED"]] + [_row(op) for op in ops.values()]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[3])
    return 0


def run_remove(args: argparse.Namespace) -> int:
    try:
        op = remove_operator(args.file, args.id)
    except OperatorsError as exc:
        raise UsageError(str(exc)) from None
    print(f"removed operator {op.id} ({op.role.name.lower()}) from {safe(str(args.file))}")
    return 0
