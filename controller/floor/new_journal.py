"""A new journal of a known table (docs/floor.md, "A table's new journal"): which entries of a
batch belong to it, and the bodies received before that are now known to (``recognise(conn,
table_id, items, last_seq)``, run by ``controller.floor.store`` in the batch's transaction, with
the table's chain position locked, before anything of the batch is stored).

The store keeps one journal per table id. A table started afresh under the same id publishes
another chain from seq 1. A body belongs to such a new journal when its chain reaches a **new
entry 1** through ``prev_hash`` links, entry by entry:

- a new entry 1 differs from the stored entry 1 while the stored chain is checked through entry 2
  at least (entry 2 names the stored entry 1, which can then never be replaced: the other body is
  not the table's own entry 1 arriving late, which the rule of second bodies and
  ``controller.floor.chain`` settle), and names the genesis hash;
- a body of entry ``n`` > 1 belongs to it when its ``prev_hash`` is the hash of a body of entry
  ``n - 1`` that does.

That is a property of the bodies, not of the order they come in: the chain from a new entry 1
differs from the stored one from entry 1 on, so it never takes an entry of the stored chain, and a
second body naming the stored entry ``n - 1`` (a forgery of one entry) stays a ``forgery``. Entries
of a table come in any order (two ``--share`` collectors committing in any order, a publisher
that reorders), so a body may arrive before the one it names. It is then taken for what it looks
like: a second body (``forgery``), an entry that does not fit the chain (``chain_break``), or an
entry stored after a gap, waiting (``gap``). This module keeps the store closed under the rule
above at the end of every transaction: when a body is recognised, every body the store holds that
names it (refused, or stored beyond the checked position, never a checked entry) is recognised
too, and so on along the chain. Whatever the order, once the new journal has arrived the store is
the one its in-order arrival makes:

- each body of the new journal is in ``rejected_entries`` with ``NEW_JOURNAL_WHY``, counted ONCE
  on the table's one ``new_journal`` alarm (raised on entry 1, in words, when a new entry 1 first
  comes; a further journal's entry 1 gives the open alarm its words; a body that comes again, a
  feed restarted, counts nowhere), and none is in ``entries``; the stored journal's own rows are
  unchanged;
- a body stored beyond the checked position and now recognised leaves ``entries``; the first
  second body refused at its seq (refused only because the new journal's body held the seq: the
  table's own entry, say, that came after it) is stored in its place, and the chain check decides
  it as any stored entry;
- an alarm raised for recognised bodies alone is withdrawn, closed with a ``closed_why`` that
  says so: a ``forgery``, ``chain_break`` or ``bad_hash`` at a seq where no other refused body
  remains, and the ``gap`` that waited for entries of which none remains beyond the position. An
  alarm that still has another body behind it stays open. A forger gains nothing: a body is
  recognised only on a chain from a new entry 1, and every such body counts on the open
  ``new_journal`` alarm.

Two collectors never decide about one table at once: the caller holds the table's chain position
row (``SELECT ... FOR UPDATE``, ``controller.floor.chain.position``) for the transaction, and each
statement here (READ COMMITTED) sees what the other committed before it.
"""
from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from controller.floor import alarms
from controller.floor.message import JSON_SPACE, FloorEntry, as_written, parse_entry
from controller.floor.rows import insert_entry
from controller.journal.chain import GENESIS_HASH

NEW_JOURNAL_WHY = "an entry of a new journal of the table: the store keeps one journal per table id"
SECOND_BODY_WHY = "a second body under a stored (table_id, seq)"  # the store's step 3 (store.py)
_WITHDRAWN = ("withdrawn: raised for an entry of a new journal of the table, recognised later (its new_journal "
              "alarm counts it)")
_GAP_WITHDRAWN = ("withdrawn: the entries that waited after the gap were a new journal's, recognised later "
                  "(its new_journal alarm counts them)")
_REFUSED_KINDS = [alarms.FORGERY, alarms.CHAIN_BREAK, alarms.BAD_HASH]  # raised for a refused body at its seq


@dataclass
class Recognised:
    """What ``recognise`` found: ``apart``, the batch's entries of a new journal (never to be
    inserted; each refused and counted); ``said``, the ``new_journal`` alarms raised now, in words;
    ``earlier``, bodies received by earlier batches recognised now (moved under the alarm)."""
    apart: list[FloorEntry] = field(default_factory=list)
    said: list[str] = field(default_factory=list)
    earlier: int = 0


@dataclass(frozen=True)
class _Body:
    """A body the store already holds, not (yet) known as a new journal's."""
    seq: int
    hash: str
    line: str
    rejected_id: int | None  # its row in ``rejected_entries``; None: in ``entries``, beyond the checked position


