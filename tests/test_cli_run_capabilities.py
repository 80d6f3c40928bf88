"""``shoectl run`` gives the table core what the attached devices' profiles say: an automatic
reshuffling shoe skips the manual cut (681a.5(h)); a table with no shuffler is shuffled by hand
(681a.5(a))."""
from __future__ import annotations

import pytest

from controller.cli.cmd_run import table_capabilities
from controller.rules.submission import load_preset
from controller.roles import Role
from controller.table.core import TableCore
from controller.table.io import DeviceInput, OperatorInput, Record, SendCommand
from firmware_bridge.protocol import messages as m
from firmware_bridge.profiles import get_profile


def test_the_built_in_emulated_table_has_a_shuffler_and_a_cut() -> None:
    assert table_capabilities([]) == {"automatic_shoe": False, "shuffler": True}
    pair = [get_profile("emulated-shuffler"), get_profile("emulated-shoe")]
    assert table_capabilities(pair) == {"automatic_shoe": False, "shuffler": True}


def test_a_shoe_without_a_shuffler_is_shuffled_by_hand() -> None:
    assert table_capabilities([get_profile("acme-readershoe-s")]) == {"automatic_shoe": False, "shuffler": False}


@pytest.mark.reg("681a.5(h)")
def test_an_automatic_reshuffling_shoe_reaches_the_core_and_skips_the_cut() -> None:
    """681a.5(h): "If a certificate holder is utilizing the approved device, subsections (b)-(g)
    do not apply." The profile's capability reaches the core, which then delivers the shuffled
    stack straight into the shoe instead of offering a cut."""
    options = table_capabilities([get_profile("acme-autoshoe-r")])
    assert options == {"automatic_shoe": True, "shuffler": True}
    core = TableCore(load_preset("minibaccarat"), **options)
    core.handle(OperatorInput("open", {}, "f1", Role.FLOORPERSON))
    outs = core.handle(DeviceInput("shuffler", m.ShuffleDone(416, 416)))
    assert [o.payload for o in outs if isinstance(o, Record) and o.kind == "cut_skipped"] == [{"clause": "681a.5(h)"}]
    assert any(isinstance(o, SendCommand) and o.message == m.Deliver(m.DeliverTarget.SHOE) for o in outs)
    assert core.state == "loading"
