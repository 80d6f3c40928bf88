"""A surveillance officer reconstructing hands from the journal alone (a review): the cards out of
the shoe after a void round whose misread card was never read, as the reconciliation counts them;
the irregularity that gave a round its first card, shown with that round."""
from __future__ import annotations

import json
import time
from pathlib import Path

from cli_run import dealt_journal, preset_with_decks, run_captured
from controller.journal import JournalReader

from .running_table import launch_table, make_operators_file, shoectl


def _entries(journal: Path) -> list[tuple[int, str, dict]]:
    with JournalReader.open(journal) as r:
        return [(e.seq, e.kind, e.payload) for e in r.entries()]


def _void_round(journal: Path) -> int:
    with JournalReader.open(journal) as r:
        return [e.round_no for e in r.entries() if e.kind == "round_result" and e.payload.get("kind") == "void"][0]


def test_odds_after_a_void_round_counts_the_unread_card_as_out_of_the_shoe(tmp_path: Path) -> None:
    """A card the shoe could not read left the shoe all the same; the floorperson gave the shoe up
    (its round void). The journal's reconciliation counts it among the cards that left the shoe;
    `odds --journal` for that round must not say it is still in the shoe."""
    ops = make_operators_file(tmp_path / "operators.toml")
    sub = preset_with_decks(tmp_path / "two.toml", "minibaccarat", 2)
    t = launch_table(tmp_path, ops, "--submission", str(sub), "--faults", "misread-at=20")
    try:
        t.wait_state("fault", timeout=60)
        proc = shoectl("ctl", "--socket", str(t.sock), "--operator", "fp1", "--pin-stdin", "restart_shoe",
                       "reason=misread card damaged", pin="2580")
        assert proc.returncode == 0, proc.stderr
        deadline = time.monotonic() + 30
        while not t.journaled("reconciliation") and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        t.stop()
    entries = _entries(t.journal)
    void = [p for _, k, p in entries if k == "round_result" and p.get("kind") == "void"]
    assert void
    recon = [p for _, k, p in entries if k == "reconciliation"][0]
    void_round = _void_round(t.journal)
    code, out, err = run_captured("odds", "--journal", str(t.journal), "--shoe", "T1-S0001",
                                  "--round", str(void_round), "--json")
    assert code == 0, err
    figures = json.loads(out)
    assert figures["cards_out"] == recon["left_shoe"], (figures["cards_out"], recon)
    assert figures["remaining"] == recon["remaining_in_shoe"], (figures["remaining"], recon)
    code, out, err = run_captured("odds", "--journal", str(t.journal), "--shoe", "T1-S0001", "--round", str(void_round))
    assert code == 0, err
    assert out.startswith(f"Shoe T1-S0001 after round {void_round}: {recon['remaining_in_shoe']} cards left, "
                          f"{recon['left_shoe']} out of the shoe (1 of them never read: its rank counted among the "
                          "unseen cards, with those below the cover card)\n"), out


def test_replay_of_a_round_shows_the_irregularity_that_gave_it_its_first_card(tmp_path: Path) -> None:
    """A card drawn in error after round 2 (627a.13(a)) is held and opens round 3. `journal export
    --round 3` holds the irregularity record; `journal replay --round 3` (the hand a surveillance
    officer reconstructs) must show it too, not only under the whole shoe."""
    sub = preset_with_decks(tmp_path / "two.toml", "minibaccarat", 2)
    journal = dealt_journal(tmp_path / "t.db", "--seed", "1", "--rounds", "5", "--no-edge-monitor",
                            "--submission", str(sub), "--faults", "dealer-extra-at=10")
    irregular = [(s, p) for s, k, p in _entries(journal) if k == "irregularity"]
    assert irregular and irregular[0][1]["clause"] == "627a.13(a)"
    seq = irregular[0][0]
    code, out, err = run_captured("journal", "export", str(journal), "--shoe", "T1-S0001", "--round", "3")
    assert code == 0, err
    assert seq in [json.loads(line)["seq"] for line in out.splitlines()]
    code, out, err = run_captured("journal", "replay", str(journal), "--shoe", "T1-S0001", "--round", "3", "--json")
    assert code == 0, err
    rnd = json.loads(out.splitlines()[0])
    assert rnd["cards"][0]["card"] == irregular[0][1]["card"]
    assert seq in [e["seq"] for e in rnd["events"]], [e["kind"] for e in rnd["events"]]
