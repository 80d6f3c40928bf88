"""How the table's inputs and decisions become journal entries, and how inputs come back.

Every input is journaled before it is acted on, in the same transaction as the records the core
made from it (all or nothing). Device events keep their device id, event epoch and counter, so a
device event resent after a crash or a reconnect is recognised and processed once.

Entry kinds: ``input.device`` (payload: role, event name, event fields), ``input.operator``
(command, args, role; operator in its own column), ``input.status`` (role, up, reason; when up,
the device's serial and event epoch), and the core's own record kinds (``card``,
``round_result``, ``settlement``, ...; see docs/journal.md).

``inputs_from(entries)`` turns the journaled inputs back into core inputs, for ``recover``.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator
from typing import Any

from controller.journal.store import Record as JournalRecord
from controller.table.io import DeviceInput, DeviceStatus, OperatorInput, Record, Role, jsonable
from firmware_bridge.protocol import messages as m

INPUT_KINDS = ("input.device", "input.operator", "input.status")
_EVENT_CLASSES = {cls.__name__: cls for cls in vars(m).values()
                  if isinstance(cls, type) and issubclass(cls, m.DeviceEvent) and cls is not m.DeviceEvent}


def device_input_record(inp: DeviceInput, device_id: str, epoch: int | None, counter: int | None,
                        shoe: str | None, round_no: int | None) -> JournalRecord:
    ev = inp.event
    fields = {f.name: jsonable(getattr(ev, f.name)) for f in dataclasses.fields(ev) if f.name != "counter"}
    return JournalRecord("input.device", {"role": inp.device, "event": type(ev).__name__, "fields": fields},
                         shoe=shoe, round=round_no, device=device_id, epoch=epoch, counter=counter)


def operator_input_record(inp: OperatorInput, shoe: str | None, round_no: int | None) -> JournalRecord:
    return JournalRecord("input.operator", {"command": inp.command, "args": {k: jsonable(v) for k, v in inp.args.items()},
                                            "role": inp.role.name.lower()},
                         shoe=shoe, round=round_no, operator=inp.operator)


def status_input_record(inp: DeviceStatus, shoe: str | None, round_no: int | None) -> JournalRecord:
    identity = {"serial": inp.serial, "epoch": inp.epoch} if inp.epoch is not None else {}
    return JournalRecord("input.status", {"role": inp.device, "up": inp.up, "reason": inp.reason, **identity},
                         shoe=shoe, round=round_no)


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


def is_unicode_text(text: str) -> bool:
    """Whether ``text`` is valid Unicode (encodes as UTF-8: no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def output_records(records: Iterable[Record]) -> list[JournalRecord]:
    return [JournalRecord(r.kind, r.payload, shoe=r.shoe, round=r.round) for r in records]


def input_from(entry: Any) -> DeviceInput | OperatorInput | DeviceStatus | None:
    """The core input a journal entry holds, or None if it is not an input."""
    p = entry.payload
    if entry.kind == "input.device":
        cls = _EVENT_CLASSES[p["event"]]
        return DeviceInput(p["role"], cls(**p["fields"], counter=entry.device_counter or 0))
    if entry.kind == "input.operator":
        return OperatorInput(p["command"], dict(p["args"]), entry.operator or "?", Role.parse(p["role"]))
    if entry.kind == "input.status":
        return DeviceStatus(p["role"], bool(p["up"]), p.get("reason", ""), p.get("serial", ""), p.get("epoch"))
    return None


def inputs_from(entries: Iterable[Any]) -> Iterator[DeviceInput | OperatorInput | DeviceStatus]:
    for e in entries:
        inp = input_from(e)
        if inp is not None:
            yield inp
