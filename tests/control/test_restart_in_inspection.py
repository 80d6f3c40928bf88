"""A table stopped while an idle table's cards are spread for inspection (681a.5(g)) and started
again on its journal: the cards are still spread, the player who arrived first is still the one
who may inspect them, and only ``inspection_done`` moves them on (a restart neither deals them
nor reshuffles them). ``shoectl run --manual`` on the built-in emulator, stopped by SIGTERM and by
SIGKILL, both ways through the journal's recovery."""
from __future__ import annotations

import signal

import pytest

from tests.control.test_ctl_procedures import _load_a_shoe, ctl


@pytest.mark.slow
@pytest.mark.reg("681a.5(g)")
@pytest.mark.parametrize("stop", ["sigterm", "sigkill"])
def test_a_restart_during_the_inspection_keeps_the_cards_spread_for_the_same_player(start_table, workdir, stop) -> None:
    """681a.5(g): with no gaming activity "the cards shall be removed from the dealing shoe and
    the discard rack and spread out on the table face down", and only "After the first player
    arriving at the table is afforded an opportunity to visually inspect the cards" are they
    washed or put into the shuffler. A restart of the controller in between is neither."""
    t = start_table(workdir, manual=True)
    ctl(t, "fp1", "open")
    _load_a_shoe(t)
    ctl(t, "fp1", "declare_idle")
    assert t.wait_state("inspection") == "inspection"
    ctl(t, "d1", "sit", "seat=3")
    before = t.status()
    if stop == "sigkill":
        t.proc.send_signal(signal.SIGKILL)
        t.proc.wait(timeout=30)
    else:
        assert t.stop() in (0, 128 + signal.SIGTERM), t.stderr()

    again = start_table(workdir, manual=True)
    after = again.status()
    assert (after["state"], after["prompt"]) == (before["state"], before["prompt"]) == ("inspection", "SPREAD")
    assert len(again.journaled("shoe_start")) == 1  # nothing was reshuffled or loaded by the restart
    ctl(again, "fp1", "inspection_done")
    _load_a_shoe(again, "seat=3")  # the seat taken before the restart is offered the cut (681a.5(b))
    assert [r["clause"] for r in again.journaled("inspection")] == ["681a.5(g)"]
    assert [c["ok"] for c in again.journaled("cardset")] == [True]
    again.assert_stopped_cleanly()
