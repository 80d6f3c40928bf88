"""A table that starts on a journal hears every device before it re-issues anything, and then
re-issues only what it sent before it stopped.

The journal left the table shuffling shoe 2 (the first shoe was dealt and reconciled). The table
starts again with new devices (another emulated table: new event epochs), and the shoe's link
is slow to connect (a USB shoe still enumerating). The shuffle must not be re-issued before the
shoe has said which unit answers: a new shoe found only once the stack had reached it would give
the shoe up under the dealer's hands (its SHOE_LOADED refused, the table waiting for ever).
"""
from __future__ import annotations

import threading
import time
from typing import Any

from controller.journal import Journal, JournalReader, verify
from controller.journal.replay import replay
from controller.table.devices_heard import DevicesHeard
from controller.roles import Role
from controller.table.io import DeviceStatus, OperatorInput, SendCommand
from firmware_bridge.protocol import Deliver, DeliverTarget, Display, StatusRequest
from firmware_bridge.emulator.loopback import LoopbackTransport
from firmware_bridge.emulator.table import EmulatedTable
from firmware_bridge.link import DeviceLink
from firmware_bridge.profiles import get_profile

from runner_rig import INF, make_runner, run_in_thread, run_to_the_end


class SlowToOpen(LoopbackTransport):
    """A device whose first connection takes ``delay`` seconds (the one edge made slow)."""

    def __init__(self, device, delay: float) -> None:
        super().__init__(device)
        self.delay = delay

    def open(self) -> None:
        if self.delay:
            time.sleep(self.delay)
            self.delay = 0.0
        super().open()


def test_a_restarted_table_re_issues_the_shuffle_only_after_it_heard_every_device(tmp_path) -> None:
    path = tmp_path / "j.db"
    first = EmulatedTable(seed=11, speed=INF)
    with Journal.open(path, table_id="T1") as journal:
        runner = make_runner(first, journal, shoes=1)
        run_to_the_end(runner)
        assert runner.error is None and runner.core.state == "shuffling"
    first.close()

    again = EmulatedTable(seed=12, speed=INF)
    with Journal.open(path, table_id="T1") as journal:
        runner = make_runner(again, journal, shoes=1)
        profile = get_profile(again.shoe.name)
        seed = runner.last_delivered_for("shoe")
        runner.links["shoe"] = DeviceLink(SlowToOpen(again.shoe, 0.5), timing=profile.timing, profile_name=profile.name,
                                          **runner.link_options("shoe"), last_delivered=seed[1] if seed else None,
                                          last_delivered_serial=seed[0] if seed else None)
        started = journal.last_seq
        run_to_the_end(runner, timeout=90)
    again.close()
    assert runner.error is None and runner.limits.shoes_done == 1
    with JournalReader.open(path) as r:
        later = list(r.entries(since_seq=started))
    kinds = [e.kind for e in later]
    assert not [e.payload for e in later if e.kind == "refused"], "an input was refused"
    replaced = [e.payload["device_role"] for e in later if e.kind == "device_replaced"]
    assert sorted(replaced) == ["shoe", "shuffler"]
    assert "shoe_restarted" not in kinds  # neither new unit held the cards of shoe 2
    first_status = {role: next(i for i, e in enumerate(later) if e.kind == "input.status"
                               and e.payload.get("device_role") == role) for role in ("shoe", "shuffler")}
    first_shuffler_event = next(i for i, e in enumerate(later) if e.kind == "input.device"
                                and e.payload["device_role"] == "shuffler")
    assert max(first_status.values()) < first_shuffler_event  # the shuffle waited for the shoe
    assert verify(path).ok


