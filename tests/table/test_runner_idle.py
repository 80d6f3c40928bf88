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
