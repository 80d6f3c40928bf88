"""How the table's inputs and decisions become journal entries, and how inputs come back.

Every input is journaled before it is acted on, in the same transaction as the records the core
made from it (all or nothing). Device events keep their device serial, event epoch and counter,
so a device event resent after a crash or a reconnect is recognised and processed once.

Entry kinds (``controller.journal.kinds``, docs/journal.md): ``input.device`` (payload:
device_role, the event's wire name, its fields), ``input.operator`` (command, args,
operator_role; the operator in its own column), ``input.status`` (device_role, up, reason; when
up, the device's serial and event epoch), and the core's own record kinds (``card``,
``round_result``, ``settlement``, ...).

``input_from(entry)`` turns a journaled input back into a core input, for ``recover``, in the
words of whichever schema version it was written under (``controller.journal.vocabulary``).
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Iterator
from typing import Any

from controller.journal import kinds
from controller.journal.errors import JournalContentError, malformed_entry, text_field
from controller.journal.store import Record as JournalRecord
from controller.journal.vocabulary import current_payload
from controller.table.io import (
    DEVICE_ROLES, CommandFailed, DeviceInput, DeviceStatus, OperatorInput, Role, TableRecord, jsonable,
)
from firmware_bridge.protocol import messages as m
from shoectl_config.text import is_unicode_text

INPUT_KINDS = kinds.INPUT_KINDS


def device_input_record(inp: DeviceInput, device_serial: str, epoch: int | None, counter: int | None,
                        shoe: str | None, round_no: int | None) -> JournalRecord:
    ev = inp.event
    fields = {name: jsonable(getattr(ev, name)) for name in _journaled_fields(type(ev))}
    return JournalRecord(kinds.INPUT_DEVICE, {"device_role": inp.device_role, "event": m.wire_name(ev), "fields": fields},
                         shoe=shoe, round=round_no, device_serial=device_serial, epoch=epoch, counter=counter)


@functools.cache
def _journaled_fields(event_class: type) -> tuple[str, ...]:
    """The fields of a device event that its journal entry keeps (the counter has a column)."""
    return tuple(f.name for f in dataclasses.fields(event_class) if f.name != "counter")


def operator_input_record(inp: OperatorInput, shoe: str | None, round_no: int | None) -> JournalRecord:
    return JournalRecord(kinds.INPUT_OPERATOR, {"command": inp.command,
                                                "args": {k: jsonable(v) for k, v in inp.args.items()},
                                                "operator_role": inp.role.name.lower()},
                         shoe=shoe, round=round_no, operator=inp.operator)


def status_input_record(inp: DeviceStatus, shoe: str | None, round_no: int | None) -> JournalRecord:
    identity = {"serial": inp.serial, "epoch": inp.epoch} if inp.epoch is not None else {}
    stalled = {"stalled": True} if inp.stalled else {"stall_ended": True} if inp.stall_ended else {}
    return JournalRecord(kinds.INPUT_STATUS, {"device_role": inp.device_role, "up": inp.up, "reason": inp.reason,
                                              **identity, **stalled}, shoe=shoe, round=round_no)


def command_failed_record(inp: CommandFailed, shoe: str | None, round_no: int | None) -> JournalRecord:
    payload = {"device_role": inp.device_role, "command": inp.command, "reason": inp.reason, "refused": inp.refused}
    if inp.code is not None:
        payload["code"] = inp.code
    if inp.resent:
        payload["resent"] = True
    if inp.prompt is not None:
        payload["prompt"] = inp.prompt
    if inp.answered:
        payload["answered"] = True
    return JournalRecord(kinds.INPUT_COMMAND_FAILED, payload, shoe=shoe, round=round_no)


def note_record(kind: str, payload: dict[str, Any], operator: str | None, shoe: str | None,
                round_no: int | None) -> JournalRecord:
    """A note from outside the core (a refusal at the control socket) as a record the journal
    always takes, whatever a client put in it: text that is not valid Unicode is escaped, values
    that are not JSON (a float, an object) and whole numbers beyond 64 bits become text, nesting
    deeper than ``MAX_NOTE_DEPTH`` is cut; an operator that cannot be the journal's operator
    column (empty, not valid Unicode, not text) goes into the payload instead."""
    body = _journal_safe(payload, 0)
    if not isinstance(body, dict):
        body = {"note": body}
    if operator is not None and not (isinstance(operator, str) and operator and is_unicode_text(operator)):
        body.setdefault("operator", _journal_safe(operator, 0))
        operator = None
    return JournalRecord(kind, body, shoe=shoe, round=round_no, operator=operator)


MAX_NOTE_DEPTH = 8
_INT64 = 2**63


def _journal_safe(value: Any, depth: int) -> Any:
    if value is None or isinstance(value, bool) or (isinstance(value, int) and -_INT64 < value < _INT64):
        return value
    if isinstance(value, str):
        return value if is_unicode_text(value) else value.encode("utf-8", "backslashreplace").decode("utf-8")
    if depth >= MAX_NOTE_DEPTH:
        return "..."
    if isinstance(value, dict):
        return {_journal_safe(str(k), depth): _journal_safe(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_journal_safe(v, depth + 1) for v in value]
    return _journal_safe(repr(value), depth)


# The core's records of an operator's command, taken or refused: the operator in the journal's
# column too, where a query by operator finds them (an examiner's review: only the payload had it)
_OPERATORS_OWN = frozenset({kinds.OPERATOR, kinds.REFUSED})


def operator_column(kind: str, payload: dict[str, Any]) -> str | None:
    """The journal's ``operator`` column of a record the core made: its payload's operator for an
    operator's command taken or refused, none for any other."""
    return payload.get("operator") if kind in _OPERATORS_OWN else None


