"""The floor's MQTT topics (docs/floor.md, Topics and messages), one place for every publisher and
subscriber:

- ``shoectl/v1/tables/<table_id>/journal``: every journal entry, QoS 1, not retained;
- ``shoectl/v1/tables/<table_id>/status``: the table's status, retained (and its Last Will);
- ``shoectl/v1/tables/<table_id>/roads``: the current shoe's roads, retained.

A table id (``shoectl run --table-id``: letters, digits, ``.``, ``_``, ``-``) never holds the
characters MQTT gives a meaning in topics (``/``, ``+``, ``#``).
"""
from __future__ import annotations

from shoectl_config.text import quoted

TOPIC_PREFIX = "shoectl/v1/tables/"
JOURNAL, STATUS, ROADS = "journal", "status", "roads"
JOURNAL_SUBSCRIPTION = f"{TOPIC_PREFIX}+/{JOURNAL}"


def table_topic(table_id: str, leaf: str) -> str:
    """``shoectl/v1/tables/<table_id>/<leaf>``; ValueError for a table id MQTT would misread."""
    if not table_id or any(c in table_id for c in "/+#\0"):
        raise ValueError(f"the table id {quoted(table_id)} cannot be part of an MQTT topic")
    return f"{TOPIC_PREFIX}{table_id}/{leaf}"


def journal_topic(table_id: str) -> str:
    return table_topic(table_id, JOURNAL)


def status_topic(table_id: str) -> str:
    return table_topic(table_id, STATUS)


def roads_topic(table_id: str) -> str:
    return table_topic(table_id, ROADS)


def table_of(topic: str, leaf: str = JOURNAL) -> str | None:
    """The table id of ``shoectl/v1/tables/<id>/<leaf>``, None for any other topic."""
    suffix = "/" + leaf
    if topic.startswith(TOPIC_PREFIX) and topic.endswith(suffix):
        table = topic[len(TOPIC_PREFIX):-len(suffix)]
        if table and "/" not in table:
            return table
    return None
