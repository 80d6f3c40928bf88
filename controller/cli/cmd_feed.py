"""``shoectl feed --journal PATH --broker URL [...]``: publish a table's journal to the floor's MQTT
broker (``controller.floor.feed``; docs/floor.md, The feed), and ``shoectl run --feed URL``: the
same feed on a thread of the table's own process, following the journal as an outside feed does.

The feed runs until SIGTERM or SIGINT (then it publishes what the journal still holds, for a few
seconds, and says goodbye on its status topic): exit 143 or 130. An unreachable broker is not an
error: the feed says so once on standard error and waits. Exit 2, one line: a bad option or URL,
a TLS file that cannot be used, MQTT 3.1.1 (``require_mqtt_5``), an unreadable password file, a
cursor that is not one or is another journal's (or another copy's: the journal does not hold the
entry it names, as it saw it), a second feed of the journal (whatever its cursor), a journal that
cannot be read, a broker that refuses the credentials (or this table's topics), a chain that breaks
(after the entries before it are published).
"""
from __future__ import annotations

import argparse
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import structlog

from controller.cli.common import given_options, not_root_over_another_users_journal, whole_number
from controller.cli.stopping import run_until_signalled
from controller.errors import UsageError, in_words, journal_argument, output_path_argument, path_argument
from controller.floor.broker import (
    BROKER_FLAGS, MQTT_PACKET_IDS, MQTT_V5, BrokerOptions, add_broker_options, broker_options, paho_client,
)
from controller.floor.broker_probe import check_tls_trust
from controller.floor.cursor import FeedCursor, default_cursor_path
from controller.floor.feed import DRAIN_LIMIT, FeedSettings, JournalFeed
from controller.journal.chain import load_hmac_key
from controller.journal.entry import Entry
from controller.journal.errors import JournalError
from controller.journal.reader import JournalReader
from controller.journal.tail import JournalTail
from controller.logconfig import configure_logging
from controller.table_ids import TABLE_ID, TABLE_ID_RULE
from shoectl_config.text import quoted

log = structlog.get_logger("shoectl.feed")

STOP_GRACE_S = DRAIN_LIMIT * FeedSettings.stop_grace + 5  # the drain's longest, then a forced exit

# What a forced exit does not lose: the next feed starts after the cursor and publishes again
# what the broker had not acknowledged.
FORCED_EXIT_KEPT = ("the cursor is saved; what the broker had not acknowledged is published again by the "
                    "next feed")

# The entries' window leaves packet ids to the status and roads published beside them: at 65535 the
# ids wrapped onto entries still in flight, and entries counted as published were never sent (a
# review of the floor's threads: 3,059 of 70,000, the cursor stuck).
MAX_INFLIGHT = MQTT_PACKET_IDS - 1024


class ScoreboardSummary:
    """The feed's ``TableSummary`` from the scoreboard's ``TableView`` (one reading of the journal
    for the floor's screens, wherever they get it from)."""

    def __init__(self, table_id: str) -> None:
        # Here, not at the top: `shoectl run` imports this module for its options and loads the
        # scoreboard's state (with the roadmaps) only when it feeds a broker.
        from controller.scoreboard.state import TableView

        self.view = TableView(table_id)
        self._doc: dict[str, Any] | None = None

    def apply(self, entry: Entry) -> None:
        self.view.apply(entry)
        self._doc = None

    def _json(self) -> dict[str, Any]:
        if self._doc is None:
            self._doc = self.view.to_json()
        return self._doc

    def status(self) -> Mapping[str, Any]:
        doc = self._json()
        last = doc["last_round"] or {}
        return {"state": doc["state"]["name"], "shoe": doc["shoe"], "round": doc["round"],
                "last_outcome": last.get("outcome"), "faults": doc["state"]["faults"]}

    def roads(self) -> Mapping[str, Any]:
        return self._json()["roads"]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("feed", help="publish a table's journal to the floor's MQTT broker",
                       description="Follow a table's journal (read-only, while the table writes it) and publish "
                                   "every entry, in order, QoS 1, to shoectl/v1/tables/<table>/journal, with the "
                                   "table's status and roads retained beside it (docs/floor.md).")
    p.add_argument("--journal", required=True, type=journal_argument, metavar="PATH", help="the table's journal")
    p.add_argument("--cursor", type=path_argument, metavar="PATH", help="the feed's position: the last entry the broker acknowledged "
                                                     "(default: PATH.feed-cursor beside the journal)")
    p.add_argument("--hmac-key", type=path_argument, metavar="FILE", help="the journal's HMAC key: its hashes are checked as they are "
                                                       "read (without it, an HMAC journal's links only)")
    p.add_argument("--max-inflight", type=whole_number(1, MAX_INFLIGHT), default=FeedSettings.window, metavar="N",
                   help=f"entries published and not yet acknowledged, at most (default {FeedSettings.window}; at "
                        f"most {MAX_INFLIGHT}: MQTT's {MQTT_PACKET_IDS} packet ids, some left for the status and "
                        "roads): the feed's memory, and how far it reads ahead of the broker")
    add_broker_options(p, client_id_default="shoectl-feed-TABLE, TABLE the journal's table id")
    p.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-file", type=output_path_argument, metavar="PATH", help="JSON log file (default: none)")
    p.set_defaults(func=run)


