"""``TableRunner`` in one process: the real core, a real SQLite journal and the real host links,
wired to an emulated table through the in-memory loopback transport (no pty, no subprocess).

The runner's contract (controller/table/runner.py): a device event is committed to the journal
before the link acknowledges it; an event whose commit failed is not acknowledged, so the device
keeps it and resends it to the next runner, which stores it once; ``stop()`` ends the run and
releases the links."""
from __future__ import annotations

import json
import threading
import time

import pytest
from runner_rig import INF, make_runner, run_in_thread, run_to_the_end

from controller.journal import Journal, JournalReader, verify
from controller.rules.submission import load_preset
from controller.table.core import TableCore
from controller.roles import Role
from controller.table.io import OperatorInput, TableRecord
from controller.table.runner import TableRunner
from firmware_bridge.emulator.loopback import LoopbackTransport
from firmware_bridge.emulator.table import EmulatedTable, read_dealt_log
from firmware_bridge.link import DeviceLink


def journal_cards(path) -> list[tuple[int, int, int]]:
    """(position, rank, suit) of every card read the journal holds, in order."""
    with JournalReader.open(path) as r:
        return [(f["position"], f["rank"], f["suit"]) for e in r.entries(kinds=["input.device"])
                if e.payload["event"] == "CARD_READ" for f in [e.payload["fields"]]]


def dealt_cards(path) -> list[tuple[int, int, int]]:
    """(position, rank, suit) of every card the emulated shoe delivered, in order."""
    return [(d.position, d.card.rank, d.card.suit) for d in read_dealt_log(path)]


def test_a_whole_shoe_is_journaled_card_for_card_and_verifies(tmp_path) -> None:
    table = EmulatedTable(seed=11, speed=INF, dealt_log=tmp_path / "dealt.log")
    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    runner = make_runner(table, journal, shoes=1)
    run_to_the_end(runner)
    journal.close()
    table.close()
    assert runner.error is None
    assert runner.limits.shoes_done == 1 and runner.limits.rounds_done > 50
    cards = journal_cards(tmp_path / "j.db")
    assert len(cards) > 300
    assert cards == dealt_cards(tmp_path / "dealt.log")
    assert verify(tmp_path / "j.db").ok


def test_an_event_is_acknowledged_only_after_its_commit_and_a_failed_commit_is_resent(tmp_path, mocker) -> None:
    """A failing disk (the one edge mocked): the commit of the 40th device event raises; the
    runner stops with that error and the link does not acknowledge the event. A new runner on the
    same journal gets it again from the device and stores it once: the journal equals the shoe."""
    table = EmulatedTable(seed=12, speed=INF, dealt_log=tmp_path / "dealt.log")
    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    real_append = journal.append_batch
    device_batches = 0

    def failing_append(items, **options):
        nonlocal device_batches
        items = list(items)
        if items and getattr(items[0], "kind", None) == "input.device":
            device_batches += 1
            if device_batches == 40:
                raise OSError(28, "No space left on device")
        return real_append(items, **options)

    mocker.patch.object(journal, "append_batch", side_effect=failing_append)
    runner = make_runner(table, journal)
    run_to_the_end(runner)
    assert isinstance(runner.error, OSError)
    stored = journal.last_seq
    journal.close()
    cards_before = len(journal_cards(tmp_path / "j.db"))

    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    runner = make_runner(table, journal, rounds=3)
    run_to_the_end(runner)
    journal.close()
    table.close()
    assert runner.error is None
    cards = journal_cards(tmp_path / "j.db")
    assert len(cards) > cards_before, "the second run went on from where the first stopped"
    assert cards == dealt_cards(tmp_path / "dealt.log"), "a card lost, stored twice or out of order"
    assert verify(tmp_path / "j.db").ok and stored > 0


