"""``controller.control.lines``: a device's line for a person, from the link's counters."""
from __future__ import annotations

from types import SimpleNamespace

from controller.control.lines import line_report, line_text
from firmware_bridge.link import LinkState
from firmware_bridge.link.device_link import STAT_NAMES


def _link(state: LinkState, serial: str | None, wait_s: float, **counts: int) -> SimpleNamespace:
    stats = dict.fromkeys(STAT_NAMES, 0) | counts
    identity = SimpleNamespace(serial=serial) if serial else None
    return SimpleNamespace(state=state, identity=identity, stats=stats, retransmit_timeout=wait_s)


def test_each_line_says_its_state_and_what_the_line_cost() -> None:
    report = line_report({
        "shuffler": _link(LinkState.CONNECTING, None, 0.25),
        "shoe": _link(LinkState.CONNECTED, "SN-1", 0.0213, commands=1234, retransmissions=12, timeouts=3,
                      early_retransmissions=9, frames_dropped=17, reconnects=3, connections=2),
    })
    assert list(report) == ["shoe", "shuffler"]
    assert report["shoe"] == {"state": "connected", "device": "SN-1", "commands": 1234, "sent_again": 12,
                              "no_reply": 3, "frames_damaged": 17, "reconnects": 1, "reply_wait_ms": 21.3}
    assert line_text(report) == [
        "shoe      connected SN-1: 1,234 commands, 12 sent again (1.0 per 100 commands, 3 of them after no reply), "
        "17 damaged frames, 1 reconnects; replies awaited 21.3 ms",
        "shuffler  connecting: 0 commands, 0 sent again, 0 damaged frames, 0 reconnects; replies awaited 250 ms",
    ]
    assert line_text({}) == []


def test_the_commands_sent_again_after_no_reply_are_never_more_than_those_sent_again() -> None:
    """A review read "7 sent again (..., 9 of them after no reply)": the link's ``timeouts`` counts
    the last wait of a command given up (a HELLO unanswered while a device is away), which is
    not sent again. ``no_reply`` is the retransmissions that did not follow a damaged frame."""
    link = _link(LinkState.CONNECTED, "SN-1", 0.02, commands=50, retransmissions=7, early_retransmissions=2,
                 timeouts=9, reconnects=5, connections=3)
    report = line_report({"shoe": link})
    assert report["shoe"]["sent_again"] == 7 and report["shoe"]["no_reply"] == 5
    assert "7 sent again (14.0 per 100 commands, 5 of them after no reply)" in line_text(report)[0]


def test_reconnects_are_the_times_the_link_came_back_not_its_tries() -> None:
    """A lab's review: each unplug was one outage in the journal and two "reconnects" in `ctl
    status` (a failed try while the device was away, then the one that connected)."""
    tries = line_report({"shoe": _link(LinkState.CONNECTED, "SN-1", 0.02, reconnects=12, connections=7)})
    assert tries["shoe"]["reconnects"] == 6
    assert line_report({"shoe": _link(LinkState.CONNECTING, None, 0.02, reconnects=4)})["shoe"]["reconnects"] == 0