def recognise(conn: Any, table_id: str, items: list[FloorEntry], last_seq: int) -> Recognised:
    """The new journal's entries among ``items`` (all ``table_id``'s), refused and counted, and the
    store's bodies recognised with them (module docstring). ``last_seq``: the table's checked
    position, read under the table's lock; nothing at or before it is ever touched."""
    firsts = [line for (line,) in conn.execute(
        "SELECT line FROM rejected_entries WHERE table_id = %s AND seq = 1 AND why = %s",
        (table_id, NEW_JOURNAL_WHY)).fetchall()]
    if not firsts and not any(i.seq == 1 for i in items):
        return Recognised()  # no new journal known, none starting: the common case costs one lookup
    if last_seq < 2:
        return Recognised()  # no stored entry 1 confirmed by its entry 2: a second body is the chain check's
    stored_first = as_written(conn.execute("SELECT line FROM entries WHERE table_id = %s AND seq = 1",
                                           (table_id,)).fetchone()[0])
    walk = _Walk(conn, table_id, last_seq, json.loads(stored_first)["ts"])
    walk.add_known(1, {json.loads(line)["hash"] for line in firsts})
    if firsts:  # else nothing before this batch is known as a new journal's
        walk.load_known(sorted({i.seq - 1 for i in items if i.seq > 2}))
    waiting: dict[int, list[FloorEntry]] = {}
    for item in sorted(items, key=lambda i: i.seq):
        entry = item.entry
        if item.seq == 1:
            ours = item.line != stored_first and entry.prev_hash == GENESIS_HASH
        else:
            ours = entry.prev_hash in walk.known.get(item.seq - 1, ())
        if ours:
            walk.take(item)
        else:
            waiting.setdefault(item.seq, []).append(item)
    while walk.frontier:  # along the chain: what names a body just recognised, in the batch or the store
        named: dict[int, set[str]] = {}
        for seq, digest in walk.frontier:
            named.setdefault(seq + 1, set()).add(digest)
        walk.frontier = []
        for seq, digests in named.items():
            for item in [i for i in waiting.get(seq, ()) if i.entry.prev_hash in digests]:
                waiting[seq].remove(item)
                walk.take(item)
        for body in _held(conn, table_id, named, last_seq):
            walk.move(body)
    walk.withdraw()
    return walk.out


class _Walk:
    """One ``recognise``: the hashes known as the new journal's by seq (from ``rejected_entries``
    for the seqs asked, and those recognised now), the bodies whose successors are still to be
    looked for (``frontier``), and the seqs where a body was recognised."""

    def __init__(self, conn: Any, table_id: str, last_seq: int, stored_ts: str) -> None:
        self.conn, self.table_id, self.last_seq, self.stored_ts = conn, table_id, last_seq, stored_ts
        self.out = Recognised()
        self.known: dict[int, set[str]] = {}
        self.frontier: list[tuple[int, str]] = []
        self.touched: set[int] = set()
        self.moved = False  # a body left ``entries``

    def add_known(self, seq: int, digests: Iterable[str]) -> None:
        self.known.setdefault(seq, set()).update(digests)

    def load_known(self, seqs: list[int]) -> None:
        for seq, line in self.conn.execute(
                "SELECT seq, line FROM rejected_entries WHERE table_id = %s AND seq = ANY(%s) AND why = %s",
                (self.table_id, seqs, NEW_JOURNAL_WHY)):
            self.add_known(seq, (json.loads(line)["hash"],))

    def _recognised(self, seq: int, digest: str) -> None:
        self.add_known(seq, (digest,))
        self.frontier.append((seq, digest))
        self.touched.add(seq)

    def take(self, item: FloorEntry) -> None:
        """``item`` of this batch is a new journal's: set apart, refused and counted."""
        self._recognised(item.seq, item.entry.hash)
        self.out.apart.append(item)
        if not _keep(self.conn, self.table_id, item.seq, item.line):
            return  # the same body again (a feed restarted): counted when it first came
        table = item.table_id
        if item.seq != 1:
            _count(self.conn, table, item.seq)
            return
        # Either the table was started afresh under its id, or, without the table's key, a forger
        # with its broker account published a chain from entry 1 first and is stored as the
        # table's journal, the table's own refused as the "new" one: no time tells them apart (a
        # forger chooses its own; a table's clock may have been set back). A security review saw
        # the alarm advise a new table id, which leaves a forgery standing.
        detail = _another_journal(
            table, f"its first entry, written {item.entry.ts}, differs from the stored journal's, written "
                   f"{self.stored_ts}",
            f" (without the table's key, a forger with its broker account who published first is stored as the "
            f"table's): check the stored journal against the table's own (`shoectl journal verify` at the table, "
            f"then `shoectl floor verify --expect {table}=SEQ:HASH` with its figures); if the stored one is the "
            f"table's, give the table a new table id to store the other")
        alarms.raise_alarm(self.conn, table, 1, alarms.NEW_JOURNAL, detail)
        self.out.said.append(detail)

    def move(self, body: _Body) -> None:
        """A body received earlier is a new journal's: under its alarm, out of ``entries`` if it
        waited there (and the second body it kept out, if any, stored in its place)."""
        self._recognised(body.seq, body.hash)
        if body.rejected_id is not None:
            self.conn.execute("UPDATE rejected_entries SET why = %s WHERE id = %s", (NEW_JOURNAL_WHY, body.rejected_id))
        else:
            self.moved = True
            self.conn.execute("DELETE FROM entries WHERE table_id = %s AND seq = %s", (self.table_id, body.seq))
            _restore_second_body(self.conn, self.table_id, body.seq)
            if not _keep(self.conn, self.table_id, body.seq, body.line):
                return  # this batch brought it again and counted it
        _count(self.conn, self.table_id, body.seq)
        self.out.earlier += 1

    def withdraw(self) -> None:
        """Close the alarms that were raised for recognised bodies alone (module docstring)."""
        if not self.touched:
            return
        alarms.withdraw_refused(self.conn, self.table_id, sorted(self.touched), list(_REFUSED_KINDS), _WITHDRAWN,
                                set_apart_as=NEW_JOURNAL_WHY)
        if self.moved and self.conn.execute("SELECT 1 FROM entries WHERE table_id = %s AND seq > %s LIMIT 1",
                                            (self.table_id, self.last_seq)).fetchone() is None:
            alarms.close_gaps(self.conn, self.table_id, _GAP_WITHDRAWN)


