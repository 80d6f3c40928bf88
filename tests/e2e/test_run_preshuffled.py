"""A table without a shuffler end to end: ``shoectl emulate --table --no-shuffler`` serves the shoe
alone (with the scripted dealer, who opens a pack of preshuffled decks on the prompt ``SHUFFLE BY
HAND`` and shuffles a dealt shoe's collected cards by hand on ``SHUFFLE COLLECTED``); ``shoectl run
--device emulated-shoe@PORT`` drives it through the real path (pyserial on a pty, the protocol, the
link, the table core, the journal), its automated dealer saying which it did."""
from __future__ import annotations

from pathlib import Path

import pytest

from controller.journal import JournalReader

from .journal_checks import check_integrity, split_by_shoe
from .one_device_tables import run_one_device_table


@pytest.mark.slow
@pytest.mark.reg("681a.5(a)", "681a.5(b)", "681a.7(a)", "681a.7(d)(1)", "681a.7(d)(2)")
def test_a_table_without_a_shuffler_opens_a_preshuffled_pack_then_shuffles_the_collected_cards(tmp_path: Path) -> None:
    """681a.5(a): "Immediately prior to commencement of play, unless the cards were preshuffled in
    accordance with § 603a.16(u) or (v) ..., after each shoe of cards is dealt or when directed by a
    floorperson or above, the dealer shall shuffle the cards": at a table with a shoe and no
    shuffler the dealer puts a pack of preshuffled decks in play for the first shoe; after it,
    681a.7(d): (1) "Collect and reshuffle the cards by removing the cards remaining in the shoe and
    placing them in the discard rack to ensure that no cards are missing"; (2) "Shuffle the cards so
    that they are randomly intermixed": the next shoe is the collected cards shuffled by hand. The
    rest of the procedure applies to both: the cut is offered (681a.5(b): "the dealer shall offer
    the stack of cards ... to the players to be cut"), the load is counted (681a.7(a): "the stacked
    cards shall be placed in the dealing shoe") and the card set checked when the shoe ends."""
    journal = run_one_device_table(tmp_path, ["--no-shuffler"], "emulated-shoe", seed=11)  # the shoe alone
    rounds = check_integrity(tmp_path, journal)  # the journal's cards are the dealt log's; every wager settled once
    with JournalReader.open(journal) as r:
        entries = [(e.kind, e.payload) for e in r.entries()]
    assert {p["device_role"] for k, p in entries if k == "input.device"} == {"shoe"}
    shoes = [s for s in split_by_shoe(entries) if "reconciliation" in [k for k, _ in s]]
    assert len(shoes) == 2
    for n, shoe in enumerate(shoes):
        kinds = [k for k, _ in shoe]
        commands = [p["command"] for k, p in shoe if k == "input.operator"]
        made, not_made = ("preshuffled_decks", "manual_shuffle_done")[::1 if n == 0 else -1]  # a pack, then the cards collected
        assert commands.count(made) == 1 and not_made not in commands
        i_made = next(i for i, (k, p) in enumerate(shoe) if k == "input.operator" and p["command"] == made)
        assert i_made < kinds.index("cut_offer") < kinds.index("shoe_loaded") < kinds.index("burn") < kinds.index("round_start")
        assert "cut" in kinds or "cut_declined" in kinds
        assert [p for k, p in shoe if k == "shoe_loaded"] == [{"cards": 416}]  # the load counted (681a.7(a))
        [cardset] = [p for k, p in shoe if k == "cardset"]
        assert cardset["ok"] and cardset["expected"] == 416 and not cardset["problems"]
        [reconciliation] = [p for k, p in shoe if k == "reconciliation"]
        assert reconciliation["ok"] and reconciliation["total"] == 416
        assert kinds.count("round_result") > 50
    assert [p for k, p in shoes[1] if k == "manual_shuffle"] == [{"washed": False, "dealer": None}]
    assert "count_fault" not in [k for k, _ in entries]
    assert not [d for d in rounds if d["kind"] == "void"]
