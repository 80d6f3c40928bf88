"""The incremental chain check of one table in the central store, run in the transaction that
stored a batch (``advance(conn, table_id, hasher, known, refused_now)``).

``chain_positions`` holds the last seq up to which the table's entries are contiguous and
checked, and that entry's hash. Without the table's key, the entry 1 that stands says how hashes
are checked: one that carries its plain SHA-256 has every hash recomputed (``is_plain_sha256``);
otherwise they are checked link by link (and when another body of entry 1 replaces it, as below,
that body decides again). From there, each following stored entry is checked with the
journal's own ``check_row`` (its ``prev_hash`` is the previous entry's hash; with the table's
HMAC key, its hash is recomputed). An entry that fits moves the position on. One that does not:

1. if a body refused earlier for the same key (``rejected_entries``) fits, that body was the
   table's and the stored one a forgery that arrived first: they swap places;
2. else, if the entry names as its predecessor a refused body of the position's own seq that
   fits the chain (a forger's body got there first and had a valid-looking hash), that body
   replaces the position's entry and the check goes on;
3. else the entry is moved out of ``entries`` into ``rejected_entries`` with a ``chain_break``
   or ``bad_hash`` alarm: what does not fit the chain is never kept as the table's entry.

And when the entry after the position is missing, a refused body of it that named a body of the
position not yet received when it came (the same forgery as in 2, the table's entries arriving
in the other order) is taken back once that body has arrived (in the batch that brought it,
refused there as a second body of the position: ``refused_now``): the position's entry is
replaced as in 2, and the refused body stands after it.

Entries beyond a missing one wait in ``entries`` (they are the table's as far as anyone can tell
yet) under an open ``gap`` alarm, which closes once the gap is filled and the chain verifies
across it. ``known`` maps the seqs stored by this batch to their ``FloorEntry`` (no re-parse).
Each body moved out of ``entries`` is returned as a ``SetAside``, so that a caller
counting what it stored can say what the check then set aside.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, NamedTuple

from controller.floor import alarms
from controller.floor.message import FloorEntry, parse_entry
from controller.floor.rows import insert_entry
from controller.journal.chain import GENESIS_HASH, Hasher
from controller.journal.chaincheck import check_row, missing_entries

_PAGE = 1000


class SetAside(NamedTuple):
    """A body the chain check moved out of ``entries`` into ``rejected_entries``."""
    table_id: str
    seq: int
    alarm: str  # the kind of the alarm raised on it
    new: bool  # stored by this batch (else stored before it)


class Advanced(NamedTuple):
    """The table's checked position after ``advance``, and what the check set aside."""
    last_seq: int
    last_hash: str
    set_aside: list[SetAside]


def position(conn: Any, table_id: str) -> tuple[int, str, bool | None]:
    """``(last_seq, last_hash, sha256)`` of ``table_id``'s checked chain, locked for this transaction.
    A position past entry 1 without ``sha256`` (the column added by schema version 4 to a store of
    the first programs, or a table checked with its key so far) has it set from entry 1 first."""
    select = "SELECT last_seq, last_hash, sha256 FROM chain_positions WHERE table_id = %s FOR UPDATE"
    row = conn.execute(select, (table_id,)).fetchone()
    if row is None:
        conn.execute("INSERT INTO chain_positions (table_id, last_seq, last_hash) VALUES (%s, 0, %s) "
                     "ON CONFLICT DO NOTHING", (table_id, GENESIS_HASH))
        row = conn.execute(select, (table_id,)).fetchone()
    last_seq, last_hash, sha256 = row
    if sha256 is None and last_seq >= 1:
        first = conn.execute("SELECT line FROM entries WHERE table_id = %s AND seq = 1", (table_id,)).fetchone()
        if first is not None:
            sha256 = is_plain_sha256(parse_entry(first[0], stored=True))
            conn.execute("UPDATE chain_positions SET sha256 = %s WHERE table_id = %s", (sha256, table_id))
    return last_seq, last_hash, sha256


