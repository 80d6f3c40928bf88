"""The edge monitor through the real CLI (docs/edge-monitor.md): ``shoectl run`` on the built-in
emulated table in a process of its own, then ``shoectl journal replay --edges`` and ``shoectl odds
--journal`` in-process on its journal.

The Dragon-7-rich shoe is planted through the emulator's seed: a one-deck EZ Baccarat Rules
Submission and ``--seed 4`` deal a shoe whose remaining cards favour the Dragon 7 after round 2 (the
test recomputes that on its own from the shoe's reads before it looks for the notice)."""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest
from cli_run import preset_with_decks, run

from witness import witnessed

from controller.journal import Journal, JournalReader, kinds
from controller.rules.cards import Composition, card_from_wire
from controller.rules.odds import exact_odds
from controller.rules.submission import load_preset, load_submission

SHOECTL = [sys.executable, "-m", "controller.cli.main"]
RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")


def shoectl_run(journal: Path, *extra: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([*SHOECTL, "run", "--journal", str(journal), "--speed", "max", *extra],
                          capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


def entries_of(journal: Path) -> list:
    with JournalReader.open(journal) as r:
        return list(r.entries())


def reads_before(entries: list, shoe: str, seq: int) -> list:
    return [card_from_wire(e.payload["fields"]["rank"], e.payload["fields"]["suit"]) for e in entries
            if e.kind == kinds.INPUT_DEVICE and e.payload["event"] == "CARD_READ" and e.shoe_id == shoe and e.seq < seq]


@pytest.fixture(scope="module")
def ez_journal(tmp_path_factory) -> Path:
    journal = tmp_path_factory.mktemp("edges") / "journal.db"
    shoectl_run(journal, "--submission", "ez-baccarat", "--rounds", "4", "--seed", "3", "--display", "lines")
    return journal


def test_replay_shows_each_rounds_edge_figures(capsys, ez_journal: Path) -> None:
    code, out, err = run(capsys, "journal", "replay", str(ez_journal), "--edges")
    assert code == 0, err
    lines = out.splitlines()
    rounds = [i for i, line in enumerate(lines) if " round " in line and "[normal]" in line]
    assert len(rounds) == 4
    for i in rounds:
        assert lines[i + 1].startswith("      edge (") and "dragon7 " in lines[i + 1] and "%" in lines[i + 1]
    code, out, err = run(capsys, "journal", "replay", str(ez_journal), "--edges", "--json", "--round", "2")
    assert code == 0, err
    [doc] = [json.loads(line) for line in out.splitlines()]
    [edge] = [e.payload for e in entries_of(ez_journal) if e.kind == kinds.EDGE and e.payload["round"] == 2]
    assert doc["edge"] == edge and doc["edge_alert"] is None
    code, out, _ = run(capsys, "journal", "replay", str(ez_journal), "--round", "2", "--json")
    assert "edge" not in json.loads(out)  # only asked for


def test_odds_recomputes_the_figures_after_a_round_from_the_journal(capsys, ez_journal: Path) -> None:
    entries = entries_of(ez_journal)
    [result] = [e for e in entries if e.kind == kinds.ROUND_RESULT and e.payload["round"] == 3]
    code, out, err = run(capsys, "odds", "--journal", str(ez_journal), "--shoe", result.shoe_id, "--round", "3", "--json")
    assert code == 0, err
    doc = json.loads(out)
    left = Composition.standard(8).remove(reads_before(entries, result.shoe_id, result.seq))
    expected = exact_odds(load_preset("ez-baccarat"), left).wagers
    assert {k: Fraction(w["ev"]) for k, w in doc["wagers"].items()} == {k: w["expected"] for k, w in expected.items()}
    assert doc["matches"] is True and doc["journaled"]["wagers"] == doc["wagers"] and doc["remaining"] == left.total
    code, out, err = run(capsys, "odds", "--journal", str(ez_journal), "--shoe", result.shoe_id, "--round", "3")
    assert code == 0, err
    assert "after round 3" in out and out.count(" same\n") == 7 and "DIFFERS" not in out
    # Hundreds of cards out: counted by rank, beside what is left, not listed one by one.
    gone = Counter(c.rank for c in reads_before(entries, result.shoe_id, result.seq))
    [removed_line] = [line for line in out.splitlines() if line.startswith("Removed: ")]
    assert removed_line == (f"Removed: {sum(gone.values())} cards, by rank: "
                            + ", ".join(f"{name} {gone[rank]}" for rank, name in enumerate(RANK_NAMES, 1)))
    [left_line] = [line for line in out.splitlines() if line.startswith("Left: ")]
    assert left_line == (f"Left: {left.total} cards, by rank: "
                         + ", ".join(f"{name} {32 - gone[rank]}" for rank, name in enumerate(RANK_NAMES, 1)))


def test_odds_engines_print_the_same_figures_and_leave_the_choice_as_it_was(capsys) -> None:
    """``--engine python`` (the pure-Python reference) and ``--engine numpy`` give the same exact
    figures, on a full shoe and on a journal's shoe late on; the choice ends with the command."""
    from controller.rules import odds_main_game

    before = odds_main_game.engine_in_use()
    outs = []
    for engine in ("python", "numpy"):
        code, out, err = run(capsys, "odds", "--game", "ez-baccarat", "--removed", "7S,7H,8D", "--json", "--engine", engine)
        assert code == 0, err
        outs.append(json.loads(out))
        assert odds_main_game.engine_in_use() == before
    assert outs[0] == outs[1] and outs[0]["exact"]


def test_odds_engine_numpy_without_numpy_is_one_line(capsys, monkeypatch) -> None:
    from controller.rules import odds_main_game

    monkeypatch.setattr(odds_main_game, "numpy_available", lambda: False)
    code, out, err = run(capsys, "odds", "--engine", "numpy")
    assert code == 2 and out == ""
    assert err.strip() == "shoectl odds: error: the numpy odds engine needs numpy: pip install 'numpy<3,>=1.26' (shoectl's fast extra)", err
    assert odds_main_game.engine_in_use() == "python"


def test_odds_lists_a_few_removed_cards_by_name(capsys) -> None:
    code, out, err = run(capsys, "odds", "--removed", "AS,10H,KD")
    assert code == 0, err
    assert "\nRemoved: AS,10H,KD\n" in out and "Left: " not in out


@pytest.mark.parametrize("argv, says", [
    (["--shoe", "T1-S0001", "--round", "99"], "no round 99 of a shoe 'T1-S0001' in the journal"),
    (["--round", "99"], "no shoe in the journal has a round 99"),
    (["--shoe", "T1-S0009"], "no decided round of a shoe 'T1-S0009' in the journal (`shoectl journal replay PATH` "
                              "lists its shoes)"),
    (["--shoe", " "], "--shoe: give a shoe's id, as `shoectl journal replay PATH` lists them (e.g. T1-S0001)"),
    (["--shoe", "T1-S0001", "--round", "1", "--removed", "AS"], "give no --removed or --decks"),
    (["--shoe", "T1-S0001", "--round", "1", "--game", "nope"], "unknown game 'nope'; games: punto-banco"),
])
def test_odds_journal_input_errors_are_one_line(capsys, ez_journal: Path, argv: list, says: str) -> None:
    code, out, err = run(capsys, "odds", "--journal", str(ez_journal), *argv)
    assert code == 2 and out == "" and says in err and len(err.splitlines()) == 1


def test_odds_journal_without_a_moment_values_the_last_round_decided(capsys, ez_journal: Path) -> None:
    """Surveillance asks about now: without --shoe and --round, the last round decided in the
    journal (its shoe's, and with --shoe alone that shoe's); the figures are those of naming it."""
    [last] = [e for e in entries_of(ez_journal) if e.kind == kinds.ROUND_RESULT][-1:]
    assert last.payload["round"] == 4
    named = ["odds", "--journal", str(ez_journal), "--shoe", last.shoe_id, "--round", "4", "--json"]
    code, out, err = run(capsys, *named)
    assert code == 0, err
    expected = json.loads(out)
    for moment in ([], ["--shoe", last.shoe_id], ["--round", "4"]):
        code, out, err = run(capsys, "odds", "--journal", str(ez_journal), *moment, "--json")
        assert code == 0, err
        assert json.loads(out) == expected and expected["matches"] is True
    code, out, err = run(capsys, "odds", "--journal", str(ez_journal))
    assert code == 0, err
    assert out.startswith(f"Shoe {last.shoe_id} after round 4: ")
    code, out, err = run(capsys, "odds", "--journal", str(ez_journal), "--round", "2")
    assert code == 0 and out.startswith(f"Shoe {last.shoe_id} after round 2: "), err


def test_odds_journal_with_no_round_decided_says_so(capsys, tmp_path: Path) -> None:
    journal = tmp_path / "journal.db"
    with Journal.open(journal, table_id="T1") as j:
        j.append("shoe_start", {"decks": 8, "shoe": "S1"}, shoe="S1")  # a shoe begun, no round decided
        witnessed(j)
    code, out, err = run(capsys, "odds", "--journal", str(journal))
    assert code == 2 and out == ""
    assert err.strip() == f"shoectl odds: error: {journal}: no round has been decided in the journal yet"


def test_odds_journal_values_another_submission_without_comparing(capsys, ez_journal: Path) -> None:
    """The journal's edge records are EZ Baccarat's: 21 Baccarat's figures are not compared with them."""
    argv = ["odds", "--journal", str(ez_journal), "--shoe", "T1-S0001", "--round", "2", "--game", "21-baccarat"]
    code, out, err = run(capsys, *argv)
    assert code == 0, err
    assert out.count("not compared: the journal's figures are for another Rules Submission") == 1
    assert "DIFFERS" not in out and " same\n" not in out
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0 and json.loads(out)["matches"] is None, err
    code, out, err = run(capsys, *argv[:-1], "ez-baccarat")  # the journal's own: compared
    assert code == 0 and out.count(" same\n") == 7 and "not compared" not in out, err


def _journal_with_edge_record(path: Path, change: Callable[[dict], None]) -> None:
    """A journal of one EZ Baccarat round whose ``edge`` record is the monitor's own figures
    (``EdgeMonitor.outputs``) after ``change`` has altered them."""
    from controller.table.core import TableCore
    from controller.table.edge_figures import ShoeCards, edge_figures
    from controller.table.edge_monitor import EdgeMonitor
    from controller.table.io import TableRecord
    from controller.table.runner import TableRunner

    sub = load_preset("ez-baccarat")
    journal = Journal.open(path, table_id="T1")
    try:
        runner = TableRunner(TableCore(sub), journal)
        cards = ShoeCards()
        records = [TableRecord(kinds.SHOE_START, {"shoe": "T1-S0001", "decks": 8}, "T1-S0001")]
        records += [TableRecord(kinds.CARD, {"card": c, "to": "player", "position": i, "n": i}, "T1-S0001", 1)
                    for i, c in enumerate(["9S", "8H", "KD", "QC"], start=1)]
        records.append(TableRecord(kinds.ROUND_RESULT, {"round": 1, "kind": "normal"}, "T1-S0001", 1))
        for r in records:
            cards.feed(r.kind, r.payload, r.shoe)
        runner.journal_outputs(records)
        remaining = cards.remaining()
        wagers = edge_figures(sub, remaining.composition)
        change(wagers)
        runner.journal_outputs(EdgeMonitor().outputs("T1-S0001", 1, sub, remaining, wagers))
    finally:
        journal.close()


def _edge_text_as_written_before(wagers: dict) -> None:
    wagers["dragon7"]["edge"] = "-7.6E-2"  # another rendering of about the same figure: the ev is what counts


def _a_different_ev(wagers: dict) -> None:
    wagers["dragon7"]["ev"] = "1/2"


@pytest.mark.parametrize("change, code, mark", [(_edge_text_as_written_before, 0, "same"),
                                                (_a_different_ev, 1, "DIFFERS")])
def test_odds_journal_compares_each_wagers_exact_ev(capsys, tmp_path: Path, change, code: int, mark: str) -> None:
    journal = tmp_path / "j.db"
    _journal_with_edge_record(journal, change)
    argv = ["odds", "--journal", str(journal), "--shoe", "T1-S0001", "--round", "1"]
    got, out, err = run(capsys, *argv, "--submission", "ez-baccarat")
    assert got == code, err
    dragon7 = [line for line in out.splitlines() if line.startswith("dragon7 ")][-1]  # the comparison's row
    assert dragon7.endswith(f"  {mark}") and out.count(" same\n") == 7 - (mark == "DIFFERS")
    got, out, err = run(capsys, *argv, "--json")  # the submission the edge record names
    assert got == code and json.loads(out)["matches"] is (code == 0), err


@pytest.mark.parametrize("value", ["abc", "2", "-1.5", "0.0000001", "nan", "1e999", "", "\uff11", "0.0\uff15", "1_0"])
def test_a_bad_edge_threshold_is_one_line_and_creates_nothing(capsys, tmp_path: Path, value: str) -> None:
    journal = tmp_path / "j.db"
    code, out, err = run(capsys, "run", "--journal", str(journal), "--speed", "max", "--rounds", "1",
                         f"--edge-threshold={value}")
    assert code == 2 and len(err.splitlines()) == 1 and "--edge-threshold" in err, err
    assert "Traceback" not in err and "None" not in err and not journal.exists()


def test_no_edge_monitor_journals_no_edge_records(tmp_path: Path) -> None:
    journal = tmp_path / "j.db"
    shoectl_run(journal, "--submission", "ez-baccarat", "--rounds", "3", "--seed", "3", "--no-edge-monitor",
                "--display", "lines")
    found = {e.kind for e in entries_of(journal)}
    assert kinds.ROUND_RESULT in found and not found & {kinds.EDGE, kinds.EDGE_ALERT}


def test_a_dragon7_rich_shoe_raises_the_surveillance_notice(tmp_path: Path) -> None:
    one_deck = preset_with_decks(tmp_path / "ez-1-deck.toml", "ez-baccarat", 1)
    sub = load_submission(one_deck)
    journal = tmp_path / "j.db"
    proc = shoectl_run(journal, "--submission", str(one_deck), "--rounds", "3", "--seed", "4", "--json")
    entries = entries_of(journal)
    [result] = [e for e in entries if e.kind == kinds.ROUND_RESULT and e.payload["round"] == 2]
    left = Composition.standard(1).remove(reads_before(entries, result.shoe_id, result.seq))
    assert exact_odds(sub, left).wagers["dragon7"]["expected"] > 0, "the seed no longer plants a Dragon-7-rich shoe"
    [alert] = [e for e in entries if e.kind == kinds.EDGE_ALERT and e.payload["round"] == 2]
    assert "dragon7" in alert.payload["wagers"] and alert.payload["threshold"] == "0"
    assert Fraction(alert.payload["wagers"]["dragon7"]) > 0
    notices = [json.loads(line)["notice"] for line in proc.stdout.splitlines() if line.startswith('{"notice":')]
    assert any(n["level"] == "warning" and "after round 2 of" in n["text"] and "dragon7 +" in n["text"]
               for n in notices), notices
    [logged] = [line for line in proc.stderr.splitlines() if "player edge above the threshold" in line and "round=2" in line]
    assert "dragon7 +" in logged and "{" not in logged, logged  # the wagers as text, not a Python dict


def test_a_manual_table_without_an_operators_file_says_so_and_takes_operators_added_later(tmp_path: Path) -> None:
    """``--manual`` without an operators file started in silence; every command then met "this
    table has no operators file" and nothing dealt. It now says so at the start, and (a
    surveillance review: a misread card no one could enter held the table until a restart) the
    operators file beside the journal is followed even before it is there: an operator added to
    it while the table runs is accepted without a restart."""
    from tests.control.running_table import command_line, make_operators_file, send_and_read

    proc = subprocess.Popen([sys.executable, "-m", "controller.cli.main", "run", "--manual", "--journal",
                             str(tmp_path / "j.db"), "--display", "lines", "--speed", "max"],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        first = proc.stderr.readline()

        def ask() -> dict:
            deadline = time.monotonic() + 20
            while True:
                try:
                    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                        s.settimeout(10)
                        s.connect(str(tmp_path / "j.sock"))
                        return send_and_read(s, command_line("fp1", "open"))
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)

        before = ask()
        make_operators_file(tmp_path / "operators.toml")
        after = ask()
    finally:
        proc.terminate()
        proc.communicate(timeout=30)
    assert first.startswith(f"!! no operators file yet ({tmp_path / 'operators.toml'}): the control socket takes "
                            "commands once operators are added there")
    assert before["code"] == "auth" and before["error"].startswith("this table has no operators yet"), before
    assert after["ok"], after


def test_a_manual_table_resumed_on_a_new_built_in_emulator_leaves_the_restart_to_a_floorperson(
        capsys, tmp_path: Path) -> None:
    """A floorperson's review: a ``--manual`` table resumed on a fresh built-in emulator had the
    automated floorperson order ``restart_shoe`` (journaled as ``auto-floor``), in a mode without
    one. A later review: told then to restart the shoe, a floorperson threw away the one the table
    had started itself (the emulator's devices come back as new ones, and the table gives the lost
    shoe up): the line says what the table does."""
    journal = tmp_path / "j.db"
    code, _, _ = run(capsys, "run", "--journal", str(journal), "--rounds", "1", "--speed", "max", "--seed", "3",
                     "--display", "lines", "--no-edge-monitor")
    assert code == 0
    with JournalReader.open(journal) as reader:
        before = reader.last_seq
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli.main", "run", "--manual", "--journal", str(journal),
                             "--display", "lines", "--speed", "max", "--no-edge-monitor"],
                            stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    try:
        deadline = time.monotonic() + 60
        while not _resumed(journal, before):  # the resumed table journals its devices' return
            assert time.monotonic() < deadline and proc.poll() is None, "the table did not resume"
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert ("!! the built-in emulator was restarted without the cards of the shoe in play: the table gives that "
            "shoe up as its devices come back, and starts another") in err, err
    with JournalReader.open(journal) as reader:
        assert [e for e in reader.entries(since_seq=before, kinds="input.operator") if e.operator == "auto-floor"] == []
        after = [e.kind for e in reader.entries(since_seq=before)]
        replaced = [e.payload for e in reader.entries(since_seq=before, kinds="device_replaced")]
    assert any(p["shoe_lost"] for p in replaced), replaced
    assert "shoe_restarted" in after and after.index("shoe_restarted") < after.index("shoe_start"), after


def _resumed(journal: Path, before: int) -> bool:
    with JournalReader.open(journal) as reader:
        return reader.last_seq > before



def test_odds_journal_says_what_differs_beyond_the_wagers_figures(capsys, tmp_path: Path) -> None:
    """An edge record with a wager the Rules Submission does not offer differs from the figures
    recomputed: exit 1, and a line says which (a review: every wager said "same", exit 1)."""
    journal = tmp_path / "j.db"
    _journal_with_edge_record(journal, lambda wagers: wagers.update({"zzz": {"ev": "1", "edge": "1.00000000"}}))
    code, out, err = run(capsys, "odds", "--journal", str(journal), "--shoe", "T1-S0001", "--round", "1",
                         "--submission", "ez-baccarat")
    assert code == 1, err
    assert out.count(" same\n") == 7 and "DIFFERS" not in out.replace("zzz: in the edge record, not a wager of "
                                                                        "this Rules Submission: DIFFERS", "")
    assert out.rstrip().endswith("zzz: in the edge record, not a wager of this Rules Submission: DIFFERS")


@pytest.mark.parametrize("ending, says", [
    ("void", "the round was void (627a.13(e)): the shoe was reshuffled"),
    ("reconciled", "its shoe ended with it: no round was dealt from these cards again"),
])
def test_odds_journal_says_when_the_table_journals_no_figures_for_the_moment(capsys, tmp_path: Path, ending: str,
                                                                             says: str) -> None:
    """docs/edge-monitor.md: no figures for "a void round" nor "the last round of a shoe": the cards
    left then are still valued (a lab asks), with a line saying the table journals none for that
    moment (a review: an ended shoe's last 12 cards showed large player edges, no word)."""
    journal = tmp_path / "j.db"
    with Journal.open(journal, table_id="T1") as j:
        j.append("shoe_start", {"decks": 8, "shoe": "T1-S0001"}, shoe="T1-S0001")
        for i, c in enumerate(["9S", "8H", "KD", "QC"], start=1):
            j.append("card", {"card": c, "to": "player", "position": i, "n": i}, shoe="T1-S0001", round=1)
        result = {"round": 1, "kind": "void", "reason": "a floorperson's void"} if ending == "void" else {
            "round": 1, "kind": "normal"}
        j.append("round_result", result, shoe="T1-S0001", round=1)
        if ending == "reconciled":
            j.append("reconciliation", {"loaded": 416, "left_shoe": 4, "ok": True}, shoe="T1-S0001", round=1)
        witnessed(j)
    code, out, err = run(capsys, "odds", "--journal", str(journal), "--game", "ez-baccarat")
    assert code == 0, err
    assert out.splitlines()[1] == f"The table journals no figures for this moment: {says}; these are the cards as " \
                                  "that round left them"
    code, out, err = run(capsys, "odds", "--journal", str(journal), "--game", "ez-baccarat", "--json")
    assert code == 0 and json.loads(out)["no_figures_journaled"] == says, err


def test_replay_and_odds_take_the_same_edge_record_for_a_round(capsys, tmp_path: Path) -> None:
    """A review of the monitor: `journal replay --edges` matched an edge record to its round by the
    entry's round column, `odds --journal` by the payload's round, so a record whose two disagree
    was one round's figures to the first and none to the second. Both take a round's first record
    whose payload and column name that round; such a record is no round's."""
    journal = tmp_path / "j.db"
    _journal_with_edge_record(journal, lambda wagers: None)
    [edge] = [e.payload for e in entries_of(journal) if e.kind == kinds.EDGE]
    with Journal.open(journal, table_id="T1") as j:
        j.append(kinds.ROUND_START, {"round": 2, "kind": "normal", "wagers": []}, shoe="T1-S0001", round=2)
        j.append(kinds.ROUND_RESULT, {"round": 2, "kind": "void", "reason": "a test", "cards": []}, shoe="T1-S0001", round=2)
        j.append(kinds.EDGE, {**edge, "round": 1}, shoe="T1-S0001", round=2)  # says round 1, filed under 2
        witnessed(j)
    code, out, err = run(capsys, "journal", "replay", str(journal), "--edges", "--json", "--round", "2")
    assert code == 0, err
    assert [json.loads(line)["edge"] for line in out.splitlines()] == [None]
    code, out, err = run(capsys, "odds", "--journal", str(journal), "--round", "2", "--json")
    assert code == 0 and json.loads(out)["journaled"] is None, err
    code, out, err = run(capsys, "odds", "--journal", str(journal), "--round", "1", "--json")
    assert code == 0 and json.loads(out)["journaled"]["round"] == 1, err  # round 1's own record still its


def test_odds_journal_has_no_such_note_for_a_round_the_shoe_went_on_from(capsys, ez_journal: Path) -> None:
    """A review of the day's changes: the note for a shoe's last round was given to any round of
    a shoe that had ended by the journal's end (`--round 2` of a reconciled shoe)."""
    journal_path = ez_journal.parent / "ended.db"
    shoectl_run(journal_path, "--submission", "ez-baccarat", "--shoes", "1", "--seed", "3", "--display", "lines")
    code, out, err = run(capsys, "odds", "--journal", str(journal_path), "--round", "2", "--json")  # read to the end
    assert code == 0, err
    doc = json.loads(out)
    assert doc["no_figures_journaled"] is None and doc["matches"] is True
    last = [e.payload["round"] for e in entries_of(journal_path) if e.kind == kinds.ROUND_RESULT and e.shoe_id == "T1-S0001"][-1]
    code, out, err = run(capsys, "odds", "--journal", str(journal_path), "--shoe", "T1-S0001", "--round", str(last), "--json")
    assert code == 0 and json.loads(out)["no_figures_journaled"] == "its shoe ended with it: no round was dealt from these cards again"
