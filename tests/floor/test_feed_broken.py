"""The feed on a journal whose chain breaks (docs/floor.md, The feed: Reading): it publishes the
entries before the break, then stops with ``journal verify``'s line, exit 2; the entry that breaks
the chain and every later one stay unpublished, and the cursor holds the last good entry; the
table's retained status says the feed is offline (it stopped with a clean disconnect, which sends
no Last Will: its status said "online" for ever)."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from floor.feeds import JOURNAL_TOPIC, export_lines
from floor.helpers import SHOECTL
from floor.mqtt_clients import Subscriber
from services.mosquitto import COLLECTOR, DISPLAY, Mosquitto
from tampering import rechain, rewrite, rows, tamper

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


def test_an_entry_the_feed_cannot_read_in_a_journal_that_verifies_stops_it_with_one_line(
        mosquitto: Mosquitto, table_journal_copy: Path, capsys) -> None:
    """A review of bad inputs: a round_result whose payload no table wrote (its outcome a number),
    the chain recomputed so that the journal verifies, ended `shoectl feed` with a traceback. It
    publishes the entries before it, then stops with one line naming the entry, exit 2 (restarting
    cannot help); the journal is unchanged."""
    entries = rows(table_journal_copy)
    i = next(i for i, r in enumerate(entries) if r[2] == "round_result")
    forged = list(entries[i])
    forged[10] = json.dumps({**json.loads(forged[10]), "outcome": 5}, separators=(",", ":"), sort_keys=True)
    entries[i] = tuple(forged)
    rewrite(table_journal_copy, rechain(entries))
    before = table_journal_copy.read_bytes()
    collector = Subscriber(mosquitto, COLLECTOR, JOURNAL_TOPIC, client_id="content-collector")
    try:
        done = subprocess.run([*SHOECTL, "feed", "--journal", str(table_journal_copy), "--broker", mosquitto.url,
                               *mosquitto.login("T1")], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        said = re.fullmatch(rf"shoectl feed: error: {re.escape(str(table_journal_copy))}: entry {forged[0]} "
                            r"\(round_result\): malformed payload: field 'outcome' of the wrong kind; the feed stops "
                            r"at entry (\d+), the last the broker acknowledged", lines[0] if len(lines) == 1 else "")
        assert said, done.stderr
        # the round's result is read with the record after it: the feed stops there at the latest
        stopped_at = int(said.group(1))
        assert forged[0] - 1 <= stopped_at <= forged[0]
        collector.wait_for(lambda: len(collector.payloads(JOURNAL_TOPIC)) >= stopped_at, "the entries before it")
    finally:
        collector.close()
    assert len(collector.payloads(JOURNAL_TOPIC)) == stopped_at
    assert table_journal_copy.read_bytes() == before