def test_a_table_opened_before_its_shoe_connects_does_not_deliver_the_stack_twice(tmp_path) -> None:
    """A floorperson opens a new table while the shoe's link is still connecting (a loaded
    machine, a USB shoe enumerating). The shuffler shuffles and delivers the stack for the cut.
    When the shoe answers, the start's resume must not send that DELIVER again: the shuffler,
    with nothing left to deliver, refused it (WRONG_STATE) and the table went into a fault before
    the cut (found under load in ``tests/control/test_edge.py``)."""
    table = EmulatedTable(seed=5, speed=INF)
    with Journal.open(tmp_path / "j.db", table_id="T1") as journal:
        runner = make_runner(table, journal)
        runner.autodealer = None  # the people at the table act, not the automated dealer
        profile = get_profile(table.shoe.name)
        runner.links["shoe"] = DeviceLink(SlowToOpen(table.shoe, 1.0), timing=profile.timing, profile_name=profile.name,
                                          **runner.link_options("shoe"))
        thread = run_in_thread(runner)
        try:
            runner.submit_and_wait(OperatorInput("open", {}, "fp1", Role.FLOORPERSON))
            deadline = time.monotonic() + 30
            while not runner.core.devices.get("shoe") and time.monotonic() < deadline:
                time.sleep(0.02)  # the shoe answers after a second
            assert runner.core.devices.get("shoe"), "the shoe never answered"
            # One more turn of the owner after the resume (refused: the table is open already),
            # then a STATUS behind whatever the resume gave the shuffler's sender: once it is
            # answered, a DELIVER sent again has been refused and its failure queued, and the
            # owner's next turn has journaled it.
            runner.submit_and_wait(OperatorInput("open", {}, "fp1", Role.FLOORPERSON))
            behind = _answered_after(runner, "shuffler", StatusRequest())
            assert behind.wait(30), "the shuffler's sender never reached the STATUS queued behind the resume"
            runner.submit_and_wait(OperatorInput("open", {}, "fp1", Role.FLOORPERSON))
            state, faults = runner.core.state, dict(runner.core.faults)
        finally:
            runner.stop()
            thread.join(30)
    table.close()
    with JournalReader.open(tmp_path / "j.db") as r:
        failed = [e.payload for e in r.entries(kinds=("input.command_failed",))]
        shuffles = [e.payload for e in r.entries(kinds=("input.device",)) if e.payload["event"] == "SHUFFLE_DONE"]
    assert len(shuffles) == 1
    assert failed == [] and faults == {} and state == "cutting", (failed, faults, state)


def _answered_after(runner, role: str, marker: Any) -> threading.Event:  # noqa: ANN001 - a TableRunner
    """Queue ``marker`` on the sender of ``role`` (behind every command queued before it); the
    event is set once the link has had its reply."""
    link, answered = runner.links[role], threading.Event()
    request = link.request

    def watched(command: Any, timeout: float | None = None) -> Any:
        try:
            return request(command, timeout)
        finally:
            if command is marker:
                answered.set()
    link.request = watched
    runner._senders.send(SendCommand(role, marker))  # the table's own queue to the device: its order is the point
    return answered


def test_the_start_re_issues_only_what_the_table_has_not_sent_since_it_started() -> None:
    heard = DevicesHeard(["shuffler", "shoe"], wait=5.0)
    deliver = SendCommand("shuffler", Deliver(DeliverTarget.DEALER))
    heard.sent(SendCommand("shuffler", Deliver(DeliverTarget.DEALER)))  # an equal command, sent while starting
    prompt, other = SendCommand("shoe", Display("CUT")), SendCommand("shuffler", Deliver(DeliverTarget.SHOE))
    assert heard.to_reissue([deliver, prompt, other]) == [prompt, other]


def test_a_device_that_never_answers_holds_the_start_for_the_wait_only() -> None:
    now = [100.0]
    heard = DevicesHeard(["shuffler", "shoe"], wait=5.0, clock=lambda: now[0])
    heard.heard(DeviceStatus("shuffler", True, serial="A", epoch=1))
    heard.heard(DeviceStatus("shoe", False, "connect failed: not present"))  # not an answer
    assert not heard.ready and heard.time_left() == 5.0
    now[0] += 5.0
    assert heard.ready and heard.time_left() == 0.0
    both = DevicesHeard(["shuffler", "shoe"], wait=5.0, clock=lambda: now[0])
    for role in ("shoe", "shuffler"):
        both.heard(DeviceStatus(role, True, serial=role, epoch=1))
    assert both.ready


def _stop(runner, thread: threading.Thread) -> None:  # noqa: ANN001 - a TableRunner
    runner.stop()
    thread.join(30)
    assert not thread.is_alive(), "the runner did not stop"


