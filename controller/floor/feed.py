"""The feed: a table's journal published to the MQTT broker, entry by entry, in ``seq`` order.

``JournalFeed(tail, options, cursor, summary)`` follows the journal (``JournalTail``: read-only,
each entry checked as it is read) and publishes every entry after the cursor's to
``shoectl/v1/tables/<table_id>/journal``, QoS 1, not retained, the payload exactly
``Entry.to_json_line()`` (the line ``shoectl journal export`` writes). ``run(stop)`` works until
the event ``stop`` is set, then drains (publishes the rest of the journal while acknowledgements
come, see ``_drain``), says goodbye and returns.

- **Position.** The cursor file (``controller.floor.cursor``) holds the last ``seq`` the broker
  acknowledged (PUBACK) with every entry before it acknowledged too, and that entry's hash (so a
  journal that is not the one the cursor saw is refused at start: ``make_feed``, in
  ``controller.cli.cmd_feed``); it is saved at most every
  ``cursor_interval`` seconds and when the feed stops. A restarted feed resumes after it:
  entries acknowledged since the last save are published again (duplicates; consumers drop them
  by ``(table_id, seq)``), none is ever skipped.
- **Bounded memory.** At most ``window`` entries are published and not yet acknowledged; the
  journal is read only as acknowledgements make room, and only while the broker is connected and
  has acknowledged what paho sent again after a reconnection (``seq`` order on the wire). While the broker is away the journal is the buffer: paho keeps
  the entries not yet acknowledged and sends them again when it is back.
- **Outages.** paho's network thread reconnects with backoff (``controller.floor.broker``). Each
  outage is logged once (``warning``) and its end once (``warning`` too, with the entry the feed
  catches up from). A broker that refuses the credentials stops the feed: ``FeedRefused``, which the
  command reports (one line, exit 2; ``run --feed`` logs it at ``error``: a person must act). A PUBACK that refuses an entry (MQTT 5: not authorised to publish
  under that table's topic) stops it too.
- **Status and roads.** ``summary`` (a ``TableSummary``: every entry read is given to it) says
  what the table looks like; the feed publishes it, retained, QoS 1, to ``.../status``
  (``{"table_id", "online": true, "state", "shoe", "round", "last_outcome", "faults", "seq",
  "ts"}``) and ``.../roads`` (the current shoe's roads, as ``shoectl roadmap --json``) when it
  changed, at most every ``status_interval`` seconds, and again after every reconnection; not
  before the broker has taken one of this run's entries (or none is waiting): a retained message
  on a topic the ACL denies makes Mosquitto drop the connection, and the entries' PUBACK says why
  more clearly. A stopping feed publishes them once more, whatever the throttle, when they changed
  since the last ones (see ``_drain``): what the journal ends with is what was published last. Its
  Last Will sets ``.../status`` to ``{"table_id", "online": false}``; its goodbye to the last status
  it published, ``online`` false (with the Will's body, a board started later showed "Closed").
"""
from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from controller.errors import UsageError
from controller.floor.broker import (
    BrokerError, BrokerOptions, connect_in_background, is_lasting_refusal, make_client, paho_client, refusal,
    stop_client,
)
from controller.floor.brief_connections import BriefConnections
from controller.floor.broker_probe import check_tls_trust, reach_problem
from controller.floor.cursor import AckWindow, FeedCursor
from controller.floor.topics import journal_topic, roads_topic, status_topic
from controller.journal.entry import Entry
from controller.journal.errors import JournalBusyError, JournalContentError, JournalIntegrityError
from controller.journal.tail import JournalTail

log = structlog.get_logger("shoectl.feed")


class TableSummary(Protocol):
    """What the status and roads messages say, kept up to date one entry at a time."""

    def apply(self, entry: Entry) -> None: ...

    def status(self) -> Mapping[str, Any]:
        """``state``, ``shoe``, ``round``, ``last_outcome``, ``faults``."""

    def roads(self) -> Mapping[str, Any]:
        """The current shoe's roads, as ``shoectl roadmap --json`` gives them."""


class FeedRefused(BrokerError):
    """The broker refuses this feed (credentials, or publishing under this table's topics)."""


class FeedJournalError(UsageError):
    """The journal holds an entry this feed cannot read (its chain verifies: a payload no table
    wrote); the feed stops before publishing it, one line (exit 2: restarting cannot help)."""


@dataclass(frozen=True)
class FeedSettings:
    window: int = 200            # entries published and not yet acknowledged, at most
    poll_interval: float = 0.05  # seconds between two looks at the journal when it has nothing new
    cursor_interval: float = 0.2  # seconds between two saves of the cursor
    status_interval: float = 0.5  # seconds between two status (and roads) messages
    stop_grace: float = 5.0      # seconds a stopping feed waits for the next acknowledgement of the journal's end
    drain_s: float | None = None  # the most a stop's drain and goodbye take (None: DRAIN_LIMIT + 1 stop_grace)