def is_plain_sha256(first: FloorEntry) -> bool:
    """Whether entry 1's hash is its plain SHA-256: the table keeps a SHA-256 journal, so every hash
    can be recomputed without a key. (An HMAC journal's entry 1 never is; a forger who made it so
    would break entry 2's hash.)"""
    return first.seq == 1 and check_row(first.chain_row(), GENESIS_HASH, Hasher(), first.table_id) is None


def advance(conn: Any, table_id: str, hasher: Hasher | None, known: Mapping[int, FloorEntry],
            refused_now: Collection[int] = ()) -> Advanced:
    """See the module docstring (``hasher``: the table's key, if the collector has it;
    ``refused_now``: the seqs this batch refused a second body at); returns the new position and
    the bodies set aside."""
    last_seq, last_hash, sha256 = position(conn, table_id)
    walk = _Walk(table_id, [], known, hasher if hasher is not None else Hasher() if sha256 else None,
                 keyed=hasher is not None)
    start = last_seq
    next_stored = _stored(conn, table_id, last_seq + 1, known)
    while True:
        moved_from = last_seq
        if next_stored:
            # The lines this batch brought are not read back (known); a gap ends the page.
            rows = conn.execute("SELECT seq, CASE WHEN seq = ANY(%s) THEN NULL ELSE line END FROM entries "
                                "WHERE table_id = %s AND seq > %s ORDER BY seq LIMIT %s",
                                (list(known), table_id, last_seq, _PAGE)).fetchall()
            more, refused = len(rows) == _PAGE, False
            for seq, line in rows:
                if seq != last_seq + 1:
                    more = False
                    break
                entry = known.get(seq) or parse_entry(line, stored=True)
                if seq == 1 and not walk.keyed:
                    walk.take_mode_of(conn, entry)
                fitted = _fit(conn, entry, last_seq, last_hash, walk)
                if fitted is None:
                    refused = True  # what stood there is refused: nothing after it can be checked yet
                    break
                last_seq, last_hash = seq, fitted.entry.hash
            if refused:
                break
            # A full page read and fitted may have more behind it; otherwise seq + 1 is absent.
            next_stored = more and _stored(conn, table_id, last_seq + 1, known)
        elif last_seq in refused_now and (taken_back := _take_back(conn, last_seq, walk)) is not None:
            last_seq, last_hash = taken_back.seq, taken_back.entry.hash
            next_stored = _stored(conn, table_id, last_seq + 1, known)
        if last_seq == moved_from:
            break
    if last_seq != start:
        conn.execute("UPDATE chain_positions SET last_seq = %s, last_hash = %s, updated_at = clock_timestamp() "
                     "WHERE table_id = %s", (last_seq, last_hash, table_id))
        alarms.close_gaps_up_to(conn, table_id, last_seq)
    _alarm_gap(conn, table_id, last_seq)
    return Advanced(last_seq, last_hash, walk.set_aside)


class _Walk:
    """One ``advance``: the table, how its hashes are checked, and what the check sets aside."""

    def __init__(self, table_id: str, set_aside: list[SetAside], known: Mapping[int, FloorEntry],
                 hasher: Hasher | None, *, keyed: bool) -> None:
        self.table_id = table_id
        self.set_aside = set_aside
        self.known = known  # the seqs this batch stored
        self.hasher = hasher
        self.keyed = keyed  # the collector has the table's key: the hasher never changes

    def record(self, entry: FloorEntry, alarm: str) -> None:
        self.set_aside.append(SetAside(entry.table_id, entry.seq, alarm, entry.seq in self.known))

    def take_mode_of(self, conn: Any, first: FloorEntry) -> None:
        """Without the key, entry 1 (the one that stands) says how every hash is checked."""
        sha256 = is_plain_sha256(first)
        self.hasher = Hasher() if sha256 else None
        conn.execute("UPDATE chain_positions SET sha256 = %s WHERE table_id = %s", (sha256, self.table_id))

    def hasher_for(self, seq: int, body: FloorEntry) -> Hasher | None:
        """How ``body`` at ``seq`` would be checked if it stood: entry 1 sets the mode (keyless)."""
        if seq == 1 and not self.keyed:
            return Hasher() if is_plain_sha256(body) else None
        return self.hasher