def _keep(conn: Any, table_id: str, seq: int, line: str) -> bool:
    """Keep the body in ``rejected_entries`` as a new journal's; whether it is new there as one
    (a body refused before for another reason becomes one now)."""
    return conn.execute(
        "INSERT INTO rejected_entries (table_id, seq, why, line) VALUES (%s, %s, %s, %s) "
        "ON CONFLICT (table_id, seq, md5(line)) DO UPDATE SET why = EXCLUDED.why "
        "WHERE rejected_entries.why <> EXCLUDED.why RETURNING id",
        (table_id, seq, NEW_JOURNAL_WHY, line)).fetchone() is not None


def _count(conn: Any, table: str, seq: int) -> None:
    alarms.raise_alarm(conn, table, 1, alarms.NEW_JOURNAL,
                       _another_journal(table, f"entry {seq} of it came", ": check the stored journal against the "
                                        "table's own before giving the table a new table id"), keep_detail=True)


def _another_journal(table: str, which: str, what_to_do: str) -> str:
    """The ``new_journal`` alarm's words: ``which`` entry of the other journal came, and what to do."""
    return (f"{table} publishes another journal ({which}): the store keeps one journal per table id, so its entries "
            f"are not stored (each counted on this alarm). Either the table was started afresh under its id, or one "
            f"of the two is not the table's{what_to_do}")


def _held(conn: Any, table_id: str, named: dict[int, set[str]], last_seq: int) -> list[_Body]:
    """The bodies the store holds at the seqs of ``named`` that name one of its hashes there, not
    yet known as a new journal's: refused ones, and stored ones beyond the checked position."""
    seqs = list(named)
    held = []
    for row_id, seq, line in conn.execute("SELECT id, seq, line FROM rejected_entries WHERE table_id = %s "
                                          "AND seq = ANY(%s) AND why <> %s ORDER BY id",
                                          (table_id, seqs, NEW_JOURNAL_WHY)).fetchall():
        body = json.loads(line)
        if body["prev_hash"] in named[seq]:
            held.append(_Body(seq, body["hash"], line, row_id))
    for seq, prev_hash, digest, line in conn.execute(
            "SELECT seq, prev_hash, hash, line FROM entries WHERE table_id = %s AND seq = ANY(%s) AND seq > %s",
            (table_id, seqs, last_seq)).fetchall():
        if prev_hash in named[seq]:
            held.append(_Body(seq, digest, line.strip(JSON_SPACE), None))
    return held


def _restore_second_body(conn: Any, table_id: str, seq: int) -> None:
    """The first body refused at ``seq`` only because the new journal's held that seq: it would
    have been stored had it come first, so it is (the chain check decides it as any stored entry,
    and swaps in another refused body that fits instead, as ever)."""
    row = conn.execute("DELETE FROM rejected_entries WHERE id = (SELECT id FROM rejected_entries WHERE table_id = %s "
                       "AND seq = %s AND why = %s ORDER BY id LIMIT 1) RETURNING line",
                       (table_id, seq, SECOND_BODY_WHY)).fetchone()
    if row is not None:
        insert_entry(conn, parse_entry(row[0], stored=True))
