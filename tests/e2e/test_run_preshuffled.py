"""A table without a shuffler end to end: ``shoectl emulate --table --no-shuffler`` serves the shoe
alone (with the scripted dealer, who opens a pack of preshuffled decks on the prompt ``SHUFFLE BY
HAND``); ``shoectl run --device emulated-shoe@PORT`` drives it through the real path (pyserial on a
pty, the protocol, the link, the table core, the journal), its automated dealer putting the
preshuffled decks in play."""
from __future__ import annotations

from pathlib import Path

import pytest

from controller.journal import JournalReader

from .journal_checks import check_integrity, split_by_shoe
from .one_device_tables import run_one_device_table


@pytest.mark.slow
@pytest.mark.reg("681a.5(a)", "681a.5(b)", "681a.7(a)", "681a.7(d)(1)")
def test_a_table_without_a_shuffler_deals_preshuffled_decks_shoe_after_shoe(tmp_path: Path) -> None:
    """681a.5(a): "Immediately prior to commencement of play, unless the cards were preshuffled in
    accordance with § 603a.16(u) or (v) ..., the dealer shall shuffle the cards": at a table with a
    shoe and no shuffler the dealer puts a pack of preshuffled decks in play for each shoe. The rest
    of the procedure still applies: the cut is offered (681a.5(b): "the dealer shall offer the stack
    of cards ... to the players to be cut"), the load is counted (681a.7(a): "the stacked cards shall
    be placed in the dealing shoe") and the card set checked when the shoe ends (681a.7(d)(1): "to
    ensure that no cards are missing")."""
    journal = run_one_device_table(tmp_path, ["--no-shuffler"], "emulated-shoe", seed=11)  # the shoe alone
    rounds = check_integrity(tmp_path, journal)  # the journal's cards are the dealt log's; every wager settled once
    with JournalReader.open(journal) as r:
        entries = [(e.kind, e.payload) for e in r.entries()]
    assert {p["device_role"] for k, p in entries if k == "input.device"} == {"shoe"}
    shoes = [s for s in split_by_shoe(entries) if "reconciliation" in [k for k, _ in s]]
    assert len(shoes) == 2
    for shoe in shoes:
        kinds = [k for k, _ in shoe]
        [pack] = [p for k, p in shoe if k == "input.operator" and p["command"] == "preshuffled_decks"]
        assert pack["args"] == {"decks": 8}
        i_pack = next(i for i, (k, p) in enumerate(shoe) if k == "input.operator" and p["command"] == "preshuffled_decks")
        assert i_pack < kinds.index("cut_offer") < kinds.index("shoe_loaded") < kinds.index("burn") < kinds.index("round_start")
        assert "cut" in kinds or "cut_declined" in kinds
        assert [p for k, p in shoe if k == "shoe_loaded"] == [{"cards": 416}]  # the load counted (681a.7(a))
        [cardset] = [p for k, p in shoe if k == "cardset"]
        assert cardset["ok"] and cardset["expected"] == 416 and not cardset["problems"]
        [reconciliation] = [p for k, p in shoe if k == "reconciliation"]
        assert reconciliation["ok"] and reconciliation["total"] == 416
        assert kinds.count("round_result") > 50
    assert "count_fault" not in [k for k, _ in entries]
    assert not [d for d in rounds if d["kind"] == "void"]
