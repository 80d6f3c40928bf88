"""``MqttFloorSource``: every table of the floor, from the floor feed's retained MQTT topics
``shoectl/v1/tables/<id>/status`` and ``.../roads`` (docs/floor.md), through the floor's own
broker client (``controller.floor.broker``; under the documented ACL, log in as
``display@floor``, which may read them).

A table appears with its first status or roads message (a retained one arrives at once on
subscribing). Each message replaces what the source holds of its table and publishes two
snapshots: the floor (``{"tables": [floor_row...], "labels"}``, tables sorted by id) and the
table's own state. The feed carries less than a journal, so a table's state here is
``TableView.to_json``'s shape with what the status and the roads give: ``table``, ``version``
(the status's ``seq``), ``state`` (in words), ``shoe``, ``round``, ``roads``, ``ask`` (from the
roads, ``controller.roadmaps.ask``), ``last_round`` (its number and outcome only), ``shoe_so_far``
(the counts the bead plate gives), ``online``; ``rules`` and ``limits`` null. A message that is not
a JSON object is logged and ignored. Paho's network thread receives; the event loop publishes.
"""
from __future__ import annotations

import asyncio
import json
import threading
from typing import Any

import structlog

from controller.scoreboard.sources import LANGS, TableSource, floor_row, snapshot_of
from controller.scoreboard.sse import Channel

__all__ = ["MqttFloorSource", "feed_state"]

log = structlog.get_logger()
_STATE_SHAPE_EMPTY_ROADS = {"bead_plate": [], "big_road": [], "big_eye_boy": [], "small_road": [], "cockroach_pig": []}


def feed_state(table_id: str, status: dict[str, Any], roads: dict[str, Any] | None, lang: str) -> dict[str, Any]:
    """A table's state from its feed's ``status`` and ``roads`` (see the module docstring)."""
    from controller.roadmaps import BigRoadEntry, ask_indicators
    from controller.scoreboard.labels import labels

    words = labels(lang)
    roads = roads or _STATE_SHAPE_EMPTY_ROADS
    name = status.get("state") or "closed"
    faults = list(status.get("faults") or [])
    reason = "; ".join(str(f.get("reason", "")) for f in faults) or None
    if status.get("online") is False:
        reason = words.get("offline", "offline")
    beads = roads.get("bead_plate", [])
    counts = {side: beads.count(letter) for side, letter in (("banker", "B"), ("player", "P"), ("tie", "T"))}
    big = [[BigRoadEntry(**entry) for entry in column] for column in roads.get("big_road", [])]
    last = status.get("last_outcome")
    return {
        "table": table_id, "version": status.get("seq") or 0, "online": status.get("online", True),
        "state": {"name": name, "text": words.get(f"state.{name}", name), "reason": reason, "faults": faults},
        "game": None, "shoe": status.get("shoe"), "round": status.get("round") or 0, "roads": roads,
        "ask": ask_indicators(big).to_json(),
        "last_round": {"round": status.get("round"), "kind": "normal", "outcome": last} if last else None,
        "last_round_facts": [],
        "shoe_so_far": {"rounds": len(beads), **counts,
                        "percent": {k: round(100 * v / len(beads), 1) if beads else 0 for k, v in counts.items()}},
        "rules": None, "limits": None, "labels": words,
    }


class MqttFloorSource(TableSource):
    """Every table of the floor from the broker (see the module docstring). ``options``: a
    ``controller.floor.broker.BrokerOptions``."""

    def __init__(self, options: Any) -> None:
        """BrokerError (one line) for TLS files that do not load: before anything is served."""
        from controller.floor.broker import make_client

        super().__init__()
        self._options = options
        self._client: Any = make_client(options, client_id="shoectl-scoreboard")
        self._lock = threading.Lock()  # the tables' messages: paho's thread writes, snapshots read
        self._status: dict[str, dict[str, Any]] = {}
        self._roads: dict[str, dict[str, Any]] = {}
        self._messages = 0  # the floor's version: messages taken so far
        self._started = False

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        from controller.floor.broker import connect_in_background
        from controller.floor.topics import ROADS, STATUS, TOPIC_PREFIX

        self._loop = loop
        self._publish(self.floor, self._floor_snapshot())
        client = self._client

        def on_connect(client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
            if getattr(reason_code, "is_failure", False):
                log.warning("scoreboard: the broker refused the connection", reason=str(reason_code))
                return
            client.subscribe([(f"{TOPIC_PREFIX}+/{STATUS}", 1), (f"{TOPIC_PREFIX}+/{ROADS}", 1)])

        client.on_connect = on_connect
        client.on_message = self._on_message
        self._started = True
        connect_in_background(client, self._options)

    def close(self) -> None:
        if self._started:
            self._started = False
            self._client.disconnect()
            self._client.loop_stop()
        self._close_channels()

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        from controller.floor.topics import ROADS, STATUS, table_of

        try:
            body = json.loads(msg.payload)
        except (UnicodeDecodeError, ValueError):
            body = None
        table = table_of(msg.topic, STATUS) or table_of(msg.topic, ROADS)
        if table is None or not isinstance(body, dict):
            log.warning("scoreboard: a floor message that is not a JSON object", topic=msg.topic)
            return
        with self._lock:
            (self._status if msg.topic.endswith("/" + STATUS) else self._roads)[table] = body
            self._messages += 1
            new_table = table not in self._tables
            if new_table:
                self._tables[table] = Channel()
            table_snapshot = self._table_snapshot(table)
            floor_snapshot = self._floor_snapshot()
        self._publish(self._tables[table], table_snapshot)
        self._publish(self.floor, floor_snapshot)

    def _table_docs(self, table: str) -> dict[str, dict[str, Any]]:
        status = self._status.get(table, {"table_id": table})
        return {lang: feed_state(table, status, self._roads.get(table), lang) for lang in LANGS}

    def _table_snapshot(self, table: str) -> Any:
        docs = self._table_docs(table)
        return snapshot_of(int(docs["en"]["version"]), docs)

    def _floor_snapshot(self) -> Any:
        from controller.scoreboard.labels import labels

        tables = sorted(set(self._status) | set(self._roads))
        per_lang = {lang: [floor_row(self._table_docs(t)[lang]) for t in tables] for lang in LANGS}
        return snapshot_of(self._messages, {lang: {"tables": rows, "labels": labels(lang)} for lang, rows in per_lang.items()})
