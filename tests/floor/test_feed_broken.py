"""The feed on a journal whose chain breaks (docs/floor.md, The feed: Reading): it publishes the
entries before the break, then stops with ``journal verify``'s line, exit 2; the entry that breaks
the chain and every later one stay unpublished, and the cursor holds the last good entry; the
table's retained status says the feed is offline (it stopped with a clean disconnect, which sends
no Last Will: its status said "online" for ever)."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from floor.feeds import JOURNAL_TOPIC, export_lines
from floor.helpers import SHOECTL
from floor.mqtt_clients import Subscriber
from services.mosquitto import COLLECTOR, DISPLAY, Mosquitto
from tampering import tamper

BREAK_AT = 40


def test_a_feed_publishes_up_to_a_break_then_stops_with_one_line(mosquitto: Mosquitto, table_journal_copy: Path,
                                                                  capsys) -> None:
    expected = export_lines(capsys, table_journal_copy)
    assert len(expected) > BREAK_AT + 10
    tamper(table_journal_copy, "UPDATE entries SET payload = ? WHERE seq = ?", params=('{"forged": true}', BREAK_AT))
    collector = Subscriber(mosquitto, COLLECTOR, JOURNAL_TOPIC, client_id="break-collector")
    try:
        done = subprocess.run([*SHOECTL, "feed", "--journal", str(table_journal_copy), "--broker", mosquitto.url,
                               *mosquitto.login("T1")], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("shoectl feed: error: "), done.stderr
        assert f"FAILED at entry {BREAK_AT}" in lines[0] and f"({BREAK_AT - 1} entries good before it)" in lines[0]
        assert "Traceback" not in done.stderr and "None" not in done.stderr
        good = expected[:BREAK_AT - 1]
        collector.wait_for(lambda: len(collector.payloads(JOURNAL_TOPIC)) >= len(good), "the entries before the break")
    finally:
        collector.close()
    assert collector.payloads(JOURNAL_TOPIC) == good  # those before the break, in order, and nothing after
    assert json.loads(Path(f"{table_journal_copy}.feed-cursor").read_text())["seq"] == BREAK_AT - 1
    late = Subscriber(mosquitto, DISPLAY, "shoectl/v1/tables/T1/status", client_id="late-display")
    try:
        late.wait_for(lambda: late.payloads("shoectl/v1/tables/T1/status"), "the retained status")
    finally:
        late.close()
    assert [json.loads(p) for p in late.payloads("shoectl/v1/tables/T1/status")] == [{"table_id": "T1", "online": False}]
