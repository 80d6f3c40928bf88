"""``shoectl floor``: the central store of every table's journal (PostgreSQL; docs/floor.md).

- ``collect --broker URL --db URL``: subscribe to every table's journal topic and store each
  entry (``controller.floor.collector``); runs until stopped;
- ``backfill --db URL FILE``: store a ``shoectl journal export`` file, with the same checks;
- ``verify --db URL [--table T] [--expect T=SEQ:HASH]``: every table's chain as stored (and, given
  a journal's end, that the store reaches it); exit 0, or 1 naming the first
  bad ``(table, seq)``;
- ``status --db URL [--json]``: one line per table, then the dropped messages;
- ``rounds --db URL --table T [--shoe S] [--round N] [--json]``: the table's shoes and rounds
  from the store, printed by the very code of ``shoectl journal replay``.

A bad ``--db`` URL, a database that refuses the connection or the login, an unusable keys file
or export file: one line on standard error, exit 2, nothing changed.
"""
from __future__ import annotations

import argparse
import functools
import re
import sys
from collections.abc import Callable
from datetime import datetime, timezone, tzinfo
from datetime import time as dt_time
from typing import Any

from controller.cli.cmd_replay import add_round_details, write_replay
from controller.cli.common import positive_int, print_json
from controller.cli import floor_alarms
from controller.cli.journal_input import copy_text, nothing_found, spooled_text
from controller.errors import UsageError, output_path_argument, path_argument
from shoectl_config.text import quoted, safe

EXIT_OK, EXIT_FAILED = 0, 1
# What a forced exit of the collector does not lose: acknowledgements follow the commit.
COLLECT_FORCED_EXIT_KEPT = ("what was not committed stays unacknowledged in the broker's session and comes "
                            "again")
DB_HELP = ("the central store: postgresql://USER@HOST[:PORT]/DATABASE (a password in ~/.pgpass or "
           "PGPASSFILE, never on the command line)")


_CLOCK_TIME = re.compile(r"([01]?[0-9]|2[0-3]):([0-5][0-9])", re.ASCII)


def clock_time(text: str) -> dt_time:
    """``HH:MM`` (24-hour, ASCII digits; ``H:MM`` too) as a time of day; a usage error otherwise
    (``int`` alone took spaces, one-digit minutes and other scripts' digits)."""
    match = _CLOCK_TIME.fullmatch(text)
    if match is None:
        raise argparse.ArgumentTypeError(f"{quoted(text[:40])} is not a time of day as HH:MM (e.g. 06:00)")
    return dt_time(int(match[1]), int(match[2]))


