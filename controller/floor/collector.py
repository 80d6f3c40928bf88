"""The collector: every table's journal topic on the MQTT broker into the central store.

``Collector(store, options, client_id=..., batch=...)``: ``run()`` (on the caller's thread, until
``stop()``) connects on paho's network thread with a persistent session (fixed client id, QoS 1,
no clean start), subscribes to ``shoectl/v1/tables/+/journal`` (or, shared with other collectors,
``$share/GROUP/shoectl/v1/tables/+/journal``: ``journal_subscription``), and stores what arrives in
batches: every message received is put on a queue by paho's thread; ``run`` takes up to
``batch`` of them at a time, checks each (``controller.floor.message.parse_entry``), stores the
batch in one transaction (``FloorStore.add``) and only then acknowledges its messages (paho 2's
manual acknowledgement: PUBACK after the commit). A crash before the commit loses nothing: the
broker still holds the unacknowledged messages for the session and sends them again; the store
drops what it already has. At-least-once delivery and an idempotent insert make exactly-once in
the store.

A message that is not a journal entry is logged, counted in ``dropped_messages`` (in the batch's
transaction) and acknowledged, never stored: sending it again would not make it one.

A table that publishes a new journal under a table id whose journal the store holds (started
afresh under the same id: another chain from entry 1) is not a forgery of each of its entries:
the store sets that journal's entries apart (``controller.floor.store``, "A new journal of a
known table": its entry 1 differs from the stored, confirmed entry 1, and each later entry names
as its predecessor an entry of that new journal), refuses them all under ONE ``new_journal``
alarm and stores none of them. The collector logs that alarm's words once (warning), when the
new journal's entry 1 first arrives, and acknowledges its entries: sending them again would not
store them. A second body of one entry that names the stored chain is still a ``forgery``.

The broker going away is logged once per outage (warning), its return once (warning), and paho
reconnects with backoff; the session resumes where it was. The database going away: the batch is neither committed nor
acknowledged; the collector reconnects with backoff and stores it again. A broker that refuses
the collector's credentials is fatal (``CollectorStopped`` with the broker's reason): retrying
cannot help.
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from controller.floor.broker import (
    MQTT_V5, QOS_0_ONLY, BrokerError, BrokerOptions, connect_in_background, is_lasting_refusal, make_client, refusal,
    stated_reason, stop_client,
)
from controller.floor.brief_connections import BriefConnections
from controller.floor.broker_probe import reach_problem
from controller.floor.db_failures import database_failure, refuses_content
from controller.floor.message import (
    MAX_ID_CHARS, MAX_MESSAGE_BYTES, FloorEntry, NotAnEntry, parse_entry, shown_table,
)
from controller.floor.schema import StoreError
from controller.floor.store import BatchResult, FloorStore
from controller.floor.topics import JOURNAL_SUBSCRIPTION, table_of
from controller.logconfig import file_only_logger
from shoectl_config.text import quoted

DEFAULT_CLIENT_ID = "shoectl-collector"
DEFAULT_BATCH = 1000
LINGER_S = 0.005         # a batch waits this long for more once it holds one (a burst arrives whole)
DB_RETRY_S = (0.5, 10.0)  # the first wait before reconnecting to the database, and the longest
_log = structlog.get_logger("shoectl.floor.collector")
_COUNTS = ("stored", "duplicates", "refused", "dropped", "new_journal")  # BatchResult's, summed in stats


def journal_subscription(share: str | None, options: BrokerOptions) -> str:
    """What the collector subscribes to: every table's journal topic, or with ``share`` (a group
    name) the MQTT 5 shared subscription ``$share/GROUP/...`` through which the broker gives each
    message to one collector of the group. BrokerError (one line) for a bad group name, MQTT
    3.1.1 (which has no shared subscriptions) or no ``--client-id`` (each collector of a group
    keeps a persistent session of its own)."""
    if share is None:
        return JOURNAL_SUBSCRIPTION
    if not share or any(c in share for c in "/+#$\0") or len(share) > MAX_ID_CHARS:
        raise BrokerError(f"--share needs a group name without /, +, # or $, got {quoted(share[:60])}")
    if options.protocol != MQTT_V5:
        raise BrokerError("--share needs MQTT 5 (MQTT 3.1.1 has no shared subscriptions): drop --mqtt-version 3.1.1")
    if options.client_id is None:
        raise BrokerError("--share needs --client-id: each collector of the group keeps a session of its own")
    return f"$share/{share}/{JOURNAL_SUBSCRIPTION}"


class CollectorStopped(Exception):
    """The collector cannot go on (the broker refused its credentials): one line, in words."""


@dataclass(frozen=True)
class Received:
    """A message as paho gave it; ``connection``: the connection it came on (its packet id
    ``mid`` names it on that connection only)."""

    mid: int
    qos: int
    topic: str
    payload: bytes
    connection: int = 0


class Collector:
    """See the module docstring. ``open_store`` makes a new store connection after a database
    failure (the first store is given)."""

    def __init__(self, store: FloorStore, options: BrokerOptions, *, open_store: Callable[[], FloorStore],
                 client_id: str = DEFAULT_CLIENT_ID, batch: int = DEFAULT_BATCH,
                 max_bytes: int = MAX_MESSAGE_BYTES, on_waiting: Callable[[str], None] | None = None,
                 subscription: str = JOURNAL_SUBSCRIPTION) -> None:
        self.store = store
        self.subscription = subscription
        self.options = options
        self.open_store = open_store
        self.batch = batch
        self.max_bytes = max_bytes
        self.on_waiting = on_waiting
        self.inbox: queue.Queue[Received] = queue.Queue(maxsize=max(batch * 4, 100))
        # The broker sends at most half the inbox unacknowledged (MQTT 5's Receive Maximum; the other
        # half for the copies it sends again after a reconnect), so paho's thread never waits on a
        # full inbox: waiting there, it sent no PINGREQ, and a database down for 30 s had the broker
        # drop the collector unseen (a review of the floor's threads).
        self.receive_maximum = self.inbox.maxsize // 2
        self._stop = threading.Event()
        self._fatal: str | None = None
        self._connected = False
        # Which connection to the broker is current (one more at each connect and each loss), under
        # its lock: a packet id names a message on its own connection only, and an acknowledgement
        # sent on a later one named another message, not yet stored, after the broker came back
        # without the collector's session (a review of the floor's exactly-once).
        self._connection = 0
        self._connection_lock = threading.Lock()
        self._ever_connected = False
        self._outage_logged = False
        self._brief = BriefConnections.of_broker(options)  # another client under this account (the setup's fault)
        self.stats = {**dict.fromkeys(_COUNTS, 0), "batches": 0}
        self.client = make_client(options, client_id=client_id, persistent=True)
        self.client.manual_ack_set(True)
        self.client.on_connect = self._on_connect
        self.client.on_connect_fail = self._on_connect_fail
        self.client.on_disconnect = self._on_disconnect
        self.client.on_message = self._on_message
        self.client.on_subscribe = self._on_subscribe

    # -- paho's network thread --------------------------------------------------------------------

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        if reason_code.is_failure:
            if is_lasting_refusal(reason_code):
                self._end(refusal(reason_code, self.options))
                return
            self._outage(refusal(reason_code, self.options))
            return
        if getattr(properties, "MaximumQoS", 1) == 0:  # MQTT 5 says so at once; 3.1.1 in the SUBACK
            self._end(refusal(QOS_0_ONLY, self.options))
            return
        with self._connection_lock:
            self._connection += 1
        self._connected = True
        self._ever_connected = True
        self._brief.connected(time.monotonic())
        if self._outage_logged and not self._brief.flapping:
            _log.warning("broker reachable again", broker=self.options.url)  # the loss's level: not its last word
        self._outage_logged = False
        client.subscribe(self.subscription, qos=1)
        _log.info("collecting", broker=self.options.url, subscription=self.subscription,
                  session_present=getattr(flags, "session_present", None))

    def _on_subscribe(self, client: Any, userdata: Any, mid: int, reason_codes: Any, properties: Any) -> None:
        granted = reason_codes[0] if reason_codes else None
        if granted is not None and getattr(granted, "value", granted) == 0:
            # QoS 0: the broker would neither keep the entries while the collector is away nor
            # wait for them to be stored (a broker set with max_qos 0 grants that silently)
            self._end(refusal(QOS_0_ONLY, self.options))
        elif granted is not None and getattr(granted, "is_failure", False):
            self._end(f"the broker {self.options.url} refused the subscription to {self.subscription}: {granted} "
                      "(may this user read the tables' journals?)")

    def _end(self, why: str) -> None:
        """A refusal retrying cannot mend: the collector stops, ``why`` its one line."""
        self._fatal = why
        self._stop.set()

    def _on_connect_fail(self, client: Any, userdata: Any) -> None:
        self._brief.unreachable()
        self._outage(f"the broker {self.options.url} is unreachable", dropped=False)

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        with self._connection_lock:
            self._connection += 1  # nothing received before is acknowledged from now on
        self._connected = False
        if not self._stop.is_set():
            if (cause := self._brief.lost(time.monotonic())) is not None:
                _log.error(cause)  # a person must act: the setup, not the broker
            if self._brief.flapping:
                self._outage_logged = True  # said once, above: no lost/back pair four times a second
            elif self._ever_connected:
                said = f" ({reason})" if (reason := stated_reason(reason_code)) is not None else ""
                self._outage(f"lost the broker {self.options.url}{said}", dropped=False)
            else:
                self._outage(f"the broker {self.options.url} closed the connection before accepting it", dropped=True)

    def _outage(self, why: str, *, dropped: bool | None = None) -> None:
        """Say the outage once; unless ``dropped`` is None, with what a probe of the broker's port
        finds (``reach_problem``; ``dropped``: closed before any CONNACK)."""
        if self._outage_logged:
            return
        self._outage_logged = True
        problem = None if dropped is None else reach_problem(self.options, dropped=dropped)
        why = f"{why} ({problem})" if problem else why
        if not self._ever_connected and self.on_waiting is not None:
            # on_waiting says it on standard error, once, at any level; the log file has it too (a
            # review: the file said the broker was reachable again after no outage)
            file_only_logger().warning("broker unavailable; retrying", reason=why)
            self.on_waiting(f"{why}; retrying until it answers")
        else:
            _log.warning("broker unavailable; retrying", reason=why)

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        item = Received(message.mid, message.qos, message.topic, bytes(message.payload), self._connection)
        while not self._stop.is_set():
            try:
                self.inbox.put(item, timeout=0.5)  # full only past the Receive Maximum (MQTT 3.1.1: the broker's own limit)
                return
            except queue.Full:
                continue

    # -- the batching thread (the caller's) -------------------------------------------------------

    def run(self) -> None:
        """Collect until ``stop()``; raises CollectorStopped when the broker refuses the credentials."""
        connect_in_background(self.client, self.options, persistent=True, receive_maximum=self.receive_maximum)
        try:
            while not self._stop.is_set():
                batch = self._take()
                if batch:
                    self._store(batch)
        finally:
            # Set first: paho's thread may be waiting on a full inbox (MQTT 3.1.1) until it is, and
            # stop_client joins that thread: an unexpected error here hung the collector for good,
            # alive to systemd, storing and saying nothing (a review of the floor's threads).
            self._stop.set()
            stop_client(self.client)
            _log.info("collector stopped", **self.stats)
        if self._fatal is not None:
            raise CollectorStopped(self._fatal)

    def stop(self) -> None:
        self._stop.set()

    def _take(self) -> list[Received]:
        try:
            first = self.inbox.get(timeout=0.2)
        except queue.Empty:
            return []
        batch = [first]
        deadline = time.monotonic() + LINGER_S
        while len(batch) < self.batch:
            left = deadline - time.monotonic()
            try:
                batch.append(self.inbox.get(timeout=left) if left > 0 else self.inbox.get_nowait())
            except queue.Empty:
                break
        return batch

    def _store(self, batch: list[Received]) -> None:
        items: list[FloorEntry] = []
        dropped: list[tuple[str, str, str]] = []
        for message in batch:
            table = shown_table(table_of(message.topic) or "")
            try:
                items.append(parse_entry(message.payload, topic_table=table, max_bytes=self.max_bytes))
            except NotAnEntry as exc:
                _log.warning("message dropped: not a journal entry", topic=message.topic, reason=exc.reason,
                             detail=exc.detail)
                dropped.append((table, exc.reason, exc.detail))
        result = self._add(items, dropped)
        if result is None:
            return  # stopping: nothing committed, nothing acknowledged; the broker keeps them
        with self._connection_lock:  # no connect or loss between the look and the send
            for message in batch:
                # One of an earlier connection: the broker sends it again if it kept the session
                # (stored again as a duplicate), or it was lost with the broker's session.
                if message.connection == self._connection:
                    self.client.ack(message.mid, message.qos)
        self.stats["batches"] += 1
        for key in _COUNTS:
            self.stats[key] += getattr(result, key)
        log_alarms(result)

    def _add(self, items: list[FloorEntry], dropped: list[tuple[str, str, str]]) -> BatchResult | None:
        """``store.add``, again after a database failure until it is done (None: stopped first). An
        outage is one warning when it begins and one when the database is back (the same level: the
        loss is not the last word), each retry between at info (a floor review read a pair of
        warnings every retry, and nothing when it ended)."""
        wait = DB_RETRY_S[0]
        one_by_one: _OneByOne | None = None  # the entry-by-entry pass, once PostgreSQL refused the batch
        lost: float | None = None  # when the database outage in progress began
        # Why the last new connection could not be made: made again after the wait, before the next
        # try (a review of long runs: the next try went to the connection that had failed, and each
        # outage cost a second, doubled wait once the database was back).
        unopened: str | None = None
        while not self._stop.is_set():
            why = unopened = self._reopen_store() if unopened is not None else None
            if why is None:
                try:
                    result = (self._add_one_by_one(items, dropped, one_by_one) if one_by_one is not None
                              else self.store.add(items, dropped))
                except Exception as exc:  # noqa: BLE001 - any database failure: nothing committed, nothing acked
                    if not database_failure(exc):
                        raise  # a defect of this program: said as one (retried, it was "the database is unavailable")
                    if refuses_content(exc) and one_by_one is None:
                        one_by_one = _OneByOne()  # retrying the same batch cannot help: find the entry it refuses
                        continue
                    unopened = self._reopen_store()  # a new connection for the next try, or why not in words
                    why = unopened or " ".join(str(exc).split())[:300]
                else:
                    if lost is not None:
                        _log.warning("the database is back; storing again",
                                     unavailable_s=round(time.monotonic() - lost, 1))
                    return result
            if lost is None:
                lost = time.monotonic()
                _log.warning("the database is unavailable; the entries wait on the broker, retrying", reason=why)
            else:
                _log.info("the database is still unavailable; retrying", reason=why, retry_in_s=wait)
            self._stop.wait(wait)
            wait = min(wait * 2, DB_RETRY_S[1])
        return None

    def _add_one_by_one(self, items: list[FloorEntry], dropped: list[tuple[str, str, str]],
                        progress: _OneByOne) -> BatchResult:
        """Each entry in a transaction of its own; one PostgreSQL refuses is dropped and counted
        (``not_storable``). A failure of the database itself is raised, and the caller's retry goes
        on from ``progress``: what was committed is neither stored nor counted again (a review
        found the dropped messages counted in the store but missing from the collector's figures,
        and the committed entries counted again as duplicates)."""
        if not progress.dropped_counted:
            progress.total.absorb(self.store.add([], dropped))
            progress.dropped_counted = True
        while progress.done < len(items):
            item = items[progress.done]
            try:
                part = self.store.add([item])
            except Exception as exc:
                if not refuses_content(exc):
                    raise
                why = " ".join(str(exc).split())[:200]
                _log.warning("message dropped: the database cannot store it", table=item.table_id, seq=item.seq,
                             detail=why)
                part = self.store.add([], [(item.table_id, "not_storable", f"entry {item.seq}: {why}")])
            progress.total.absorb(part)
            progress.done += 1
        return progress.total

    def _reopen_store(self) -> str | None:
        """A new connection for the next try; why it could not be made (in words), or None."""
        try:
            self.store.close()
        except Exception:  # noqa: BLE001 - the old connection is gone anyway
            pass
        try:
            self.store = self.open_store()
        except StoreError as exc:
            return str(exc)
        return None


@dataclass
class _OneByOne:
    """How far a batch's entry-by-entry pass got: what it committed, summed (``total``), how many
    of its entries are done, and whether the batch's dropped messages are counted."""

    total: BatchResult = field(default_factory=BatchResult)
    done: int = 0
    dropped_counted: bool = False


FORGED_SEQS_LOGGED = 10  # a forgery alarm's log line names this many of its table's entries at most


def log_alarms(result: BatchResult) -> None:
    """The alarms a batch raised, for a person to read and close (docs/floor.md: "a forgery or a
    break is news"): errors, each with its table and entries. A forgery was a warning with
    neither, then a count of a whole batch's, a break in no log line at all (reviews of logs)."""
    for detail in result.new_journals:
        _log.error("a new journal of a known table; its entries are not stored (new_journal alarm)", detail=detail)
    for table_id, seqs in sorted(result.forged.items()):
        # One line a table, its first entries named: a flood of forgeries is not a flood of lines.
        _log.error("second bodies refused under stored keys (forgery alarm)", table=table_id,
                   seqs=sorted(set(seqs))[:FORGED_SEQS_LOGGED], count=len(seqs))
    for aside in result.set_aside:
        _log.error(f"an entry set aside by the chain check ({aside.alarm} alarm)", table=aside.table_id,
                   seq=aside.seq, alarm=aside.alarm)
