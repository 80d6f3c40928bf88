"""An entry as a row of the store's ``entries`` table, both ways: ``entry_values`` (the columns
written, in ``ENTRY_COLUMNS`` order), ``insert_entry`` (one row) and ``entries_of`` (the rows
read back as the journal's ``Entry``, from the exact line that was received)."""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from controller.floor.message import FloorEntry, parse_entry
from controller.journal.entry import Entry, parse_ts

ENTRY_COLUMNS = ("table_id", "seq", "ts", "ts_at", "kind", "shoe_id", "round_no", "device_serial", "device_epoch",
                 "device_counter", "operator", "payload", "prev_hash", "hash", "schema_version", "line")
_NUL_ESCAPE = "\\u0000"  # jsonb cannot hold it; the line keeps the payload whole


def entry_values(item: FloorEntry) -> tuple[Any, ...]:
    """The ``ENTRY_COLUMNS`` of ``item`` (the payload as JSON text, for a ``jsonb`` column)."""
    e = item.entry
    payload = None if _NUL_ESCAPE in item.payload_text else item.payload_text
    return (e.table_id, e.seq, e.ts, parse_ts(e.ts), e.kind, e.shoe_id, e.round_no, e.device_serial, e.device_epoch,
            e.device_counter, e.operator, payload, e.prev_hash, e.hash, e.schema_version, item.line)


def insert_entry(conn: Any, item: FloorEntry) -> None:
    conn.execute(f"INSERT INTO entries ({', '.join(ENTRY_COLUMNS)}) VALUES "
                 f"({', '.join(['%s'] * len(ENTRY_COLUMNS))})", entry_values(item))


def entries_of(lines: Iterable[tuple[str]]) -> Iterator[Entry]:
    """The ``Entry`` of each row ``(line,)``, exactly as the table's journal holds it."""
    for (line,) in lines:
        yield parse_entry(line, stored=True).entry