def time_zone(name: str) -> tzinfo:
    """A time zone of the IANA database by name; a usage error otherwise."""
    from zoneinfo import ZoneInfo  # noqa: PLC0415 - read from disk: only when asked

    try:
        return ZoneInfo(name)
    except (KeyError, ValueError, OSError):  # not found is a KeyError; a malformed name a ValueError
        raise argparse.ArgumentTypeError(f"{quoted(name[:60])} is not a time zone this machine knows "
                                         "(e.g. America/New_York, UTC)") from None


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("floor", help="the floor's central store of every table's journal (PostgreSQL)",
                            description="Collect every table's journal from the MQTT broker into PostgreSQL, "
                                        "check the chains, and read the store (docs/floor.md).")
    fs = parser.add_subparsers(dest="floor_command", metavar="SUBCOMMAND", parser_class=type(parser))

    c = fs.add_parser("collect", help="subscribe to every table's journal topic and store each entry",
                      description="Subscribe to shoectl/v1/tables/+/journal (QoS 1, a persistent session under a "
                                  "fixed client id, default shoectl-collector) and store every entry in PostgreSQL, acknowledging each message only once it is committed. "
                                  "Runs until SIGTERM or Ctrl-C.")
    c.add_argument("--db", required=True, metavar="URL", help=DB_HELP)
    _add_keys(c)
    _add_collect_arguments(c)
    c.set_defaults(func=run_collect)

    b = fs.add_parser("backfill", help="store a `shoectl journal export` file (to fill gaps), with the same checks",
                      description="Store every entry of a `shoectl journal export` file as if it had arrived from "
                                  "the broker: duplicates dropped, second bodies refused and alarmed, chains checked, "
                                  "gaps closed. The file is read line by line and stored in one transaction: whole "
                                  "or not at all (a line that is not an entry stores nothing).")
    b.add_argument("file", type=path_argument, metavar="FILE", help="a `shoectl journal export` file (one JSON entry per line)")
    b.add_argument("--db", required=True, metavar="URL", help=DB_HELP)
    _add_keys(b)
    b.set_defaults(func=reading_errors(run_backfill))

    v = fs.add_parser("verify", help="check every table's chain in the store; exit 1 naming the first bad entry",
                      description="Check each table's chain as stored, from entry 1: no seq missing, every "
                                  "prev_hash the previous hash, and every hash where --keys holds the table's key. "
                                  "Exit 0 when all hold, 1 naming the first bad (table, seq).")
    v.add_argument("--db", required=True, metavar="URL", help=DB_HELP)
    v.add_argument("--table", metavar="ID", help="only this table")
    v.add_argument("--expect", action="append", default=[], metavar="TABLE=SEQ:HASH",
                   help="the table's journal ends at entry SEQ with hash HASH (the entries and last hash "
                        "`shoectl journal verify` prints where the journal is): exit 1 unless the store holds "
                        "it up to there (repeatable)")
    _add_keys(v)
    v.add_argument("--json", action="store_true", help="one JSON object per table")
    v.set_defaults(func=reading_errors(run_verify))

    s = fs.add_parser("status", help="one line per table: last entry, state, shoe, rounds today, alarms, lag",
                      description="One line per table: the last entry's time, the table's state and shoe, rounds "
                                  "completed this gaming day, open alarms, the last entry's delay (its journal time to "
                                  "its store commit) and age (its store commit to now: it grows while nothing "
                                  "arrives); then the messages dropped as not journal entries.")
    s.add_argument("--db", required=True, metavar="URL", help=DB_HELP)
    s.add_argument("--gaming-day", type=clock_time, default="06:00", metavar="HH:MM",
                   help="the time the casino's gaming day starts, for the rounds counted today (default 06:00)")
    s.add_argument("--timezone", type=time_zone, default=None, metavar="ZONE",
                   help="the casino's time zone, e.g. America/New_York (default: this machine's)")
    s.add_argument("--json", action="store_true",
                   help='one JSON object: {"at", "gaming_day_start", "tables": [...], "alarms": [...], "dropped": [...]}')
    s.set_defaults(func=reading_errors(run_status))

    a = fs.add_parser("alarms", help="the store's alarms, numbered; close one by hand, saying why",
                      description="The open alarms of the store (gaps, chain breaks, bad hashes, forgeries, new "
                                  "journals, clock steps), each with its number; --all adds the closed ones, with "
                                  "when, by whom and why. --close N --why TEXT closes alarms a person has dealt with "
                                  "(all or none), keeping why and the database role that closed them.")
    floor_alarms.add_arguments(a, DB_HELP)
    a.set_defaults(func=reading_errors(floor_alarms.alarms))

    r = fs.add_parser("rounds", help="a table's shoes and rounds from the store, as `journal replay` gives them",
                      description="Reconstruct a table's shoes and rounds from the central store with the code of "
                                  "`shoectl journal replay` (same output, same --json shape).")
    r.add_argument("--db", required=True, metavar="URL", help=DB_HELP)
    r.add_argument("--table", required=True, metavar="ID", help="the table")
    r.add_argument("--shoe", metavar="ID", help="only this shoe")
    r.add_argument("--round", type=positive_int, metavar="N", help="only round N (of each shoe, or of --shoe)")
    add_round_details(r)  # a money review found no --wagers here
    r.add_argument("--json", action="store_true", help="one JSON object per line")
    r.set_defaults(func=reading_errors(run_rounds))


