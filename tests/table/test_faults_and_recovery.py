"""Faults, refusals and recovery in the table core: a door opened, a link lost, a misread card or a
jam holds the table and it resumes exactly; a floorperson restarts the shoe; bad or untimely
commands are refused without change; replaying the journaled inputs (also the Rules Submission set
at opening) reaches the same state. Through the core's inputs and outputs (sans-I/O), with
scripted devices (bench.py)."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from bench import Bench

from controller.rules.submission import load_preset
from controller.table.core import TableCore
from controller.table.io import DeviceStatus, GiveUpMissingEvents, OperatorInput
from controller.table.journaling import input_from, status_input_record
from controller.roles import Role
from firmware_bridge.protocol import messages as m


# -- faults, refusals, recovery ----------------------------------------------------------------------
def test_door_open_mid_round_holds_everything_and_resumes_exactly() -> None:
    b = Bench()
    b.open_and_cut()
    b.cards_into_a_round(2)
    b.event("shoe", m.Door(True))
    assert b.core.state == "fault"
    b.draw()  # a card taken while the door was open is not lost
    assert b.of("card_deferred")
    b.auto_deal = True
    b.event("shoe", m.Door(False))
    assert b.core.state == "betting"
    assert len(b.of("round_result")) == 1 and len([s for s in b.of("settlement")]) == 1


def test_link_lost_and_back_reissues_the_prompt_and_settles_once() -> None:
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "banker", 100)])
    b.draw()
    b.link("shoe", False)
    assert b.core.state == "fault"
    b.op("clear_fault")
    assert "link:shoe clears when the shoe reconnects" in b.of("refused")[-1]["reason"] and b.core.state == "fault"
    before = len(b.sent)
    b.link("shoe", True)
    assert b.core.state == "dealing"
    assert [s.message for s in b.sent[before:before + 2]] == [m.GateUnlock(), m.Display(f"DRAW BANKER @{b.drawn + 1}")]
    b.auto_deal = True
    b.draw()
    assert len(b.of("settlement")) == 1


def test_events_that_never_come_hold_the_table_until_a_floorperson_gives_them_up() -> None:
    """The shoe's link holds its events behind one the shoe never sends again however often it is
    asked (a device fault, docs/protocol.md E7): the cards behind it never reach the table. The
    table is held by a fault that names the missing events; a floorperson's clear_fault gives them
    up (the link's decision, sent in order with the shoe's commands) and the table resumes. Before,
    the report reached the table as a reconnect and nothing held it (a device-control review)."""
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "banker", 100)])
    b.draw()
    reason = ("events 9 never arrived although the device was asked 8 times to resend them: a device fault; the "
              "events after them wait until this host gives them up (docs/protocol.md E7)")
    b.feed(DeviceStatus("shoe", True, reason, stalled=True))
    assert b.core.state == "fault" and list(b.core.faults) == ["events:shoe"]
    assert b.core.faults["events:shoe"].startswith(f"the shoe's {reason}: check the shoe; clear_fault key=events:shoe")
    before = len(b.sent)
    b.op("clear_fault", key="events:shoe")
    assert b.sent[before] == GiveUpMissingEvents("shoe")
    assert b.core.state == "dealing" and b.of("fault_cleared")[-1]["faults"] == ["events:shoe"]
    # A replay of the journal holds and resumes the same way (the report is journaled as it came).
    record = status_input_record(DeviceStatus("shoe", True, reason, stalled=True), None, None)
    assert record.payload["stalled"] is True
    assert input_from(SimpleNamespace(kind=record.kind, payload=record.payload, seq=1, schema_version=2)) == \
        DeviceStatus("shoe", True, reason, stalled=True)


def test_a_stall_of_an_earlier_start_ends_at_the_first_connect_of_the_new_link() -> None:
    """A review of the emulator: after the controller restarted, the event the stalled link had
    waited for came from the shoe and was journaled, yet the replayed fault ``events:shoe`` stayed
    (the new link knows of no stall, so it never says it ended), and the table stayed held. The
    first connect of each link after a start ends it; the link says so again if the events still do
    not come. A reconnect within one start ends nothing: that link still knows its gap."""
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "banker", 100)])
    b.draw()
    b.feed(DeviceStatus("shoe", True, ""))  # the shoe's link of this start came up long ago
    b.feed(DeviceStatus("shoe", True, "events 9 never arrived although the device was asked 8 times to resend them",
                        stalled=True))
    b.feed(DeviceStatus("shoe", False, "unplugged"))
    b.feed(DeviceStatus("shoe", True, ""))
    assert b.core.state == "fault" and list(b.core.faults) == ["events:shoe"]
    b.core.restarted()  # the controller starts again (its controller_started record)
    b.feed(DeviceStatus("shoe", True, ""))
    assert b.of("fault_cleared")[-1] == {"faults": ["events:shoe"], "by": "the link started anew with the controller"}
    assert b.core.state == "dealing" and not b.core.faults
    b.auto_deal = True
    b.draw()
    assert b.of("round_result"), "the round is completed"


def test_events_that_come_after_all_end_their_fault_and_the_round_goes_on() -> None:
    """The events the shoe's link waited for come after all (the shoe sent them once more): the
    link delivers them in order, after an input of its own saying so (``stall_ended``, journaled),
    which ends the fault ``events:shoe``; the table deals on without a floorperson. Before, the
    fault stayed until one cleared it, the link no longer holding anything."""
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "banker", 100)])
    b.draw()
    b.feed(DeviceStatus("shoe", True, "events 9 never arrived although the device was asked 8 times to resend them",
                        stalled=True))
    assert b.core.state == "fault"
    b.event("shoe", m.Door(False))  # an event alone ends nothing: the link's report does
    assert list(b.core.faults) == ["events:shoe"]
    b.feed(DeviceStatus("shoe", True, "the link delivers the events again", stall_ended=True))
    assert b.of("fault_cleared")[-1] == {"faults": ["events:shoe"], "by": "events came through again"}
    assert b.core.state == "dealing" and not b.core.faults
    b.auto_deal = True
    b.draw()  # the round's second card, and the rest
    assert b.of("round_result"), "the round is completed"
    record = status_input_record(DeviceStatus("shoe", True, "the link delivers the events again", stall_ended=True),
                                 None, None)
    assert record.payload["stall_ended"] is True and "stalled" not in record.payload
    assert input_from(SimpleNamespace(kind=record.kind, payload=record.payload, seq=1, schema_version=2)) == \
        DeviceStatus("shoe", True, "the link delivers the events again", stall_ended=True)


def test_a_journal_of_before_the_stall_end_was_an_input_replays_as_it_was_decided() -> None:
    """A journal written before 2026-12-06: the missing events came, the fault stayed, and a
    floorperson's clear_fault ended it. It resumes: with no ``stall_ended`` input in it, the fault
    stays on replay as it did (a review of the first fix, which ended the fault at the first event:
    the journaled clear_fault was then refused on replay, and the table did not resume)."""
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "banker", 100)])
    b.draw()
    b.feed(DeviceStatus("shoe", True, "events 9 never arrived", stalled=True))
    b.draw()  # the missing event came; no stall_ended input (the old link wiring)
    assert "events:shoe" in b.core.faults
    b.op("clear_fault", key="events:shoe")
    assert not b.core.faults and not b.of("refused")
    assert Bench(submission=b.sub).core.recover(b.inputs) is None  # every verdict the same


def test_misread_card_is_entered_by_the_floorperson() -> None:
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "player", 100)])
    b.event("shoe", m.CardRead(0xFF, 0xFF, False, 1, 0))
    assert b.core.state == "fault" and "misread" in b.core.faults
    b.op("enter_card", Role.DEALER, card="9H")
    assert "needs a floorperson" in b.of("refused")[-1]["reason"]
    b.op("enter_card", card="9H")
    assert b.of("card")[-1]["card"] == "9H" and b.core.state == "dealing"


def test_unknown_commands_bad_arguments_and_wrong_states_are_refused_without_change() -> None:
    b = Bench()
    snap = b.core.snapshot()
    for cmd, args in [("fly", {}), ("wager", {"seat": 1}), ("no_more_bets", {}), ("load", {})]:
        outs = b.op(cmd, Role.SUPERVISOR, **args)
        assert [o.kind for o in outs if hasattr(o, "kind")] == ["refused"]
    assert b.core.snapshot() == snap


@pytest.mark.parametrize("cut_at", [5, 40, 97, 150])
def test_recovery_by_replaying_inputs_reaches_the_same_state(cut_at: int) -> None:
    a = Bench(seed=9)
    a.open_and_cut(seats=(1, 2))
    for i in range(12):
        a.play_round([(1, "player", 100 + i), (2, "banker", 50)])
    inputs = a.inputs
    k = min(cut_at, len(inputs) - 1)
    b = Bench(seed=9)
    b.core.recover(inputs[:k])
    for inp in inputs[k:]:
        b.core.handle(inp)
    full = Bench(seed=9)
    for inp in inputs:
        full.core.handle(inp)
    assert b.core.snapshot() == full.core.snapshot() == a.core.snapshot()


def test_restart_shoe_voids_the_round_returns_wagers_and_reshuffles() -> None:
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    b.op("no_more_bets", Role.DEALER)
    b.draw()
    b.op("restart_shoe", Role.DEALER)
    assert "needs a floorperson" in b.of("refused")[-1]["reason"]
    b.op("restart_shoe", reason="emulator restarted")
    assert b.of("round_result")[-1]["kind"] == "void"
    assert b.of("settlement")[-1]["result"] == "push"
    assert b.core.state == "cutting" and b.core.shoe.id.endswith("S0002")


def test_clearing_a_jam_resets_the_mechanism_then_resumes_with_the_gate_open() -> None:
    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "player", 100)])
    b.event("shoe", m.Jam(m.JamLocation.SHOE_EXIT))
    assert b.core.state == "fault"
    before = len(b.sent)
    b.op("clear_fault")
    msgs = [s.message for s in b.sent[before:]]
    assert msgs[0] == m.Reset(m.ResetKind.MECHANISM) and m.GateUnlock() in msgs
    assert b.core.state == "dealing" and isinstance(msgs[-1], m.Display) and msgs[-1].text.startswith("DRAW PLAYER")


def test_floorperson_sets_the_rules_submission_at_opening_and_it_replays() -> None:
    from controller.table.journaling import inputs_from, operator_input_record

    b = Bench()
    mini = load_preset("midibaccarat").to_dict()
    mini.pop("source")
    b.op("set_submission", Role.DEALER, submission=mini)
    assert "needs a floorperson" in b.of("refused")[-1]["reason"]
    b.op("set_submission", submission=mini, source="preset:midibaccarat")
    assert b.core.sub.name == "Midibaccarat, 6 decks" and b.of("submission")[-1]["source"] == "preset:midibaccarat"
    b.open_and_cut()
    b.op("set_submission", submission=mini)
    assert "only while the table is closed" in b.of("refused")[-1]["reason"]
    # journaled as an input and replayed, the submission comes back whole (no file is read)
    from types import SimpleNamespace

    entries = []
    for inp in b.inputs:
        if hasattr(inp, "command"):
            rec = operator_input_record(inp, None, None)
            entries.append(SimpleNamespace(kind=rec.kind, payload=json.loads(json.dumps(rec.payload)), operator=rec.operator,
                                           device_counter=None))
    replayed = list(inputs_from(entries))
    again = TableCore(load_preset("minibaccarat"))
    again.handle(replayed[1])
    assert again.sub == b.core.sub


def test_rules_of_more_decks_than_the_devices_hold_are_refused_at_the_table_changing_nothing() -> None:
    """`shoectl run` refuses devices that hold fewer decks than the Rules Submission deals, at its
    start; a floorperson's `set_submission` at the running table was not checked: a table of 6-deck
    devices took 8-deck rules, opened into a fault, and could then not be resumed with its devices
    at all (a configuration review). The core knows what its devices hold (``deck_capacity``, from
    their profiles, journaled with its start) and refuses such rules, changing nothing."""
    from controller.table.journaling import capabilities_of

    b = Bench("midibaccarat")
    b.core.deck_capacity = 6
    assert capabilities_of(b.core)["deck_capacity"] == 6
    eight, six = load_preset("minibaccarat").to_dict(), load_preset("ez-baccarat").to_dict()
    eight.pop("source"), six.pop("source")
    six["submission"]["decks"] = 6
    before = b.core.snapshot()
    b.op("set_submission", submission=eight, source="preset:minibaccarat")
    assert b.of("refused")[-1]["reason"] == "Minibaccarat, 8 decks deals 8 decks, and the table's devices hold 6"
    assert b.core.snapshot() == before and b.core.sub.decks == 6 and not b.of("submission")
    b.op("set_submission", submission=six, source="six")
    assert b.core.sub.decks == 6 and b.of("submission")[-1]["source"] == "six"  # as many as they hold: taken


def test_a_restart_ordered_without_a_reason_records_who_ordered_it() -> None:
    """It was recorded as "the devices lost the shoe" whoever ordered it, devices or not."""
    b = Bench()
    b.open_and_cut()
    b.op("restart_shoe", operator="fp7")
    assert b.of("shoe_restarted")[-1]["reason"] == "ordered by fp7, no reason given"


def test_a_round_a_fault_holds_is_given_up_by_restart_shoe_once_the_faults_are_cleared() -> None:
    """An examiner's review: a round held by a jam could be neither voided nor given up, only
    dealt on once the jam was cleared. `restart_shoe` while a fault holds the table gives its shoe
    up once the faults are cleared: the round void, its wagers returned once each, a new shoe; it
    changes nothing before then but what it says it will do."""
    b = Bench()
    b.dealing_by_hand()
    b.draw()
    b.event("shoe", m.Jam(m.JamLocation.SHOE_EXIT))
    assert b.core.state == "fault"
    shoe = b.core.shoe.id
    b.op("void_round")
    assert b.of("refused")[-1]["reason"].endswith("; restart_shoe gives up the shoe a fault holds once the faults "
                                                   "are cleared")
    b.op("restart_shoe", reason="the jammed card is torn")
    assert b.core.state == "fault" and b.core.shoe.id == shoe and not b.of("shoe_restarted")
    assert b.core.snapshot()["shoe_given_up"] == "the jammed card is torn"  # the status says it until then
    b.op("restart_shoe")  # once is enough
    assert b.of("refused")[-1]["reason"].startswith("the shoe in play is given up already, once the faults are cleared")
    b.op("void_round")  # and no longer pointed to
    assert b.of("refused")[-1]["reason"].endswith("; its shoe is given up already, once the faults are cleared "
                                                   "(the jammed card is torn)")
    b.op("clear_fault", key="jam:shoe")
    assert b.of("shoe_restarted") == [{"reason": "the jammed card is torn"}]
    [void] = [p for p in b.of("round_result") if p.get("kind") == "void"]
    assert void["reason"] == "the jammed card is torn"
    assert [(p["seat"], p["result"]) for p in b.of("settlement")] == [(1, "push")]
    assert b.core.shoe.id != shoe and b.core.state in ("shuffling", "cutting")
    assert b.core.snapshot()["shoe_given_up"] is None


def test_restart_shoe_gives_up_a_shoe_held_by_a_misread_without_the_card_entered() -> None:
    """A card the shoe could not read belongs to the shoe given up: no one need enter it first
    (an examiner's review: the only way on from a misread was to type a card)."""
    b = Bench()
    b.dealing_by_hand()
    b.misread_at = {b.drawn + 1}
    b.draw()
    assert b.core.state == "fault" and "misread" in b.core.faults
    b.op("restart_shoe", reason="misread card damaged")
    assert b.of("fault_cleared")[-1] == {"faults": ["misread"], "by": "shoe given up"}
    assert b.of("shoe_restarted") == [{"reason": "misread card damaged"}]
    assert b.core.state != "fault" and not b.core.faults


def test_a_floorpersons_restart_shoe_keeps_its_reason_when_a_device_comes_back_new_before_the_fault_clears() -> None:
    """A review: a floorperson's `restart_shoe reason=torn` while a jam held the table, then the
    shoe came back as a new device (the controller restarted): the void and the shoe_restarted
    record named the device, and the floorperson's order was gone from them."""
    b = Bench()
    b.link("shuffler", True, serial="SH-1", epoch=1)
    b.link("shoe", True, serial="SO-1", epoch=2)
    b.dealing_by_hand()
    b.draw()
    b.event("shoe", m.Jam(m.JamLocation.SHOE_EXIT))
    b.op("restart_shoe", reason="torn")
    b.link("shoe", False)
    b.link("shoe", True, serial="SO-1", epoch=3)  # a new event epoch: it lost its memory
    assert b.of("device_replaced")[-1]["shoe_lost"] is True
    b.op("clear_fault", key="jam:shoe")
    assert b.of("shoe_restarted") == [{"reason": "torn"}]
    assert [p["reason"] for p in b.of("round_result") if p.get("kind") == "void"] == ["torn"]


def test_a_command_refused_when_journaled_is_not_acted_on_by_a_version_that_takes_it() -> None:
    """A review: a journal of an earlier version holding `restart_shoe` refused during a jam no
    longer resumed ("taken now and refused when it was journaled"). A refused command changed
    nothing: it is not fed again, and the table resumes as it was."""
    b = Bench()
    b.dealing_by_hand()
    b.draw()
    b.event("shoe", m.Jam(m.JamLocation.SHOE_EXIT))
    restart = OperatorInput("restart_shoe", {}, "fp1", Role.FLOORPERSON)
    inputs = [*b.inputs, restart]
    verdicts = [None] * len(b.inputs) + ["nothing to restart while the table is held by a fault (jam:shoe: ...)"]
    fresh = Bench()
    assert fresh.core.recover(inputs, verdicts) is None
    assert fresh.core.state == "fault" and fresh.core.snapshot()["shoe_given_up"] is None
    assert fresh.core.snapshot() == b.core.snapshot()


def test_a_card_misread_after_restart_shoe_in_a_fault_needs_no_entering() -> None:
    """A review: the shuffler's link down (a fault), `restart_shoe`, then the dealer's next card
    misread: once the link was back, the table stayed held for a card of the shoe given up."""
    b = Bench()
    b.link("shuffler", True, serial="SH-1", epoch=1)
    b.link("shoe", True, serial="SO-1", epoch=2)
    b.dealing_by_hand()
    b.link("shuffler", False)
    assert b.core.state == "fault"
    b.op("restart_shoe", reason="cards damaged")
    b.misread_at = {b.drawn + 1}
    b.draw()
    assert "misread" in b.core.faults
    b.link("shuffler", True, serial="SH-1", epoch=1)
    assert b.of("shoe_restarted") == [{"reason": "cards damaged"}]
    assert b.core.state != "fault" and not b.core.faults


def test_a_stall_of_an_earlier_start_ended_by_another_unit_sends_it_nothing_before_it_is_decided() -> None:
    """A reread of the change: the stall of an earlier start was ended with a resume of the table,
    before the connect's identity was looked at, so a shoe come back as another unit was sent the
    round's next commands (GATE_UNLOCK, DISPLAY) before the table found it replaced. docs/
    architecture.md: "a device found to be another unit is decided before any command could move
    cards towards it"."""
    from controller.table.io import SendCommand, TableRecord

    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.play_round([(1, "banker", 100)])
    b.draw()
    b.feed(DeviceStatus("shoe", True, "", "SN-1", 7))
    b.feed(DeviceStatus("shoe", True, "events 9 never arrived although the device was asked 8 times to resend them",
                        stalled=True))
    assert b.core.state == "fault" and list(b.core.faults) == ["events:shoe"]
    b.core.restarted()
    outs = b.feed(DeviceStatus("shoe", True, "", "SN-2", 1))  # another unit answers
    kinds = [o.kind if isinstance(o, TableRecord) else type(o).__name__ for o in outs]
    replaced = kinds.index("device_replaced")
    assert not [o for o in outs[:replaced] if isinstance(o, SendCommand)], kinds
    assert b.of("fault_cleared")[-1] == {"faults": ["events:shoe"], "by": "the link started anew with the controller"}


def test_a_journal_the_automated_dealer_dealt_resumed_for_operators_takes_a_persons_sign_in(tmp_path) -> None:
    """A review of restarts: each start's record says who drives the table from there (``driver``),
    the restarted table (and `audit decisions`, deciding the journal again) applies it where the
    record lies: resumed for operators, a table the automated dealer dealt takes a person's
    dealer_sign_in (it refused every one: no person could deal)."""
    from controller.journal import Journal, JournalReader, kinds
    from controller.roles import Role
    from controller.rules.submission import load_preset
    from controller.table.core import TableCore
    from controller.table.io import OperatorInput
    from controller.table.redecision import redecide
    from controller.table.runner import TableRunner
    from firmware_bridge.emulator.table import EmulatedTable
    from runner_rig import INF, make_runner, run_in_thread, run_to_the_end

    path = tmp_path / "j.db"
    table = EmulatedTable(seed=5, speed=INF)
    with Journal.open(path, table_id="T1") as journal:
        run_to_the_end(make_runner(table, journal, rounds=2))  # the automated dealer deals two rounds
    table.close()
    with Journal.open(path, table_id="T1") as journal:
        runner = TableRunner(TableCore(load_preset("minibaccarat"), table_id="T1"), journal)  # operators: no autodealer
        runner.recover_from_journal()
        assert runner.core.dealer_operator == "auto-dealer" and runner.core.automated_dealer_runs  # as the journal left it
        thread = run_in_thread(runner)
        try:
            outs = runner.submit_and_wait(OperatorInput("dealer_sign_in", {"dealer": "Ann"}, "d2", Role.DEALER))
        finally:
            runner.stop()
            thread.join(10)
    assert [o.payload for o in outs if getattr(o, "kind", None) == kinds.DEALER] == [{"dealer": "Ann"}], outs
    with JournalReader.open(path) as reader:
        starts = [e.payload["driver"] for e in reader.entries() if e.kind == kinds.CONTROLLER_STARTED]
        assert starts == ["automated", "operators"]
        decided = redecide(reader.entries())
    assert decided.ok, decided.difference
