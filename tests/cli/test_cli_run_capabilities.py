"""``shoectl run`` gives the table core what the attached devices' profiles say: an automatic
reshuffling shoe skips the manual cut (681a.5(h)); a table with no shuffler is shuffled by hand
(681a.5(a))."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from controller.cli.run_devices import parse_devices, table_capabilities
from controller.errors import UsageError
from controller.rules.submission import load_preset
from controller.roles import Role
from controller.table.core import TableCore
from controller.table.io import DeviceInput, OperatorInput, TableRecord, SendCommand
from firmware_bridge.protocol import messages as m
from firmware_bridge.profiles import get_profile


def test_the_built_in_emulated_table_has_a_shuffler_and_a_cut() -> None:
    batch = {"automatic_shoe": False, "approval": None, "shuffler": True, "shuffler_keeps_one_batch": True, "shuffler_in_shoe": False}
    assert table_capabilities([]) == {**batch, "deck_capacity": None}  # the built-in devices: no limit said
    pair = [get_profile("emulated-shuffler"), get_profile("emulated-shoe")]
    assert table_capabilities(pair) == {**batch, "deck_capacity": 8}


def test_the_table_holds_the_decks_its_smallest_device_holds() -> None:
    """The core refuses rules of more decks than its devices hold (``set_submission``): the most
    every device holds, the smallest profile's ``deck_capacity``."""
    shuffler = get_profile("emulated-shuffler")
    six = dataclasses.replace(shuffler, capabilities=dataclasses.replace(shuffler.capabilities, deck_capacity=6))
    options = table_capabilities([six, get_profile("emulated-shoe")])
    assert options["deck_capacity"] == 6 and TableCore(load_preset("midibaccarat"), **options).deck_capacity == 6


@pytest.mark.reg("681a.5(g)(2)")
def test_a_continuous_shuffler_does_not_keep_one_batch() -> None:
    """681a.5(g)(2): the batch removed from the shuffler may be dealt without a spread and a
    reshuffle only "provided that the automated card shuffling device stores a single batch of
    shuffled cards inside the shuffler in a secure manner": a batch shuffler, not a continuous one."""
    shuffler = get_profile("emulated-shuffler")
    continuous = dataclasses.replace(shuffler, capabilities=dataclasses.replace(shuffler.capabilities,
                                                                               shuffler="continuous"))
    options = table_capabilities([continuous, get_profile("emulated-shoe")])
    assert options["shuffler"] is True and options["shuffler_keeps_one_batch"] is False
    assert TableCore(load_preset("minibaccarat"), **options).shuffler_keeps_one_batch is False


def test_a_shoe_without_a_shuffler_is_shuffled_by_hand() -> None:
    assert table_capabilities([get_profile("acme-readershoe-s")]) == \
        {"automatic_shoe": False, "approval": None, "shuffler": False, "shuffler_keeps_one_batch": False,
         "shuffler_in_shoe": False, "deck_capacity": 8}


@pytest.mark.reg("681a.5(h)")
def test_an_automatic_reshuffling_shoe_reaches_the_core_and_skips_the_cut() -> None:
    """681a.5(h): "If a certificate holder is utilizing the approved device, subsections (b)-(g)
    do not apply." The profile's capability reaches the core, which then delivers the shuffled
    stack straight into the shoe instead of offering a cut, journaling the approval the profile
    records ("approved in accordance with § 461a.4 ... prior to its use": a gaming lab's review
    found nothing recorded it)."""
    options = table_capabilities([get_profile("acme-autoshoe-r")])
    approval = get_profile("acme-autoshoe-r").capabilities.approval
    assert approval and options == {"automatic_shoe": True, "approval": approval, "shuffler": True,
                                    "shuffler_keeps_one_batch": True, "shuffler_in_shoe": True, "deck_capacity": 8}
    core = TableCore(load_preset("minibaccarat"), **options)
    outs = core.handle(OperatorInput("open", {}, "f1", Role.FLOORPERSON))
    assert SendCommand("shoe", m.Shuffle(8)) in outs  # one device: the shuffler is in the shoe
    outs = core.handle(DeviceInput("shoe", m.ShuffleDone(416, 416)))
    assert [o.payload for o in outs if isinstance(o, TableRecord) and o.kind == "cut_skipped"] == [
        {"clause": "681a.5(h)", "approval": approval}]
    assert SendCommand("shoe", m.Deliver(m.DeliverTarget.SHOE)) in outs
    assert core.state == "loading"


@pytest.mark.reg("681a.5(h)")
def test_run_attaches_a_shoe_with_its_shuffler_built_in_alone() -> None:
    """681a.5(h): a dealing shoe "that automatically reshuffles and counts the cards" is one device
    (profile kind shuffler-shoe): attached alone, in the shoe's role, it takes the shuffler's
    commands too; no other shuffler may be attached beside it."""
    attached = parse_devices(["emulated-autoshoe@/nonexistent/ttyUSB0"])
    assert list(attached) == ["shoe"] and attached["shoe"][0].kind == "shuffler-shoe"
    with pytest.raises(UsageError, match="has its shuffler built in: attach no other shuffler"):
        parse_devices(["emulated-autoshoe@/nonexistent/ttyUSB0", "emulated-shuffler@/nonexistent/ttyUSB1"])
    with pytest.raises(UsageError, match="attach a shoe"):
        parse_devices(["emulated-shuffler@/nonexistent/ttyUSB0"])


@pytest.mark.reg("681a.5(a)")
def test_run_attaches_a_shoe_alone_at_a_table_without_a_shuffler() -> None:
    """681a.5(a): "unless the cards were preshuffled ..., the dealer shall shuffle the cards, either
    manually or by use of an automated card shuffling device": a shoe attached alone is a table
    without a shuffler (the dealer shuffles by hand or puts preshuffled decks in play)."""
    attached = parse_devices(["emulated-shoe@/nonexistent/ttyUSB0"])
    assert list(attached) == ["shoe"]
    assert table_capabilities([attached["shoe"][0]])["shuffler"] is False


def test_a_device_that_holds_fewer_decks_than_the_rules_deal_is_refused_at_the_start(capsys, monkeypatch,
                                                                                     tmp_path) -> None:
    """An integrator review: a 6-deck shuffler (its profile's deck_capacity) on an 8-deck table
    opened, faulted three times at its first shuffle ("this shuffler holds 6") and stayed closed.
    Said at the start, in one line, before anything deals."""
    from cli_run import run
    from controller.cli.run_devices import capacity_problem
    from firmware_bridge.profiles import PROFILE_PATH_ENV

    source = get_profile("emulated-shuffler").source
    text = Path(source).read_text(encoding="utf-8").replace("deck_capacity = 8", "deck_capacity = 6")
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "six-deck-shuffler.toml").write_text(text, encoding="utf-8")
    monkeypatch.setenv(PROFILE_PATH_ENV, str(tmp_path / "profiles"))
    code, out, err = run(capsys, "run", "--journal", str(tmp_path / "j.db"), "--device", "six-deck-shuffler@/nonexistent/ttyUSB0",
                         "--device", "emulated-shoe@/nonexistent/ttyUSB1", "--rounds", "1", "--display", "lines")
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "j.db").exists(), err
    assert err.endswith("--device six-deck-shuffler: it holds 6 decks (its profile's deck_capacity), and the table's "
                        "Rules Submission deals 8: attach a device that holds them, or play rules of fewer decks\n")
    six = get_profile("six-deck-shuffler")
    assert capacity_problem([six], 6) is None and capacity_problem([six, get_profile("emulated-shoe")], 8) is not None
