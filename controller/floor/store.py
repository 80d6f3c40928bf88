"""The central store's write path: ``FloorStore.open(url)`` connects (psycopg 3) and migrates the
schema; ``store.add(items, dropped)`` stores one batch in one transaction and returns what
became of it; the caller acknowledges the batch's messages only after ``add`` returned (the
commit is done).

"An entry arrives" means the same for every source (a broker message, a line of an export file):

- a new ``(table_id, seq)`` is stored (``INSERT ... ON CONFLICT DO NOTHING`` from a ``COPY`` of
  the batch into a temporary table);
- the same key with the same body (byte-exact line, without the whitespace around it: a stored
  line from before lines were trimmed may still end in CR) is a duplicate: harmless, dropped;
- the same key with another body is refused: kept in ``rejected_entries`` with a ``forgery``
  alarm, the stored row kept. It is replaced later only by ``controller.floor.chain`` (its
  ``_swap``), when the chain proves the body stored first the forgery (docs/floor.md, "When a
  stored row is replaced, and why"): alarmed, the replaced body kept in ``rejected_entries``;
- then each table's chain is checked from its position on (``controller.floor.chain``).

**A new journal of a known table** (docs/floor.md, "A table's new journal"): the store keeps one
journal per table id. Before anything of a batch is stored, each table's entries that belong to a
new journal of the table (started afresh under the same id: another chain from seq 1) are set apart
by ``controller.floor.new_journal`` (``recognise``), with the table's chain position locked: never
inserted, kept in ``rejected_entries`` (``NEW_JOURNAL_WHY``), counted as refused (and in
``BatchResult.new_journal``) on the table's ONE ``new_journal`` alarm, no ``forgery`` alarm. The
rule is a property of the bodies, whatever order they arrive or commit in: a body the store took
for something else because it came before the entry it names (a second body, a misfit, an entry
waiting after a gap) is recognised once that entry arrives (``BatchResult.recognised_late``), and
the alarms raised for it alone are withdrawn.

``dropped`` are messages that were not journal entries: ``(table_id from the topic or "",
reason, detail)``, counted in ``dropped_messages`` in the same transaction.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from controller.floor import alarms, chain, new_journal
from controller.floor.message import JSON_SPACE, FloorEntry, as_written
from controller.floor.rows import ENTRY_COLUMNS, entry_values
from controller.floor.new_journal import SECOND_BODY_WHY
from controller.floor.schema import StoreError, migrate, server_message
from controller.journal import kinds
from controller.journal.chain import Hasher
from controller.journal.clockwatch import clock_step_text
from shoectl_config.extras import install_hint
from shoectl_config.text import quoted, safe

CONNECT_TIMEOUT = 10  # seconds
__all__ = ["BatchResult", "FloorStore", "connect", "failure_words"]


@dataclass
class BatchResult:
    stored: int = 0
    duplicates: int = 0
    refused: int = 0  # second bodies, and the entries of a new journal (module docstring)
    dropped: int = 0
    new_journal: int = 0  # of ``refused``: entries of a new journal of a known table
    new_journals: list[str] = field(default_factory=list)  # the new_journal alarms raised now, in words
    positions: dict[str, int] = field(default_factory=dict)  # table -> last checked seq
    set_aside: list[chain.SetAside] = field(default_factory=list)  # moved out of entries by the chain check
    recognised_late: int = 0  # bodies of earlier batches recognised now as a new journal's (not in ``refused``)
    forged: dict[str, list[int]] = field(default_factory=dict)  # table -> the seqs a second body was refused at

    def absorb(self, part: BatchResult) -> None:
        """Add ``part``, the result of a later transaction over other entries of the same batch
        (the collector's entry-by-entry pass): counts summed, lists extended, positions the later."""
        for f in fields(self):
            if type(getattr(self, f.name)) is int:  # every count
                setattr(self, f.name, getattr(self, f.name) + getattr(part, f.name))
        self.new_journals.extend(part.new_journals)
        self.positions.update(part.positions)
        self.set_aside.extend(part.set_aside)
        for table_id, seqs in part.forged.items():
            self.forged.setdefault(table_id, []).extend(seqs)

    @property
    def second_bodies(self) -> int:
        """Of ``refused``: second bodies under stored keys (``forgery``), not a new journal's entries."""
        return self.refused - self.new_journal


def connect(url: str, *, autocommit: bool = False, snapshot: bool = False) -> Any:
    """A psycopg connection to ``url``; ``StoreError`` (one line, without the password) when the
    URL is not one or the database cannot be reached or refuses the login. ``snapshot``: its
    transactions are read-only and see one state of the store (REPEATABLE READ)."""
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict
    except ImportError:
        raise StoreError(f"the floor needs psycopg: {install_hint('floor')}") from None

    if not url.startswith(("postgresql://", "postgres://")):
        raise StoreError(f"--db must be a PostgreSQL URL (postgresql://USER@HOST:PORT/DATABASE), "
                         f"got {quoted(_shown(url))}")
    try:
        params = conninfo_to_dict(url)
    except psycopg.Error:
        raise StoreError(f"--db is not a valid PostgreSQL URL: {quoted(_shown(url))}") from None
    if params.get("password"):  # on the command line: in the process list, the shell's history, a unit file
        raise StoreError(f"--db {quoted(_shown(url))} holds a password: put it in ~/.pgpass or the file PGPASSFILE "
                         "names, never on the command line")
    for port in str(params.get("port") or "5432").split(","):  # libpq's words for a bad one are its own (a review)
        if not (port.isascii() and port.isdigit() and 1 <= int(port) <= 65535):
            from controller.floor.broker import PORT_WORDS  # here: the broker's module imports ssl

            raise StoreError(f"--db {quoted(_shown(url))}: {PORT_WORDS}, not {quoted(port)}")
    where = f"{params.get('host', 'localhost')}:{params.get('port', 5432)}/{params.get('dbname', '')}"
    try:
        conn = psycopg.connect(url, autocommit=autocommit, connect_timeout=CONNECT_TIMEOUT)
    except psycopg.Error as exc:
        raise StoreError(_connect_failure(exc, safe(where))) from None
    if snapshot:
        conn.read_only = True
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    return conn


def _shown(url: str) -> str:
    """``url`` without a password (``postgresql://u:SECRET@h`` -> ``postgresql://u:***@h``,
    ``?password=SECRET`` -> ``?password=***``, and libpq's ``key=value`` form's ``password=SECRET``
    -> ``password=***``: it was shown as given, a review of logs)."""
    url = _QUERY_PASSWORD.sub(r"\1***", url)
    url = _KEYWORD_PASSWORD.sub(r"\1***", url)
    head, at, tail = url.rpartition("@")
    if at and ":" in head.split("//", 1)[-1]:
        user = head.split("//", 1)[-1].split(":", 1)[0]
        return f"{head.split('//', 1)[0]}//{user}:***@{tail}"
    return url[:200]


_QUERY_PASSWORD = re.compile(r"([?&]password=)[^&]*", re.IGNORECASE)
# libpq's keyword form: password = 'quoted, \' escaped' or a bare word
_KEYWORD_PASSWORD = re.compile(r"((?:^|\s)password\s*=\s*)(?:'(?:[^'\\]|\\.)*'?|\S*)", re.IGNORECASE)


def failure_words(exc: Exception) -> str:
    """What a database error says, in one line and in the user's words: never the SQL text
    (psycopg adds ``LINE 1: CREATE TABLE ... ^`` to a server error's message)."""
    state = getattr(exc, "sqlstate", None) or ""
    primary = server_message(exc)
    if state == "25006":
        return ("the database is read-only (a standby, or default_transaction_read_only on): the floor store "
                "cannot be written")
    if state == "42501":
        return f"this database user may not write the floor store ({primary}): grant it the rights, or use the owner's"
    return primary or "the database failed"


_UNRESOLVED = re.compile(r"failed to resolve host '(.*)': (?:\[Errno (-?\d+)\] )?")
_ERRNO = re.compile(r"\[Errno -?\d+\] ")
_EAI_AGAIN = "-3"  # the name service did not answer (getaddrinfo's EAI_AGAIN)


def _connect_failure(exc: Exception, where: str) -> str:
    """Why ``where`` could not be used, in one line of the user's words: never libpq's or Python's
    internals (``[Errno -2]``, ``fe_sendauth``) nor the hints libpq puts on lines of their own."""
    text = str(exc).split("\n", 1)[0]  # several hosts tried: the last failure, then each again
    unresolved = _UNRESOLVED.match(text)
    if unresolved:
        host = safe(unresolved.group(1))
        if unresolved.group(2) == _EAI_AGAIN:
            return f"cannot reach the database at {host}: no name server answered to look its host name up"
        return f"cannot reach the database at {host}: the host name does not resolve"
    if isinstance(exc, _connection_timeout()):
        return f"cannot reach the database at {where}: no answer within {CONNECT_TIMEOUT} s"
    for marker in ("FATAL: ", "failed: "):
        if marker in text:
            text = text.rsplit(marker, 1)[-1]
    reason = " ".join(_ERRNO.sub("", text).split())[:300]
    if reason == "Connection refused":
        return f"cannot reach the database at {where}: the connection was refused (is the server running there?)"
    if reason == "No such file or directory":
        return f"cannot reach the database at {where}: no server's socket there (is the server running?)"
    if reason.startswith("fe_sendauth: no password supplied"):
        return (f"cannot use the database {where}: the server asks for a password and none was found (put it in "
                f"~/.pgpass, PGPASSFILE or passfile= in the URL)")
    return f"cannot use the database {where}: {safe(reason) or 'connection failed'}"


def _connection_timeout() -> type[Exception]:
    import psycopg

    return psycopg.errors.ConnectionTimeout


def _psycopg_error() -> type[Exception]:
    import psycopg

    return psycopg.Error


class FloorStore:
    """One connection to the central store, written by one thread."""

    def __init__(self, conn: Any, hashers: Mapping[str, Hasher] | None = None) -> None:
        self.conn = conn
        self.hashers = dict(hashers or {})
        self._staging = False

    @classmethod
    def open(cls, url: str, hashers: Mapping[str, Hasher] | None = None) -> FloorStore:
        """Connect and migrate; StoreError, one line in the user's words, when the database cannot
        be reached or refuses the login or the migration (read-only, no right to create)."""
        conn = connect(url)
        try:
            migrate(conn)
        except BaseException as exc:
            where = f"{conn.info.host}:{conn.info.port}/{conn.info.dbname}"
            conn.close()
            if isinstance(exc, _psycopg_error()):
                raise StoreError(f"cannot use the database {where}: {failure_words(exc)}") from None
            if isinstance(exc, StoreError):  # the schema's own refusal: newer, or no right to create it
                raise StoreError(f"cannot use the database {where}: {exc}") from None
            raise
        return cls(conn, hashers)

    def close(self) -> None:
        self.conn.close()

    def add(self, items: Sequence[FloorEntry], dropped: Iterable[tuple[str, str, str]] = ()) -> BatchResult:
        """Store one batch (see the module docstring); committed when it returns."""
        result = BatchResult()
        try:
            self._add(items, dropped, result)
        except BaseException:
            self._staging = False  # the temporary table went with the transaction, if it was made in it
            raise
        return result

    def _add(self, items: Sequence[FloorEntry], dropped: Iterable[tuple[str, str, str]], result: BatchResult) -> None:
        with self.conn.transaction():
            for table_id, reason, detail in dropped:
                alarms.count_dropped(self.conn, table_id, reason, detail)
                result.dropped += 1
            if items:
                tables = sorted({i.table_id for i in items})
                apart: set[int] = set()
                for table_id in tables:  # locked in the order chain.advance locks them
                    last_seq, _, _ = chain.position(self.conn, table_id)
                    mine = [i for i in items if i.table_id == table_id]
                    if (hasher := self.hashers.get(table_id)) is not None:  # a hash the key refuses: never stored
                        forged = {id(i) for i in chain.refuse_unkeyed(self.conn, mine, hasher, self._stored_lines)}
                        # counted as stored and set aside, as the chain check's misfits are
                        result.stored += len(forged)
                        result.set_aside.extend(chain.SetAside(table_id, i.seq, alarms.BAD_HASH, True)
                                                for i in mine if id(i) in forged)
                        apart.update(forged)
                        mine = [i for i in mine if id(i) not in forged]
                    found = new_journal.recognise(self.conn, table_id, mine, last_seq)
                    apart.update(id(item) for item in found.apart)
                    result.refused += len(found.apart)
                    result.new_journal += len(found.apart)
                    result.new_journals.extend(found.said)
                    result.recognised_late += found.earlier
                kept = [i for i in items if id(i) not in apart]
                inserted, refused = self._insert(kept, result) if kept else ({}, {})
                self._raise_clock_steps(inserted)
                for table_id in tables:
                    known = {i.seq: i for i in inserted.get(table_id, ())}
                    advanced = chain.advance(self.conn, table_id, self.hashers.get(table_id), known,
                                             refused.get(table_id, set()))
                    result.positions[table_id] = advanced.last_seq
                    result.set_aside.extend(advanced.set_aside)

    def _insert(self, items: Sequence[FloorEntry],
                result: BatchResult) -> tuple[dict[str, list[FloorEntry]], dict[str, set[int]]]:
        """Store what is new; refuse second bodies. The entries stored, and the seqs a second body
        was refused at, by table."""
        conn = self.conn
        if not self._staging:
            conn.execute("CREATE TEMP TABLE IF NOT EXISTS incoming (n integer, LIKE entries INCLUDING DEFAULTS)")
            self._staging = True
        columns = ", ".join(ENTRY_COLUMNS)
        with conn.cursor() as cur:
            with cur.copy(f"COPY incoming (n, {columns}) FROM STDIN") as copy:
                for n, item in enumerate(items):
                    copy.write_row((n, *entry_values(item)))
            cur.execute(f"INSERT INTO entries ({columns}) SELECT DISTINCT ON (table_id, seq) {columns} FROM incoming "
                        "ORDER BY table_id, seq, n ON CONFLICT DO NOTHING RETURNING table_id, seq")
            new = set(cur.fetchall())
            cur.execute("DELETE FROM incoming")  # cheaper than TRUNCATE (a new file each time) for one batch
        inserted: dict[str, list[FloorEntry]] = {}
        others: list[FloorEntry] = []
        for item in items:
            key = (item.table_id, item.seq)
            if key in new:
                new.discard(key)  # the first of the batch under its key is the one inserted
                inserted.setdefault(item.table_id, []).append(item)
                result.stored += 1
            else:
                others.append(item)
        stored_line = self._stored_lines(others)
        refused: dict[str, set[int]] = {}
        for item in others:
            stored = stored_line.get((item.table_id, item.seq))
            if stored == item.line:
                result.duplicates += 1
            elif stored is not None and as_written(stored) == item.line:
                # An earlier program stored this very entry in another spelling (before 2026-12-03
                # any whose hash fit): the table's own line takes its place, so that the store gives
                # back what the journal's export wrote (a review saw the table's line alarmed as a forgery).
                self.conn.execute("UPDATE entries SET line = %s WHERE table_id = %s AND seq = %s",
                                  (item.line, item.table_id, item.seq))
                result.duplicates += 1
            else:
                self._refuse_second_body(item)
                refused.setdefault(item.table_id, set()).add(item.seq)
                result.forged.setdefault(item.table_id, []).append(item.seq)
                result.refused += 1
        return inserted, refused

    def _raise_clock_steps(self, inserted: Mapping[str, list[FloorEntry]]) -> None:
        """An alarm for each ``clock_step`` stored: the floor sees a table whose clock stepped (its
        entries' times from there on are not the cameras'), not only its replay (a review of clocks)."""
        for table_id, items in inserted.items():
            for item in items:
                if item.entry.kind == kinds.CLOCK_STEP and isinstance(item.entry.payload, dict):
                    alarms.raise_alarm(self.conn, table_id, item.seq, alarms.CLOCK_STEP,
                                       safe(f"entry {item.seq}: {clock_step_text(item.entry.payload)}"))

    def _stored_lines(self, items: Sequence[FloorEntry]) -> dict[tuple[str, int], str]:
        """The stored line of each key of ``items`` (read by primary key: no scan of ``entries``)."""
        by_table: dict[str, list[int]] = {}
        for item in items:
            by_table.setdefault(item.table_id, []).append(item.seq)
        out: dict[tuple[str, int], str] = {}
        for table_id, seqs in by_table.items():
            rows = self.conn.execute("SELECT seq, line FROM entries WHERE table_id = %s AND seq = ANY(%s)",
                                     (table_id, seqs)).fetchall()
            out.update(((table_id, seq), line.strip(JSON_SPACE)) for seq, line in rows)
        return out

    def _refuse_second_body(self, item: FloorEntry) -> None:
        self.conn.execute(
            "INSERT INTO rejected_entries (table_id, seq, why, line) VALUES (%s, %s, %s, %s) "
            "ON CONFLICT (table_id, seq, md5(line)) DO NOTHING",
            (item.table_id, item.seq, SECOND_BODY_WHY, item.line))
        alarms.raise_alarm(self.conn, item.table_id, item.seq, alarms.FORGERY,
                           f"entry {item.seq}: a second, different body arrived; the stored one is kept")
