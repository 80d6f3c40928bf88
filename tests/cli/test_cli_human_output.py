"""What a person reads from `journal replay` on a journal written by `shoectl run`: no Python
`None` for what the journal does not hold, and money in major units."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_run import dealt_journal, run


@pytest.fixture(scope="module")
def one_shoe(tmp_path_factory) -> Path:
    """A whole shoe, and the next one started (shuffled, not yet cut) when the run stops."""
    return dealt_journal(tmp_path_factory.mktemp("human") / "journal.db", "--shoes", "1", "--seed", "3")


def test_replay_says_in_words_what_a_shoe_does_not_have(capsys, one_shoe: Path) -> None:
    code, out, err = run(capsys, "journal", "replay", str(one_shoe))
    assert code == 0 and err == ""
    assert "None" not in out
    shoes = [line for line in out.splitlines() if line.startswith("shoe ")]
    assert re.fullmatch(r"shoe T1-S0001 \(begun \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\): 8 decks, cut at \d+ by (seat \d+|the dealer|\S+), second cover \d+ from "
                        r"the bottom, burned \S+, \d+ rounds, reconciled \(416 of 416 cards\)", shoes[0])
    # the next shoe, begun as the run stopped (a lab's review read "still in play" of a stopped table)
    assert re.sub(r" \(begun [^)]*\)", "", shoes[1]) == ("shoe T1-S0002: 8 decks, not cut, no second cover card, burned -, 0 rounds, never loaded "
                        "(being prepared when the journal ends, or given up before its load)")


def test_replay_shows_money_in_major_units(capsys, one_shoe: Path) -> None:
    _, out, _ = run(capsys, "journal", "replay", str(one_shoe))
    nets = re.findall(r"players net (\S+)$", out, flags=re.M)
    assert nets and all(re.fullmatch(r"[+-]\d{1,3}(,\d{3})*\.\d\d", n) for n in nets)
    _, doc, _ = run(capsys, "journal", "replay", str(one_shoe), "--json", "--round", "1")
    first = next(json.loads(line) for line in doc.splitlines() if json.loads(line)["type"] == "round")
    cents = sum(s["net"] for s in first["settlements"])
    assert f"players net {'+' if cents >= 0 else '-'}{abs(cents) // 100:,}.{abs(cents) % 100:02d}" in out


def test_replay_says_when_and_each_seats_wager_and_settlement(capsys, one_shoe: Path) -> None:
    """Surveillance matches a disputed hand to the cameras by its time, and reads each seat's wager
    and what it was paid (a surveillance review: no time anywhere in the replay, and the seats only
    in JSON, in minor units)."""
    _, doc, _ = run(capsys, "journal", "replay", str(one_shoe), "--json", "--round", "3")
    played = next(d for d in map(json.loads, doc.splitlines()) if d["type"] == "round")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", played["started"])
    assert played["started"] <= played["decided"]
    code, out, err = run(capsys, "journal", "replay", str(one_shoe), "--round", "3", "--wagers")
    assert code == 0, err
    first, *seats = [line for line in out.splitlines() if " round 3 " in line or line.startswith("      seat ")]
    assert f"round 3 ({played['started'][:10]} {played['started'][11:19]} UTC) [" in first
    assert len(seats) == len(played["settlements"]) > 0
    for line, s in zip(seats, played["settlements"]):
        net = f"{'+' if s['net'] >= 0 else '-'}{abs(s['net']) // 100:,}.{abs(s['net']) % 100:02d}"
        assert line.startswith(f"      seat {s['seat']} {s['kind']} {s['amount'] // 100:,}.{s['amount'] % 100:02d}: "
                               f"{s['result']}, paid ") and line.endswith(f", net {net}")
        if s.get("commission"):  # a forensic review read "won 14.25, commission 0.75" as 15.75 paid
            gross, c = s["win"] + s["commission"], s["commission"]
            assert f"({gross // 100:,}.{gross % 100:02d} less commission {c // 100}.{c % 100:02d})" in line


@pytest.mark.parametrize("has_shuffler, words", [(True, "8 decks to the shuffler"),
                                                 (False, "8 decks to the dealer (a preshuffled pack, or shuffled by hand)")])
def test_the_lines_display_says_how_a_new_shoe_is_made(capsys, has_shuffler: bool, words: str) -> None:
    """``--display lines`` at a table without a shuffler once said "shuffling 8 decks": the dealer
    opens preshuffled decks there (681a.5(a)), and the line says so."""
    from controller.cli.run_display import LineDisplay
    from controller.cli.run_output import StdoutLines
    from controller.table.io import TableRecord

    out = StdoutLines()
    display = LineDisplay(out)
    display.snapshot = lambda: {"has_shuffler": has_shuffler}
    display.record(TableRecord("shoe_start", {"shoe": "T1-S0002", "decks": 8}, "T1-S0002"))
    assert out.finish()
    assert capsys.readouterr().out == f"== shoe T1-S0002: {words}\n"


def test_the_lines_display_says_each_fault_once_and_a_shoe_given_up(capsys) -> None:
    """A review of the emulator: a shoe given up as its device came back new, between rounds, was
    never said by `--display lines` (fault notices were dropped), and the shoe's end read as an
    ordinary one. A fault whose record was printed is not said twice; a device outage's is said by
    its outage lines only."""
    from controller.cli.run_display import LineDisplay
    from controller.cli.run_output import StdoutLines
    from controller.table.io import Notice, TableRecord

    out = StdoutLines()
    display = LineDisplay(out)
    display.record(TableRecord("fault", {"fault": "door", "reason": "the shoe's door is open"}, "S1"))
    display.notice(Notice("fault", "the shoe's door is open"))
    display.record(TableRecord("fault", {"fault": "link:shoe", "reason": "the shoe does not answer"}, "S1"))
    display.notice(Notice("fault", "the shoe does not answer"))
    display.record(TableRecord("count_fault", {"problem": "2 cards missing"}, "S1"))
    display.notice(Notice("fault", "card count after the shuffle is 414, expected 416: 2 cards missing; the table "
                                   "stays closed"))
    display.notice(Notice("fault", "the shoe came back as a new device: the shoe in play is given up"))
    display.notice(Notice("info", "betting is open"))
    assert out.finish()
    assert capsys.readouterr().out == ("!! FAULT: the shoe's door is open\n"
                                       "!! FAULT: 2 cards missing\n"
                                       "!! the shoe came back as a new device: the shoe in play is given up\n")


@pytest.mark.parametrize("select, says", [
    (["--shoe", "T1-S0009"], "no shoe 'T1-S0009' in the journal"),
    (["--round", "999"], "no round 999 in the journal"),
    (["--shoe", "T1-S0001", "--round", "999"], "no round 999 of shoe 'T1-S0001' in the journal"),
])
def test_replay_of_a_shoe_or_round_the_journal_does_not_have_is_one_line_exit_2(
        capsys, one_shoe: Path, select: list[str], says: str) -> None:
    """A selection that finds nothing is an input error (it printed a line on stdout and exited 0,
    which a script could not tell from a replay)."""
    for fmt in ([], ["--json"]):
        assert run(capsys, "journal", "replay", str(one_shoe), *select, *fmt) == \
            (2, "", f"shoectl journal replay: error: {says}\n")


def test_an_events_payload_is_said_in_words_not_json() -> None:
    """A surveillance review read ``seat null``, ``shoe_lost false``, ``faults ["misread"]`` and
    a JSON object in the replay's text: what a payload holds is said in words, sums in major units."""
    from controller.cli.cmd_replay import _events_text

    doc = {"events": [
        {"seq": 9, "kind": "device_replaced", "operator": None,
         "payload": {"device_role": "shoe", "shoe_lost": True, "serial": None, "faults": ["misread", "jam:shoe"]}},
        {"seq": 10, "kind": "controller_started", "operator": None,
         "payload": {"capabilities": {"automatic_shoe": False, "approval": None}, "replayed": 3}},
        {"seq": 11, "kind": "house_money_added", "operator": "d1", "payload": {"seat": 2, "amount": 3050}},
        # the operator's own act is "by" them; what the table did on their command is "after" it
        {"seq": 12, "kind": "card_entered", "operator": "fp1", "payload": {"card": "8D", "by": "fp1"}},
    ]}
    assert _events_text(doc).splitlines() == [
        "      entry 9: device replaced (device role shoe, shoe lost yes, serial none, faults misread, jam:shoe)",
        "      entry 10: controller started (capabilities [automatic shoe no; approval none], replayed 3)",
        "      entry 11 after d1's command: house money added (seat 2, amount 30.50)",
        "      entry 12 by fp1: card entered (card 8D, by fp1)"]