def add_run_feed_options(parser: argparse.ArgumentParser) -> None:
    """``shoectl run``'s ``--feed URL`` and the broker's options."""
    add_broker_options(parser, url_flag="--feed", required=False,
                       client_id_default="shoectl-feed-TABLE, TABLE the --table-id",
                       url_help="also publish the journal to this MQTT broker, as shoectl feed does, from a thread "
                                "of this process: mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    parser.set_defaults(mqtt_version=None)  # given or not: the broker's options are refused without --feed




def run_feed_options(args: argparse.Namespace) -> BrokerOptions | None:
    """``shoectl run``'s broker options, checked before anything is created (None without
    ``--feed``): UsageError for a broker option without ``--feed`` (ignoring it would let an
    operator believe the table is fed), for what ``broker_options`` refuses, for MQTT 3.1.1, when
    paho-mqtt is missing, for a cursor beside the journal that is not this journal's, and for an
    ``mqtts://`` broker whose certificate is not trusted (``check_tls_trust``)."""
    if args.feed is not None and not args.feed.strip():  # "--feed ''" (an unset variable) ran unfed, without a word
        raise UsageError("--feed: empty; give the floor's broker, mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    if not args.feed:
        given = given_options(args, BROKER_FLAGS)
        if given:
            raise UsageError(f"{', '.join(given)}: only with --feed URL (the floor's broker), which is not given")
        return None
    options = broker_options(args, url_flag="--feed")
    require_mqtt_5(options)
    require_own_login(options, args.table_id)
    paho_client()  # the floor extra: missing, it is said now, not on the feed's thread
    check_run_cursor(Path(args.journal), args.table_id)
    # An untrusted broker is refused before the table starts, not said as the feed's end; a broker
    # that does not answer at once is an outage, which the feed waits out: the table's start waits
    # for the probe a second at most.
    check_tls_trust(options, timeout=1.0)
    return options


def require_own_login(options: BrokerOptions, table_id: str) -> None:
    """UsageError for a feed that logs in under another name than its table id: a table's MQTT user
    name is its table id (docs/floor.md, Security). Under another name the ACL refuses its entries,
    and where the broker ties each client id to its account (``use_username_as_clientid``, as
    documented) the feed took the connection of the table whose name it used, whose Last Will then
    said that table offline (a review of that configuration)."""
    if options.username is not None and options.username != table_id:
        raise UsageError(f"--username {quoted(options.username[:40])}: this feed publishes table {table_id}'s journal, "
                         f"and a table's MQTT user name is its table id (log in as {table_id})")


def require_mqtt_5(options: BrokerOptions) -> None:
    """UsageError for ``--mqtt-version 3.1.1``: a 3.1.1 PUBACK cannot refuse a publish (Mosquitto
    acknowledges one its ACL denies and drops it), so the feed's cursor would pass entries the
    floor never got (docs/floor.md, Guarantees and limits)."""
    if options.protocol != MQTT_V5:
        raise UsageError("--mqtt-version 3.1.1: the feed needs MQTT 5 (under 3.1.1 the broker acknowledges "
                         "entries its ACL drops, and the feed would count them as delivered)")


def check_run_cursor(journal: Path, table_id: str) -> None:
    """CursorError for the feed's cursor beside ``journal`` when it is not a cursor, or not this
    journal's (a journal still to be created is a new one: no cursor fits it; an existing one must
    hold the entry the cursor names, as the cursor saw it), or when another feed holds the cursor
    or the journal."""
    cursor = default_cursor_path(journal)
    FeedCursor(cursor, table_id, "", journal=journal).require_unclaimed()
    if not cursor.exists():
        return
    if journal.exists():
        try:
            with JournalReader.open(journal) as reader:
                position = FeedCursor(cursor, reader.table_id, reader.meta.get("created"), journal=journal)
                position.check_journal(reader.last_seq, reader.hash_at)
        except JournalError:
            pass  # not a journal: shoectl run says so when it opens it
        return
    FeedCursor(cursor, table_id, None).load()  # a journal still to be made: no cursor is its


def make_feed(journal: Path, options: BrokerOptions, *, cursor: str | None = None, hmac_key: bytes | None = None,
              settings: FeedSettings = FeedSettings()) -> JournalFeed:
    tail = JournalTail.open(journal, hmac_key=hmac_key)
    position: FeedCursor | None = None
    try:
        if not TABLE_ID.fullmatch(tail.table_id):  # the floor would drop every entry (bad_field)
            raise UsageError(f"{journal}: the table id {quoted(tail.table_id[:40])} is not one the floor takes "
                             f"({TABLE_ID_RULE})")
        require_own_login(options, tail.table_id)
        position = FeedCursor(cursor or default_cursor_path(journal), tail.table_id, tail.meta["created"],
                              journal=journal)
        position.require_unclaimed()  # another feed running: said before a lock file is made or the cursor read
        position.check_journal(tail.end_seq(), tail.hash_at)  # a cursor of another journal is refused now
        position.claim()  # the cursor and the journal, until the feed stops (JournalFeed.run)
        return JournalFeed(tail, options, position, ScoreboardSummary(tail.table_id), settings)
    except BaseException:
        if position is not None:
            position.release()
        tail.close()
        raise


def run(args: argparse.Namespace) -> int:
    options = broker_options(args)
    require_mqtt_5(options)
    paho_client()  # the floor extra: missing, it is said before the journal and the cursor are opened (a review saw lock files left)
    key = load_hmac_key(args.hmac_key) if args.hmac_key else None
    not_root_over_another_users_journal(Path(args.journal), "feed", "shoectl feed")
    feed = make_feed(Path(args.journal), options, cursor=args.cursor, hmac_key=key,
                     settings=FeedSettings(window=args.max_inflight))
    configure_logging(level=args.log_level, file=args.log_file, table=feed.table_id)
    stop = threading.Event()
    try:
        stopped_by = run_until_signalled(lambda: feed.run(stop), stop.set, name="shoectl feed", grace_s=STOP_GRACE_S,
                                         kept=FORCED_EXIT_KEPT, what="the feed")
    finally:
        feed.tail.close()
    return 0 if stopped_by is None else 128 + stopped_by


class FeedThread:
    """``shoectl run --feed``: the feed on a thread of its own; ``stop()`` drains and joins it,
    within ``stop_grace`` seconds (the table's; what is not published by then waits in the
    journal for the next feed): with its own 5 s, a feed behind a slow broker drained for 30 s
    after the table had stopped, whatever ``--stop-grace`` said (a review of signals)."""

    def __init__(self, journal: Path, options: BrokerOptions, hmac_key: bytes | None,
                 stop_grace: float | None = None) -> None:
        self.feed = make_feed(journal, options, hmac_key=hmac_key, settings=FeedSettings(drain_s=stop_grace))
        self._stop = threading.Event()
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="shoectl-feed", daemon=True)

    def start(self) -> FeedThread:
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self.feed.run(self._stop)
        except Exception as exc:  # noqa: BLE001 - the table goes on; the line says why the feed stopped
            self.error = exc
            log.error(f"the feed stopped: {in_words(exc)}; the table goes on, its journal keeps every entry")
        finally:
            self.feed.tail.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(DRAIN_LIMIT * self.feed.settings.stop_grace + 5)
