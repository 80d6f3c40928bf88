"""The one rule for a table's id, for every part that takes one: ``shoectl run --table-id``, the
floor's ingest (backfill, the collector) and the feed. It starts every shoe id (``T1-S0001``),
names the floor's MQTT topics and keys its store, and is printed as it is."""
from __future__ import annotations

import re

TABLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")
TABLE_ID_RULE = "1-32 letters, digits, '.', '_' or '-', starting with a letter or digit"
