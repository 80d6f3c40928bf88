"""``shoectl audit cards|shuffle``: exit codes (0 pass, 1 fail, 2 bad input), one-line errors,
text and JSON reports; synthetic journals, and one real emulated table with a weak shuffler."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from witness import witnessed

from controller.journal import Journal

from .conftest import shuffled_specs
from cli_run import run

SHOECTL = [sys.executable, "-m", "controller.cli.main"]




def test_cards_ok_text_and_json(capsys, make_journal) -> None:
    path = make_journal(shuffled_specs(2, decks=8, seed=1))
    code, out, err = run(capsys, "audit", "cards", str(path))
    assert code == 0 and err == ""
    assert "T1-S0001: ok: 416 expected, 416 loaded" in out and "T1-S0003: skipped (not dealt)" in out
    assert out.strip().endswith("card sets ok: 2 shoes checked, 0 failed")
    code, out, _ = run(capsys, "audit", "cards", str(path), "--json", "--shoes", "T1-S0002")
    doc = json.loads(out)
    assert code == 0 and doc["ok"] and [s["shoe"] for s in doc["shoes"]] == ["T1-S0002"]


def test_cards_failed_names_shoe_and_position(capsys, make_journal) -> None:
    specs = shuffled_specs(2, decks=8, seed=2, read_all=True)
    specs[1].stack = specs[1].stack[:-1]  # one card short: every other card was read
    code, out, _ = run(capsys, "audit", "cards", str(make_journal(specs)), "--json")
    doc = json.loads(out)
    assert code == 1 and not doc["ok"] and doc["failed"] == ["T1-S0002"]
    bad = doc["shoes"][1]
    assert bad["missing_count"] == 1 and len(bad["missing"]) == 1
    assert "loaded 415 cards, expected 416" in bad["problems"]


def test_shuffle_audit_passes_a_good_shuffler(capsys, make_journal) -> None:
    path = make_journal(shuffled_specs(6, decks=8, seed=5))
    code, out, err = run(capsys, "audit", "shuffle", str(path))
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].startswith(f"shuffle audit of {path}: 6 shoes of 8 decks, shuffler order, confidence 99%")
    assert "verdict: PASS (Holm-Bonferroni over 6 tests at alpha 0.01)" in out
    for name in ("positional", "position_max", "adjacency", "rising_sequences", "runs", "serial_correlation"):
        assert any(line.startswith(name) for line in lines)


def test_shuffle_audit_fails_a_riffle_and_reports_json(capsys, make_journal) -> None:
    specs = shuffled_specs(2, decks=8, seed=5, model="riffle:2")
    code, out, _ = run(capsys, "audit", "shuffle", str(make_journal(specs)), "--json", "--confidence", "0.95")
    doc = json.loads(out)
    assert code == 1 and doc["verdict"] == "fail" and doc["alpha"] == 0.05
    assert doc["audited"] == ["T1-S0001", "T1-S0002"] and doc["excluded"] == [{"shoe": "T1-S0003", "reason": "not dealt"}]
    assert doc["pre_order"] == "fresh" and doc["imputed_cards"] > 0
    by_name = {t["name"]: t for t in doc["tests"]}
    assert by_name["rising_sequences"]["rejected"] and by_name["adjacency"]["rejected"]
    for t in doc["tests"]:
        assert {"statistic", "df", "expected", "p_value", "p_adjusted", "passed", "rejected"} <= t.keys()


def test_shuffle_audit_catches_a_stuck_slot_only_in_the_shuffler_order(capsys, make_journal) -> None:
    path = make_journal(shuffled_specs(12, decks=8, seed=9, model="stuck:17"))
    code, out, _ = run(capsys, "audit", "shuffle", str(path), "--json")
    assert code == 1 and json.loads(out)["verdict"] == "fail"
    # in shoe order every shoe's cut moves the stuck card: the positional tests cannot see it
    code, out, _ = run(capsys, "audit", "shuffle", str(path), "--json", "--order", "shoe", "--pre-order", "none")
    doc = json.loads(out)
    assert code == 0 and doc["pre_order"] == "none" and len(doc["tests"]) == 4


def test_shuffle_audit_excludes_a_shoe_with_a_bad_card_set(capsys, make_journal) -> None:
    specs = shuffled_specs(3, decks=8, seed=3)
    specs[0].stack = specs[0].stack[:-1]
    code, out, _ = run(capsys, "audit", "shuffle", str(make_journal(specs)), "--json", "--pre-order", "previous")
    doc = json.loads(out)
    excluded = {e["shoe"]: e["reason"] for e in doc["excluded"]}
    assert excluded["T1-S0001"].startswith("card set: loaded 415 cards")
    assert doc["audited"] == ["T1-S0002", "T1-S0003"] and doc["pre_order"] == "previous"
    # only the third shoe has a usable previous shoe (the first is short a card)
    assert {t["name"]: t["shoes"] for t in doc["tests"]}["adjacency"] == 1


def test_cards_entered_by_hand_are_said_with_who_entered_them(capsys, make_journal) -> None:
    """An examiner's review: a floorperson entered 5H for a card the shoe could not read (it was
    8H) and `audit cards` said only "1 unreadable". A card known from a person's entry alone is
    now said, with who entered it; the card set still counts it unidentified."""
    specs = shuffled_specs(1, decks=8, seed=3, misread={5, 9}, entered={5: "5H", 9: "KD"})
    path = make_journal(specs)
    code, out, _ = run(capsys, "audit", "cards", str(path))
    assert code == 0 and ("    2 entered by hand for reads the shoe could not make (not checked against the cards: "
                          "counted unidentified): 5H by fp1, KD by fp1") in out.splitlines()
    code, out, _ = run(capsys, "audit", "cards", str(path), "--json")
    [shoe] = json.loads(out)["shoes"]
    assert shoe["entered_by_hand"] == [{"card": "5H", "by": "fp1"}, {"card": "KD", "by": "fp1"}]
    assert shoe["unreadable"] == [5, 9]


def test_shuffle_audit_leaves_out_a_shoe_in_play_whose_order_is_mostly_unknown(capsys, make_journal) -> None:
    """A lab's review: a run stopped 20 rounds into a shoe, and the shuffle audit filled in 310 of
    its 416 cards at random, which pulls the tests towards a pass. A shoe in play when the journal
    ends with more than half its cards never read is left out, saying why; one mostly read is
    audited, as a shoe that ended is."""
    specs = shuffled_specs(4, decks=8, seed=5)
    specs[2].read_only, specs[2].in_play = 300, True  # most of it read: audited
    specs[3].read_only, specs[3].in_play = 100, True  # 316 never read: left out
    code, out, _ = run(capsys, "audit", "shuffle", str(make_journal(specs, trailing_shoe=False)), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["audited"] == ["T1-S0001", "T1-S0002", "T1-S0003"]
    assert doc["excluded"] == [{"shoe": "T1-S0004", "reason": "in play when the journal ends: 316 of its 416 cards "
                                                            "never read, too many to fill in at random"}]


def test_shuffle_audit_leaves_out_a_shoe_that_ended_with_most_of_its_order_unknown(capsys, make_journal) -> None:
    """A lab's review: a shoe ended early (a cover card misplaced near the top: 33 cards read, 383
    never) was audited with 92 % of its order filled in at random, and a 4-riffle shuffler passed.
    A shoe that ended is left out by the same rule as one in play: more than half never read."""
    specs = shuffled_specs(3, decks=8, seed=5)
    specs[1].read_only = 33
    code, out, _ = run(capsys, "audit", "shuffle", str(make_journal(specs, trailing_shoe=False)), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["audited"] == ["T1-S0001", "T1-S0003"]
    assert doc["excluded"] == [{"shoe": "T1-S0002", "reason": "ended: 383 of its 416 cards never read, too many to "
                                                            "fill in at random"}]


def test_a_forged_deck_count_is_said_with_its_shoe_and_a_card_sets_findings_briefly(capsys, make_journal) -> None:
    """A lab's review (journals edited, read with --no-verify): 99999999999 decks in every shoe made
    `audit shuffle` say only "decks must be a whole number from 1 to 12", with no journal nor shoe
    (`audit cards` names both); a shoe said to hold 1 deck among 8-deck ones was excluded with its
    every finding, a 9,342-character line. The count is said with its shoe, and a card set's
    findings are the first three and how many more."""
    specs = shuffled_specs(2, decks=8, seed=5)
    for spec in specs:
        spec.decks = 99999999999
    path = make_journal(specs, trailing_shoe=False)
    code, out, err = run(capsys, "audit", "shuffle", str(path), "--no-verify")
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert "T1-S0001: the journal says 99999999999 decks; a shoe holds 1 to 12" in err
    specs = shuffled_specs(3, decks=8, seed=5)
    specs[1].decks = 1  # its 416 cards are then hundreds of findings
    code, out, _ = run(capsys, "audit", "shuffle", str(make_journal(specs, name="k.db", trailing_shoe=False)),
                       "--no-verify", "--json")
    reasons = [e["reason"] for e in json.loads(out)["excluded"]]
    assert code == 0 and len(reasons) == 1 and len(reasons[0]) < 400, reasons


def test_tests_too_few_shoes_make_meaningless_are_no_tests(capsys, make_journal) -> None:
    """A lab's review: with one shoe `positional` (fixed by the composition) and `position_max` (p is 1
    whatever the shoe) printed "pass" and counted among Holm's 6, holding the real tests to alpha/6.
    A test no shoes could make reject at alpha with this many is shown as no test, and not counted."""
    path = make_journal(shuffled_specs(1, decks=8, seed=11))
    code, out, _ = run(capsys, "audit", "shuffle", str(path))
    rows = {line.split()[0]: line for line in out.splitlines()}
    assert code == 0 and rows["positional"].endswith("no test (too few shoes to reject anything)")
    assert rows["position_max"].endswith("no test (too few shoes to reject anything)")
    assert rows["runs"].endswith("pass") and "(Holm-Bonferroni over 4 tests at alpha 0.01)" in out
    code, out, _ = run(capsys, "audit", "shuffle", str(path), "--json")
    testable = {t["name"]: t["testable"] for t in json.loads(out)["tests"]}
    assert testable == {"positional": False, "position_max": False, "adjacency": True, "rising_sequences": True,
                        "runs": True, "serial_correlation": True}


@pytest.mark.parametrize("command", ["cards", "shuffle"])
def test_bad_input_is_one_line_and_exit_2(capsys, tmp_path: Path, make_journal, command: str) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("not a journal\n")
    code, out, err = run(capsys, "audit", command, str(junk))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "not a journal" in err

    empty = tmp_path / "empty.db"
    with Journal.open(empty, table_id="T1") as j:
        j.append("table_open", {})
        witnessed(j)
    code, _, err = run(capsys, "audit", command, str(empty))
    assert code == 2 and err.strip() == f"shoectl audit {command}: error: {empty}: no shoes in the journal"

    code, _, err = run(capsys, "audit", command, str(tmp_path / "missing.db"))
    assert code == 2 and len(err.strip().splitlines()) == 1

    path = make_journal(shuffled_specs(1, decks=1, seed=1))
    code, _, err = run(capsys, "audit", command, str(path), "--shoes", "T9-*")
    assert code == 2 and "no shoe 'T9-*' in the journal" in err
    for empty_list in ("", ","):  # an unset variable in --shoes "$SHOES": it audited every shoe
        code, out, err = run(capsys, "audit", command, str(path), "--shoes", empty_list)
        assert (code, out) == (2, "") and err == (f"shoectl audit {command}: error: --shoes '{empty_list}': no shoe "
                                                  "id in it (ids or patterns such as T1-S0003,T1-S001*)\n")


def test_a_malformed_record_is_exit_2(capsys, tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as j:
        j.append("shoe_start", {"shoe": "T1-S0001", "decks": 8}, shoe="T1-S0001")
        j.append("cut", {"by": "dealer"}, shoe="T1-S0001")
    code, _, err = run(capsys, "audit", "cards", str(path))
    assert code == 2 and "entry 2 (cut): malformed payload" in err and len(err.strip().splitlines()) == 1


def test_only_undealt_shoes_is_exit_2(capsys, tmp_path: Path) -> None:
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as j:
        j.append("shoe_start", {"shoe": "T1-S0001", "decks": 8}, shoe="T1-S0001")
        witnessed(j)
    for command in ("cards", "shuffle"):
        code, _, err = run(capsys, "audit", command, str(path))
        assert code == 2 and len(err.strip().splitlines()) == 1


def test_confidence_choices(capsys, make_journal) -> None:
    path = make_journal(shuffled_specs(1, decks=1, seed=1))
    code, _, err = run(capsys, "audit", "shuffle", str(path), "--confidence", "0.9")
    assert code == 2 and "invalid choice" in err


def test_a_real_emulated_table_with_a_riffling_shuffler(tmp_path: Path) -> None:
    journal = tmp_path / "journal.db"
    proc = subprocess.run([*SHOECTL, "run", "--journal", str(journal), "--shoes", "1", "--seed", "3", "--speed", "max",
                           "--faults", "shuffle=riffle:1"], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cards = subprocess.run([*SHOECTL, "audit", "cards", str(journal), "--json"], capture_output=True, text=True)
    assert cards.returncode == 0 and json.loads(cards.stdout)["ok"]
    shuffle = subprocess.run([*SHOECTL, "audit", "shuffle", str(journal), "--json"], capture_output=True, text=True)
    doc = json.loads(shuffle.stdout)
    assert shuffle.returncode == 1 and doc["verdict"] == "fail" and doc["audited"] == ["T1-S0001"]


def test_a_journal_whose_shoes_were_never_dealt_says_so_and_where_to_look(capsys, tmp_path: Path) -> None:
    """A surveillance review: every shoe of a table closed after three count faults; `audit cards`
    said only "no dealt shoe to check", which reads as if the journal were empty."""
    path = tmp_path / "t.db"
    with Journal.open(path, table_id="T1") as journal:
        for n in (1, 2):
            journal.append("shoe_start", {"shoe": f"T1-S000{n}", "decks": 8}, shoe=f"T1-S000{n}")
        witnessed(journal)
    code, out, err = run(capsys, "audit", "cards", str(path))
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.rstrip().endswith("no dealt shoe to check (2 shoes started, none dealt: each ended before its cards "
                                 "were dealt (a count fault, a reshuffle ordered); `shoectl journal replay` says why)")


def test_a_card_drawn_from_a_shoe_that_has_ended_is_journaled_and_audited_under_that_shoe(capsys, tmp_path: Path) -> None:
    """A surveillance review: the dealer drew one of the last shoe's remaining cards after it was
    collected and reconciled, before the next stack was loaded. The card went to the discard rack
    on record under the ended shoe, but its read was journaled under the next one, whose card-set
    audit then failed for a card it never held (and the ended shoe passed, its card counted
    twice: read, and remaining). The read is the ended shoe's, among the cards its
    reconciliation counted as remaining: both shoes pass."""
    from cli_run import dealt_journal

    from controller.journal import JournalReader

    journal = dealt_journal(tmp_path / "j.db", "--shoes", "2", "--seed", "1", "--faults", "dealer-extra-at=405",
                            "--no-edge-monitor")
    with JournalReader.open(journal) as reader:
        entries = list(reader.entries())
    discard = next(e for e in entries if e.kind == "discard" and "which has ended" in e.payload["reason"])
    read = next(e for e in entries if e.kind == "input.device" and e.payload["event"] == "CARD_READ"
                and e.payload["fields"]["position"] == discard.payload["position"] and e.seq < discard.seq
                and e.seq > next(x.seq for x in entries if x.kind == "reconciliation"))
    assert read.shoe_id == discard.shoe_id == "T1-S0001"
    assert any(e.kind == "shoe_start" and e.shoe_id == "T1-S0002" and e.seq < read.seq for e in entries)
    code, out, err = run(capsys, "audit", "cards", str(journal))
    assert code == 0, out + err
    assert "T1-S0001: ok: 416 expected, 416 loaded, 407 read (407 identified), 9 never read" in out
    # and `journal replay` shows it among its shoe's events, with --shoe too (it showed it nowhere)
    for shoe in ([], ["--shoe", "T1-S0001"]):
        code, out, err = run(capsys, "journal", "replay", str(journal), *shoe)
        assert code == 0, err
        late = [line for line in out.splitlines() if f"entry {discard.seq}: discard" in line]
        assert len(late) == 1 and "drawn from shoe T1-S0001, which has ended" in late[0]
        assert out.index("shoe T1-S0001 (begun") < out.index(late[0]) < out.find("shoe T1-S0002 (begun") % (len(out) + 1)
