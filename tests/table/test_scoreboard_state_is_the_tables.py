"""The scoreboard's state (``controller.scoreboard.state.TableView``, which reads only the journal)
says what the table's own state machine says, record after record, over random walks of whole
shoes: the scoreboard is where players look before they bet."""
from __future__ import annotations

import dataclasses
import random
from collections import Counter
from pathlib import Path

import pytest

from bench import Bench
from walks import Walk
from controller.journal import Journal, JournalReader, Record
from controller.rules.submission import load_preset
from controller.scoreboard.state import TableView

# The board's one state of its own: between a round's start and its first card ("no more bets"),
# where the table is already dealing.
SAME_AS = {"no_more_bets": "dealing"}


@pytest.mark.parametrize("preset", ["minibaccarat", "midibaccarat", "ez-baccarat", "21-baccarat"])
@pytest.mark.parametrize("burn_cards", [1, 3])
def test_the_boards_state_and_faults_are_the_tables_own(tmp_path: Path, burn_cards: int, preset: str) -> None:
    """A Rules Submission that burns three cards: the board said "betting" after the first burn,
    while the dealer still owed two. And a misread card entered by the floorperson ended its fault
    with no record: the board (and every reader of the journal) showed the fault for ever. And
    at Midibaccarat's House Money (629a.8(c)(3)) the board said "dealing" while the table waited."""
    sub = dataclasses.replace(load_preset(preset), burn_cards=burn_cards)
    b = Bench(submission=sub, seed=11, auto_deal=False)
    w = Walk(b, random.Random(11))
    view, seen, checked = TableView(), 0, Counter()
    with Journal.open(tmp_path / "j.db", table_id="T1") as journal, JournalReader.open(tmp_path / "j.db") as reader:
        for _ in range(2500):  # every fault kind and state of the walks first comes within 1,500 steps (3 s of CPU less)
            w.step()
            new = b.records[seen:]
            seen = len(b.records)
            if not new:
                continue
            last = journal.last_seq
            journal.append_batch([Record(r.kind, r.payload, shoe=r.shoe, round=r.round) for r in new])
            for entry in reader.entries(since_seq=last):
                view.apply(entry)
            state = b.core.state
            assert set(view.faults) == set(b.core.faults), (view.faults, b.core.faults, [r.kind for r in new])
            if not b.core.faults:
                shown = view.to_json()["state"]["name"]
                assert SAME_AS.get(shown, shown) == state, (state, view.faults, [r.kind for r in new])
                checked[state] += 1
    assert checked["betting"] > 50 and checked["burning"] >= 5 and checked["dealing"] > 100, checked
    if preset == "midibaccarat":
        assert checked["house_money"] > 0 and checked["squeeze"] > 0, checked