DRAIN_LIMIT = 6  # a stopping feed that is still being acknowledged stops after this many stop_grace
SHORT_CONNECTIONS_SAID = 10  # connections the broker closed before taking an entry, in one outage, before the feed says so


def encode(doc: Mapping[str, Any]) -> str:
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":"))


class JournalFeed:
    """See the module docstring."""

    def __init__(self, tail: JournalTail, options: BrokerOptions, cursor: FeedCursor, summary: TableSummary,
                 settings: FeedSettings = FeedSettings()) -> None:
        self.tail = tail
        self.options = options
        self.cursor = cursor
        self.summary = summary
        self.settings = settings
        self.table_id = tail.table_id
        self._events: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self._wake = threading.Event()
        self._connected = False
        self._outage = False  # a warning was logged for the outage under way (until an entry is taken again)
        self._short_connections = 0  # connections of this outage the broker closed before it took an entry
        self._brief = BriefConnections.of_broker(options)  # another feed of this table takes its connection
        self._ever_connected = False
        self._last: Entry | None = None
        self._accepted = False  # an entry of this run was acknowledged (not refused) by the broker
        self.window = AckWindow(0)
        self._saved = 0
        self._resent_through = 0  # entries up to this one are being sent again after a reconnection
        self.published = 0  # entries published by this run (duplicates after a reconnection not counted)
        # One client id per table (a feed logs in as its own table: cmd_feed.require_own_login).
        self.client = make_client(options, client_id=f"shoectl-feed-{self.table_id}",
                                  will=(status_topic(self.table_id), encode({"table_id": self.table_id, "online": False})))
        self.client.max_inflight_messages_set(settings.window)  # all of the window on the wire, none in paho's queue
        mqtt = paho_client()
        self._queued = (mqtt.MQTT_ERR_SUCCESS, mqtt.MQTT_ERR_NO_CONN)  # a publish's rc (NO_CONN: sent after the CONNACK)
        self.client.on_connect = self._on_connect
        self.client.on_connect_fail = self._on_connect_fail
        self.client.on_disconnect = self._on_disconnect
        self.client.on_publish = self._on_publish

    # -- paho's network thread: only queue what happened --------------------------------------------

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        self._events.put(("connack", reason_code))
        self._wake.set()

    def _on_connect_fail(self, client: Any, userdata: Any) -> None:
        self._events.put(("unreachable", None))
        self._wake.set()

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        self._events.put(("lost", reason_code))
        self._wake.set()

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason_code: Any, properties: Any) -> None:
        self._events.put(("puback", (mid, reason_code)))
        self._wake.set()

    # -- the feed's thread ----------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Publish until ``stop`` is set, then drain and say goodbye (see the module docstring).
        FeedRefused when the broker refuses the feed; a JournalError when the journal cannot be
        read or its chain breaks, FeedJournalError at an entry it cannot read (the entries before
        either are published first, and their acknowledgements waited for as a stopping feed waits)."""
        at = self.cursor.position()
        start = at.seq
        self.window = AckWindow(start, at.hash)
        self._saved = start
        self._next_save = self._next_status = 0.0
        self._sent_status: str | None = None
        self._sent_roads: str | None = None
        self._published: dict[str, Any] = {}  # the last status published: the goodbye repeats it, offline
        log.info("feed starting", broker=self.options.url, after_seq=start, journal=str(self.tail.path))
        try:
            try:
                # In the try: a broker refused here (its certificate not trusted) must release the
                # cursor's locks too, or no other feed of the journal could start while the table
                # that ran this one lives (a review of the floor's threads).
                check_tls_trust(self.options)
                connect_in_background(self.client, self.options)
                while not stop.is_set():
                    self._step()
            except (JournalIntegrityError, FeedJournalError) as exc:
                self._settle(stop)  # the entries before the break are published: see them acknowledged
                # offline, without a summary: the status must not describe entries past the break
                self._goodbye(time.monotonic() + self.settings.stop_grace, summary=False)
                if isinstance(exc, FeedJournalError):
                    raise FeedJournalError(f"{exc}; the feed stops at entry {self.window.acked_through}, the last "
                                           "the broker acknowledged") from None
                raise
            self._drain()
        finally:
            try:
                self._save_cursor(force=True)
            finally:
                self.cursor.release()
            stop_client(self.client)
            log.info("feed stopped", published=self.published, acknowledged_through=self.window.acked_through)

    def _step(self) -> bool:
        """One turn: take paho's news, publish what there is room for, save, report. True when
        it found an entry to publish."""
        self._take_events()
        moved = self._publish_entries()
        if self._outage and self._connected and not moved and self.window.outstanding == 0:
            self._outage_over()  # connected, and nothing to publish: nothing will be acknowledged
        self._save_cursor()
        self._publish_summary()
        if not moved:
            self._wake.wait(self.settings.poll_interval)
            self._wake.clear()
        return moved

    def _drain(self) -> None:
        """After ``stop``: publish the rest of the journal and wait for its acknowledgements while
        they come (until ``stop_grace`` seconds pass without one, and at most ``DRAIN_LIMIT`` times
        that); then the status and roads of what was published, if they changed since the throttled
        ones, and the goodbye status, their acknowledgements waited for. What is left waits in the
        journal for the next feed. ``drain_s`` shortens it all (``run --feed``: the table's grace)."""
        grace = self.settings.stop_grace
        if self.settings.drain_s is not None:
            grace = min(grace, self.settings.drain_s / (DRAIN_LIMIT + 1))
        now = time.monotonic()
        deadline, limit = now + grace, now + DRAIN_LIMIT * grace
        while time.monotonic() < min(deadline, limit) and self._connected:
            before = self.window.acked_through
            if not self._step() and self.window.outstanding == 0:
                break
            if self.window.acked_through != before:
                deadline = time.monotonic() + grace
        self._goodbye(deadline, summary=True)
        self._take_events()

    def _goodbye(self, deadline: float, *, summary: bool) -> None:
        """The retained status, the last published, says the feed is gone (``online`` false), waited for
        until ``deadline``; with ``summary``, after the status and roads the throttle held back (a
        run that ends within ``status_interval`` of the last status). A clean disconnect sends no
        Last Will: without this the status would stay ``online`` for ever."""
        if not self._connected:
            return
        sent = self._publish_summary(final=True) if summary else []
        sent.append(self.client.publish(status_topic(self.table_id), encode(
            {"table_id": self.table_id, "online": False, **self._published}), qos=1, retain=True))
        for info in sent:
            try:
                info.wait_for_publish(timeout=max(0.1, deadline - time.monotonic()))
            except (RuntimeError, ValueError):
                break  # not sent (the connection went meanwhile): the Last Will says offline

    def _settle(self, stop: threading.Event) -> None:
        """Wait for the acknowledgements of what is published (the broker may not be connected
        yet), until ``stop``, or ``DRAIN_LIMIT`` times ``stop_grace`` pass."""
        deadline = time.monotonic() + DRAIN_LIMIT * self.settings.stop_grace
        while self.window.outstanding and not stop.is_set() and time.monotonic() < deadline:
            self._take_events()
            self._save_cursor()
            self._wake.wait(self.settings.poll_interval)
            self._wake.clear()

    def _take_events(self) -> None:
        while True:
            try:
                what, value = self._events.get_nowait()
            except queue.Empty:
                return
            if what == "puback":
                mid, code = value
                if getattr(code, "is_failure", False):
                    raise self._refused(f"the broker {self.options.url} refuses this table's entries on "
                                        f"{journal_topic(self.table_id)}: {code} (is the MQTT user name the "
                                        "table id?)")
                moved = self.window.acknowledged(mid)
                self._accepted = moved or self._accepted
                if moved and self._outage:
                    self._outage_over()
            elif what == "connack":
                self._connack(value)
            elif what in ("unreachable", "lost"):
                was_connected, self._connected = self._connected, False
                if what == "unreachable":
                    self._brief.unreachable()
                if what == "lost" and (cause := self._brief.lost(time.monotonic())) is not None:
                    log.error(cause)  # a person must act: another feed of this table, not the broker
                if self._outage and was_connected:
                    self._closed_before_an_entry()
                if self._brief.flapping:
                    self._outage = True  # said once, above: no lost/back pair four times a second
                elif not self._outage:
                    self._outage = True
                    why = ("cannot reach the broker" if what == "unreachable" or not self._ever_connected
                           else "lost the broker")
                    unnamed = reach_problem(self.options, dropped=what == "lost" and not self._ever_connected)
                    text = (f"{why} {self.options.url}{f' ({unnamed})' if unnamed else ''}; retrying, the entries "
                            f"wait in the journal "
                            f"(acknowledged up to entry {self.window.acked_through})")
                    log.warning(text)

    def _connack(self, code: Any) -> None:
        if getattr(code, "is_failure", False):
            if is_lasting_refusal(code):
                raise self._refused(refusal(code, self.options))
            self._events.put(("unreachable", None))
            return
        self._connected = True
        self._ever_connected = True
        self._brief.connected(time.monotonic())
        self._resent_through = self.window.last_published  # paho sends the unacknowledged again
        self._sent_status = self._sent_roads = None  # a Last Will may have replaced them
        self._next_status = 0.0
        if not self._outage:
            log.info("connected to the broker", broker=self.options.url)
        # In an outage, it is over once the broker takes an entry (or there is none to give it): a
        # broker that accepts the connection and closes it at the first entry (a message size
        # limit below the journal's entries) had the feed say "reachable again" and "lost" four
        # times a second, for ever, and never why (a review of the floor's exactly-once).

    def _outage_over(self) -> None:
        self._outage = False
        self._short_connections = 0
        if self._brief.flapping:
            return  # the cause was said once (BriefConnections)
        # The same level as the loss: at the default level, the loss must not be the last word.
        log.warning("broker reachable again; catching up", broker=self.options.url,
                    from_seq=self.window.acked_through + 1)

    def _closed_before_an_entry(self) -> None:
        self._short_connections += 1
        if self._short_connections == SHORT_CONNECTIONS_SAID:
            log.warning(f"the broker {self.options.url} accepted the connection {SHORT_CONNECTIONS_SAID} times and "
                        f"closed it each time before it took entry {self.window.acked_through + 1}; the entries wait "
                        "in the journal (the broker's log says why: one cause is a largest message, Mosquitto's "
                        "message_size_limit, smaller than this journal's entries)")

    def _refused(self, text: str) -> FeedRefused:
        return FeedRefused(text)  # the caller says it: one line, where a person reads it

    def _publish_entries(self) -> bool:
        room = self.settings.window - self.window.outstanding
        if room <= 0 or not self._connected or self.window.acked_through < self._resent_through:
            # Not before the CONNACK, nor before what paho sends again after it is acknowledged:
            # paho holds what is published without a socket and sends it after the CONNACK, behind
            # what was published once the socket was up (out of order).
            return False
        try:
            entries = self.tail.poll(room)
        except JournalBusyError:
            return False  # SQLite recovering the WAL after the table's crash: a moment
        topic = journal_topic(self.table_id)
        for e in entries:
            try:
                self.summary.apply(e)
            except JournalContentError as exc:  # a reader's traceback, until a review of bad inputs
                raise FeedJournalError(f"{self.tail.path}: {exc}") from None
            self._last = e
            if e.seq <= self.window.last_published:
                continue  # before the cursor: only for the summary
            info = self.client.publish(topic, e.to_json_line(), qos=1)
            if info.rc not in self._queued:
                # Not queued (paho's packet ids or queue exhausted): counted as published, it would
                # never be sent nor acknowledged. Said and stopped; the cursor stays at what the
                # broker acknowledged, and the next feed publishes from there.
                raise FeedRefused(f"the MQTT client could not queue entry {e.seq} ({paho_client().error_string(info.rc)}); "
                                  f"the feed stops at entry {self.window.acked_through}, the last the broker acknowledged")
            self.window.published(info.mid, e.seq, e.hash)
            self.published += 1
        return bool(entries)

    def _save_cursor(self, *, force: bool = False) -> None:
        now = time.monotonic()
        through = self.window.acked_through
        if through != self._saved and (force or now >= self._next_save):
            self.cursor.save(through, self.window.acked_hash)
            self._saved = through
            self._next_save = now + self.settings.cursor_interval

    def _publish_summary(self, *, final: bool = False) -> list[Any]:
        """The status and roads, each if it changed, at most every ``status_interval`` seconds
        (``final``: now, a stopping feed's last). Returns what it published (paho's MessageInfo)."""
        now = time.monotonic()
        if not self._connected or (now < self._next_status and not final) or self._last is None:
            return []
        if not self._accepted and self.window.outstanding:
            return []  # the broker has not yet taken one of this table's entries: it may refuse its topics
        if self._last.seq < self.window.last_published:
            # still reading up to the cursor: a status of a point before it would step a display
            # back (a review: the comparison was the wrong way round, and a restarted feed
            # published, retained, the status of every window it read on the way)
            return []
        self._next_status = now + self.settings.status_interval
        sent = []
        fields = {**self.summary.status(), "seq": self._last.seq, "ts": self._last.ts}
        status = encode({"table_id": self.table_id, "online": True, **fields})
        if status != self._sent_status:
            sent.append(self.client.publish(status_topic(self.table_id), status, qos=1, retain=True))
            self._sent_status, self._published = status, fields
        roads = encode(self.summary.roads())
        if roads != self._sent_roads:
            sent.append(self.client.publish(roads_topic(self.table_id), roads, qos=1, retain=True))
            self._sent_roads = roads
        return sent