def test_export_takes_one_shoe_or_one_round(capsys, one_shoe: Path) -> None:
    """A surveillance officer exporting one disputed round had to export the whole journal and
    filter its JSON by hand (a surveillance review): ``--shoe`` and ``--round`` choose the entries
    holding that shoe and round, and one that selects nothing is refused as the replay refuses it."""
    code, out, err = run(capsys, "journal", "export", str(one_shoe))
    assert code == 0, err
    every = [json.loads(line) for line in out.splitlines()]
    code, out, err = run(capsys, "journal", "export", str(one_shoe), "--shoe", "T1-S0001", "--round", "3")
    assert code == 0, err
    got = [json.loads(line) for line in out.splitlines()]
    start = next(i for i, e in enumerate(every) if e["round_no"] == 3)
    bound = max(i for i, e in enumerate(every[:start]) if e["kind"] in ("round_start", "round_result", "discard_rack"))
    betting = [e for e in every[bound + 1:start] if e["round_no"] is None and e["shoe_id"] == "T1-S0001"]
    assert betting and got == betting + [e for e in every if e["shoe_id"] == "T1-S0001" and e["round_no"] == 3]
    # a forensic review: the round's export lacked its wagers and who placed them
    assert {"wager", "input.operator", "round_start", "card", "round_result", "settlement"} <= {e["kind"] for e in got}
    assert all(e["round_no"] in (None, 3) for e in got)
    code, out, err = run(capsys, "journal", "export", str(one_shoe), "--round", "999")
    assert (code, out) == (2, "") and err.endswith("error: no round 999 in the journal\n")


