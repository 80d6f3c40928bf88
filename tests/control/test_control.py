"""Operators at a running table: ``shoectl run`` on the emulated table, the control socket, the
``ctl`` client and the interactive console driven with pexpect as a person would."""
from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time

import pexpect
import pytest

from controller.journal import JournalReader
from tests.control.running_table import shoectl


@pytest.fixture()
def table(start_table, workdir):
    t = start_table(workdir, "--manual", "--seed", "3")
    return {"sock": str(t.sock), "journal": t.journal, "proc": t.proc}


def ctl(t: dict, *args: str, operator: str | None = None, pin: str | None = None) -> subprocess.CompletedProcess:
    extra = ["--operator", operator, "--pin-stdin"] if operator else []
    return shoectl("ctl", "--socket", t["sock"], *extra, *args, pin=pin)


def status(t: dict) -> dict:
    return json.loads(ctl(t, "status", "--json").stdout)


def wait_state(t: dict, want: str, timeout: float = 20) -> dict:
    deadline = time.monotonic() + timeout
    st = status(t)
    while st["state"] != want and time.monotonic() < deadline:
        time.sleep(0.1)
        st = status(t)
    return st


def journaled(t: dict, kind: str) -> list[dict]:
    with JournalReader.open(t["journal"]) as r:
        return [dict(e.payload, _operator=e.operator) for e in r.entries(kinds=(kind,))]


@pytest.mark.slow
def test_socket_is_owner_and_group_only(table) -> None:
    mode = stat.S_IMODE(os.stat(table["sock"]).st_mode)
    assert mode & 0o007 == 0 and mode == 0o660


@pytest.mark.slow
@pytest.mark.reg("681a.5(e)")
def test_wrong_pin_and_low_role_are_refused_change_nothing_and_are_journaled(table) -> None:
    before = status(table)
    assert before["state"] == "closed"
    bad = ctl(table, "open", operator="fp1", pin="1111")
    assert bad.returncode == 3 and "wrong PIN" in bad.stderr and bad.stderr.count("\n") == 1
    low = ctl(table, "open", operator="d1", pin="4826")
    assert low.returncode == 4 and "floorperson" in low.stderr
    assert status(table) == before
    refusals = journaled(table, "auth_refused")
    assert [(r["_operator"], r["code"]) for r in refusals] == [("fp1", "auth"), ("d1", "forbidden")]
    ok = ctl(table, "open", operator="fp1", pin="2580")
    assert ok.returncode == 0
    st = wait_state(table, "cutting")
    assert st["shoe"] is not None
    # the table itself refuses what the procedure does not allow, with the reason: exit 1, journaled
    early = ctl(table, "no_more_bets", operator="d1", pin="4826")
    assert early.returncode == 1 and "not allowed while the table is cutting" in early.stderr
    assert journaled(table, "refused")[-1]["input"] == "no_more_bets"
    ops = journaled(table, "input.operator")
    assert ops[-2:] == [dict(command="open", args={}, role="floorperson", _operator="fp1"),
                        dict(command="no_more_bets", args={}, role="dealer", _operator="d1")]


@pytest.mark.slow
def test_five_wrong_pins_lock_the_operator_out(table) -> None:
    for _ in range(5):
        assert ctl(table, "open", operator="fp1", pin="0000").returncode == 3
    locked = ctl(table, "open", operator="fp1", pin="2580")
    assert locked.returncode == 3 and "locked" in locked.stderr.lower()
    assert status(table)["state"] == "closed"


@pytest.mark.slow
@pytest.mark.reg("629a.8(b)")
def test_console_driven_as_a_person_would(table) -> None:
    env = dict(os.environ, TERM="dumb")
    child = pexpect.spawn(sys.executable, ["-m", "controller.cli.main", "console", "--socket", table["sock"], "--operator", "fp1"],
                          env=env, encoding="utf-8", timeout=20)
    try:
        child.expect("PIN for fp1: ")
        child.sendline("2580")
        child.expect("shoectl> ")
        child.sendline("status")
        child.expect("state closed")
        child.expect("shoectl> ")
        for seat in (2, 5):
            child.sendline(f"sit seat={seat}")
            child.expect("sit: ok")
        child.sendline("open")
        child.expect("open: ok")
        deadline = time.monotonic() + 20
        while status(table)["state"] != "cutting" and time.monotonic() < deadline:
            time.sleep(0.1)
        child.sendline("cut seat=5 position=5")
        child.expect("refused: .*at least 10 cards")
        child.sendline("cut_decline seat=5")
        child.expect("cut_decline: ok")
        child.sendline("cut_decline seat=2")
        child.sendline("cut position=120")
        child.expect("cut: ok")
        child.sendline("cover from_bottom=14")
        child.expect("cover: ok")
        child.sendline("load")
        child.expect("load: ok")
        wait_state(table, "betting")
        child.sendline("wager seat=2 kind=banker amount=2500")
        child.expect("wager: ok")
        child.sendline("no_more_bets")
        child.expect("no_more_bets: ok")
        child.expect(r"\* T1-S0001 round 1 \[normal\]: P .* -> (player|banker|tie)")
        child.sendline("help")
        child.expect("order_reshuffle +floorperson")
        child.sendline("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    rounds = journaled(table, "round_result")
    assert len(rounds) == 1 and rounds[0]["kind"] == "normal"
    settled = journaled(table, "settlement")
    assert [(s["seat"], s["kind"], s["amount"]) for s in settled] == [(2, "banker", 2500)]
