"""A flood of failed logins at the control socket: the `refusals_summary` the event streams show
names an operator's id of a PIN's shape hidden, as it names an unknown one (a review of the fix
that hid it in the reply and the single refusal: the summary still streamed `4711` in clear beside
`<an id of 4 digits ...>`, telling which such ids exist). The journal keeps the operator's id."""
from __future__ import annotations

import json
import time

from controller.journal import JournalReader
from tests.control.running_table import send_and_read
from tests.control.test_server_in_process import _command, served  # noqa: F401 - the fixture

HIDDEN = "<an id of 4 digits, not shown: it may be a PIN>"


def _summaries(s, until: float, counted: int) -> list[dict]:
    """The ``refusals_summary`` events a subscriber reads until they have counted ``counted``
    refusals (one summary or several: they are written at most every second) or ``until`` (a
    hang detector, never a performance limit)."""
    out: list[dict] = []
    buf = b""
    s.settimeout(0.5)
    while time.monotonic() < until and sum(e["not_journaled"] for e in out) < counted:
        try:
            chunk = s.recv(65536)
        except TimeoutError:
            continue
        if not chunk:
            break
        buf += chunk
        *lines, buf = buf.split(b"\n")
        out += [e["event"] for e in map(json.loads, filter(None, lines))
                if e.get("event", {}).get("type") == "refusals_summary"]
    return out


def test_a_flood_of_failed_logins_streams_an_operators_pin_shaped_id_hidden(served) -> None:  # noqa: F811
    watcher = served()
    watcher.sendall(b'{"id": 1, "op": "subscribe"}\n')
    time.sleep(0.5)  # subscribed before the flood (its reply may come with the first events)
    for n in range(12):  # past the 10 journaled one by one: the rest are counted in a summary
        reply = send_and_read(served(), _command("4711" if n % 2 else "4712", "sit", pin="0000", seat=1))
        assert reply["code"] == "auth"
    summaries = _summaries(watcher, time.monotonic() + 20, counted=2)
    assert sum(e["not_journaled"] for e in summaries) == 2, summaries
    assert "4711" not in json.dumps(summaries), summaries
    # the 11th (4712) and the 12th (4711): one hidden id in one summary, or one in each of two
    assert all(e["operators"] == [HIDDEN] for e in summaries), summaries
    deadline = time.monotonic() + 20
    journaled: list = []
    while sum(p["not_journaled"] for p in journaled) < 2 and time.monotonic() < deadline:  # queued for the table's thread
        with JournalReader.open(served.journal_path) as reader:
            journaled = [e.payload for e in reader.entries() if e.kind == "refusals_summary"]
        time.sleep(0.05)
    assert [o for p in journaled for o in p["operators"]] == [HIDDEN, "4711"], journaled
