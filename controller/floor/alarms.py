"""The store's alarms and dropped-message counts (tables ``floor_alarms``, ``dropped_messages``).

An alarm is keyed while open by ``(table_id, kind, seq)``: raising it again updates its detail
and ``last_seen`` and, when the same thing happened again (``again=True``: a second forged body,
a repeated bad message), its ``count``. A gap alarm closes by itself when the gap is filled and
the chain verifies across it; the others stay open for a person to read, but those raised for the
bodies of a table's new journal before it was recognised (``withdraw_refused``, ``close_gaps``:
closed, with why, by ``controller.floor.new_journal``).

Kinds: ``gap`` (entries missing before ``seq``), ``chain_break`` (entry ``seq`` does not follow
its predecessor's hash), ``bad_hash`` (entry ``seq``'s hash is not its HMAC under the table's
key), ``forgery`` (a second, different body under a stored ``(table_id, seq)``), ``new_journal``
(at ``seq`` 1: the table publishes a new journal under a table id whose journal the store holds;
one alarm for the whole new journal, its ``count`` the entries of it refused:
``controller.floor.store``), ``clock_step`` (entry ``seq`` is the table's ``clock_step``: its wall
clock stepped, and the times of its entries from there on are the stepped clock's; the detail says
which way and how far, as ``shoectl journal replay`` does).
"""
from __future__ import annotations

from typing import Any

GAP, CHAIN_BREAK, BAD_HASH, FORGERY = "gap", "chain_break", "bad_hash", "forgery"
NEW_JOURNAL = "new_journal"
CLOCK_STEP = "clock_step"


def raise_alarm(conn: Any, table_id: str, seq: int | None, kind: str, detail: str, *, again: bool = True,
                keep_detail: bool = False) -> None:
    """Raise the alarm, or count it again on the open one (``keep_detail``: the open alarm keeps
    its detail; ``detail`` is for a new one)."""
    conn.execute(
        "INSERT INTO floor_alarms (table_id, seq, kind, detail) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (table_id, kind, coalesce(seq, 0)) WHERE open DO UPDATE SET detail = CASE WHEN %s "
        "THEN floor_alarms.detail ELSE EXCLUDED.detail END, "
        "last_seen = clock_timestamp(), count = floor_alarms.count + %s",
        (table_id, seq, kind, detail, keep_detail, 1 if again else 0))


def close_gaps_up_to(conn: Any, table_id: str, last_seq: int) -> None:
    """Close the open gap alarms of ``table_id`` at or before ``last_seq`` (the chain now verifies
    through them)."""
    close_gaps(conn, table_id, f"filled: the chain verifies through entry {last_seq}", through=last_seq)


def close_gaps(conn: Any, table_id: str, why: str, *, through: int | None = None) -> None:
    """Close the open gap alarms of ``table_id`` (at or before ``through``, if given), saying ``why``."""
    conn.execute(
        "UPDATE floor_alarms SET open = false, closed_at = clock_timestamp(), closed_why = %s "
        "WHERE table_id = %s AND kind = %s AND open AND (%s::bigint IS NULL OR seq <= %s)",
        (why, table_id, GAP, through, through))


def withdraw_refused(conn: Any, table_id: str, seqs: list[int], kinds: list[str], why: str, *,
                     set_apart_as: str) -> None:
    """Close the open alarms of ``kinds`` at ``seqs`` that no refused body stands behind any more
    but those kept ``set_apart_as`` (the bodies of a table's new journal, recognised after their
    alarms were raised: ``controller.floor.new_journal``), saying ``why``."""
    conn.execute(
        "UPDATE floor_alarms a SET open = false, closed_at = clock_timestamp(), closed_why = %s "
        "WHERE a.table_id = %s AND a.open AND a.kind = ANY(%s) AND a.seq = ANY(%s) AND NOT EXISTS ("
        "SELECT 1 FROM rejected_entries r WHERE r.table_id = a.table_id AND r.seq = a.seq AND r.why <> %s)",
        (why, table_id, kinds, seqs, set_apart_as))


def count_dropped(conn: Any, table_id: str, reason: str, detail: str) -> None:
    """Count a message that was not a journal entry (``table_id`` from its topic, ``""`` if none)."""
    conn.execute(
        "INSERT INTO dropped_messages (table_id, reason, count, last_detail) VALUES (%s, %s, 1, %s) "
        "ON CONFLICT (table_id, reason) DO UPDATE SET count = dropped_messages.count + 1, "
        "last_detail = EXCLUDED.last_detail, last_seen = clock_timestamp()",
        (table_id, reason, detail))
