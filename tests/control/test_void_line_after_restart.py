"""A Midibaccarat round voided when ``shoectl run`` starts again after a kill -9 (its emulated
devices come back new: the shoe is given up, 627a.13(e)): the House Money Wager settled before the
void stands (docs/assumptions.md), and the table's line for the void says so, as `journal replay`
does, not "wagers returned"."""
from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from tests.control.running_table import SHOECTL, Table, _answers, command_line, make_operators_file


def _start(d: Path, ops: Path, out: Path) -> Table:
    argv = [*SHOECTL, "run", "--manual", "--submission", "midibaccarat", "--journal", str(d / "j.db"),
            "--control", str(d / "c.sock"), "--operators", str(ops), "--speed", "max", "--seed", "11",
            "--display", "lines", "--no-edge-monitor"]
    err = d / "j.stderr"
    with open(out, "a") as o, open(err, "a") as e:
        proc = subprocess.Popen(argv, stdout=o, stderr=e)
    t = Table(d, d / "j.db", d / "c.sock", proc, err, argv)
    deadline = time.monotonic() + 30
    while not _answers(t.sock):
        assert proc.poll() is None and time.monotonic() < deadline, t.stderr()
        time.sleep(0.05)
    return t


def _squeeze_through(t: Table) -> str:
    deadline = time.monotonic() + 20
    while True:
        st = t.status()
        if st["state"] == "dealing" and time.monotonic() < deadline:  # the cards still coming
            time.sleep(0.05)
            continue
        if st["state"] != "squeeze":
            return st["state"]
        hand = "player" if "PLAYER" in st["prompt"] else "banker"
        t.ok(command_line("d1", "reveal", hand=hand))


def test_the_void_line_after_a_restart_says_the_house_money_settled_before_it_stands(tmp_path: Path) -> None:
    d = tmp_path
    ops = make_operators_file(d / "operators.toml")
    out = d / "run.out"
    t = _start(d, ops, out)
    try:
        for seat in (1, 2):
            t.ok(command_line("fp1", "sit", seat=seat))
        t.ok(command_line("fp1", "open"))
        assert t.wait_state("cutting") == "cutting"
        while t.status()["cut_offered_to"] is not None:
            t.ok(command_line("d1", "cut_decline", seat=t.status()["cut_offered_to"]))
        t.ok(command_line("d1", "cut", position=100))
        t.ok(command_line("d1", "cover", from_bottom=15))
        t.ok(command_line("d1", "load"))
        assert t.wait_state("betting") == "betting"
        for _ in range(30):  # until a round's House Money Wager loses
            t.ok(command_line("d1", "wager", seat=1, kind="player", amount=1001))
            t.ok(command_line("d1", "wager", seat=1, kind="house_money", amount=333))
            t.ok(command_line("d1", "no_more_bets"))
            assert _squeeze_through(t) == "house_money"
            if t.journaled("settlement")[-1]["result"] == "lose":
                break
            t.ok(command_line("d1", "continue"))
            assert _squeeze_through(t) == "betting"
        else:
            raise AssertionError("no House Money Wager lost in 30 rounds")
        os.kill(t.proc.pid, signal.SIGKILL)
        t.proc.wait(timeout=30)
        t = _start(d, ops, out)
        deadline = time.monotonic() + 30
        while " VOID: " not in out.read_text() and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        t.stop()
    [void] = [line for line in out.read_text().splitlines() if " VOID: " in line]
    lost = [s for s in t.journaled("settlement") if s["kind"] == "house_money"][-1]
    assert lost["result"] == "lose" and lost["net"] == -333
    # journal replay says "1 wagers returned, 1 decided before the void (players net -3.33)"
    assert "decided before the void" in void and "-3.33" in void, void
