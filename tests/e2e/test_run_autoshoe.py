"""An automatic reshuffling shoe end to end: ``shoectl emulate --table --shoe-profile
emulated-autoshoe`` serves one device that shuffles, counts, loads itself and deals (a shoe with its
shuffler built in, profile kind ``shuffler-shoe``); ``shoectl run --device emulated-autoshoe@PORT``
drives it through the real path (pyserial on a pty, the protocol, the link, the table core, the
journal), with the procedure the profile's capabilities call for."""
from __future__ import annotations

from pathlib import Path

import pytest

from controller.journal import JournalReader

from .journal_checks import check_integrity, split_by_shoe
from .one_device_tables import run_one_device_table


@pytest.mark.slow
@pytest.mark.reg("681a.5(h)", "681a.7(a)", "681a.7(c)", "681a.7(d)", "681a.7(d)(1)")
def test_an_automatic_reshuffling_shoe_deals_shoe_after_shoe_without_a_cut(tmp_path: Path) -> None:
    """681a.5(h): "If a certificate holder is utilizing the approved device, subsections (b)-(g) do
    not apply": no cut is offered and no cover card placed by hand. 681a.7 still does: each stack
    is loaded by the device and counted (681a.7(a): "the stacked cards shall be placed in the dealing
    shoe by the dealer or by an automated card shuffling device"), its first card burned (681a.7(c):
    "the dealer shall remove the first card and place it in the discard rack"), and when the
    device's own cover card comes out "the hand shall be completed" (681a.7(d)), the cards reconciled
    (681a.7(d)(1): "placing them in the discard rack to ensure that no cards are missing") and the
    device reshuffles for the next shoe."""
    journal = run_one_device_table(tmp_path, ["--shoe-profile", "emulated-autoshoe"], "emulated-autoshoe", seed=7)
    rounds = check_integrity(tmp_path, journal)  # the journal's cards are the dealt log's; every wager settled once
    with JournalReader.open(journal) as r:
        entries = [(e.kind, e.payload) for e in r.entries()]
    kinds = [k for k, _ in entries]
    assert not {"cut_offer", "cut", "cover", "cut_declined"} & set(kinds)  # no cut offered (681a.5(h))
    assert {p["device_role"] for k, p in entries if k == "input.device"} == {"shoe"}
    shoes = [s for s in split_by_shoe(entries) if "reconciliation" in [k for k, _ in s]]
    assert len(shoes) == 2
    for shoe in shoes:
        kinds = [k for k, _ in shoe]
        assert [p for k, p in shoe if k == "cut_skipped"] == [
            {"clause": "681a.5(h)", "approval": "none: an emulated device, for tests and demonstrations only"}]
        assert kinds.index("cut_skipped") < kinds.index("shoe_loaded") < kinds.index("burn") < kinds.index("round_start")
        i_cover = kinds.index("cover_card")  # the device's own cover card, 16 cards above the bottom
        assert "round_result" in kinds[i_cover:kinds.index("reconciliation")]
        [reconciliation] = [p for k, p in shoe if k == "reconciliation"]
        assert reconciliation["ok"] and reconciliation["total"] == 416 and reconciliation["remaining_in_shoe"] <= 16
        assert kinds.count("round_result") > 50
    assert not [d for d in rounds if d["kind"] == "void"]


@pytest.mark.reg("681a.7(d)(1)")
def test_an_automatic_shoe_whose_dealer_missed_the_unload_refuses_the_stack_until_it_is_emptied(
        tmp_path: Path) -> None:
    """681a.7(d)(1): "Collect and reshuffle the cards by removing the cards remaining in the shoe".
    The dealer misses the first UNLOAD (emulator fault ``dealer-miss``): the last shoe's cards are
    still in the automatic shoe when its shuffler is told to deliver the next stack, which it
    refuses (NAK SHOE_NOT_EMPTY: the stack stays in the shuffler). No fault holds the table: the
    UNLOAD is shown again, the dealer takes the cards out, and the shoe's SHOE_EMPTY sends the
    DELIVER again; the next shoe is loaded and dealt. Only the bench had run this path before."""
    journal = run_one_device_table(tmp_path, ["--shoe-profile", "emulated-autoshoe", "--faults",
                                              "dealer-miss=UNLOAD,cover-at=60"], "emulated-autoshoe", seed=7)
    check_integrity(tmp_path, journal)
    with JournalReader.open(journal) as r:
        entries = [(e.kind, e.payload) for e in r.entries()]
    kinds = [k for k, _ in entries]
    [refusal] = [i for i, (k, _) in enumerate(entries) if k == "input.command_failed"]
    assert entries[refusal][1]["command"] == "DELIVER" and entries[refusal][1]["code"] == "SHOE_NOT_EMPTY"
    emptied = kinds.index("input.device", refusal)
    assert entries[emptied][1]["event"] == "SHOE_EMPTY" and kinds.index("shoe_loaded", refusal) > emptied
    assert "fault" not in kinds and kinds.count("shoe_loaded") == 2 and kinds.count("reconciliation") >= 2