def output_records(records: Iterable[TableRecord]) -> list[JournalRecord]:
    return [JournalRecord(r.kind, r.payload, shoe=r.shoe, round=r.round, operator=operator_column(r.kind, r.payload))
            for r in records]


def started_record(core: Any, replayed: int, version: str, signature: str, driver: str) -> JournalRecord:
    """The ``controller_started`` record of a table that starts with ``core`` (after
    ``replayed`` journaled inputs were fed to it), with the shoe and round it goes on from, the
    devices it decides for (``capabilities_of``: what deciding the journal again needs) and the
    program's signature (``controller.signature``: which exact code deals from here on) and who
    drives the table from here (``driver``: ``automated`` or ``operators``, ``TableCore.restarted``)."""
    shoe, round_no = core.in_play()
    return JournalRecord(kinds.CONTROLLER_STARTED, {"version": version, "replayed": replayed, "state": core.state,
                                                    "capabilities": capabilities_of(core), "signature": signature,
                                                    "driver": driver},
                         shoe=shoe, round=round_no)


# What the built-in emulator's table is: a batch shuffler and a card-reading shoe (``TableCore``'s
# options of these names, as ``capabilities_of`` gives them).
BUILT_IN_DEVICES: dict[str, Any] = {"automatic_shoe": False, "approval": None, "shuffler": True,
                                    "shuffler_keeps_one_batch": True, "shuffler_in_shoe": False, "deck_capacity": None}


def capabilities_of(core: Any) -> dict[str, Any]:
    """What the table's devices are, as ``TableCore``'s options of the same names (the profiles'
    capabilities, ``run_devices.table_capabilities``): the core decides differently for each."""
    return {"automatic_shoe": core.automatic_shoe, "approval": core.approval, "shuffler": core.has_shuffler,
            "shuffler_keeps_one_batch": core.shuffler_keeps_one_batch, "shuffler_in_shoe": core.shuffler_in_shoe,
            "deck_capacity": core.deck_capacity}


def rules_record(submission: Any, last_journaled: dict[str, Any] | None) -> JournalRecord | None:
    """The ``submission`` record of the Rules Submission in force, whole, or ``None`` when the
    last one journaled (its payload, ``None`` for none) already holds it (a restart with the same
    rules adds nothing; with other rules, or on a new journal, the record says by which rules the
    rounds that follow are decided)."""
    in_force = jsonable(submission.to_dict())
    return None if last_journaled == in_force else JournalRecord(kinds.SUBMISSION, in_force)


def input_from(entry: Any) -> DeviceInput | OperatorInput | DeviceStatus | CommandFailed | None:
    """The core input a journal entry holds (written under either schema version), or None if it
    is not an input. JournalContentError, naming the entry, for one that does not make an input."""
    if entry.kind not in INPUT_KINDS:
        return None
    try:
        p = current_payload(entry)
        if entry.kind == kinds.INPUT_OPERATOR:
            args = p["args"]
            if not isinstance(args, dict):
                raise TypeError("args")
            return OperatorInput(text_field(p, "command"), dict(args), entry.operator or "?", Role.parse(p["operator_role"]))
        role = p["device_role"]
        if role not in DEVICE_ROLES:  # a forged or damaged entry: no device plays another role
            raise TypeError("device_role")
        if entry.kind == kinds.INPUT_DEVICE:
            return DeviceInput(role, _event_class(entry, p["event"])(**p["fields"], counter=entry.device_counter or 0))
        if entry.kind == kinds.INPUT_COMMAND_FAILED:
            return CommandFailed(role, text_field(p, "command"), text_field(p, "reason"), bool(p["refused"]), p.get("code"),
                                 p.get("resent") is True, _text_or_none(p.get("prompt")), p.get("answered") is True)
        return DeviceStatus(role, bool(p["up"]), p.get("reason", ""), p.get("serial", ""), p.get("epoch"),
                            p.get("stalled") is True, p.get("stall_ended") is True)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:  # InvalidMessageError is a ValueError
        raise malformed_entry(entry, exc) from None


def _text_or_none(value: Any) -> str | None:
    """An optional text field as journaled; TypeError (a malformed entry) for anything else."""
    if value is not None and not isinstance(value, str):
        raise TypeError("not text")
    return value


def _event_class(entry: Any, name: Any) -> type[m.DeviceEvent]:
    try:
        cls = m.message_class_named(name)
    except m.UnknownMessageTypeError:
        cls = None
    if cls is None or not issubclass(cls, m.DeviceEvent):
        raise JournalContentError(f"entry {entry.seq} ({entry.kind}): {str(name)[:40]!r} is not a device event")
    return cls


def inputs_from(entries: Iterable[Any]) -> Iterator[DeviceInput | OperatorInput | DeviceStatus]:
    for e in entries:
        inp = input_from(e)
        if inp is not None:
            yield inp
