"""Reading the central store: ``tables``, ``verify_table`` (the whole chain of a table, with the
journal's own ``ChainCheck``), ``table_entries`` (a table's entries as the journal's ``Entry``,
for ``controller.journal.replay``: all, or what one shoe's replay reads) and ``table_status`` (one
line's worth per table).

Every reader runs in one read-only transaction of its own connection, so what it reports is one
consistent state of the store. The texts they return for showing (table and shoe ids, alarms' and
dropped messages' details) have their control characters escaped (``shoectl_config.text.safe``):
entries are checked on arrival, but a store written by an older version may hold a table id
such as ``T1\x1b[2J``, and what the floor prints must never drive the terminal.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, time, timedelta, timezone, tzinfo
from typing import Any

from controller.floor.alarms import BAD_HASH, CHAIN_BREAK, GAP, alarm_rows
from controller.floor.chain import is_plain_sha256
from controller.floor.message import parse_entry
from controller.floor.rows import entries_of
from controller.journal import kinds
from controller.journal.chain import Hasher
from controller.journal.chaincheck import ChainCheck, missing_entries
from controller.journal.entry import Entry
from controller.journal.replay import READ_FROM_EVERY_SHOE
from shoectl_config.numbers import whole_number_of
from shoectl_config.text import safe

_FETCH = 2000
_STATE_TAIL = 50  # the latest entries, enough for the record that set the table's state


@dataclass(frozen=True)
class TableVerdict:
    table_id: str
    entries: int
    last_seq: int
    last_hash: str
    first_bad_seq: int | None
    reason: str | None
    hashes_checked: bool

    @property
    def ok(self) -> bool:
        return self.reason is None

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table_id, "ok": self.ok, "entries": self.entries, "last_seq": self.last_seq,
                "last_hash": self.last_hash, "first_bad_seq": self.first_bad_seq, "reason": self.reason,
                "hashes_checked": self.hashes_checked}


def tables(conn: Any) -> list[str]:
    """Every table the store knows of: with entries, a chain position, an alarm or a dropped message."""
    rows = conn.execute("SELECT table_id FROM chain_positions UNION SELECT table_id FROM floor_alarms "
                        "UNION SELECT table_id FROM dropped_messages WHERE table_id <> '' ORDER BY 1").fetchall()
    return [r[0] for r in rows]


def _lines(conn: Any, table_id: str, shoe: str | None = None) -> Iterator[tuple[str]]:
    with conn.cursor(name="floor_lines") as cur:
        cur.itersize = _FETCH
        if shoe is None:
            cur.execute("SELECT line FROM entries WHERE table_id = %s ORDER BY seq", (table_id,))
        else:  # what replay.entries_needed(shoe) keeps, chosen by the server
            cur.execute("SELECT line FROM entries WHERE table_id = %s AND (shoe_id = %s OR shoe_id IS NULL "
                        "OR kind = ANY(%s)) ORDER BY seq", (table_id, shoe, sorted(READ_FROM_EVERY_SHOE)))
        yield from cur


def verify_table(conn: Any, table_id: str, hasher: Hasher | None) -> TableVerdict:
    """Check ``table_id``'s whole chain as stored, from entry 1: contiguous seqs, every ``prev_hash``
    link, every hash when ``hasher`` holds the table's key or the table keeps a SHA-256 journal
    (``controller.floor.chain.is_plain_sha256``)."""
    check = ChainCheck(table_id, hasher)
    count = 0
    reason = None
    for (line,) in _lines(conn, table_id):
        entry = parse_entry(line, stored=True)
        if count == 0 and hasher is None and is_plain_sha256(entry):
            check.hasher = hasher = Hasher()
        count += 1
        expected = check.last_seq + 1
        if not check.feed(entry.chain_row()):
            reason = check.reason
            if entry.seq > expected:  # a gap: the journal's own words ("deleted?") fit a file, not a store
                reason = _gap_in_store(conn, table_id, expected, entry.seq)
            break
    first_bad = check.first_bad_seq
    if reason is None:  # the last entries the store checked its chain through, gone since (all of them, maybe)
        if (through := checked_through(conn, table_id)) > check.last_seq:
            first_bad = check.last_seq + 1
            reason = (f"{missing_entries(first_bad, through)} from the store, which had checked its chain through "
                      f"entry {through}: deleted from the store?")
    return TableVerdict(safe(table_id), count, check.last_seq, check.last_hash, first_bad,
                        None if reason is None else safe(reason), hasher is not None)


def checked_through(conn: Any, table_id: str) -> int:
    """The seq through which the store checked ``table_id``'s chain (its ``chain_positions`` row;
    0 without one): every entry up to it was stored."""
    row = conn.execute("SELECT last_seq FROM chain_positions WHERE table_id = %s", (table_id,)).fetchone()
    return row[0] if row else 0


def _gap_in_store(conn: Any, table_id: str, first: int, arrived: int) -> str:
    """Why the store lacks entries ``first`` to ``arrived - 1`` of ``table_id`` while it holds
    ``arrived``: a body of one of them arrived and was refused as not following the chain (kept in
    ``rejected_entries`` under an open ``bad_hash`` or ``chain_break`` alarm: an edited or forged
    entry), or they wait under an open ``gap`` alarm until the gap is filled (a ``--share`` member
    down holds its share; a feed's outage), or, with neither, they were deleted from the store. (A
    second body of a stored entry, a forgery, and a new journal's bodies are kept aside too: they
    say nothing of why the table's own is not there.)"""
    missing = f"{missing_entries(first, arrived - 1)} from the store (entry {arrived} is stored)"
    # Only a refusal the store still waits behind: once the chain was checked through an entry (the
    # table's own body stored after the refused one), what is missing there was deleted since.
    refused = conn.execute(
        "SELECT a.seq, a.id, a.kind FROM floor_alarms a WHERE a.table_id = %s AND a.open AND a.kind = ANY(%s) "
        "AND a.seq >= %s AND a.seq < %s AND a.seq > coalesce((SELECT last_seq FROM chain_positions p "
        "WHERE p.table_id = a.table_id), 0) AND EXISTS (SELECT 1 FROM rejected_entries r "
        "WHERE r.table_id = a.table_id AND r.seq = a.seq) ORDER BY a.seq, a.id LIMIT 1",
        (table_id, [BAD_HASH, CHAIN_BREAK], first, arrived)).fetchone()
    if refused is not None:
        seq, alarm, kind = refused
        return (f"{missing}: a body of entry {seq} arrived and was refused, kept aside ({kind} alarm {alarm} is "
                "open): an edited or forged entry, or one of another journal, or of an earlier copy of this one "
                "written on (docs/deployment.md, \"Restoring a table from a copy\"); the table's own is in its "
                "journal (shoectl floor backfill)")
    row = conn.execute("SELECT id FROM floor_alarms WHERE table_id = %s AND kind = %s AND open AND seq = %s",
                       (table_id, GAP, first)).fetchone()
    if row is not None:
        return (f"{missing}: not arrived, gap alarm {row[0]} is open (a --share member down holds them until it "
                "connects again; a broker that lost them never sends them: shoectl floor backfill takes them from "
                "the journal)")
    return f"{missing}, and no open gap alarm stands for them: deleted from the store?"


def end_problem(conn: Any, verdict: TableVerdict, seq: int, hash_: str) -> str | None:
    """Why the store does not hold a table's journal up to the journal's end ``seq`` (its last
    entry) with hash ``hash_``, as ``shoectl journal verify`` prints them where the journal is; None
    when it does. A store whose chain failed is said by its verdict. The chain check alone cannot
    tell a store that lacks a journal's last entries: nothing after them opens a gap."""
    if not verdict.ok:
        return None
    if verdict.last_seq < seq:
        return (f"the store ends at entry {verdict.last_seq}, the journal at entry {seq}: "
                f"{missing_entries(verdict.last_seq + 1, seq)} (shoectl floor backfill takes them from the journal)")
    if verdict.last_seq == seq:
        stored = verdict.last_hash
    else:
        row = conn.execute("SELECT hash FROM entries WHERE table_id = %s AND seq = %s", (verdict.table_id, seq)).fetchone()
        stored = row[0] if row else None
    if stored != hash_:
        return f"entry {seq} is stored with another hash ({stored}) than the journal's ({hash_}): another journal"
    return None


def table_entries(conn: Any, table_id: str, shoe: str | None = None) -> Iterator[Entry]:
    """``table_id``'s stored entries in seq order, each exactly as the table's journal holds it;
    with ``shoe``, only those a replay of that shoe reads (``replay.entries_needed``)."""
    return entries_of(_lines(conn, table_id, shoe))


def state_entries(conn: Any, table_id: str) -> list[Entry]:
    """The entries that say the table's state now, in seq order: its latest ones, and every fault
    and fault cleared since it last resumed play (a fault may hold the table for long). Fed to the
    scoreboard's ``TableView`` by ``floor status``, so that both name the state alike."""
    rows = conn.execute(
        "SELECT line FROM (SELECT seq, line FROM entries WHERE table_id = %(t)s ORDER BY seq DESC LIMIT %(n)s) tail "
        "UNION SELECT line FROM entries WHERE table_id = %(t)s AND kind = ANY(%(faults)s) AND seq > coalesce("
        "(SELECT max(seq) FROM entries WHERE table_id = %(t)s AND kind = %(resumed)s), 0)",
        {"t": table_id, "n": _STATE_TAIL, "faults": [kinds.FAULT, kinds.FAULT_CLEARED], "resumed": kinds.RESUMED},
    ).fetchall()
    return sorted(entries_of(rows), key=lambda e: e.seq)


def gaming_day_start(now: datetime, starts_at: time, zone: tzinfo | None = None) -> datetime:
    """The start of the gaming day ``now`` (aware) falls in: the latest instant not after ``now``
    at which a gaming day starts on the wall clock of ``zone`` (None: the machine's zone, instant by
    instant as its C library says it, ``TZ`` honoured: daylight saving followed), given at that
    zone's offset of the moment. A casino's gaming day runs from its own hour, in its own time zone, not from midnight UTC.

    The day of date D starts at the first instant whose wall time is D at ``starts_at`` or later:
    a start time that occurs twice (the clocks go back over it) starts the day at its first
    occurrence, and its second starts no other; a start time that does not exist (the clocks go
    forward over it) starts the day when the clocks go forward (02:30 on the day clocks go from
    02:00 to 03:00: at 03:00). Instants are compared in UTC (Python compares two times of one zone
    by their wall clocks, which repeat)."""
    moment = now.astimezone(timezone.utc)
    day = _wall(moment, zone).date()
    start = _first_at_or_after(datetime.combine(day, starts_at), zone)
    if start > moment:
        start = _first_at_or_after(datetime.combine(day - timedelta(days=1), starts_at), zone)
    local = start.astimezone(zone) if zone is not None else start.astimezone()
    # at a fixed offset: a time of the repeated hour in a zone compares unequal to its own instant
    return local.replace(tzinfo=timezone(local.utcoffset(), local.tzname()))  # type: ignore[arg-type]


_ZONE_REACH = timedelta(hours=15)  # UTC offsets run from -12:00 to +14:00


def _wall(moment: datetime, zone: tzinfo | None) -> datetime:
    """The wall clock (naive) of ``zone`` at the instant ``moment``."""
    return (moment.astimezone(zone) if zone is not None else moment.astimezone()).replace(tzinfo=None)


def _offset(moment: datetime, zone: tzinfo | None) -> timedelta:
    return _wall(moment, zone) - moment.replace(tzinfo=None)


def _first_at_or_after(wall: datetime, zone: tzinfo | None) -> datetime:
    """The first instant (UTC) at which the wall clock of ``zone`` shows ``wall`` or later. One
    change of offset at most is looked for within 15 hours either side (a zone changes its offset
    a few times a year)."""
    as_utc = wall.replace(tzinfo=timezone.utc)
    lo, hi = as_utc - _ZONE_REACH, as_utc + _ZONE_REACH
    before, after = _offset(lo, zone), _offset(hi, zone)
    if before == after:
        return as_utc - before
    low, high = int(lo.timestamp()), int(hi.timestamp())  # offsets change on whole seconds
    while high - low > 1:  # the change: the first second with the later offset
        mid = (low + high) // 2
        if _offset(datetime.fromtimestamp(mid, timezone.utc), zone) == before:
            low = mid
        else:
            high = mid
    change = datetime.fromtimestamp(high, timezone.utc)
    # the wall time under either offset, where that offset is the one in force: both when the
    # clocks went back over it, neither when they went forward over it (then: the change)
    shown = [m for m in (as_utc - before, as_utc - after) if _wall(m, zone) == wall]
    return min(shown) if shown else change


def gaming_day_end(day_start: datetime, starts_at: time, zone: tzinfo | None = None) -> datetime:
    """The start of the gaming day after the one that starts at ``day_start`` (a day is 23 to 25
    hours long: 36 hours on falls in the next one)."""
    return gaming_day_start(day_start + timedelta(hours=36), starts_at, zone)


_LONGEST_MS = 86_400_000 * 999_999_999  # timedelta's longest, in ms: a longer step is as long


def _within(at: datetime, start: datetime, end: datetime, ms: int) -> bool:
    """Whether ``at`` falls from ``ms`` milliseconds before ``start`` to before ``ms`` after ``end``
    (by the distances, not by moving the bounds: a step of millennia would leave datetime's range)."""
    size = timedelta(milliseconds=min(ms, _LONGEST_MS))  # exact, unlike a float of milliseconds
    return start - at <= size and at - end < size


def table_status(conn: Any, table_id: str, day_start: datetime, day_end: datetime) -> dict[str, Any]:
    """What ``floor status`` shows of a table (see docs/floor.md) but its state (``state_entries``):
    rounds counted from ``day_start`` to before ``day_end`` (the journal's times: a table whose clock
    runs ahead would count rounds of a day still to come otherwise, a review of clocks), and the
    clock steps journaled within their size of the day (``rounds_today_clock_steps``: a round near
    the day's start or end may be counted in the other day); of the last entry (highest seq) both its delay (journal
    ``ts`` to store commit: how late it arrived) and its age (store commit to now: a feed or a
    collector that stopped shows as an age that grows while the delay stays)."""
    last = conn.execute(
        "SELECT seq, ts, shoe_id, round_no, extract(epoch FROM stored_at - ts_at), "
        "extract(epoch FROM clock_timestamp() - stored_at) FROM entries WHERE table_id = %s "
        "ORDER BY seq DESC LIMIT 1", (table_id,)).fetchone()
    shoe = conn.execute("SELECT shoe_id FROM entries WHERE table_id = %s AND shoe_id IS NOT NULL "
                        "ORDER BY seq DESC LIMIT 1", (table_id,)).fetchone()
    # the round in play or the last one of the shoe (0 before its first), as the feed's status and
    # the scoreboard say it: the last round begun. Not the last entry with a round: the last entry
    # while betting has no round of its own, and an edge record, journaled once its figures are
    # computed, may come after the next round's start and names the round it follows.
    numbered = conn.execute("SELECT round_no, shoe_id FROM entries WHERE table_id = %s AND kind = %s "
                            "ORDER BY seq DESC LIMIT 1", (table_id, kinds.ROUND_START)).fetchone()
    rounds = conn.execute("SELECT count(*) FROM entries WHERE table_id = %s AND kind = %s AND ts_at >= %s "
                          "AND ts_at < %s AND coalesce(payload->>'kind', '') <> 'void'",
                          (table_id, kinds.ROUND_RESULT, day_start, day_end)).fetchone()[0]
    open_alarms = conn.execute("SELECT kind, count(*) FROM floor_alarms WHERE table_id = %s AND open GROUP BY kind "
                               "ORDER BY kind", (table_id,)).fetchall()
    dropped = conn.execute("SELECT coalesce(sum(count), 0) FROM dropped_messages WHERE table_id = %s",
                           (table_id,)).fetchone()[0]
    # The table's last clock step: the delay is measured from the journal's time, a stepped clock's
    # after it (a review of clocks: an entry stored in 37 ms read as an hour late).
    step = conn.execute("SELECT seq, payload->>'step_ms' FROM entries WHERE table_id = %s AND kind = %s "
                        "ORDER BY seq DESC LIMIT 1", (table_id, kinds.CLOCK_STEP)).fetchone()
    step_ms = whole_number_of(step[1]) if step else None  # (a forged payload's text is no number: none)
    # The steps that may have moved a round across the day's start or end: journaled within their
    # own size of the day (a review of clocks: 12 rounds dealt after a step back an hour, minutes
    # after the day's start, were counted in the day before without a word).
    near = conn.execute("SELECT seq, payload->>'step_ms', ts_at FROM entries WHERE table_id = %s AND kind = %s "
                        "ORDER BY seq", (table_id, kinds.CLOCK_STEP)).fetchall()  # (a journal holds few)
    moved = [{"seq": seq, "step_ms": ms} for seq, ms, at in ((seq, whole_number_of(ms), at) for seq, ms, at in near)
             if ms is not None and _within(at, day_start, day_end, abs(ms))]
    return {
        "table": safe(table_id),
        "last_seq": last[0] if last else 0,
        "checked_seq": checked_through(conn, table_id),
        "last_entry_ts": last[1] if last else None,
        "shoe": safe(shoe[0]) if shoe else None,
        "round": (numbered[0] if numbered and shoe and numbered[1] == shoe[0] else 0) if last else None,
        "rounds_today": rounds,
        "rounds_today_clock_steps": moved,
        "open_alarms": dict(open_alarms),
        "last_delay_seconds": round(float(last[4]), 3) if last else None,
        "last_stored_age_seconds": round(float(last[5]), 3) if last else None,
        "dropped_messages": int(dropped),
        "last_clock_step": {"seq": step[0], "step_ms": step_ms} if step_ms is not None else None,
    }


def dropped_counts(conn: Any) -> list[dict[str, Any]]:
    """Every count of dropped messages: ``{"table", "reason", "count", "last_detail", "last_seen"}``."""
    rows = conn.execute("SELECT table_id, reason, count, last_detail, last_seen FROM dropped_messages "
                        "ORDER BY table_id, reason").fetchall()
    return [{"table": safe(t) or None, "reason": r, "count": c, "last_detail": safe(d), "last_seen": s.isoformat()}
            for t, r, c, d, s in rows]


_STATUS_ALARM_KEYS = ("table", "seq", "kind", "detail", "count", "first_seen")  # `floor status --json`'s


def open_alarms(conn: Any, table_id: str | None = None) -> list[dict[str, Any]]:
    """The open alarms as ``floor status`` gives them (``alarms.alarm_rows``, fewer keys)."""
    return [{key: row[key] for key in _STATUS_ALARM_KEYS} for row in alarm_rows(conn, table_id)]
