"""``MqttFloorSource``: every table of the floor, from the floor feed's retained MQTT topics
``shoectl/v1/tables/<id>/status`` and ``.../roads`` (docs/floor.md), through the floor's own
broker client (``controller.floor.broker``; under the documented ACL, log in as
``display@floor``, which may read them).

A table appears with its first status or roads message (a retained one arrives at once on
subscribing). Each message replaces what the source holds of its table, rebuilds that table's
state (and only that table's: the other tables' floor rows are kept, encoded, from their own last
message) and publishes it at once; the floor (``{"tables": [floor_row...], "labels"}``, tables
sorted by id) is published at most every ``FLOOR_EVERY_S`` (the messages in between coalesced
into one snapshot), so a floor of many tables costs per message what one table costs. The feed
carries less than a journal, so a table's state here is ``TableView.to_json``'s shape with what
the status and the roads give: ``table``, ``version`` (the status's ``seq``), ``state`` (in
words), ``shoe``, ``round``, ``roads``, ``placed`` (``controller.scoreboard.state.placed``),
``ask`` (from the roads, ``controller.roadmaps.ask``), ``last_round`` (its number and outcome
only), ``shoe_so_far`` (the counts the bead plate gives), ``online``; ``rules``, ``limits`` and
``journal_problem`` null (the feed says a table's journal stopped by going offline: its goodbye,
``online`` false, keeps the last state it published, which the page shows dimmed). A message
that is not of the feed's shapes (``feed_shapes``: not JSON, nested too deep, a field of another
type, a road that is not one) is logged (one warning) and changes nothing. Paho's network thread
receives; the event loop publishes.

The client id is ``shoectl-scoreboard-<host>-<pid>-<n>`` unless ``--client-id`` names one: a
broker closes the older of two connections with one id, so two floor scoreboards with a fixed id
would knock each other off for ever (under a broker that takes each client's account name for
its client id, as docs/floor.md documents, two scoreboards need two accounts for the same
reason). A lost connection is a warning once per outage, and so is its return (the same level:
an operator watching sees the last word). While there is no connection, ``failure`` says why
(``/healthz`` answers 503 with it). A broker that refuses the credentials at the first connection makes the scoreboard give up (``TableSource.give_up``: one
line, exit 2), as the feed and the collector do; refused later (the accounts changed while it
ran), it is an outage like any other, retried.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import os
import socket
import threading
import time
from typing import Any

import structlog

from controller.scoreboard import feed_shapes
from controller.scoreboard.sources import LANGS, TableSource, compact_json, floor_row, snapshot_of
from controller.scoreboard.sse import Channel, Snapshot

__all__ = ["FLOOR_EVERY_S", "MqttFloorSource", "client_id", "feed_state"]

log = structlog.get_logger()
_STATE_SHAPE_EMPTY_ROADS = {"bead_plate": [], "bead_pairs": [], "big_road": [], "big_eye_boy": [], "small_road": [], "cockroach_pig": []}


def feed_state(table_id: str, status: dict[str, Any], roads: dict[str, Any] | None, lang: str) -> dict[str, Any]:
    """A table's state from its feed's ``status`` and ``roads`` (see the module docstring)."""
    from controller.roadmaps import BigRoadEntry, ask_indicators
    from controller.scoreboard.labels import labels
    from controller.scoreboard.state import placed

    words = labels(lang)
    roads = roads or _STATE_SHAPE_EMPTY_ROADS
    name = status.get("state") or "closed"
    faults = list(status.get("faults") or [])
    reason = "; ".join(str(f.get("reason", "")) for f in faults) or None
    if status.get("online") is False:
        reason = words["offline"]
    beads = roads.get("bead_plate", [])
    counts = {side: beads.count(letter) for side, letter in (("banker", "B"), ("player", "P"), ("tie", "T"))}
    big = [[BigRoadEntry(**entry) for entry in column] for column in roads.get("big_road", [])]
    last = status.get("last_outcome")
    return {
        "table": table_id, "version": status.get("seq") or 0, "online": status.get("online", True),
        "state": {"name": name, "text": words.get(f"state.{name}", name), "reason": reason, "faults": faults},
        "game": None, "shoe": status.get("shoe"), "round": status.get("round") or 0, "roads": roads,
        "placed": placed(roads),
        "ask": ask_indicators(big).to_json(),
        "last_round": {"round": status.get("round"), "kind": "normal", "outcome": last} if last else None,
        "last_round_facts": [],
        "shoe_so_far": {"rounds": len(beads), **counts,
                        "percent": {k: round(100 * v / len(beads), 1) if beads else 0 for k, v in counts.items()},
                        **_pair_counts(roads.get("bead_pairs"), len(beads))},
        "rules": None, "limits": None, "journal_problem": None, "labels": words,
    }


def _pair_counts(pairs: Any, beads: int) -> dict[str, int | None]:
    """The shoe's pairs from the feed's ``bead_pairs`` (one per bead; None without them: a feed of
    before 2026-12-06). The page showed their labels blank (a review of the scoreboard); what the
    feed does not carry (naturals) the page leaves out."""
    if not isinstance(pairs, list) or len(pairs) != beads:
        return {"player_pairs": None, "banker_pairs": None}
    return {"player_pairs": sum("P" in p for p in pairs), "banker_pairs": sum("B" in p for p in pairs)}


FLOOR_EVERY_S = 0.2  # the floor page's states at most this often (a table's own page: every message)
_CLIENTS = itertools.count(1)


def client_id() -> str:
    """A client id of this scoreboard alone (see the module docstring)."""
    return f"shoectl-scoreboard-{socket.gethostname()}-{os.getpid()}-{next(_CLIENTS)}"


class MqttFloorSource(TableSource):
    """Every table of the floor from the broker (see the module docstring). ``options``: a
    ``controller.floor.broker.BrokerOptions``."""

    def __init__(self, options: Any) -> None:
        """BrokerError (one line) for TLS files that do not load: before anything is served."""
        from controller.floor.brief_connections import BriefConnections
        from controller.floor.broker import make_client

        super().__init__()
        self._options = options
        self._brief = BriefConnections.of_broker(options)  # another client under this account (the setup's fault)
        self._client: Any = make_client(options, client_id=client_id())
        self._lock = threading.Lock()  # the tables' messages: paho's thread writes, snapshots read
        self._status: dict[str, dict[str, Any]] = {}
        self._roads: dict[str, dict[str, Any]] = {}
        self._rows: dict[str, dict[str, str]] = {}  # table -> lang -> its floor row, as JSON text
        self._messages = 0  # the floor's version: messages taken so far
        self._floor_due = False  # a floor snapshot is scheduled
        self._floor_at = 0.0  # when the last floor snapshot was made (time.monotonic)
        self._outage = False  # the broker is not connected since it was (said once)
        self._started = False
        self._ever_connected = False
        self._no_connection: str | None = "connecting to the broker"  # why not connected; None: connected

    @property
    def failure(self) -> str | None:
        """Why the floor is not followed now (no connection to the broker), or None."""
        why = self._no_connection
        return None if why is None else f"{why} {self._options.url}"

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        from controller.floor.broker import connect_in_background, is_lasting_refusal, refusal, stated_reason
        from controller.floor.topics import ROADS, STATUS, TOPIC_PREFIX

        self._loop = loop
        self._publish(self.floor, self._floor_snapshot())
        client = self._client

        def on_connect(client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
            if getattr(reason_code, "is_failure", False):
                if is_lasting_refusal(reason_code) and not self._ever_connected:
                    self._no_connection = "refused by the broker"
                    self.give_up(refusal(reason_code, self._options))  # retrying cannot help
                    return
                self._brief.unreachable()
                self._lost("scoreboard: the broker refused the connection", "refused by the broker",
                           reason=str(reason_code))
                return
            self._brief.connected(time.monotonic())
            if self._outage and not self._brief.flapping:
                log.warning("scoreboard: connected to the broker again", broker=self._options.url)
            self._outage = False
            self._ever_connected = True
            self._no_connection = None
            client.subscribe([(f"{TOPIC_PREFIX}+/{STATUS}", 1), (f"{TOPIC_PREFIX}+/{ROADS}", 1)])

        def on_disconnect(client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
            if not self._started:
                return
            if (cause := self._brief.lost(time.monotonic())) is not None:
                log.error(f"scoreboard: {cause}")  # a person must act: the setup, not the broker
            if self._brief.flapping:
                self._outage, self._no_connection = True, "another client under this account takes the connection"
            elif self._ever_connected:
                # As the collector says it: what a probe of the port finds, and a reason the broker gave
                said = {"reason": reason} if (reason := stated_reason(reason_code)) is not None else {}
                self._lost("scoreboard: lost the connection to the broker; the floor shows what it had",
                           "lost the connection to the broker", dropped=False, **said)
            else:
                self._lost("scoreboard: cannot reach the broker", "cannot reach the broker", dropped=True)

        client.on_connect = on_connect
        client.on_disconnect = on_disconnect

        def on_connect_fail(client: Any, userdata: Any) -> None:
            self._brief.unreachable()  # an outage: not another client under this account
            self._lost("scoreboard: cannot reach the broker", "cannot reach the broker", dropped=False)

        client.on_connect_fail = on_connect_fail
        client.on_message = self._on_message
        self._started = True
        connect_in_background(client, self._options)

    def _lost(self, event: str, why: str, *, dropped: bool | None = None, **fields: Any) -> None:
        """No connection (``why``, for ``failure``); a warning once per outage (paho retries every
        few seconds: one line, not one a retry). Unless ``dropped`` is None, the outage's first
        warning says what a probe of the broker's port finds (``reach_problem``; ``dropped``: the
        connection was closed before any CONNACK)."""
        if self.fatal is not None:
            return  # given up: the reason is said once, by the command
        if not self._outage and dropped is not None:
            from controller.floor.broker_probe import reach_problem

            problem = reach_problem(self._options, dropped=dropped)
            if problem:
                fields["problem"] = problem
        self._no_connection = why
        if not self._outage:
            self._outage = True
            log.warning(event, broker=self._options.url, **fields)

    def close(self) -> None:
        from controller.floor.broker import stop_client

        if self._started:
            self._started = False
            stop_client(self._client)
        self._close_channels()

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        from controller.floor.topics import ROADS, STATUS, table_of

        try:
            body = json.loads(msg.payload)
        except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError; RecursionError: nested too deep
            body = None
        kind = STATUS if table_of(msg.topic, STATUS) is not None else ROADS
        table = table_of(msg.topic, kind)
        why = "not on a table's status or roads topic" if table is None else feed_shapes.problem(kind, table, body)
        if why is not None:  # checked before anything is kept: the message changes nothing
            log.warning("scoreboard: a floor message that does not fit, ignored", topic=msg.topic, why=why)
            return
        with self._lock:
            if kind == STATUS and body.get("online") is False and table in self._status:
                # The feed's goodbye (its Last Will: the table id and online false) says only that the
                # feed is gone: the table's last known state stays, dimmed (a floor review saw a table
                # killed while betting shown "Closed", without its shoe, its version back to 0).
                body = {**self._status[table], **body}
            (self._status if kind == STATUS else self._roads)[table] = body
            self._messages += 1
            if table not in self._tables:
                self._tables[table] = Channel()
            docs = self._table_docs(table)
            self._rows[table] = {lang: compact_json(floor_row(doc)) for lang, doc in docs.items()}
            schedule = not self._floor_due
            self._floor_due = True
        self._publish(self._tables[table], snapshot_of(int(docs["en"]["version"]), docs))
        if kind == STATUS:
            # The page's "Not live" banner: a table whose feed is gone was shown open for bets,
            # only a small "Offline" reason said otherwise (a review of the scoreboard).
            self._on_loop(self._tables[table].set_running, body.get("online") is not False)
        if schedule:
            self._schedule_floor()

    def _schedule_floor(self) -> None:
        """The floor's next snapshot, ``FLOOR_EVERY_S`` after the last one (at once before there is
        an event loop, or when the last one is older)."""
        loop = self._loop
        delay = max(0.0, self._floor_at + FLOOR_EVERY_S - time.monotonic())
        if loop is None or loop.is_closed():
            self._publish_floor()
            return
        try:
            loop.call_soon_threadsafe(loop.call_later, delay, self._publish_floor)
        except RuntimeError:  # the loop closed meanwhile: nobody is left to show it to
            pass

    def _publish_floor(self) -> None:
        with self._lock:
            self._floor_due = False
            self._floor_at = time.monotonic()
            snapshot = self._floor_snapshot()
        self._publish(self.floor, snapshot)

    def _table_docs(self, table: str) -> dict[str, dict[str, Any]]:
        status = self._status.get(table, {"table_id": table})
        return {lang: feed_state(table, status, self._roads.get(table), lang) for lang in LANGS}

    def _floor_snapshot(self) -> Snapshot:
        """The floor from the tables' kept rows: their JSON joined, nothing rebuilt."""
        from controller.scoreboard.labels import labels

        tables = sorted(self._rows)
        return Snapshot(self._messages, {
            lang: f'{{"tables":[{",".join(self._rows[t][lang] for t in tables)}],"labels":{compact_json(labels(lang))}}}'
            for lang in LANGS})

