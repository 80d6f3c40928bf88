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

A person closes an alarm with why (``close_by_hand``: ``shoectl floor alarms --close``); the
database role that did is kept in ``closed_by`` (NULL for those the store closed itself).
"""
from __future__ import annotations

from typing import Any

from shoectl_config.text import safe

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


class AlarmNotOpen(ValueError):
    """An alarm to close by hand is not in the store, or is closed already: one line, nothing closed."""


def alarm_rows(conn: Any, table_id: str | None = None, *, closed: bool = False,
               ids: list[int] | None = None) -> list[dict[str, Any]]:
    """The open alarms (with ``closed`` the closed ones too; ``ids``: only those), oldest first,
    for showing: texts escaped (``safe``), times in ISO 8601."""
    rows = conn.execute(
        "SELECT id, table_id, seq, kind, detail, count, first_seen, last_seen, open, closed_at, closed_why, "
        "closed_by FROM floor_alarms WHERE (open OR %s) AND (%s::text IS NULL OR table_id = %s) "
        "AND (%s::bigint[] IS NULL OR id = ANY(%s)) ORDER BY id",
        (closed, table_id, table_id, ids, ids)).fetchall()
    return [{"id": i, "table": safe(t), "seq": s, "kind": k, "detail": safe(d), "count": c,
             "first_seen": f.isoformat(), "last_seen": ls.isoformat(), "open": o,
             "closed_at": ca.isoformat() if ca is not None else None,
             "closed_why": safe(cw) if cw is not None else None, "closed_by": safe(cb) if cb is not None else None}
            for i, t, s, k, d, c, f, ls, o, ca, cw, cb in rows]


def close_by_hand(conn: Any, ids: list[int], why: str) -> list[dict[str, Any]]:
    """Close the open alarms ``ids``, saying ``why``, as the connection's database role; all or
    none (``AlarmNotOpen`` names the first that is missing or closed, and nothing changes). The
    caller commits. Returns the closed alarms as ``alarm_rows`` gives them."""
    wanted = sorted(set(ids))
    found = dict(conn.execute("SELECT id, open FROM floor_alarms WHERE id = ANY(%s) FOR UPDATE",
                              (wanted,)).fetchall())
    for alarm_id in wanted:
        if alarm_id not in found:
            raise AlarmNotOpen(f"no alarm {alarm_id} in the store (shoectl floor alarms lists them)")
        if not found[alarm_id]:
            raise AlarmNotOpen(f"alarm {alarm_id} is closed already (shoectl floor alarms --all says when and why)")
    conn.execute("UPDATE floor_alarms SET open = false, closed_at = clock_timestamp(), closed_why = %s, "
                 "closed_by = session_user WHERE id = ANY(%s)", (why, wanted))
    return alarm_rows(conn, closed=True, ids=wanted)
