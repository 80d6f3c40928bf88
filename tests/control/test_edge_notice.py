"""The edge monitor's surveillance notice reaches the control socket's event stream of
surveillance's accounts (docs/edge-monitor.md, "The surveillance notice and the threshold": a
``warning`` notice on that stream, as ``shoectl ctl watch`` shows it; this test's account is the
superuser's; tests/control/test_surveillance_audience.py shows that a staff account is not told).

A one-deck EZ Baccarat Rules Submission and the emulator's ``--seed 4`` deal a shoe whose cards
left favour the Dragon 7 after round 2 (tests/cli/test_cli_edges.py checks that on its own); a
one-deck shoe keeps raising notices, so a subscriber that comes in later still sees one."""
from __future__ import annotations

import json
import time
from pathlib import Path

from tests.cli_run import preset_with_decks
from tests.control.running_table import read_reply



def test_the_surveillance_notice_is_on_the_event_stream(start_table, workdir: Path) -> None:
    one_deck = preset_with_decks(workdir / "ez-1-deck.toml", "ez-baccarat", 1)
    t = start_table(workdir, "--submission", str(one_deck), "--seed", "4", "--speed", "20", edge_monitor=True)
    with t.connect(timeout=30) as s:
        s.sendall(json.dumps({"id": "w", "op": "subscribe"}).encode() + b"\n")
        first = read_reply(s)
        assert first is not None and first.get("ok") is True and first.get("surveillance") is True, first
        deadline, notice, buf = time.monotonic() + 40, None, b""
        while notice is None and time.monotonic() < deadline:
            chunk = s.recv(65536)
            assert chunk, f"the table closed the subscription: {t.stderr()}"
            buf += chunk
            *lines, buf = buf.split(b"\n")
            for line in lines:
                event = json.loads(line).get("event", {})
                if event.get("type") == "notice" and event.get("text", "").startswith("surveillance: "):
                    notice = event
                    break
    assert notice is not None, "no surveillance notice on the event stream"
    assert notice["level"] == "warning" and "player edge above 0 after round" in notice["text"]
    assert " +" in notice["text"] and "%" in notice["text"]
    t.assert_stopped_cleanly()
