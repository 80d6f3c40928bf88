"""One journal entry as it reaches the floor: a message on ``shoectl/v1/tables/<table_id>/journal``
or a line of a ``shoectl journal export`` file, both exactly ``Entry.to_json_line()``.

``parse_entry(data, topic_table=None, max_bytes=...) -> FloorEntry`` checks that the bytes are
one journal entry and raises ``NotAnEntry(reason, detail)`` otherwise: too large (not a line read
back from the store, taken under the collector's own limit), not UTF-8, not a JSON object (or one
nested deeper than an entry can be), a column missing or of the wrong type, a table id that is
not one a table can have (``TABLE_ID``, the rule of ``shoectl run --table-id``), a payload the journal would never store
(not an object, numbers with a fraction or an exponent, lone surrogates), a NUL character in a
column PostgreSQL cannot store, a line that is not exactly the one a journal writes for its entry
(a key given twice, a key no entry has, another spelling of the same JSON: what the hash covers
would differ from what a reader may see), or (for a message) a table id that differs from the
topic's.
``reason`` is a short word for counting (``too_large``, ``not_json``, ``bad_field``,
``wrong_table``); ``detail`` says what, in one line and in the user's words (a payload's fault
names the entry and the field: ``entry 12 (settlement): payload field bets[0].amount is a
fractional number (1.5); amounts are whole minor units``), control characters escaped.

The entry's ``line`` is the JSON object without the whitespace around it: a line's end (LF, or
CRLF from a file that passed through a Windows tool) is never part of what is stored and
compared, so the same entry is the same line whichever way it arrived.

The hash chain is not checked here: that is the store's job (``controller.floor.chain``).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from controller.journal.chain import encode_payload_value
from controller.journal.entry import COLUMNS, Entry, parse_ts
from controller.journal.errors import PayloadError
from controller.table_ids import TABLE_ID, TABLE_ID_RULE
from shoectl_config.text import is_unicode_text, quoted, safe

MAX_MESSAGE_BYTES = 1024 * 1024
_HEX = frozenset("0123456789abcdef")
_TEXT_COLUMNS = ("ts", "kind", "table_id", "shoe_id", "device_serial", "operator", "prev_hash", "hash")
_OPTIONAL = frozenset(("shoe_id", "round_no", "device_serial", "device_epoch", "device_counter", "operator"))
_INT_COLUMNS = ("seq", "round_no", "device_epoch", "device_counter")
_INT64_MAX = 2**63 - 1
MAX_ID_CHARS = 200  # a topic's table id recorded for a dropped message, escaped: it keys an index
JSON_SPACE = " \t\r\n"  # what JSON allows around a value: never part of the stored line


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
                max_bytes: int = MAX_MESSAGE_BYTES, *, stored: bool = False) -> FloorEntry:
    """See the module docstring. ``stored``: a line read back from the store, where an earlier
    shoectl may have put a table id the rule refuses now (any of at most ``MAX_ID_CHARS``): it is
    read as it was, and escaped wherever it is printed."""
    size = len(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    if size > max_bytes and not stored:  # a stored line was taken under the collector's own limit
        raise NotAnEntry("too_large", f"{size} bytes, more than the limit of {max_bytes}")
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NotAnEntry("not_utf8", f"not UTF-8 text (bad byte at offset {exc.start})") from None
    line = data.strip(JSON_SPACE)
    try:
        obj = json.loads(line, parse_float=_Unstorable, parse_constant=_Unstorable)
    except ValueError:
        raise NotAnEntry("not_json", "not one JSON object") from None
    except RecursionError:
        raise NotAnEntry("not_json", "JSON nested too deeply to be a journal entry") from None
    if not isinstance(obj, dict):
        raise NotAnEntry("not_json", "not one JSON object")
    try:  # a payload nested deeper than Python's encoder goes (json.loads went deeper) is no entry
        entry, payload_text = _entry_of(obj, stored)
        written = None if stored else entry.to_json_line()[:-1]
    except RecursionError:
        raise NotAnEntry("bad_field", "a payload nested too deeply to be a journal entry's") from None
    if topic_table is not None and entry.table_id != topic_table:
        raise NotAnEntry("wrong_table", f"entry {entry.seq} of table {quoted(entry.table_id)} published under "
                                        f"table {quoted(topic_table)}")
    if written is not None and written != line:
        raise NotAnEntry("bad_field", f"entry {entry.seq} ({safe(entry.kind[:40])}): {_not_as_written(line)}")
    return FloorEntry(entry, line, payload_text)


def as_written(stored: str) -> str:
    """A line read back from the store, as this program writes its entry: before 2026-12-03 the
    floor stored any spelling of an entry whose hash fit (spaces after the separators, say), and
    the table's own line of that entry is the same entry. A stored line that is no entry by today's
    rules is given back as it is (without the JSON space around it)."""
    try:
        return parse_entry(stored, stored=True).entry.to_json_line()[:-1]
    except (NotAnEntry, RecursionError):
        return stored.strip(JSON_SPACE)


def _entry_of(obj: dict[str, Any], stored: bool = False) -> tuple[Entry, str]:
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
        if name == "table_id" and not (TABLE_ID.fullmatch(value) or stored and len(value) <= MAX_ID_CHARS):
            raise NotAnEntry("bad_field", f"table_id {quoted(value[:40])} is not a table id ({TABLE_ID_RULE})")
    for name in _INT_COLUMNS:
        value = obj[name]
        if value is None and name in _OPTIONAL:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _INT64_MAX:
            raise NotAnEntry("bad_field", f"{name} is not a whole number from 0 to {_INT64_MAX}")
    if obj["seq"] < 1:
        raise NotAnEntry("bad_field", "seq is not a whole number from 1")
    if type(obj["schema_version"]) is not int or obj["schema_version"] not in (1, 2):  # true == 1 in Python
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
    except PayloadError:  # the journal's words are a programmer's (dict, float, repr): say it here
        fault = _payload_fault(obj["payload"]) or "its payload is not one the journal stores"
        raise NotAnEntry("bad_field", f"entry {obj['seq']} ({safe(obj['kind'][:40])}): {fault}") from None
    entry = Entry(*(payload if name == "payload" else obj[name] for name in COLUMNS),
                  schema_version=obj["schema_version"])
    return entry, payload_text


def _not_as_written(line: str) -> str:
    """Why ``line``, an entry in every field, is not the line a journal writes for it: a key given
    twice (what the hash covers is the last; a reader that keeps the first would see another
    entry), a key no entry has (which no hash covers), or the same JSON spelled otherwise."""
    seen: list[str] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in items]
        seen.extend(k for k in keys if keys.count(k) > 1)
        return dict(items)

    top = json.loads(line, object_pairs_hook=pairs, parse_float=_Unstorable, parse_constant=_Unstorable)
    if seen:
        return f"key {quoted(seen[0][:40])} is given twice; refused: a reader may take either"
    extra = [k for k in top if k not in (*COLUMNS, "schema_version")]
    if extra:
        return f"key {quoted(extra[0][:40])} is not a journal entry's; refused: no hash covers it"
    return ("not written as a journal writes it (key order, spacing or escapes); refused: the floor stores an entry "
            "only as its journal wrote it")


class _Unstorable:
    """A number JSON allows and the journal never writes (``1.5``, ``1e3``, ``NaN``), kept as its
    text so that a message can show it as written. Neither a text nor a number to any check."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def shown_table(topic_table: str) -> str:
    """A topic's table id as recorded for a dropped message: itself when it is a table id, else
    escaped and cut short (it keys an index, and ``floor status`` prints it)."""
    return topic_table if TABLE_ID.fullmatch(topic_table) else safe(topic_table[:MAX_ID_CHARS // 10])


def _payload_fault(payload: Any) -> str | None:
    """What keeps ``payload`` (as JSON read it) from being a journal payload, in the user's words
    (the first fault, depth first); None when nothing does. Walked without recursion: JSON may nest
    as deep as its reader allows."""
    if not isinstance(payload, dict):
        return f"its payload is not a JSON object (it is {_json_kind(payload)})"
    todo: list[tuple[str, Any]] = [("", payload)]
    while todo:
        path, value = todo.pop()
        if isinstance(value, _Unstorable):
            if value.text.lstrip("-") in ("NaN", "Infinity"):
                return f"{_where(path)} is {value.text}, not a number the journal stores"
            return f"{_where(path)} is a fractional number ({value.text[:40]}); amounts are whole minor units"
        if isinstance(value, str) and not is_unicode_text(value):
            return f"{_where(path)} holds text that is not valid Unicode"
        if isinstance(value, dict):
            if not all(is_unicode_text(key) for key in value):
                return f"a field name in {_where(path) if path else 'the payload'} is not valid Unicode"
            todo.extend(reversed([(_field(path, key), item) for key, item in value.items()]))
        elif isinstance(value, list):
            todo.extend(reversed([(f"{path}[{i}]", item) for i, item in enumerate(value)]))
    return None


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def _where(path: str) -> str:
    return f"payload field {path if len(path) <= 100 else '...' + path[-100:]}"


def _field(path: str, key: str) -> str:
    """``path`` and one more field: ``bets[0].amount``; a name that is not a plain word quoted."""
    if _NAME.fullmatch(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{quoted(key[:40])}]"


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return "a text"
    if isinstance(value, list):
        return "a list"
    return "a number"