def test_a_restart_before_the_cut_delivers_again_and_a_stack_already_delivered_is_no_fault(tmp_path) -> None:
    """The table stops in ``cutting`` after the shuffler delivered the stack to the dealer, before
    the cut. The restart cannot know whether its DELIVER went through before the process stopped,
    so it sends it again; the shuffler, with nothing left to deliver, refuses it (WRONG_STATE).
    That refusal says the dealer has the stack: said, not a fault (it was a ``command:shuffler``
    fault a floorperson had to clear). A replay of the journal decides the same."""
    table = EmulatedTable(seed=5, speed=INF)
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        runner = make_runner(table, journal)
        runner.autodealer = None
        thread = run_in_thread(runner)
        try:
            runner.submit_and_wait(OperatorInput("open", {}, "fp1", Role.FLOORPERSON))
            deadline = time.monotonic() + 30
            while table.dealer.hand is None or runner.core.state != "cutting":  # the dealer has the stack
                assert time.monotonic() < deadline, "the stack never reached the dealer"
                time.sleep(0.02)
        finally:
            _stop(runner, thread)
    with Journal.open(path, table_id="T1") as journal:
        runner = make_runner(table, journal)
        runner.autodealer = None
        assert runner.core.state == "cutting"
        thread = run_in_thread(runner)
        try:
            deadline = time.monotonic() + 30
            while runner._starting is not None or runner.turns == 0:  # the start's resume is sent
                assert time.monotonic() < deadline, "the restarted table never heard its devices"
                time.sleep(0.02)
            assert _answered_after(runner, "shuffler", StatusRequest()).wait(30)
            runner.submit_and_wait(OperatorInput("open", {}, "fp1", Role.FLOORPERSON))  # a turn: the failure is in
            state, faults = runner.core.state, dict(runner.core.faults)
            runner.submit_and_wait(OperatorInput("cut", {"position": 100}, "d1", Role.DEALER))
            cut = runner.core.shoe.cut_position
        finally:
            _stop(runner, thread)
    table.close()
    with JournalReader.open(path) as r:
        failed = [e.payload for e in r.entries(kinds=("input.command_failed",))]
        entries = list(r.entries())
    starts = [i for i, e in enumerate(entries) if e.kind == "controller_started"]
    assert len(starts) == 2  # each start is journaled, with the inputs it replayed and where it goes on
    inputs_before = sum(1 for e in entries[:starts[1]] if e.kind.startswith("input."))
    assert [(entries[i].payload["replayed"], entries[i].payload["state"], entries[i].shoe_id) for i in starts] == \
        [(0, "closed", None), (inputs_before, "cutting", "T1-S0001")]
    # surveillance's reconstruction shows the restart (and the first start, before the shoe: first among its events)
    [shoe] = [d for d in replay(entries) if d["type"] == "shoe"]
    assert [ev["seq"] for ev in shoe["events"] if ev["kind"] == "controller_started"] == \
        [entries[starts[0]].seq, entries[starts[1]].seq]
    assert [(f["command"], f.get("code"), f.get("resent")) for f in failed] == [("DELIVER", "WRONG_STATE", True)]
    assert faults == {} and state == "cutting" and cut == 100, (faults, state)
    with Journal.open(path, table_id="T1") as journal:  # a replay of it all decides the same
        again = make_runner(EmulatedTable(seed=5, speed=INF), journal)
        assert again.core.state == "cutting" and not again.core.faults and again.core.shoe.cut_position == 100
    assert verify(path).ok


def test_a_resumed_table_lets_go_of_the_inputs_it_replayed(tmp_path) -> None:
    """A long-run review: a table resumed on a month's journal kept every input it had replayed
    (about 0.5 MB a shoe: 600 MB after 1,200 shoes) for as long as it ran; it keeps their count and
    each device's serial."""
    import gc

    from controller.table.io import DeviceInput

    path = tmp_path / "j.db"
    for rounds in (8, 10):
        table = EmulatedTable(seed=4, speed=INF)
        journal = Journal.open(path, table_id="T1")
        runner = make_runner(table, journal, rounds=rounds)  # recovers from the journal there
        if rounds == 10:
            break
        try:
            run_to_the_end(runner)
        finally:
            journal.close()
            table.close()
    try:
        gc.collect()
        assert runner._replayed > 100 and set(runner._serial_of_role) == {"shuffler", "shoe"}
        alive = sum(1 for o in gc.get_objects() if isinstance(o, DeviceInput))
        assert alive < 10, f"{alive} device inputs still held after the replay"
    finally:
        journal.close()
        table.close()