def test_each_card_of_a_round_has_its_place_in_the_stack(capsys, one_shoe: Path) -> None:
    """A surveillance review matching a round's cards to the shoe's order found the positions only
    in the ``card`` records: each of a replayed round's cards has its own."""
    _, out, _ = run(capsys, "journal", "export", str(one_shoe), "--shoe", "T1-S0001")
    placed = {(e["round_no"], e["payload"]["card"], e["payload"]["position"])
              for e in map(json.loads, out.splitlines()) if e["kind"] == "card"}
    _, out, _ = run(capsys, "journal", "replay", str(one_shoe), "--shoe", "T1-S0001", "--json")
    rounds = [d for d in map(json.loads, out.splitlines()) if d["type"] == "round" and d["kind"] == "normal"]
    assert rounds and all(isinstance(c["position"], int) for d in rounds for c in d["cards"])
    assert {(d["round"], c["card"], c["position"]) for d in rounds for c in d["cards"]} <= placed


def test_a_rounds_line_says_what_became_of_wagers_no_round_decided() -> None:
    """An examiner's review: a simulated round read "3 wagers, players net +0.00" (627a.13(d): "a
    simulated round of play in which wagers may not be accepted"), and a void round "wagers
    returned" where two House Money Wagers had lost before the void."""
    from controller.cli.cmd_replay import _simulated_wagers_text
    from controller.table.result_line import void_wagers_text

    wagers = [{"seat": s, "kind": "player", "amount": 1000} for s in (1, 2, 3)]
    push = {"result": "push", "net": 0}
    assert _simulated_wagers_text({"wagers": wagers, "settlements": [push] * 3}) == (
        "3 wagers returned as pushes (no wager is decided by a simulated round)")
    assert _simulated_wagers_text({"wagers": wagers, "settlements": []}) == (
        "3 wagers kept on the layout for the next round (no wager is decided by a simulated round)")
    assert _simulated_wagers_text({"wagers": [], "settlements": []}) == "no wager"
    lost = {"result": "lose", "net": -500}
    assert void_wagers_text([push, push]) == "wagers returned"
    assert void_wagers_text([push, push, lost, lost]) == (
        "2 wagers returned, 2 decided before the void (players net -10.00)")


