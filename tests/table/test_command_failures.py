"""A command a device did not carry out is an input the core decides on (journaled first, so a
restart decides the same): refused (a NAK) holds the table in a fault a floorperson clears, after
which the resume sends again what the state needs; a refused prompt, a refusal while a fault
already holds the table, or a command whose outcome is unknown (the link went down) is only said."""
from __future__ import annotations

from bench import Bench

from controller.journal import kinds
from controller.roles import Role
from controller.table.io import CommandFailed, SendCommand
from controller.table.journaling import command_failed_record, input_from
from firmware_bridge.protocol import messages as m


def opened_without_answer() -> Bench:
    """A table that asked the shuffler to shuffle and has not heard back."""
    b = Bench()
    b.base = None
    b._device_acts = lambda o: None  # the scripted devices stay silent
    b.op("open")
    assert b.core.state == "shuffling"
    return b


def test_a_refused_shuffle_holds_the_table_until_a_floorperson_clears_it_then_asks_again() -> None:
    b = opened_without_answer()
    b.feed(CommandFailed("shuffler", "SHUFFLE", "SHUFFLE refused: BUSY", refused=True))
    assert b.core.state == "fault" and "command:shuffler" in b.core.faults
    assert "did not carry out SHUFFLE" in b.of("fault")[-1]["reason"]
    b.op("wager", Role.DEALER, seat=1, kind="banker", amount=100)
    assert b.of("refused")[-1]["input"] == "wager"
    outs = b.op("clear_fault", key="command:shuffler")
    assert b.core.state == "shuffling"
    assert any(isinstance(o, SendCommand) and isinstance(o.message, m.Shuffle) for o in outs)


def test_an_unknown_outcome_a_refused_prompt_and_a_refusal_during_a_fault_are_only_said() -> None:
    b = opened_without_answer()
    for failure in (CommandFailed("shuffler", "SHUFFLE", "no reply", refused=False),
                    CommandFailed("shoe", "DISPLAY", "DISPLAY refused: BUSY", refused=True)):
        outs = b.feed(failure)
        assert b.core.state == "shuffling" and not b.core.faults
        assert [o.text for o in outs if hasattr(o, "text")] and not [o for o in outs if hasattr(o, "kind")]
    b.feed(CommandFailed("shuffler", "SHUFFLE", "SHUFFLE refused: BUSY", refused=True))
    assert list(b.core.faults) == ["command:shuffler"]
    b.feed(CommandFailed("shoe", "GATE_UNLOCK", "GATE_UNLOCK refused: DOOR_OPEN", refused=True))
    assert list(b.core.faults) == ["command:shuffler"]


def test_a_failed_command_is_journaled_as_an_input_and_read_back_the_same() -> None:
    failure = CommandFailed("shoe", "GATE_UNLOCK", "GATE_UNLOCK refused: WRONG_STATE", refused=True)
    record = command_failed_record(failure, "T1-S0001", 3)
    assert record.kind == kinds.INPUT_COMMAND_FAILED and kinds.INPUT_COMMAND_FAILED in kinds.INPUT_KINDS
    assert kinds.payload_problem(record.kind, record.payload) is None

    class Stored:  # what the journal gives back for the record
        kind, payload, schema_version, seq = record.kind, record.payload, 2, 1

    assert input_from(Stored()) == failure
