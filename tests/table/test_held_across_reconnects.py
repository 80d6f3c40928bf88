"""What a fault holding the table must not lose when a link drops and comes back: a shoe's event
that comes meanwhile (a fact about the shoe: kept, and the table goes on from it when it resumes),
and what the dealer must do for the fault to clear (shown again)."""
from __future__ import annotations

from bench import Bench

from controller.table.io import SendCommand
from firmware_bridge.protocol import messages as m


def test_a_load_reported_while_a_fault_holds_the_table_is_kept_and_the_table_goes_on_when_resumed() -> None:
    """The shoe's link comes back first and delivers SHOE_LOADED while the shuffler's is still down:
    the load is recorded then, and the table burns once both are back. Refused, the event was
    gone (acknowledged once journaled) and the table waited in loading for ever (a CI run, a
    line unplugged every 250 ms)."""
    b = Bench(auto_deal=False)
    b.link("shuffler", True, serial="SH-1", epoch=1)
    b.link("shoe", True, serial="SO-1", epoch=2)
    b.open_and_cut()
    assert b.core.state == "loading"
    b.link("shuffler", False)
    b.link("shoe", False)
    b.link("shoe", True, serial="SO-1", epoch=2)
    assert b.core.state == "fault"
    b.event("shoe", m.ShoeLoaded(len(b.stack)))
    assert b.of("shoe_loaded") == [{"cards": 416}] and not b.of("refused") and b.core.state == "fault"
    assert b.core.snapshot()["state"] == "fault"
    b.link("shuffler", True, serial="SH-1", epoch=1)
    assert b.core.state == "burning"
    replayed = Bench(auto_deal=False)
    replayed.core.recover(b.inputs)
    assert replayed.core.state == "burning"


def _shown(outs: list) -> list[str]:
    return [o.message.text for o in outs if isinstance(o, SendCommand) and isinstance(o.message, m.Display)]


def test_close_door_is_shown_again_when_the_shoe_comes_back_while_its_door_holds_the_table() -> None:
    """The CLOSE DOOR prompt went out as the shoe's link dropped; the door stayed open and the
    table held for ever (a stress run: door-open-at with unplugs). Each reconnect of the shoe
    while a door fault holds shows it again, and so does a restart."""
    b = Bench()
    b.link("shuffler", True, serial="SH-1", epoch=1)
    b.link("shoe", True, serial="SO-1", epoch=2)
    b.open_and_cut()
    assert b.core.state == "betting"
    assert _shown(b.event("shoe", m.Door(open=True))) == ["CLOSE DOOR"] and b.core.state == "fault"
    b.link("shoe", False)
    assert "CLOSE DOOR" in _shown(b.link("shoe", True, serial="SO-1", epoch=2))
    assert "CLOSE DOOR" not in _shown(b.link("shuffler", True, serial="SH-1", epoch=1))  # not the shoe's display
    replayed = Bench()
    replayed.core.recover(b.inputs)
    assert "CLOSE DOOR" in _shown(replayed.core.resume_outputs())
    b.event("shoe", m.Door(open=False))
    assert b.core.state == "betting" and "CLOSE DOOR" not in _shown(b.core.resume_outputs())