def test_each_event_is_acknowledged_by_the_owner_right_after_its_commit(tmp_path) -> None:
    """The link hands each event over (``auto_ack=False``) and the owner thread itself
    acknowledges it once the journal holds it: no thread in between, nothing acknowledged
    before its commit, every stored event acknowledged."""
    table = EmulatedTable(seed=14, speed=INF, dealt_log=tmp_path / "dealt.log")
    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    runner = make_runner(table, journal, rounds=3)
    acks: list[tuple[threading.Thread, bool]] = []
    for link in runner.links.values():
        def spy(counter, epoch=None, serial=None, *, link=link, real=link.acknowledge):  # noqa: ANN001, ANN202
            assert serial == link.identity.serial  # the unit the event came from, named
            acks.append((threading.current_thread(), journal.find_device_event(serial, epoch, counter) is not None))
            return real(counter, epoch, serial)
        link.acknowledge = spy
    thread = run_in_thread(runner)
    thread.join(120)
    assert not thread.is_alive() and runner.error is None
    stored = journal.last_seq
    journal.close()
    table.close()
    with JournalReader.open(tmp_path / "j.db") as r:
        device_inputs = len(list(r.entries(kinds=["input.device"])))
    assert stored and len(acks) == device_inputs > 20
    assert all(owner is thread and committed for owner, committed in acks)


def test_a_link_that_would_acknowledge_before_the_commit_is_refused(tmp_path) -> None:
    table = EmulatedTable(seed=15, speed=INF)
    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    runner = make_runner(table, journal)
    runner.links["shoe"] = DeviceLink(LoopbackTransport(table.shoe), on_event=runner.link_options("shoe")["on_event"])
    with pytest.raises(ValueError, match="link_options"):
        runner.start_links()
    assert all(link.state.value == "disconnected" for link in runner.links.values())  # none started
    journal.close()
    table.close()


def test_stop_ends_the_run_promptly_and_releases_the_links(tmp_path) -> None:
    table = EmulatedTable(seed=13, speed=1.0, dealt_log=tmp_path / "dealt.log")
    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    runner = make_runner(table, journal)
    thread = run_in_thread(runner)
    deadline = time.monotonic() + 20
    while not all(link.state.value == "connected" for link in runner.links.values()):
        assert time.monotonic() < deadline, "the links never connected"
        time.sleep(0.01)
    started = time.monotonic()
    runner.stop()
    thread.join(10)
    assert not thread.is_alive() and time.monotonic() - started < 10
    assert runner.error is None
    assert all(link.state.value != "connected" for link in runner.links.values())
    journal.close()
    table.close()
    assert verify(tmp_path / "j.db").ok


def test_the_last_refusal_summary_is_journaled_when_the_table_stops(tmp_path) -> None:
    """Refusals counted in the last second before a stop once vanished: the control socket's
    summary was queued after the owner thread had stopped journaling. Now the runner runs its
    ``on_stopping`` hooks and journals every note still queued before it stops."""
    from controller.control.refusals import SUMMARY_KIND, RefusalJournal

    table = EmulatedTable(seed=13, speed=1.0)
    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    runner = make_runner(table, journal)
    refusals = RefusalJournal(runner.note, burst=1, window_s=60, summary_every_s=3600)
    runner.on_stopping.append(refusals.close)
    thread = run_in_thread(runner)
    for i in range(5):  # one journaled at once, four only counted: no summary before the stop
        assert refusals.refused("auth_refused", {"code": "auth", "operator": f"op{i}"})
    runner.note("bad_request", {"code": "bad_request", "reason": "queued just before the stop"})
    runner.stop()
    thread.join(10)
    assert not thread.is_alive() and runner.error is None
    journal.close()
    table.close()
    with JournalReader.open(tmp_path / "j.db") as r:
        records = [(e.kind, e.payload) for e in r.entries()]
    [summary] = [p for k, p in records if k == SUMMARY_KIND]
    assert summary["not_journaled"] == 4 and summary["by_code"] == {"auth": 4}
    assert [p["reason"] for k, p in records if k == "bad_request"] == ["queued just before the stop"]
    # Closed with the owner's journaling: a refusal after it is neither journaled nor counted, and
    # its caller is told so (it then tells its client the table is stopping, not the refusal).
    assert not refusals.refused("auth_refused", {"code": "auth", "operator": "late"})