def test_a_void_rounds_line_says_which_wagers_were_decided_before_the_void(capsys) -> None:
    """A review: `run --display lines` said "wagers returned" of every void round, also of one
    whose House Money Wagers had lost before the void (`journal replay` said it right)."""
    from controller.cli.run_display import LineDisplay
    from controller.cli.run_output import StdoutLines
    from controller.table.io import TableRecord

    out = StdoutLines()
    display = LineDisplay(out)
    display.record(TableRecord("round_start", {"round": 4, "kind": "normal", "wagers": []}, "S1", 4))
    for result, net in (("lose", -500), ("push", 0), ("push", 0)):
        display.record(TableRecord("settlement", {"result": result, "net": net}, "S1", 4))
    display.record(TableRecord("round_result", {"round": 4, "kind": "void", "reason": "voided by the floorperson"},
                               "S1", 4))
    assert out.finish()
    assert capsys.readouterr().out == ("S1 round   4 VOID: voided by the floorperson; 2 wagers returned, 1 decided "
                                       "before the void (players net -5.00)\n")


def test_a_void_after_a_restart_counts_the_house_money_settled_before_the_stop(capsys) -> None:
    """A money review: a Midibaccarat round whose House Money Wager lost, the table killed and
    started again, then void (its shoe came back new): `--display lines` said "wagers returned",
    where `journal replay` said one was decided before the void (docs/assumptions.md: the House
    Money settlement "stands"). The settlement was journaled before the stop and never seen by
    the display; the resumed table's status holds it (``house_money_settled``), and the display
    counts it. (tests/control/test_void_line_after_restart.py: the same through `shoectl run`.)"""
    from controller.cli.run_display import LineDisplay
    from controller.cli.run_output import StdoutLines
    from controller.roles import Role
    from controller.rules.cards import parse_cards
    from firmware_bridge.protocol import messages as m
    from tests.table.bench import Bench, stack_with

    b = Bench("midibaccarat", stack=stack_with(parse_cards("5S,KH,6D,2C,KD,KC"), decks=6))
    b.open_and_cut(seats=(1, 2))
    b.play_round([(2, "player", 100), (2, "house_money", 333)])
    b.op("reveal", Role.DEALER)
    b.op("reveal", Role.DEALER)
    [lost] = [s for s in b.of("settlement") if s["kind"] == "house_money"]
    assert (lost["result"], lost["net"]) == ("lose", -333)
    assert b.core.snapshot()["house_money_settled"] == [lost]
    out = StdoutLines()
    display = LineDisplay(out)
    display.resumed_from_journal(b.core.snapshot())  # what `shoectl run` does once it has replayed the journal
    before = len(b.records)
    b.auto_deal = False
    b.op("continue", Role.DEALER)
    b.event("shoe", m.ShoeEmpty())  # no card for the third: void (627a.13(e))
    for record in b.records[before:]:
        display.record(record)
    assert b.core.snapshot()["house_money_settled"] == []  # the round is over
    assert out.finish()
    [void] = [line for line in capsys.readouterr().out.splitlines() if " VOID: " in line]
    assert void.endswith("; 1 wagers returned, 1 decided before the void (players net -3.33)"), void
