"""The control socket's requests, parsed and validated at the edge, before anything is queued.

Contract: ``parse_request(line)`` returns a ``Request`` or raises ``BadRequest`` (a one-line
reason in the operator's words, which never repeats the PIN nor a value that is not printable
text). Whatever a ``Request`` holds is safe to journal and to hand to the table core:

- the line is UTF-8 JSON holding one object, nested at most ``MAX_DEPTH`` levels; numbers are
  whole (no fraction, exponent, NaN or Infinity) and at most ``MAX_DIGITS`` digits; every string,
  key or value, is valid Unicode (no lone surrogates);
- ``id`` is absent, null, a whole number or printable text of at most ``MAX_ID`` characters;
- ``op`` is ``status``, ``subscribe`` or ``command``; a subscription may have ``since``:
  ``"start"`` (the events since the table started first: ``since_start``); a command has
  ``command`` (one the table knows), ``operator`` and ``pin`` (strings of at most ``MAX_TEXT``
  characters) and ``args`` (an object, absent or null for none);
- each argument is one the command takes (if not, ``args_problem`` says why and ``args`` is
  empty: the server says so after the login and the role, so that who gave it is journaled and a
  guess at a PIN counts whatever its arguments), of the type the table's commands table
  (``controller.table.commands.COMMANDS``) declares: a whole number (not a boolean) within
  +-``MAX_WHOLE`` (a sum of money from 1 to ``MAX_AMOUNT``, a count or position from 0 to
  ``MAX_POSITION``, a seat from 1: no table has other), a boolean, or printable text of at most
  ``MAX_ARG_TEXT`` characters, not blank (the table's own limits; for a choice, one of its
  declared words); null only for an optional argument; every required argument is present. (The
  table checks the rest: a seat of this table, a wager kind it offers, ...)
  (``set_submission`` takes ``submission``: a preset name or a file on the table computer.)

The operator id is not judged here: an id that is not a valid operator id is an authentication
failure (``shown_text`` renders it for messages and the journal).
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from controller.operators.pins import pin_shaped_hidden
from controller.rules.cards import parse_card
from controller.rules.errors import CardError
from controller.table.commands import COMMANDS, MAX_AMOUNT, MAX_POSITION, MAX_TEXT as MAX_ARG_TEXT
from shoectl_config.text import is_unicode_text, safe

MAX_DEPTH = 8
MAX_DIGITS = 20
MAX_ID = 64
MAX_TEXT = 256
MAX_WHOLE = 2**53 - 1  # the whole numbers every JSON reader keeps exactly
OPS = ("status", "command", "subscribe")


class BadRequest(ValueError):
    """A malformed request; the message says what is wrong with it. ``rid`` is the request's id
    when it could be read (echoed in the reply)."""

    def __init__(self, reason: str, rid: int | str | None = None) -> None:
        self.rid = rid
        super().__init__(reason)


@dataclass(frozen=True)
class Request:
    """A valid request (see the module docstring)."""

    op: str
    rid: int | str | None = None
    command: str | None = None
    operator: str | None = None
    pin: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    args_problem: str | None = None  # what is wrong with the arguments (then ``args`` is empty)
    since_start: bool = False  # a subscription's: the events since the table started first


def shown_text(text: str, limit: int = 40) -> str:
    """``text`` as printable, valid text of at most about ``limit`` characters, for messages and
    the journal: control characters and lone surrogates escaped, the rest cut off with ``...``."""
    return safe(text[:limit] + "..." if len(text) > limit else text)


# -- the JSON line ----------------------------------------------------------------------------------

class _NotWhole(Exception):
    pass


class _KeyTwice(Exception):
    pass


def _refuse_number(text: str) -> Any:
    raise _NotWhole(text)


def _whole_number(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise _NotWhole(text)
    return int(text)


def _object_once_each(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object whose keys are each given once: a key given twice made the last one count
    silently (a review: ``"position":5,"position":60`` cut at 60, ``"operator"`` twice signed in as
    the second), where ``shoectl ctl`` refuses an argument given twice."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _KeyTwice(key)
            seen.add(key)
    return obj


_DECODER = json.JSONDecoder(parse_float=_refuse_number, parse_constant=_refuse_number, parse_int=_whole_number,
                            object_pairs_hook=_object_once_each)


# The JSON reader's reasons, in the words of this protocol's users (its own are Python's).
_SYNTAX_PROBLEMS = {
    "Expecting value": "a value was expected",
    "Expecting property name enclosed in double quotes": "a key in double quotes was expected",
    "Expecting ':' delimiter": "a ':' was expected after the key",
    "Expecting ',' delimiter": "a ',' or the closing bracket was expected",
    "Extra data": "more follows the request's object",
    "Unterminated string starting at": "a string is not closed, from the one starting",
    "Invalid control character at": "a control character (escape it) inside a string",
    "Invalid \\escape": "an escape a JSON string does not have",
    "Invalid \\uXXXX escape": "a \\u escape without four hex digits",
}


def _syntax_problem(reason: str) -> str:
    return _SYNTAX_PROBLEMS.get(reason, "a JSON syntax error")


def _decode(line: bytes) -> dict[str, Any]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise BadRequest("not a JSON request: the line is not UTF-8 text") from None
    try:
        obj = _DECODER.decode(text)
    except _NotWhole as exc:
        raise BadRequest(f"not a JSON request: {shown_text(exc.args[0], 24)} is not a whole number of at most "
                         f"{MAX_DIGITS} digits (no fractions, exponents, NaN or Infinity)") from None
    except _KeyTwice as exc:
        raise BadRequest(f"not a JSON request: the key {shown_text(json.dumps(exc.args[0]), 24)} is given twice in "
                         "one object") from None
    except RecursionError:
        raise BadRequest(f"not a JSON request: nested more than {MAX_DEPTH} levels deep") from None
    except json.JSONDecodeError as exc:
        raise BadRequest(f"not a JSON request: {_syntax_problem(exc.msg)} at character {exc.pos + 1}") from None
    if not isinstance(obj, dict):
        raise BadRequest("not a JSON request: a request is one JSON object per line")
    _check_tree(obj)
    return obj


def _check_tree(obj: dict[str, Any]) -> None:
    """Depth and text checks over the whole request, without recursion."""
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, str):
            if not is_unicode_text(value):
                raise BadRequest("not a JSON request: a string is not valid Unicode text (a lone surrogate)")
            continue
        if not isinstance(value, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            raise BadRequest(f"not a JSON request: nested more than {MAX_DEPTH} levels deep")
        items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
        for key, item in items:
            if key is not None and not is_unicode_text(key):
                raise BadRequest("not a JSON request: a key is not valid Unicode text (a lone surrogate)")
            stack.append((item, depth + 1))


# -- the request ------------------------------------------------------------------------------------

def parse_request(line: bytes) -> Request:
    """The request on ``line`` (without its newline), or ``BadRequest``."""
    obj = _decode(line)
    rid = _request_id(obj.get("id"))
    op = obj.get("op")
    if op not in OPS:
        raise BadRequest(f"\"op\" must be status, command or subscribe, not {_shown_word(op)}", rid)
    if op == "subscribe" and obj.get("since") is not None:
        if obj["since"] != "start":
            raise BadRequest(f"a subscription's \"since\" may only be \"start\", not {_shown_word(obj['since'])}", rid)
        return Request(op, rid, since_start=True)
    if op != "command":
        return Request(op, rid)
    command = obj.get("command")
    if not isinstance(command, str) or command not in COMMANDS:
        raise BadRequest(f"unknown command {_shown_word(command)} (`shoectl ctl --help` lists them)", rid)
    operator, pin = obj.get("operator"), obj.get("pin")
    for name, value in (("operator", operator), ("pin", pin)):
        if not isinstance(value, str) or len(value) > MAX_TEXT:
            raise BadRequest(f"a command needs \"{name}\": a string of at most {MAX_TEXT} characters", rid)
    args = obj.get("args")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise BadRequest(f"{command}: \"args\" must be an object (KEY: VALUE), not {_json_type(args)}", rid)
    try:
        return Request(op, rid, command, operator, pin, check_args(command, args, rid))
    except BadRequest as exc:  # said once the operator has logged in, as a role or a state refusal is
        return Request(op, rid, command, operator, pin, {}, args_problem=str(exc))


def _request_id(rid: Any) -> int | str | None:
    if rid is None or (isinstance(rid, int) and not isinstance(rid, bool) and abs(rid) <= MAX_WHOLE):
        return rid
    if isinstance(rid, str) and len(rid) <= MAX_ID and rid.isprintable():
        return rid
    raise BadRequest(f"\"id\" must be a whole number or printable text of at most {MAX_ID} characters")


# -- arguments, typed by the table's commands table -----------------------------------------------------

WHOLE, TEXT, BOOL = "a whole number", "text", "true or false"  # the JSON types of arguments
CARD = "a card such as AS, 10H or KD"  # text that names a card: one that does not is malformed, not refused
SEAT = "a seat number (a whole number from 1)"  # no table has seat 0: which seats it has, the table says
# The table's own limits, the same at every table: a value outside them is malformed (exit 2 at
# ctl), as a seat 0 is, not the table's refusal (exit 1, journaled as an input it refused).
MONEY = f"a sum in minor units (cents): a whole number from 1 to {MAX_AMOUNT}"
COUNT = f"a whole number from 0 to {MAX_POSITION}"
NUMBERS = {WHOLE: (-MAX_WHOLE, MAX_WHOLE), SEAT: (1, MAX_WHOLE), MONEY: (1, MAX_AMOUNT), COUNT: (0, MAX_POSITION)}
_TYPES = {"seat": SEAT, "count": COUNT, "money": MONEY, "flag": BOOL, "text": TEXT, "choice": TEXT,
          "card": CARD}


@functools.cache
def parameters(command: str) -> dict[str, tuple[str, bool, bool]]:
    """``command``'s arguments: name -> (type, required, may be null), from its declaration in
    the commands table, as an operator gives them (ValueError for an argument kind the socket
    cannot carry)."""
    out = {}
    for a in COMMANDS[command].operator_args:
        if a.kind not in _TYPES:
            raise ValueError(f"{command} {a.name}: a {a.kind} is not a type the control socket carries")
        out[a.name] = (_TYPES[a.kind], a.required, not a.required)
    return out


def check_args(command: str, args: dict[str, Any], rid: int | str | None = None) -> dict[str, Any]:
    """``args`` if they are what ``command`` takes (see the module docstring), else ``BadRequest``."""
    params = parameters(command)
    unknown = [k for k in args if k not in params]
    if unknown:
        takes = ", ".join(params) or "no arguments"
        raise BadRequest(f"{command}: unknown argument {_shown_word(unknown[0])} ({command} takes {takes})", rid)
    for name, (kind, required, nullable) in params.items():
        if name not in args:
            if required:
                raise BadRequest(f"{command}: missing argument {name} ({kind})", rid)
            continue
        value = args[name]
        if value is None and nullable:
            continue
        if not _is_a(kind, value):
            given = _json_type(value) if isinstance(value, str) and len(value) > 40 else _shown_word(value)
            raise BadRequest(f"{command}: {name} must be {_described(kind)}, not {given}", rid)
        choices = _choices(command).get(name)
        if choices and value.lower() not in choices:  # a word outside the declared ones is no request
            raise BadRequest(f"{command}: {name} must be one of: {', '.join(choices)} (not {_shown_word(value)})", rid)
    return dict(args)


@functools.cache
def _choices(command: str) -> dict[str, tuple[str, ...]]:
    """The words each ``choice`` argument of ``command`` may be (the commands table's); which of
    them this table offers (a wager kind), the table says."""
    return {a.name: a.choices for a in COMMANDS[command].operator_args if a.kind == "choice"}


def _is_a(kind: str, value: Any) -> bool:
    if kind == BOOL:
        return isinstance(value, bool)
    if kind in NUMBERS:
        low, high = NUMBERS[kind]
        return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high
    if not (isinstance(value, str) and len(value) <= MAX_ARG_TEXT and value.isprintable() and value.strip()):
        return False
    if kind == CARD:
        try:
            parse_card(value)
        except CardError:
            return False
    return True


def _described(kind: str) -> str:
    if kind == WHOLE:
        return f"a whole number (at most {MAX_WHOLE} either way)"
    if kind == TEXT:
        return f"printable text of 1 to {MAX_ARG_TEXT} characters, not blank"
    return kind


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return "a whole number out of range" if abs(value) > MAX_WHOLE else "a whole number"
    if isinstance(value, str):
        if len(value) > MAX_ARG_TEXT:  # which of the two, said (an examiner read "too long or not printable")
            return f"text of {len(value)} characters, more than {MAX_ARG_TEXT}"
        return "text" if value.isprintable() else "text with a control character (a new line, a tab, an escape)"
    return "a list" if isinstance(value, list) else "an object"


def _shown_word(word: Any) -> str:
    """What the request got wrong (its ``op``, its ``command``, a subscription's ``since``, an
    argument's name or value) as its refusal names it (``_shown_value``), but one of a PIN's shape
    not shown, only its type and length (``pin_shaped_hidden``): a PIN typed where the command or
    an argument goes was told back and journaled (security reviews)."""
    return pin_shaped_hidden(word) or _shown_value(word)


def _shown_value(value: Any) -> str:
    """``value`` as a refusal names it: text quoted and cut short, a number as it is (the decoder
    takes none of more than 20 digits), anything else by its JSON type."""
    if isinstance(value, str):
        return f"'{shown_text(value)}'"
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _json_type(value)
