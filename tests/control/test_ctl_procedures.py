"""681a.5 procedures that operators give at a running table (``shoectl run --manual`` on the
built-in emulator) over its control socket: the batch taken out of the shuffler spread and
reshuffled at a player's request (681a.5(g)(2)), and a count fault that waits for the floorperson.

The commands go as the request lines ``shoectl ctl`` sends (tests/control/test_control.py and
tests/cli drive ``ctl`` itself): a ``ctl`` process per command cost these tests about 0.2 s of CPU
each, some 25 per test, for nothing they look at."""
from __future__ import annotations

import json
import time

import pytest

from cli_run import run_captured
from controller.cli.cmd_ctl import parse_args
from tests.control.running_table import PINS, command_line, shoectl


def ctl(t, operator: str, command: str, *args: str) -> None:
    """``shoectl ctl --operator OPERATOR COMMAND KEY=VALUE...`` (the arguments typed by ctl's own
    ``parse_args``), answered ok."""
    reply = t.ask(command_line(operator, command, **parse_args(command, list(args))))
    assert reply is not None and reply["ok"], (command, args, reply)


@pytest.mark.slow
@pytest.mark.reg("681a.5(g)(2)")
def test_a_players_request_reshuffles_the_batch_taken_out_of_the_shuffler(start_table, workdir) -> None:
    """681a.5(g)(2): "Unless a player requests otherwise, the batch of cards removed from the
    shuffler does not need to be spread for inspection and reshuffled prior to being dealt"."""
    t = start_table(workdir, manual=True)
    ctl(t, "fp1", "open")
    assert t.wait_state("cutting") == "cutting"
    ctl(t, "d1", "cut", "position=120")
    ctl(t, "d1", "cover", "from_bottom=14")
    ctl(t, "d1", "load")
    assert t.wait_state("betting") == "betting"
    ctl(t, "fp1", "declare_idle")
    ctl(t, "d1", "sit", "seat=5")  # 681a.5(g): the first player arriving sees the spread cards
    ctl(t, "fp1", "inspection_done", "reshuffle_batch=true")
    status = t.status()
    assert (status["state"], status["prompt"]) == ("inspection", "SPREAD THE SHUFFLER'S BATCH")
    ctl(t, "fp1", "inspection_done")
    assert t.wait_state("cutting") == "cutting"
    assert [r["clause"] for r in t.journaled("inspection")] == ["681a.5(g)", "681a.5(g)(2)"]
    assert len(t.journaled("shuffler_batch_removed")) == 1 and len(t.journaled("shoe_start")) == 2
    t.assert_stopped_cleanly()


@pytest.mark.slow
@pytest.mark.reg("681a.5(a)")
def test_with_manual_a_count_fault_waits_for_the_floorperson(start_table, workdir) -> None:
    """681a.5(a): the cards are shuffled "so that the cards are randomly intermixed" and the device
    places them "in a single stack", counted here: every shuffle is one card short. Without the
    automated floorperson the table neither loops nor ends: it waits in its count fault for an
    operator, a reshuffle ordered counts short again, and the floorperson closes the table."""
    t = start_table(workdir, "--faults", "missing-card=1", manual=True)
    ctl(t, "fp1", "open")
    assert t.wait_state("count_fault") == "count_fault"
    ctl(t, "fp1", "order_reshuffle")
    assert t.wait_state("count_fault") == "count_fault"
    assert len(t.journaled("count_fault")) == 2 and len(t.journaled("shoe_start")) == 2 and t.alive()
    ctl(t, "fp1", "close", "reason=shuffler sent for service")
    assert t.wait_state("closed") == "closed"
    [close] = [r for r in t.journaled("operator") if r["command"] == "close"]
    assert close["args"] == {"reason": "shuffler sent for service"} and close["operator"] == "fp1"
    t.assert_stopped_cleanly()


def _load_a_shoe(t, *cut_by: str) -> None:
    assert t.wait_state("cutting") == "cutting"
    ctl(t, "d1", "cut", "position=120", *cut_by)
    ctl(t, "d1", "cover", "from_bottom=14")
    ctl(t, "d1", "load")
    assert t.wait_state("betting") == "betting", t.status()


def _wait_for_one_of(t, *states: str, timeout: float = 20.0) -> str:
    deadline = time.monotonic() + timeout
    state = t.status()["state"]
    while state not in states and time.monotonic() < deadline:
        time.sleep(0.05)
        state = t.status()["state"]
    return state


def _deal_a_round(t) -> None:
    ctl(t, "d1", "wager", "seat=1", "kind=banker", "amount=1000")
    ctl(t, "d1", "no_more_bets")
    assert t.wait_state("betting") == "betting", t.status()