class _AckRecorder:
    """The acknowledging edge of a link (``DeviceLink.acknowledge``), recording whether the journal
    already held each event, under the unit's serial the runner names, when it was acknowledged."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal
        self.acks: list[tuple[int, bool]] = []

    def acknowledge(self, counter: int, epoch: int | None = None, serial: str | None = None) -> bool:
        self.acks.append((counter, self.journal.find_device_event(serial, epoch, counter) is not None))
        return True


def test_device_events_queued_together_share_one_commit_each_acknowledged_after_it(tmp_path, mocker) -> None:
    """Group commit: the events waiting in the inbox are decided one after the other and stored in
    one transaction (one fsync); each is acknowledged only once that commit holds it; an event the
    journal already holds is acknowledged without being decided again; the next other input is
    handed back, not lost."""
    from controller.table.io import OperatorInput
    from controller.table.inbox import DeviceItem
    from firmware_bridge.link import LinkEvent
    from firmware_bridge.protocol import Door

    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    journal.append("input.device", {"stored": "before"}, device_serial="SN-1", epoch=7, counter=1)
    runner = TableRunner(TableCore(load_preset("minibaccarat"), table_id="T1"), journal)
    link = _AckRecorder(journal)
    runner.links = {"shoe": link}
    decided = mocker.spy(runner.core, "handle")
    batches = mocker.spy(journal, "append_batch")
    for counter in (1, 2, 3, 4):
        runner.inbox.put(DeviceItem("shoe", LinkEvent("shoe", "SN-1", 7, counter, Door(counter % 2 == 0, counter))))
    behind = OperatorInput("op", "dealer", "status", {})
    runner.inbox.put(behind)
    assert runner._process_device_items(runner.inbox.get_nowait()) is behind
    assert batches.call_count == 1 and decided.call_count == 3
    assert link.acks == [(1, True), (2, True), (3, True), (4, True)]
    with JournalReader.open(tmp_path / "j.db") as reader:
        assert [e.device_counter for e in reader.entries(kinds=["input.device"])] == [1, 2, 3, 4]
    journal.close()


def test_an_acknowledgement_the_link_refuses_is_logged_and_the_table_goes_on(tmp_path) -> None:
    """The link refuses an acknowledgement for an event it no longer counts as handed over (its
    unit went and came back, A then B then A, while the table stored it: docs/link.md section 6):
    the event is stored, the unit resends it, the journal holds it and it is acknowledged then.
    The refusal stopped the table (a review of the unit switch)."""
    from structlog.testing import capture_logs

    from controller.table.inbox import DeviceItem
    from firmware_bridge.link import LinkEvent
    from firmware_bridge.protocol import Door

    class RefusingLink:
        def acknowledge(self, counter: int, epoch: int | None = None, serial: str | None = None) -> bool:
            raise ValueError(f"event {counter} has not been delivered (last: 0)")

    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    runner = TableRunner(TableCore(load_preset("minibaccarat"), table_id="T1"), journal)
    runner.links = {"shoe": RefusingLink()}
    runner.inbox.put(DeviceItem("shoe", LinkEvent("shoe", "SN-1", 7, 1, Door(True, 1))))
    with capture_logs() as logs:
        assert runner._process_device_items(runner.inbox.get_nowait()) is None
    assert journal.find_device_event("SN-1", 7, 1) is not None
    assert [(e["event"], e["log_level"], e["table"], e["serial"], e["epoch"], e["counter"]) for e in logs
            if "acknowledged" in e["event"]] == [("a stored event was not acknowledged", "warning", "T1", "SN-1", 7, 1)]
    journal.close()


def test_a_decision_goes_out_before_its_event_is_acknowledged(tmp_path) -> None:
    """The card path (docs/architecture.md): after the commit the core's outputs go out first (the
    displays, the next prompt to the shoe), then the stored events are acknowledged."""
    from controller.table.inbox import DeviceItem
    from firmware_bridge.link import LinkEvent
    from firmware_bridge.protocol import Door

    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    link = _AckRecorder(journal)
    seen: list[tuple[str, int]] = []  # (output, acknowledgements made when it went out)
    runner = TableRunner(TableCore(load_preset("minibaccarat"), table_id="T1"), journal,
                         on_record=lambda r: seen.append((r.kind, len(link.acks))),
                         on_notice=lambda n: seen.append((n.text, len(link.acks))))
    runner.links = {"shoe": link}
    runner.inbox.put(DeviceItem("shoe", LinkEvent("shoe", "SN-1", 7, 1, Door(True, 1))))
    assert runner._process_device_items(runner.inbox.get_nowait()) is None
    assert seen == [("fault", 0), ("shoe door open", 0)] and link.acks == [(1, True)]
    journal.close()


def test_the_rules_in_force_are_journaled_at_the_start_and_again_only_when_they_change(tmp_path) -> None:
    """A journal says by which Rules Submission its rounds were decided: the runner journals the
    one in force, whole, before the table's first entry of a run, unless it is the one last
    journaled (a restart with the same rules adds nothing; a restart with another file does).
    Once only a floorperson's ``set_submission`` was journaled: a table started with a preset or
    file left no record of its rules (no paytable on the scoreboard, no rules for an audit)."""
    path = tmp_path / "j.db"
    starts = [("minibaccarat", True), ("minibaccarat", False), ("ez-baccarat", True), ("ez-baccarat", False)]
    for preset, journaled in starts:
        table = EmulatedTable(seed=13)
        journal = Journal.open(path, table_id="T1")
        runner = make_runner(table, journal, preset=preset)
        assert runner.journal_rules_in_force() is journaled
        journal.close()
        table.close()
    with JournalReader.open(path) as r:
        entries = list(r.entries())
    assert [(e.seq, e.kind) for e in entries] == [(1, "submission"), (2, "submission")]
    assert [e.payload for e in entries] == [json.loads(json.dumps(load_preset(p).to_dict()))
                                            for p in ("minibaccarat", "ez-baccarat")]
    assert verify(path).ok


def test_shoectl_run_journals_its_rules_before_the_first_shoe(tmp_path) -> None:
    from controller.cli.main import main

    path = tmp_path / "j.db"
    assert main(["run", "--journal", str(path), "--rounds", "1", "--speed", "max", "--seed", "3",
                 "--submission", "ez-baccarat", "--display", "lines"]) == 0
    with JournalReader.open(path) as r:
        kinds_in_order = [e.kind for e in r.entries()]
        [submission] = [e.payload for e in r.entries(kinds=("submission",))]
    assert kinds_in_order.index("submission") < kinds_in_order.index("shoe_start")
    assert submission["source"] == "preset:ez-baccarat" and submission["submission"]["game"] == "ez-baccarat"


@pytest.mark.reg("629a.8(c)(1)")
def test_the_event_stream_shows_a_card_dealt_face_down_as_hidden_and_the_journal_keeps_it(tmp_path) -> None:
    """629a.8(c)(1): the dealer hands "the two cards of the Player's Hand, face down, to the player
    with the highest wager", who turns them over: the control socket's event stream carries a card
    dealt face down hidden; the journal, and the round's result once it is decided, hold it."""
    table = EmulatedTable(seed=5, speed=INF)
    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    runner = make_runner(table, journal, preset="midibaccarat", rounds=3)
    events = runner.subscribe(maxsize=100_000)
    run_to_the_end(runner)
    journal.close()
    table.close()
    assert runner.error is None
    streamed = []
    while not events.empty():
        streamed.append(events.get_nowait())
    cards = [e for e in streamed if e["type"] == "card"]
    assert cards and all(e["card"] == "??" for e in cards)
    results = [e for e in streamed if e["type"] == "round_result"]
    assert results and all("??" not in e["player"]["cards"] for e in results)
    with JournalReader.open(tmp_path / "j.db") as reader:
        entries = list(reader.entries())
    journaled = [e.payload["card"] for e in entries if e.kind == "card"]
    assert len(journaled) == len(cards) and "??" not in journaled
    # each event carries its entry's journal time, which ties it to the entry (a review of clocks:
    # a watcher could not tell when a wager or a result happened, nor find it in the journal)
    times = {(e.kind, e.ts) for e in entries}
    records = [e for e in streamed if e["type"] != "notice"]
    assert records and all((e["type"], e["ts"]) in times for e in records)