def reading_errors(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``run`` with a database failure while it works (the server gone, a lost connection), or a
    stored row that is no journal entry (changed in the database by hand), said on one line,
    exit 2, instead of a traceback."""
    @functools.wraps(run)
    def guarded(args: argparse.Namespace) -> int:
        try:
            import psycopg

            from controller.floor.message import NotAnEntry
            from controller.floor.store import failure_words
        except ImportError:
            return run(args)  # which says the floor extra is missing
        try:
            return run(args)
        except psycopg.Error as exc:
            raise UsageError(f"the database failed: {failure_words(exc)}") from None
        except NotAnEntry as exc:
            raise UsageError(f"a row stored in the database is not a journal entry: {exc.detail}") from None
    return guarded


def _add_collect_arguments(parser: argparse.ArgumentParser) -> None:
    try:
        from controller.floor.broker import add_broker_options
    except ImportError:  # the floor extra is not installed: `collect` says so when run
        parser.add_argument("--broker", required=True, metavar="URL", help="the MQTT broker: mqtt://HOST[:PORT]")
    else:
        add_broker_options(parser, client_id_default="shoectl-collector; each collector of a --share group needs "
                                                      "its own")
    parser.add_argument("--share", metavar="GROUP",
                        help="share the work with the other collectors of GROUP: the MQTT 5 shared subscription "
                             "$share/GROUP/shoectl/v1/tables/+/journal gives each entry to one of them (MQTT 5 only; "
                             "each collector its own --client-id)")
    parser.add_argument("--batch", type=positive_int, default=1000, metavar="N",
                        help="most entries stored in one transaction (default 1000)")
    parser.add_argument("--max-message-bytes", type=positive_int, default=1024 * 1024, metavar="N",
                        help="a larger message is dropped as not a journal entry (default 1 MiB)")
    parser.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info",
                        help="least level logged on standard error (default info)")
    parser.add_argument("--log-file", type=output_path_argument, metavar="PATH", help="also log JSON lines to PATH")


def _add_keys(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--keys", type=path_argument, metavar="FILE",
                        help="TOML file naming each table's HMAC key file ([keys] T1 = \"T1.key\"): those tables' "
                             "hashes are recomputed too (docs/floor.md)")


def load_hashers(args: argparse.Namespace) -> dict[str, Any]:
    from controller.floor.keys import KeysError, load_keys

    if not args.keys:
        return {}
    try:
        return load_keys(args.keys)
    except KeysError as exc:
        raise UsageError(str(exc)) from None


def open_reader(url: str, *, snapshot: bool = True) -> Any:
    """A connection for reading the store (its schema checked); UsageError when it cannot be used.
    ``snapshot=False``: one whose transactions may write (``floor alarms --close``)."""
    from controller.floor.schema import StoreError, require_schema
    from controller.floor.store import connect

    try:
        conn = connect(url, snapshot=snapshot)
        try:
            require_schema(conn)
        except BaseException:
            conn.close()
            raise
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    return conn


def run_collect(args: argparse.Namespace) -> int:
    try:
        from controller.floor.broker import broker_options
        from controller.floor.broker_probe import check_tls_trust
        from controller.floor.collector import DEFAULT_CLIENT_ID, Collector, CollectorStopped, journal_subscription
        from controller.floor.schema import StoreError
        from controller.floor.store import FloorStore
    except ImportError as exc:
        from shoectl_config.extras import install_hint
        raise UsageError(f"shoectl floor collect needs {exc.name or 'a package'}: {install_hint('floor')}") from None
    from controller.cli.stopping import run_until_signalled
    from controller.logconfig import configure_logging

    options = broker_options(args)
    subscription = journal_subscription(args.share, options)
    hashers = load_hashers(args)
    check_tls_trust(options)  # an untrusted certificate is not an outage: retrying cannot help
    configure_logging(args.log_level, args.log_file)

    def open_store() -> FloorStore:
        return FloorStore.open(args.db, hashers)

    try:
        store = open_store()
    except StoreError as exc:
        raise UsageError(str(exc)) from None

    def waiting(line: str) -> None:
        print(f"shoectl floor collect: {line}", file=sys.stderr, flush=True)

    collector = Collector(store, options, open_store=open_store, client_id=options.client_id or DEFAULT_CLIENT_ID,
                          batch=args.batch, max_bytes=args.max_message_bytes, on_waiting=waiting,
                          subscription=subscription)
    try:
        signum = run_until_signalled(collector.run, collector.stop, name="shoectl floor collect",
                                     kept=COLLECT_FORCED_EXIT_KEPT, what="the collector")
    except CollectorStopped as exc:
        print(f"shoectl floor collect: error: {exc}", file=sys.stderr)
        return 2
    finally:
        collector.store.close()
    return 128 + signum if signum else EXIT_OK


def run_backfill(args: argparse.Namespace) -> int:
    from controller.floor.backfill import BackfillError, backfill, open_export
    from controller.floor.schema import StoreError
    from controller.floor.store import FloorStore

    hashers = load_hashers(args)
    try:
        with open_export(args.file) as handle:
            store = FloorStore.open(args.db, hashers)
            try:
                result = backfill(store, handle, args.file)
            finally:
                store.close()
    except (BackfillError, StoreError) as exc:
        raise UsageError(str(exc)) from None
    print(backfill_summary(args.file, result))
    return EXIT_OK


def backfill_summary(path: str, result: Any) -> str:
    """One line: what became of the file's entries (``controller.floor.backfill.Backfilled``)."""
    tables = ", ".join(f"{t} checked to {seq}" for t, seq in sorted(result.positions.items()))
    set_aside = ""
    if result.set_aside_new or result.set_aside_before:
        shown = ", ".join(f"{m.table_id} entry {m.seq}: {m.alarm}" for m in result.examples)
        more = result.set_aside_new + result.set_aside_before - len(result.examples)
        shown += f", and {more} more" if more else ""
        before = f" (of which {result.set_aside_before} stored before)" if result.set_aside_before else ""
        set_aside = (f" {result.set_aside_new + result.set_aside_before} set aside by the chain check{before} "
                     f"({shown}; kept in rejected_entries, alarmed),")
    new_journal = (f", {result.new_journal} of a new journal of a stored table (not stored: its new_journal "
                   "alarm)") if result.new_journal else ""
    return (f"{safe(path)}: {result.entries} entries: {result.stored} stored,{set_aside} {result.duplicates} already stored, "
            f"{result.refused} refused (second bodies){new_journal}; {tables}")


_EXPECTED_END = re.compile(r"([^=]+)=([0-9]+):([0-9a-f]{64})")


def _expected_ends(given: list[str]) -> dict[str, tuple[int, str]]:
    """``--expect`` as {table: (seq, hash)}; UsageError in words for one that is not TABLE=SEQ:HASH."""
    ends: dict[str, tuple[int, str]] = {}
    for text in given:
        found = _EXPECTED_END.fullmatch(text.strip())
        if found is None or int(found[2]) < 1:
            raise UsageError(f"--expect {quoted(text)}: give TABLE=SEQ:HASH, the journal's entries and last hash as "
                             "`shoectl journal verify` prints them (SEQ from 1, HASH 64 hexadecimal digits)")
        ends[found[1]] = (int(found[2]), found[3])
    return ends


def _end_json(end: tuple[int, str], problem: str | None) -> dict[str, object]:
    return {"seq": end[0], "hash": end[1], "problem": problem}


def run_verify(args: argparse.Namespace) -> int:
    from controller.floor.reading import end_problem, tables, verify_table

    hashers = load_hashers(args)
    ends = _expected_ends(args.expect)
    with open_reader(args.db) as conn:
        names = tables(conn)
        if args.table is not None:
            if args.table not in names:
                raise UsageError(f"no table {quoted(args.table)} in the store")
            names = [args.table]
            other = next((t for t in ends if t != args.table), None)
            if other is not None:  # that check would not run, and nothing would say so
                raise UsageError(f"--expect names table {quoted(other)}, and --table {quoted(args.table)} leaves it out")
        verdicts = [verify_table(conn, name, hashers.get(name)) for name in names]
        short = {v.table_id: end_problem(conn, v, *ends[v.table_id]) for v in verdicts if v.table_id in ends}
    absent = [t for t in ends if t not in names]
    bad = next((v for v in verdicts if not v.ok), None)
    for v in verdicts:
        end = short.get(v.table_id)
        if args.json:
            doc = v.to_json()
            if v.table_id in ends:
                doc.update(ok=v.ok and end is None, journal_end=_end_json(ends[v.table_id], end))
            print_json(doc)
        elif not v.ok:
            print(f"{v.table_id}: FAILED at entry {v.first_bad_seq}: {v.reason}")
        elif end is not None:
            print(f"{v.table_id}: FAILED: {end}")
        elif v.entries == 0:  # known by what was dropped or refused: no journal of it to call anything
            print(f"{v.table_id}: no entry of it is stored (what arrived for it was dropped or refused: shoectl floor "
                  "status counts it)")
        else:
            how = "links and hashes" if v.hashes_checked else "links (an HMAC journal without its key: hashes not recomputed)"
            held = "; the journal's end is stored" if v.table_id in ends else ""
            print(f"{v.table_id}: OK: {v.entries} entries, last {v.last_seq}:{v.last_hash} ({how} checked){held}")
    for table in absent:
        if args.json:
            print_json({"table": table, "ok": False,
                        "journal_end": _end_json(ends[table], "no entry of it is stored")})
        else:
            print(f"{table}: FAILED: no entry of it is stored, the journal ends at entry {ends[table][0]}")
    if not verdicts and not absent and not args.json:
        print("the store holds no table yet")
    if bad is not None:
        print(f"shoectl floor verify: first bad entry: table {bad.table_id}, seq {bad.first_bad_seq}", file=sys.stderr)
        return EXIT_FAILED
    lacking = [t for t, problem in short.items() if problem is not None] + absent
    if lacking:
        print(f"shoectl floor verify: the store lacks the end of the journal of {', '.join(lacking)}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


def run_status(args: argparse.Namespace) -> int:
    from controller.cli.floor_status import status  # noqa: PLC0415 - its module needs this one's

    return status(args)


def run_rounds(args: argparse.Namespace) -> int:
    from controller.floor.reading import table_entries, tables
    from controller.journal.errors import JournalContentError

    with open_reader(args.db) as conn, spooled_text() as spool:
        if args.table not in tables(conn):
            raise UsageError(f"no table {quoted(args.table)} in the store")
        try:
            found = write_replay(args, table_entries(conn, args.table, args.shoe), spool)
        except JournalContentError as exc:
            raise UsageError(f"table {args.table}: {exc}") from None
        if not found and (args.shoe is not None or args.round is not None):
            raise nothing_found(args, f"the store's table {args.table}")
        copy_text(spool, sys.stdout)
    return EXIT_OK
