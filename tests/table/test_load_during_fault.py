"""A shoe's event that comes while a fault holds the table is a fact about the shoe: the table keeps
it and goes on from it when it resumes."""
from __future__ import annotations

from bench import Bench

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