def test_a_command_its_caller_stopped_waiting_for_is_never_carried_out(tmp_path) -> None:
    """A command the control socket answered ``timeout`` (the owner busy: a pipe on standard output
    nobody read) stayed on the inbox, and the owner carried it out and journaled it later: given
    again, it was done twice (a concurrency review). Now the caller withdraws it, and the owner,
    taking it later, skips it; a command the owner took is answered."""
    journal = Journal.open(tmp_path / "j.db", table_id="T1")
    runner = TableRunner(TableCore(load_preset("minibaccarat"), table_id="T1"), journal)
    opening = OperatorInput("open", {}, "fp1", Role.FLOORPERSON)
    with pytest.raises(TimeoutError, match="^the table did not take the command in time: it was not carried out$"):
        runner.submit_and_wait(opening, timeout=0.1)  # the owner has not started
    thread = run_in_thread(runner)
    outs = runner.submit_and_wait(opening, timeout=10)
    assert [o.kind for o in outs if isinstance(o, TableRecord)][:1] != ["refused"]  # the table was not open yet
    runner.stop()
    thread.join(10)
    journal.close()
    with JournalReader.open(tmp_path / "j.db") as reader:
        commands = [e.payload["command"] for e in reader.entries() if e.kind == "input.operator"]
    assert commands == ["open"]


