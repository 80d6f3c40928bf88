"""Journal entries: the ``Entry`` read back, the ``Record`` to append, timestamps, and the
validation of an entry's fields before any database work (``prepare``)."""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from controller.journal.chain import encode_payload_parts
from controller.journal.errors import NotAJournalError, NotAnObjectPayload, PayloadError
from shoectl_config.text import is_unicode_text

_INT64_MAX = 2**63 - 1

COLUMNS = ("seq", "ts", "kind", "table_id", "shoe_id", "round_no", "device_serial", "device_epoch",
           "device_counter", "operator", "payload", "prev_hash", "hash")

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(timezone.utc)


def format_ts(dt: datetime) -> str:
    """UTC ISO-8601 with microseconds and a ``Z``: ``2025-01-31T20:15:00.123456Z``."""
    if not isinstance(dt, datetime):
        raise TypeError(f"the journal clock must return a datetime, got {type(dt).__name__}")
    if dt.tzinfo is timezone.utc:  # the default clock's: no conversion needed
        return dt.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise ValueError("the journal clock returned a naive datetime; it must be timezone-aware (UTC)")
    return dt.astimezone(timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


# What ``format_ts`` writes, and nothing else ``fromisoformat`` takes: another offset (+0500), a
# space or comma for the separators, fewer digits of the second (a review of clocks: such a time
# was read as UTC, hours off). Dates that do not exist are ``fromisoformat``'s to refuse.
TIMESTAMP_SHAPE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z").fullmatch


def parse_ts(ts: str) -> datetime:
    """A journal timestamp (``format_ts``'s form) as an aware UTC datetime; ValueError for any other."""
    if not (isinstance(ts, str) and TIMESTAMP_SHAPE(ts)):
        raise ValueError(f"not a journal timestamp: {ts!r}")
    return datetime.fromisoformat(ts[:-1]).replace(tzinfo=timezone.utc)


@dataclass(frozen=True, slots=True)
class Entry:
    """One journal entry: every column, with ``payload`` decoded (a new dict for each read), and
    ``schema_version``: the schema whose words the entry was written in (1 for the entries of a
    version-1 journal, also once migrated; ``controller.journal.vocabulary``)."""

    seq: int
    ts: str
    kind: str
    table_id: str
    shoe_id: str | None
    round_no: int | None
    device_serial: str | None
    device_epoch: int | None
    device_counter: int | None
    operator: str | None
    payload: dict[str, Any]
    prev_hash: str
    hash: str
    schema_version: int = 2

    @property
    def time(self) -> datetime:
        """``ts`` as an aware UTC datetime."""
        return parse_ts(self.ts)

    @property
    def is_device_event(self) -> bool:
        return self.device_counter is not None

    def to_json(self) -> dict[str, Any]:
        """All columns, in schema order (``payload`` as an object, as stored), then
        ``schema_version``: the export format."""
        out = {name: getattr(self, name) for name in COLUMNS}
        out["schema_version"] = self.schema_version
        return out

    def to_json_line(self) -> str:
        """``to_json()`` as one line of compact JSON (UTF-8 text unescaped), with its newline: the
        line ``shoectl journal export`` and ``shoectl run --json`` write for this entry."""
        return json.dumps(self.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n"


@dataclass(frozen=True, slots=True)
class Record:
    """An entry to append with ``append_batch``; the fields are ``append``'s arguments."""

    kind: str
    payload: dict[str, Any]
    shoe: str | None = None
    round: int | None = None
    device_serial: str | None = None
    epoch: int | None = None
    counter: int | None = None
    operator: str | None = None


@dataclass(frozen=True, slots=True)
class PreparedEntry:
    """A validated entry to append: ``payload`` as it reads back, ``payload_text`` its canonical
    JSON (stored), ``payload_bytes`` that text's UTF-8 (hashed)."""

    kind: str
    payload: dict[str, Any]
    payload_text: str
    payload_bytes: bytes
    shoe: str | None
    round: int | None
    device_serial: str | None
    epoch: int | None
    counter: int | None
    operator: str | None


def row_to_entry(row: tuple[Any, ...], path: Path | str, schema_version: int = 2) -> Entry:
    """The Entry of a row of every column in ``COLUMNS`` order, written under ``schema_version``."""
    require_row_types(row, path)
    try:
        payload = json.loads(row[10])
    except (TypeError, ValueError, RecursionError):
        raise NotAJournalError(f"{path}: entry {row[0]} has a payload that is not JSON, or is nested too deep; "
                               "run `shoectl journal verify`") from None
    if type(payload) is not dict:  # the writer stores objects only; every reader of a kind relies on it
        raise NotAnObjectPayload(f"{path}: entry {row[0]} has a payload that is not a JSON object; "
                               "run `shoectl journal verify`")
    return Entry(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9], payload, row[11], row[12],
                 schema_version)


def require_row_types(row: tuple[Any, ...], path: Path | str) -> None:
    """NotAJournalError unless the row's seq, kind and hashes have their types: only a reader that
    skipped the check (--no-verify) meets one that does not (the check names the column)."""
    if not (type(row[0]) is int and type(row[2]) is str and type(row[11]) is str and type(row[12]) is str):
        seq = f"seq {row[0]}" if type(row[0]) is int else "its seq not a whole number"
        raise NotAJournalError(f"{path}: an entry ({seq}) holds a column of the wrong type; run "
                               "`shoectl journal verify`")


def check_str(name: str, value: Any, *, optional: bool) -> None:
    if value is None:
        if optional:
            return
        raise PayloadError(f"{name} is required")
    if not isinstance(value, str):
        raise PayloadError(f"{name} must be a str, got {type(value).__name__} {value!r}")
    if not value:
        raise PayloadError(f"{name} must not be empty")
    if not is_unicode_text(value):
        raise PayloadError(f"{name} is not valid Unicode text")


def _check_int(name: str, value: Any) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise PayloadError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if not 0 <= value <= _INT64_MAX:
        raise PayloadError(f"{name} must be between 0 and 2**63-1, got {value}")


def prepare(kind: str, payload: dict[str, Any], *, shoe: str | None = None, round: int | None = None,
            device_serial: str | None = None, epoch: int | None = None, counter: int | None = None,
            operator: str | None = None) -> PreparedEntry:
    """Validate an entry's fields before any database work (PayloadError on a bad one)."""
    check_str("kind", kind, optional=False)
    check_str("shoe", shoe, optional=True)
    _check_int("round", round)
    check_str("device_serial", device_serial, optional=True)
    _check_int("epoch", epoch)
    _check_int("counter", counter)
    check_str("operator", operator, optional=True)
    if counter is not None and (device_serial is None or epoch is None):
        raise PayloadError("a device event needs device_serial, epoch and counter together")
    if epoch is not None and device_serial is None:
        raise PayloadError("epoch given without device_serial")
    text, data, value = encode_payload_parts(payload)
    return PreparedEntry(kind, value, text, data, shoe, round, device_serial, epoch, counter, operator)


def record_fields(item: Record | Mapping[str, Any], i: int) -> dict[str, Any]:
    """The fields of batch item ``i`` (a Record or a mapping of its fields) for ``prepare``;
    PayloadError for anything else."""
    if isinstance(item, Record):
        return {name: getattr(item, name) for name in Record.__slots__}  # type: ignore[attr-defined]
    if isinstance(item, Mapping):
        unknown = set(item) - set(Record.__slots__)  # type: ignore[attr-defined]
        if unknown:
            raise PayloadError(f"batch item {i}: unknown field(s) {sorted(unknown)}")
        if "kind" not in item or "payload" not in item:
            raise PayloadError(f"batch item {i}: kind and payload are required")
        return dict(item)
    raise PayloadError(f"batch item {i}: expected a Record or a mapping, got {type(item).__name__}")