def refuse_unkeyed(conn: Any, arrived: Sequence[FloorEntry], hasher: Hasher,
                   stored_lines: Callable[[list[FloorEntry]], Mapping[tuple[str, int], str]]) -> list[FloorEntry]:
    """With the table's key, each entry of a batch (``arrived``) has its own hash checked over its
    own ``prev_hash`` (both are in the message) before anything is stored, whatever came before it:
    one that fails (forged without the key, or edited) is never stored, not even to wait after a
    gap, and never keeps the table's own body of its seq out (another body in the same batch is
    then the first): kept in ``rejected_entries`` with a ``bad_hash`` alarm (docs/floor.md: "the
    forged body fails its hash, ``bad_hash``, and is never stored"; a forged entry after a gap
    was stored and read as the table's, a security review). One the store holds already, line for
    line (``stored_lines``, asked for the failing ones alone), is a duplicate, left to the chain
    check. Returns those refused."""
    failing = [(item, reason) for item in arrived
               if (reason := check_row(item.chain_row(), item.entry.prev_hash, hasher, item.table_id)) is not None
               and reason.startswith("hash mismatch")]
    held = stored_lines([item for item, _ in failing]) if failing else {}
    refused = []
    for item, reason in failing:
        if held.get((item.table_id, item.seq)) == item.line:
            continue
        _reject(conn, item, reason)
        alarms.raise_alarm(conn, item.table_id, item.seq, alarms.BAD_HASH, f"entry {item.seq} refused: {reason}")
        refused.append(item)
    return refused


def _stored(conn: Any, table_id: str, seq: int, known: Mapping[int, FloorEntry]) -> bool:
    """Whether entry ``seq`` is stored (a primary-key lookup unless this batch brought it): behind a
    gap, the entries waiting after it are not read again at every batch."""
    if seq in known:
        return True
    return conn.execute("SELECT 1 FROM entries WHERE table_id = %s AND seq = %s", (table_id, seq)).fetchone() is not None


def _fit(conn: Any, entry: FloorEntry, last_seq: int, last_hash: str, walk: _Walk) -> FloorEntry | None:
    """The body that stands at ``last_seq + 1`` once checked (the stored one, or a refused one that
    fits), or None when none fits (the stored one is then moved out, alarmed)."""
    table_id = walk.table_id
    reason = check_row(entry.chain_row(), last_hash, walk.hasher, table_id)
    if reason is None:
        return entry
    for other in _refused(conn, table_id, entry.seq):
        if check_row(other.chain_row(), last_hash, walk.hasher_for(entry.seq, other), table_id) is None:
            _swap(conn, entry, other, f"did not fit the chain ({reason}); entry {entry.seq} as received later fits",
                  walk)
            if entry.seq == 1 and not walk.keyed:
                walk.take_mode_of(conn, other)
            return other
    if last_seq >= 1 and _swap_tip(conn, entry, last_seq, walk):
        return entry  # the tip was replaced by the predecessor this entry names
    kind = alarms.BAD_HASH if reason.startswith("hash mismatch") else alarms.CHAIN_BREAK
    _reject(conn, entry, reason)
    conn.execute("DELETE FROM entries WHERE table_id = %s AND seq = %s", (table_id, entry.seq))
    alarms.raise_alarm(conn, table_id, entry.seq, kind, f"entry {entry.seq} refused: {reason}")
    walk.record(entry, kind)
    return None


