"""One journal entry as it reaches the floor: a message on ``shoectl/v1/tables/<table_id>/journal``
or a line of a ``shoectl journal export`` file, both exactly ``Entry.to_json_line()``.

``parse_entry(data, topic_table=None, max_bytes=...) -> FloorEntry`` checks that the bytes are
one journal entry and raises ``NotAnEntry(reason, detail)`` otherwise: too large, not UTF-8, not a
JSON object, a column missing or of the wrong type, a payload the journal would never store
(floats, lone surrogates), a NUL character in a column PostgreSQL cannot store, or (for a
message) a table id that differs from the topic's. ``reason`` is a short word for counting
(``too_large``, ``not_json``, ``bad_field``, ``wrong_table``); ``detail`` says what, in one line.

The hash chain is not checked here: that is the store's job (``controller.floor.chain``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from controller.journal.chain import encode_payload_value
from controller.journal.entry import COLUMNS, Entry, parse_ts
from controller.journal.errors import PayloadError
from shoectl_config.text import is_unicode_text, safe

MAX_MESSAGE_BYTES = 1024 * 1024
_HEX = frozenset("0123456789abcdef")
_TEXT_COLUMNS = ("ts", "kind", "table_id", "shoe_id", "device_serial", "operator", "prev_hash", "hash")
_OPTIONAL = frozenset(("shoe_id", "round_no", "device_serial", "device_epoch", "device_counter", "operator"))
_INT_COLUMNS = ("seq", "round_no", "device_epoch", "device_counter")
_INT64_MAX = 2**63 - 1
MAX_ID_CHARS = 200  # a table id is at most 32 (shoectl run --table-id); it keys the store's indexes


class NotAnEntry(ValueError):
    """The bytes are not one journal entry; ``reason`` a word for counting, ``detail`` one line."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True, slots=True)
class FloorEntry:
    """An entry checked for form: the ``Entry`` read from the line, the exact line (without its
    newline), and the payload's canonical JSON text (what the entry's hash covers)."""

    entry: Entry
    line: str
    payload_text: str

    @property
    def table_id(self) -> str:
        return self.entry.table_id

    @property
    def seq(self) -> int:
        return self.entry.seq

    def chain_row(self) -> tuple[Any, ...]:
        """The row ``controller.journal.chaincheck.check_row`` takes (payload as canonical text)."""
        e = self.entry
        return (e.seq, e.ts, e.kind, e.table_id, e.shoe_id, e.round_no, e.device_serial, e.device_epoch,
                e.device_counter, e.operator, self.payload_text, e.prev_hash, e.hash)


def parse_entry(data: bytes | str, topic_table: str | None = None,
                max_bytes: int = MAX_MESSAGE_BYTES) -> FloorEntry:
    """See the module docstring."""
    size = len(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    if size > max_bytes:
        raise NotAnEntry("too_large", f"{size} bytes, more than the limit of {max_bytes}")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotAnEntry("not_utf8", f"not UTF-8 text (bad byte at offset {exc.start})") from None
    line = data[:-1] if data.endswith("\n") else data
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        raise NotAnEntry("not_json", "not one JSON object") from None
    if not isinstance(obj, dict):
        raise NotAnEntry("not_json", "not one JSON object")
    entry, payload_text = _entry_of(obj)
    if topic_table is not None and entry.table_id != topic_table:
        raise NotAnEntry("wrong_table", f"entry {entry.seq} of table {safe(entry.table_id)!r} published under "
                                        f"table {safe(topic_table)!r}")
    return FloorEntry(entry, line, payload_text)


def _entry_of(obj: dict[str, Any]) -> tuple[Entry, str]:
    missing = [name for name in (*COLUMNS, "schema_version") if name not in obj]
    if missing:
        raise NotAnEntry("bad_field", f"no {', '.join(missing)}: not a journal entry")
    for name in _TEXT_COLUMNS:
        value = obj[name]
        if value is None and name in _OPTIONAL:
            continue
        if not isinstance(value, str) or not value:
            raise NotAnEntry("bad_field", f"{name} is not a text")
        if "\x00" in value or not is_unicode_text(value):
            raise NotAnEntry("bad_field", f"{name} holds a character that cannot be stored")
        if name == "table_id" and len(value) > MAX_ID_CHARS:
            raise NotAnEntry("bad_field", f"table_id is longer than {MAX_ID_CHARS} characters")
    for name in _INT_COLUMNS:
        value = obj[name]
        if value is None and name in _OPTIONAL:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _INT64_MAX:
            raise NotAnEntry("bad_field", f"{name} is not a whole number from 0 to {_INT64_MAX}")
    if obj["seq"] < 1:
        raise NotAnEntry("bad_field", "seq is not a whole number from 1")
    if obj["schema_version"] not in (1, 2):
        raise NotAnEntry("bad_field", "schema_version is neither 1 nor 2")
    for name in ("prev_hash", "hash"):
        if len(obj[name]) != 64 or not set(obj[name]) <= _HEX:
            raise NotAnEntry("bad_field", f"{name} is not 64 lowercase hex digits")
    try:
        parse_ts(obj["ts"])
    except ValueError:
        raise NotAnEntry("bad_field", "ts is not a journal timestamp") from None
    try:
        payload_text, payload = encode_payload_value(obj["payload"])
    except PayloadError as exc:
        raise NotAnEntry("bad_field", f"the payload is not a journal payload: {exc}") from None
    entry = Entry(*(payload if name == "payload" else obj[name] for name in COLUMNS),
                  schema_version=obj["schema_version"])
    return entry, payload_text
