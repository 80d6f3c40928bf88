"""A prompt the shoe refused to show (a NAK, the link up) holds the table when it is still the
dealer's step, as any refused command does, and its clearing shows it again: the last shoe's
UNLOAD, a round's DRAW, a held fault's CLOSE DOOR. Refused once the step is past, it is only said.
(The other commands a device did not carry out: test_command_failures.py.)"""
from __future__ import annotations

import pytest

from bench import Bench, refusing, sent

from controller.table.io import CommandFailed
from firmware_bridge.protocol import messages as m


def _shoe_ended_with_its_unload_refused() -> tuple[Bench, list[CommandFailed]]:
    """A bench dealt to the end of its first shoe whose shoe refused the UNLOAD prompt (NAK BUSY),
    and the refusals, not yet fed (they reach the core after the round that ended the shoe)."""
    b = Bench()
    b.open_and_cut()
    refusals, obey = refusing(b, lambda o: isinstance(o.message, m.Display) and o.message.text.startswith("UNLOAD"))
    while b.core.shoe.id == "T1-S0001":
        b.play_round()
    b._device_acts = obey
    return b, refusals


@pytest.mark.reg("681a.7(d)(1)")
def test_an_unload_the_shoe_refused_to_show_holds_the_table_until_it_is_shown() -> None:
    """681a.7(d)(1): "Collect and reshuffle the cards by removing the cards remaining in the shoe
    and placing them in the discard rack". The shoe refused to show the UNLOAD (a NAK, the link
    up): the dealer never took the last shoe's cards out, and the next stack could not go in
    (a separate shoe waited in ``loading``). The refusal now holds the table in a fault; its
    clearing shows the UNLOAD again before the cut, and the shoe is made ready as usual."""
    b, refusals = _shoe_ended_with_its_unload_refused()
    assert b.core.state == "cutting" and refusals == [refusals[0]] and refusals[0].prompt == "UNLOAD T1-S0001"
    b.feed(refusals[0])
    assert b.core.state == "fault" and b.core.saved_state == "cutting" and list(b.core.faults) == ["command:shoe"]
    assert 'the dealer did not see "UNLOAD T1-S0001"' in b.of("fault")[-1]["reason"]
    shown = [d.text for d in sent(b.op("clear_fault", key="command:shoe"), m.Display)]
    assert shown[0] == "UNLOAD T1-S0001" and shown[-1] == b.core.prompt and b.core.state == "cutting"
    b.open_and_cut()
    assert b.core.state == "betting" and b.core.shoe.id == "T1-S0002"


def test_a_prompt_refused_after_its_step_is_past_is_only_said() -> None:
    """An UNLOAD refused, its refusal reaching the table once the next stack is in (the dealer
    had the UNLOAD another way), tells nothing the dealer still has to do: only said."""
    b, refusals = _shoe_ended_with_its_unload_refused()
    b.open_and_cut()
    assert b.core.state == "betting"
    outs = b.feed(refusals[0])
    assert b.core.state == "betting" and not b.core.faults
    assert [o.text for o in outs if hasattr(o, "text")] and not [o for o in outs if hasattr(o, "kind")]


def test_a_close_door_the_shoe_refused_to_show_is_shown_again_when_its_fault_is_cleared() -> None:
    """The door opened mid-shoe and the shoe refused to show CLOSE DOOR: the dealer never closed
    it and the table stayed held for ever (a run with ``refuse-display=CLOSE``: the refusal came
    while the door's fault held the table, and was only said). It is a fault of its own; its
    clearing, while the door still holds the table, shows CLOSE DOOR again."""
    b = Bench()
    b.open_and_cut()
    b.event("shoe", m.Door(True))
    assert list(b.core.faults) == ["door:shoe"]
    b.feed(CommandFailed("shoe", "DISPLAY", "DISPLAY refused: BUSY", refused=True, code="BUSY", prompt="CLOSE DOOR"))
    assert list(b.core.faults) == ["door:shoe", "command:shoe"] and 'did not see "CLOSE DOOR"' in b.of("fault")[-1]["reason"]
    assert [d.text for d in sent(b.op("clear_fault", key="command:shoe"), m.Display)] == ["CLOSE DOOR"]
    assert list(b.core.faults) == ["door:shoe"] and b.core.state == "fault"
    b.event("shoe", m.Door(False))
    assert b.core.state == "betting" and not b.core.faults


def test_a_draw_the_shoe_refused_to_show_holds_the_round_until_it_is_shown() -> None:
    """The shoe refused to show the round's first DRAW (NAK BUSY): the dealer drew nothing and the
    round waited for ever. The refusal holds the table mid-round; the clearing shows the DRAW
    again, and the round is dealt and settled."""
    b = Bench()
    b.open_and_cut()
    refusals, obey = refusing(b, lambda o: isinstance(o.message, m.Display) and o.message.text.startswith("DRAW")
                              and not refusals)  # the first DRAW only
    b.play_round([(1, "banker", 100)])
    assert b.core.state == "dealing" and len(refusals) == 1 and not b.of("round_result")
    b._device_acts = obey
    b.feed(refusals[0])
    assert b.core.state == "fault" and b.core.saved_state == "dealing" and list(b.core.faults) == ["command:shoe"]
    shown = [d.text for d in sent(b.op("clear_fault", key="command:shoe"), m.Display)]
    assert shown[0] == refusals[0].prompt
    assert b.core.state == "betting" and len(b.of("round_result")) == 1 and len(b.of("settlement")) == 1