def _swap_tip(conn: Any, entry: FloorEntry, last_seq: int, walk: _Walk) -> bool:
    """Replace the checked tip (entry ``last_seq``) by a refused body of it that ``entry`` names as
    its predecessor, when both fit: the chain's own next entry settles which body was the table's.
    Without the key, a new entry 1 brings its own way of checking hashes (the forged one may have
    claimed a plain SHA-256 that the table's HMAC entries can never match)."""
    table_id = walk.table_id
    row = conn.execute("SELECT line FROM entries WHERE table_id = %s AND seq = %s", (table_id, last_seq)).fetchone()
    tip = parse_entry(row[0], stored=True)
    before = GENESIS_HASH if last_seq == 1 else conn.execute(
        "SELECT hash FROM entries WHERE table_id = %s AND seq = %s", (table_id, last_seq - 1)).fetchone()[0]
    for other in _refused(conn, table_id, last_seq):
        hasher = walk.hasher_for(last_seq, other)
        if other.entry.hash == entry.entry.prev_hash and check_row(other.chain_row(), before, hasher, table_id) is None \
                and check_row(entry.chain_row(), other.entry.hash, hasher, table_id) is None:
            _swap(conn, tip, other, f"entry {last_seq + 1} names the other body of entry {last_seq} as its predecessor",
                  walk)
            if last_seq == 1 and not walk.keyed:
                walk.take_mode_of(conn, other)
            conn.execute("UPDATE chain_positions SET last_hash = %s WHERE table_id = %s", (other.entry.hash, table_id))
            return True
    return False


def _take_back(conn: Any, last_seq: int, walk: _Walk) -> FloorEntry | None:
    """With entry ``last_seq + 1`` missing, a refused body of it that named a body of the tip not
    yet received when it came (so it did not fit then) stands once that body has arrived: the tip is
    swapped (``_swap_tip``) and the body taken back from ``rejected_entries``. None if none does."""
    for candidate in _refused(conn, walk.table_id, last_seq + 1):
        if _swap_tip(conn, candidate, last_seq, walk):
            _unrefuse(conn, candidate)
            insert_entry(conn, candidate)
            return candidate
    return None


def _refused(conn: Any, table_id: str, seq: int) -> list[FloorEntry]:
    rows = conn.execute("SELECT line FROM rejected_entries WHERE table_id = %s AND seq = %s ORDER BY id",
                        (table_id, seq)).fetchall()
    return [parse_entry(line, stored=True) for (line,) in rows]


def _reject(conn: Any, entry: FloorEntry, why: str) -> None:
    conn.execute("INSERT INTO rejected_entries (table_id, seq, why, line) VALUES (%s, %s, %s, %s) "
                 "ON CONFLICT (table_id, seq, md5(line)) DO UPDATE SET why = EXCLUDED.why",
                 (entry.table_id, entry.seq, why, entry.line))


def _swap(conn: Any, stored: FloorEntry, other: FloorEntry, why: str, walk: _Walk) -> None:
    """``other`` (a refused body) becomes the entry; ``stored`` is refused, the forgery alarmed."""
    _reject(conn, stored, why)
    _unrefuse(conn, other)
    conn.execute("DELETE FROM entries WHERE table_id = %s AND seq = %s", (stored.table_id, stored.seq))
    insert_entry(conn, other)
    alarms.raise_alarm(conn, stored.table_id, stored.seq, alarms.FORGERY,
                       f"entry {stored.seq}: the body received first was refused: {why}")
    walk.record(stored, alarms.FORGERY)


def _unrefuse(conn: Any, body: FloorEntry) -> None:
    """Take ``body`` out of ``rejected_entries`` (it is about to stand as the table's entry)."""
    # btrim: a body refused before lines were trimmed may still end in CR; it is the same body
    conn.execute("DELETE FROM rejected_entries WHERE table_id = %s AND seq = %s AND btrim(line, E' \\t\\r\\n') = %s",
                 (body.table_id, body.seq, body.line))


def _alarm_gap(conn: Any, table_id: str, last_seq: int) -> None:
    """Raise (or bring up to date) the gap alarm after ``last_seq``: the first run of missing
    entries, and how many more are missing among the entries that wait after it, so that a
    floorperson sees the whole loss, not its first part."""
    first, last, waiting = conn.execute("SELECT min(seq), max(seq), count(*) FROM entries WHERE table_id = %s "
                                        "AND seq > %s", (table_id, last_seq)).fetchone()
    if first is None:
        return
    detail = f"{missing_entries(last_seq + 1, first - 1)} (entry {first} arrived)"
    more = (last - first + 1) - waiting
    if more:
        detail += (f"; {more} more {'entry is' if more == 1 else 'entries are'} missing between it and "
                   f"entry {last}, the last that arrived")
    alarms.raise_alarm(conn, table_id, last_seq + 1, alarms.GAP, detail, again=False)
