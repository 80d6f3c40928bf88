"""Bad inputs through the real command line: each is refused on one line, exit 2, and the files it
names are left byte for byte as they were."""
from __future__ import annotations

from pathlib import Path

import pytest

from controller.journal import Journal, Record
from controller.journal.anchors import anchors_path
from cli_run import run


@pytest.fixture
def one_shoe(tmp_path: Path) -> Path:
    """A journal of one shoe of one banker round, with an anchors file beside it."""
    path = tmp_path / "table.db"
    hand = {"cards": [], "total": 0}
    with Journal.open(path, table_id="T1") as j:
        j.append_batch([
            Record("shoe_start", {"decks": 8, "shoe": "S1"}, shoe="S1"),
            Record("round_start", {"kind": "normal", "round": 1, "wagers": []}, shoe="S1", round=1),
            Record("round_result", {"kind": "normal", "outcome": "banker", "player": hand, "banker": hand,
                                    "dealt": [], "player_pair": False, "banker_pair": False}, shoe="S1", round=1),
        ])
    anchors_path(path).write_text("1:" + "0" * 64 + "\n")
    return path


@pytest.mark.parametrize("command", [["journal", "export"], ["roadmap"]])
@pytest.mark.parametrize("target", ["journal", "anchors"])
def test_output_over_the_journal_read_is_refused(capsys, one_shoe: Path, command: list[str], target: str) -> None:
    """`-o` naming the journal being read (or its anchors) replaced it with the output: the journal lost."""
    output = one_shoe if target == "journal" else anchors_path(one_shoe)
    before = {p: p.read_bytes() for p in (one_shoe, anchors_path(one_shoe))}
    code, out, err = run(capsys, *command, str(one_shoe), "-o", str(output))
    assert code == 2, err
    assert err.count("\n") == 1 and "error: -o " in err and "give another file" in err, err
    assert {p: p.read_bytes() for p in before} == before