@pytest.mark.parametrize("automated", [False, True])
def test_a_fault_that_holds_the_table_is_logged_for_the_person_who_must_act(tmp_path, automated: bool) -> None:
    """A review of logs: a fault that held the table for a floorperson (an unreadable card, a
    count fault) was journaled and shown, and in no log line, so a site's log system saw nothing.
    It is logged: an error where a person must act (operators drive the table, or a fault the
    automated floorperson does not end: a misread), a warning where the automated floorperson acts
    (a review of the day's changes: a misread at an automated table was a warning)."""
    from structlog.testing import capture_logs

    from controller.table.autodealer import AutoDealer

    misread = "card at position 12 could not be read: show it to the floorperson"
    with Journal.open(tmp_path / "j.db", table_id="T1") as journal:
        runner = TableRunner(TableCore(load_preset("minibaccarat"), table_id="T1"), journal,
                             autodealer=AutoDealer(seed=1) if automated else None)
        with capture_logs() as logs:
            runner._dispatch(TableRecord("fault", {"fault": "misread", "reason": misread}))
            runner._dispatch(TableRecord("count_fault", {"problem": "1 card missing", "loaded": 415, "expected": 416}))
            runner._dispatch(TableRecord("fault", {"fault": "link:shoe", "reason": "link to the shoe lost"}))  # said by its outage lines
            runner._dispatch(TableRecord("cover_card", {"position": 402, "during_round": False}))
    # a misread is a person's to end, whoever deals; a count the automated floorperson reshuffles
    assert [(e["log_level"], e["event"], e["fault"]) for e in logs] == [
        ("error", "the table is held by a fault", misread),
        ("warning" if automated else "error", "the table is held by a fault", "1 card missing")]