@pytest.mark.slow
@pytest.mark.reg("681a.7(d)(1)", "681a.5(g)")
def test_a_shoe_ended_by_closing_or_idling_the_table_is_collected_and_the_next_one_loads(start_table, workdir) -> None:
    """681a.7(d)(1): the dealer shall "collect and reshuffle the cards by removing the cards
    remaining in the shoe and placing them in the discard rack to ensure that no cards are
    missing"; 681a.5(g): at an idle table "the cards shall be removed from the dealing shoe and the
    discard rack". A table closed, or declared idle, in the middle of a shoe left the cards in the
    shoe unreconciled: the next stack could not be loaded, and the table waited in loading for
    ever."""
    t = start_table(workdir, manual=True)
    ctl(t, "fp1", "open")
    _load_a_shoe(t)
    _deal_a_round(t)
    ctl(t, "fp1", "close", "reason=end of shift")
    assert t.wait_state("closed") == "closed"
    ctl(t, "fp1", "open")
    _load_a_shoe(t, "seat=1")  # the cards left in the first shoe were unloaded on the UNLOAD prompt
    _deal_a_round(t)
    ctl(t, "fp1", "declare_idle")
    assert t.wait_state("inspection") == "inspection"
    ctl(t, "d1", "sit", "seat=5")  # 681a.5(g): the first player arriving sees the spread cards
    ctl(t, "fp1", "inspection_done")
    _load_a_shoe(t, "seat=5")  # the highest-numbered seat taken is offered the cut (681a.5(b))
    reconciliations = t.journaled("reconciliation")
    assert len(reconciliations) == 2 and all(r["ok"] and r["total"] == r["expected"] for r in reconciliations)
    assert all(r["remaining_in_shoe"] > 300 for r in reconciliations)
    assert [c["ok"] for c in t.journaled("cardset")] == [True, True]
    t.assert_stopped_cleanly()


@pytest.mark.slow
def test_an_operator_removed_from_the_file_is_refused_by_the_running_table(start_table, workdir,
                                                                           operators_file) -> None:
    """``shoectl operators remove`` while the table runs: the next command of that operator is
    refused (it was accepted until the table restarted)."""
    ops = workdir / "operators.toml"
    ops.write_bytes(operators_file.read_bytes())
    ops.chmod(0o600)
    t = start_table(workdir, "--operators", str(ops), manual=True, operators=False)
    ctl(t, "fp1", "open")
    assert shoectl("operators", "remove", "fp1", "--file", str(ops)).returncode == 0
    refused = shoectl("ctl", "--socket", str(t.sock), "--operator", "fp1", "--pin-stdin", "close", pin=PINS["fp1"])
    assert refused.returncode == 3 and "wrong PIN, or no operator 'fp1'" in refused.stderr, refused.stderr
    assert t.journaled("auth_refused")[-1]["reason"] == "unknown operator 'fp1'"
    t.assert_stopped_cleanly()


@pytest.mark.slow
@pytest.mark.reg("681a.5(e)", "681a.5(d)")
def test_a_recut_ordered_is_the_cut_dealt_and_its_cover_card_comes_out_where_it_was_put(start_table, workdir) -> None:
    """681a.5(e): "a floorperson or above may require the cards to be reshuffled or recut". The
    recut's second cover card is put 400 cards above the bottom, to come out after 16 cards
    (681a.5(d): "insert the second cover card"); the first cut's lay 20 above the bottom. The
    emulated dealer used to keep the first cut and cover, and the journal recorded a cut the shoe
    did not hold."""
    t = start_table(workdir, manual=True)
    ctl(t, "fp1", "open")
    assert t.wait_state("cutting") == "cutting"
    ctl(t, "d1", "cut", "position=150")
    ctl(t, "d1", "cover", "from_bottom=20")
    ctl(t, "fp1", "order_recut")
    ctl(t, "d1", "cut", "position=200")
    ctl(t, "d1", "cover", "from_bottom=400")
    ctl(t, "d1", "load")
    assert t.wait_state("betting") == "betting", t.status()
    for _ in range(8):  # rounds until the cover card; the round it came in completes, then the next shoe
        ctl(t, "d1", "wager", "seat=1", "kind=banker", "amount=1000")
        ctl(t, "d1", "no_more_bets")
        state = _wait_for_one_of(t, "betting", "cutting")
        if state != "betting":
            break
    assert state == "cutting", t.status()
    [cover] = t.journaled("cover_card")
    assert cover["position"] == 17  # after the 16 cards above it
    assert not t.journaled("cover_card_early", "cover_card_missing", "fault")
    [reconciliation] = t.journaled("reconciliation")
    assert reconciliation["ok"] and reconciliation["left_shoe"] >= 16, reconciliation
    t.assert_stopped_cleanly()
    # the replay keeps the cut the recut undid (an examiner's review found only the last one there)
    code, out, err = run_captured("journal", "replay", str(t.journal), "--json")
    shoe = next(d for d in map(json.loads, out.splitlines()) if d["type"] == "shoe")
    assert (shoe["cut"], shoe["cover_from_bottom"]) == ({"position": 200, "by": "dealer"}, 400)
    assert shoe["cuts_before"] == [{"position": 150, "by": "dealer", "cover_from_bottom": 20}]
    text = run_captured("journal", "replay", str(t.journal))[1]
    assert ("cut at 200 by dealer (recut; before: at 150 by dealer, second cover 20 from the bottom), "
            "second cover 400 from the bottom") in text, text
