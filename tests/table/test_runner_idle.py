"""The table's owner loop does not spin while nobody has anything to do: the automated dealer
decides on the core's state alone, so once it had nothing to do the loop waits for an input
(issue 15: ``shoectl run`` idle CPU)."""
from __future__ import annotations

import time

from controller.journal import Journal
from firmware_bridge.emulator.table import EmulatedTable

from runner_rig import make_runner, run_in_thread


def test_the_owner_loop_waits_while_the_shuffler_shuffles(tmp_path) -> None:
    """At real speed the shuffler takes seconds: the automated dealer waits for it, and the loop
    turns about five times a second (its liveness beat) plus once per input, not every few
    milliseconds."""
    table = EmulatedTable(seed=13, speed=1.0)
    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    runner = make_runner(table, journal)
    thread = run_in_thread(runner)
    try:
        deadline = time.monotonic() + 20
        while runner.core.state != "shuffling":
            assert time.monotonic() < deadline and runner.error is None, f"never shuffled ({runner.core.state})"
            time.sleep(0.01)
        turns, started = runner.turns, time.monotonic()
        time.sleep(1.0)
        elapsed = time.monotonic() - started
        assert runner.core.state == "shuffling"  # still waiting for the shuffler: nothing to do all along
        assert runner.turns - turns <= 10 * elapsed + 5, f"{runner.turns - turns} turns in {elapsed:.2f} s"
    finally:
        runner.stop()
        thread.join(10)
        journal.close()
        table.close()
    assert runner.error is None


def test_an_idle_sender_sleeps_until_a_command_or_the_join(monkeypatch) -> None:
    """An idle table's senders do not poll five times a second: each waits for a command (or at
    most ``IDLE_WAKE``), and ``join`` wakes it at once."""
    import threading

    from controller.table import senders
    from controller.table.io import SendCommand

    monkeypatch.setattr(senders, "IDLE_WAKE", 60.0)  # a join that waited for it would hang
    sent: list[object] = []

    class Link:
        def wait_connected(self, timeout: float) -> bool:
            return True

        def request(self, msg: object) -> None:
            sent.append(msg)

    stopping = threading.Event()
    box = senders.DeviceSenders(stopping, failed=lambda failure: None, log=None)
    box.start("shoe", Link())
    assert box.send(SendCommand("shoe", "DISPLAY"))
    deadline = time.monotonic() + 10
    while not sent and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sent == ["DISPLAY"]
    stopping.set()
    box.join(timeout=10)
    assert not any(thread.is_alive() for thread in box._threads)


def test_the_events_a_sender_gives_up_are_recorded_and_none_when_none_is_stalled() -> None:
    """``GiveUpMissingEvents`` (a floorperson cleared ``events:shoe``): the sender has the link give
    up the gap stalled now and journals which counters (``events_given_up``, protocol E7: the
    host records the irregularity); when none is stalled any more, nothing is given up or noted."""
    import threading

    from controller.table import senders
    from controller.table.io import GiveUpMissingEvents

    stalled = [("SO-1", 7, 3, 3), None]
    notes: list[tuple[str, dict]] = []

    class Link:
        def accept_stalled_gap(self) -> tuple[str, int, int, int] | None:
            return stalled.pop(0)

    stopping = threading.Event()
    box = senders.DeviceSenders(stopping, failed=lambda failure: None, log=None,
                                note=lambda kind, payload: notes.append((kind, payload)))
    box.start("shoe", Link())
    assert box.send(GiveUpMissingEvents("shoe")) and box.send(GiveUpMissingEvents("shoe"))
    deadline = time.monotonic() + 10
    while stalled and time.monotonic() < deadline:
        time.sleep(0.01)
    stopping.set()
    box.join(timeout=10)
    assert notes == [("events_given_up", {"device_role": "shoe", "device_serial": "SO-1", "epoch": 7,
                                          "first": 3, "last": 3})]
