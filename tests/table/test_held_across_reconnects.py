"""What a fault holding the table must not lose when a link drops and comes back: a shoe's event
that comes meanwhile (a fact about the shoe: kept, and the table goes on from it when it resumes),
and what the dealer must do for the fault to clear (shown again)."""
from __future__ import annotations

from bench import Bench, sent

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
    return [d.text for d in sent(outs, m.Display)]


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


def _shuffles(outs: list) -> int:
    return len(sent(outs, m.Shuffle))


def shuffling_table() -> Bench:
    """A table whose shuffler was asked to shuffle and is still at it (no answer yet)."""
    b = Bench()
    b._device_acts = lambda o: None
    b.link("shuffler", True, serial="SH-1", epoch=1)
    b.link("shoe", True, serial="SO-1", epoch=2)
    b.op("open")
    assert b.core.state == "shuffling"
    return b


def test_a_shuffle_done_while_a_fault_holds_the_table_is_kept_and_no_second_shuffle_is_asked_for() -> None:
    """At a real pace the lines dropped during a shuffle: the shuffler's link came back first with
    SHUFFLE_DONE, which was refused; the resume asked for another shuffle; the DELIVER after it
    found the shuffler busy shuffling again, and the table waited in loading for ever (a stress run
    at --speed 20, lines unplugged every 700 ms)."""
    b = shuffling_table()
    b.link("shuffler", False)
    b.link("shoe", False)
    b.link("shuffler", True, serial="SH-1", epoch=1)
    b.event("shuffler", m.ShuffleDone(416, 416))
    assert b.core.state == "fault" and not b.of("refused")
    outs = b.link("shoe", True, serial="SO-1", epoch=2)
    assert b.core.state == "cutting" and _shuffles(outs) == 0
    assert sent(outs, m.Deliver)
    replayed = Bench()
    replayed.core.recover(b.inputs)
    assert replayed.core.state == "cutting"


def test_a_resume_asks_for_the_shuffle_again_and_a_shuffler_still_shuffling_is_no_fault() -> None:
    """A shuffler that restarted during the shuffle dropped it, so every resume asks for it again;
    one still shuffling refuses that BUSY, which is said at info, not a fault (as a command fault,
    the automated floorperson's clearing asked again and closed the table after three)."""
    from controller.table.io import CommandFailed

    b = shuffling_table()
    b.link("shuffler", False)
    assert _shuffles(b.link("shuffler", True, serial="SH-1", epoch=1)) == 1
    outs = b.feed(CommandFailed("shuffler", "SHUFFLE", "SHUFFLE refused: BUSY", refused=True, code="BUSY"))
    assert not b.core.faults and b.core.state == "shuffling"
    assert any("still shuffling" in o.text for o in outs if hasattr(o, "text"))


def test_a_second_shuffle_asked_for_at_a_reconnect_is_delivered_when_it_is_done() -> None:
    """The resume asked for the shuffle again while the first one's SHUFFLE_DONE was on its way: the
    table went on to the cut on the first, the shuffler (shuffling again) refused the DELIVER BUSY,
    and its second SHUFFLE_DONE was refused: the stack stayed in the shuffler (a stress run at
    --speed 20). Now the BUSY is no fault and the second SHUFFLE_DONE sends the DELIVER."""
    from controller.roles import Role
    from controller.table.io import CommandFailed

    b = shuffling_table()
    b.link("shuffler", False)
    assert _shuffles(b.link("shuffler", True, serial="SH-1", epoch=1)) == 1  # asked for again
    b.event("shuffler", m.ShuffleDone(416, 416))                               # the first one's
    assert b.core.state == "cutting"
    outs = b.feed(CommandFailed("shuffler", "DELIVER", "DELIVER refused: BUSY", refused=True, code="BUSY"))
    assert not b.core.faults and any("busy" in o.text for o in outs if hasattr(o, "text"))
    b.op("cut", Role.DEALER, position=100)
    b.op("cover", Role.DEALER, from_bottom=14)
    b.op("load", Role.DEALER)
    assert b.core.state == "loading"
    outs = b.event("shuffler", m.ShuffleDone(416, 416))                        # the second one's
    assert not b.of("refused") and b.core.state == "loading"
    assert sent(outs, m.Deliver) == [m.Deliver(m.DeliverTarget.DEALER)]


def test_a_second_shuffle_done_after_the_stack_was_delivered_is_said_not_refused() -> None:
    """The same race, with the DELIVER taken: the shuffler carried out the SHUFFLE sent again at the
    reconnect, then the DELIVER, so its second SHUFFLE_DONE comes while the stack is being loaded.
    The stack delivered is the one shuffled again, nothing dealt from it: said at info, and the load
    goes on (before, the report was refused with a warning: an automatic shoe, noise and unplugs)."""
    from controller.roles import Role

    b = shuffling_table()
    b.link("shuffler", False)
    assert _shuffles(b.link("shuffler", True, serial="SH-1", epoch=1)) == 1
    b.event("shuffler", m.ShuffleDone(416, 416))
    assert b.core.state == "cutting"
    b.op("cut", Role.DEALER, position=100)
    b.op("cover", Role.DEALER, from_bottom=14)
    b.op("load", Role.DEALER)
    outs = b.event("shuffler", m.ShuffleDone(416, 416))
    assert not b.of("refused") and not b.core.faults and b.core.state == "loading"
    assert not sent(outs, m.Deliver)
    assert any("shuffled the stack again" in o.text for o in outs if hasattr(o, "text"))
    b.event("shoe", m.ShoeLoaded(416))
    assert b.core.state != "loading" and b.of("shoe_loaded")[-1] == {"cards": 416}
