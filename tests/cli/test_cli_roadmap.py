"""`shoectl roadmap` through controller.cli.main: on a journal written by `shoectl run`, and on a
small hand-made journal with two shoes and simulated and void rounds."""
from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from witness import witnessed

from controller.journal import Journal, JournalReader, Record
from controller.journal.replay import replay
from cli_run import dealt_journal, run
from round_records import round_records




@pytest.fixture(scope="module")
def table_journal(tmp_path_factory) -> Path:
    return dealt_journal(tmp_path_factory.mktemp("roadmap") / "journal.db", "--rounds", "30", "--seed", "1")


def _round(shoe: str, n: int, kind: str, outcome: str | None, pp: bool = False, bp: bool = False) -> list[Record]:
    return round_records(shoe, n, kind, outcome, player_pair=pp, banker_pair=bp)


@pytest.fixture
def two_shoes(tmp_path: Path) -> Path:
    """S1: B P. S2: T, B(player pair), simulated P, void, B, tie, P: roads from T B B T P."""
    path = tmp_path / "two.db"
    records = [Record("shoe_start", {"decks": 8, "shoe": "S1"}, shoe="S1"),
               *_round("S1", 1, "normal", "banker"), *_round("S1", 2, "normal", "player"),
               Record("shoe_start", {"decks": 8, "shoe": "S2"}, shoe="S2"),
               *_round("S2", 1, "normal", "tie"), *_round("S2", 2, "normal", "banker", pp=True),
               *_round("S2", 3, "simulated", "player"), *_round("S2", 4, "void", None),
               *_round("S2", 5, "normal", "banker"), *_round("S2", 6, "normal", "tie"),
               *_round("S2", 7, "normal", "player")]
    with Journal.open(path, table_id="T1") as j:
        j.append_batch(records)
        witnessed(j)
    return path


# --- a journal of `shoectl run` --------------------------------------------------------------------


def test_json_contract_on_a_real_journal(capsys, table_journal: Path) -> None:
    code, out, err = run(capsys, "roadmap", str(table_journal), "--json")
    assert code == 0 and err == ""
    assert out.endswith("\n") and out.count("\n") == 1
    d = json.loads(out)
    assert set(d) == {"bead_plate", "bead_pairs", "big_road", "big_eye_boy", "small_road", "cockroach_pig"}
    with JournalReader.open(table_journal) as r:
        rounds = [x for x in replay(r.entries()) if x["type"] == "round" and x["kind"] == "normal"]
    letters = {"banker": "B", "player": "P", "tie": "T"}
    assert d["bead_plate"] == [letters[x["outcome"]] for x in rounds]
    assert len(d["bead_plate"]) == 30
    wins = [x for x in rounds if x["outcome"] != "tie"]
    entries = [e for col in d["big_road"] for e in col]
    assert [e["outcome"] for e in entries] == [letters[x["outcome"]] for x in wins]
    assert [(e["player_pair"], e["banker_pair"]) for e in entries] == [(x["player_pair"], x["banker_pair"])
                                                                       for x in wins]
    assert sum(e["ties"] for e in entries) == len(rounds) - len(wins)
    assert all(set(e) == {"outcome", "ties", "player_pair", "banker_pair"} for e in entries)
    for name, k in (("big_eye_boy", 1), ("small_road", 2), ("cockroach_pig", 3)):
        lengths = [len(c) for c in d["big_road"]]
        # one mark per big-road entry from the road's starting point on (columns from 0): rows
        # below the first in columns >= k, and the first row of columns >= k + 1
        expected = sum(n - 1 for c, n in enumerate(lengths) if c >= k) + max(0, len(lengths) - (k + 1))
        assert sum(len(c) for c in d[name]) == expected
        assert all(set(c) <= {"red", "blue"} and len(set(c)) == 1 for c in d[name])


def test_default_shoe_is_the_latest_and_text_is_the_default(capsys, table_journal: Path) -> None:
    code, out, err = run(capsys, "roadmap", str(table_journal))
    assert code == 0 and err == ""
    assert out.startswith("shoe T1-S0001: 30 rounds (banker ")
    for name in ("Bead plate:", "Big road:", "Big eye boy:", "Small road:", "Cockroach pig:"):
        assert f"\n{name}\n" in out
    code2, out2, _ = run(capsys, "roadmap", str(table_journal), "--shoe", "T1-S0001", "--format", "text")
    assert code2 == 0 and out2 == out


def test_svg_on_a_real_journal(capsys, table_journal: Path, tmp_path: Path) -> None:
    code, out, err = run(capsys, "roadmap", str(table_journal), "--format", "svg")
    assert code == 0 and err == ""
    root = ET.fromstring(out.encode())
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    target = tmp_path / "road.svg"
    code, out2, _ = run(capsys, "roadmap", str(table_journal), "--format", "svg", "-o", str(target))
    assert code == 0 and out2 == ""
    assert target.read_text(encoding="utf-8") == out
    ET.parse(target)


def test_the_output_files_suffix_chooses_the_format_and_a_disagreement_is_refused(capsys, table_journal: Path,
                                                                                  tmp_path: Path) -> None:
    """``-o road.svg`` alone writes SVG (it wrote text grids into a file named .svg); ``--format
    svg -o road.png`` is refused before anything is written (an SVG document under a PNG name)."""
    code, svg, _ = run(capsys, "roadmap", str(table_journal), "--format", "svg")
    target = tmp_path / "road.svg"
    assert run(capsys, "roadmap", str(table_journal), "-o", str(target))[0] == 0
    assert target.read_text(encoding="utf-8") == svg
    wrong = tmp_path / "road.png"
    code, out, err = run(capsys, "roadmap", str(table_journal), "--format", "svg", "-o", str(wrong))
    assert (code, out) == (2, "")
    assert err == (f"shoectl roadmap: error: -o {wrong}: the file name says PNG, --format says SVG; give a name "
                   "and a format that agree\n")
    assert not wrong.exists()


@pytest.mark.parametrize("options, name, said", [
    ([], "road.gif", "GIF, a format roadmap does not write (text, SVG or PNG)"),
    (["--format", "png"], "road.JPG", "JPEG, --format says PNG"),
    (["--json"], "road.png", "PNG, --json says JSON"),
    (["--json"], "road.svg", "SVG, --json says JSON"),
], ids=["text in a gif", "png in a jpg", "json in a png", "json in an svg"])
def test_an_output_named_as_an_image_it_is_not_is_refused(capsys, two_shoes: Path, tmp_path: Path,
                                                          options: list[str], name: str, said: str) -> None:
    """A reviewer's finding: ``-o x.gif`` wrote text grids and ``--json -o out.png`` JSON into a
    file an image viewer would open as broken, while ``simulate --plot x.gif`` is refused."""
    target = tmp_path / name
    code, out, err = run(capsys, "roadmap", str(two_shoes), *options, "-o", str(target))
    assert (code, out) == (2, "")
    assert err == (f"shoectl roadmap: error: -o {target}: the file name says {said}; give a name and a format "
                   "that agree\n")
    assert not target.exists()
    assert run(capsys, "roadmap", str(two_shoes), "--json", "-o", str(tmp_path / "road.txt"))[0] == 0


def test_png_on_a_real_journal(capsys, table_journal: Path, tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "road.png"
    try:
        import PIL  # noqa: F401
    except ImportError:
        code, out, err = run(capsys, "roadmap", str(table_journal), "--format", "png", "-o", str(target))
        assert (code, out) == (2, "")
        assert err == "shoectl roadmap: error: PNG needs Pillow: pip install 'pillow<13,>=10' (shoectl's png extra)\n"
        assert not target.exists()
    else:
        code, out, err = run(capsys, "roadmap", str(table_journal), "--format", "png", "-o", str(target))
        assert code == 0 and err == ""
        assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setitem(sys.modules, "PIL", None)  # without Pillow, whatever is installed
    code, _, err = run(capsys, "roadmap", str(table_journal), "--format", "png", "-o", str(tmp_path / "x.png"))
    assert code == 2 and err == "shoectl roadmap: error: PNG needs Pillow: pip install 'pillow<13,>=10' (shoectl's png extra)\n"


def test_json_to_a_file(capsys, table_journal: Path, tmp_path: Path) -> None:
    target = tmp_path / "road.json"
    code, out, _ = run(capsys, "roadmap", str(table_journal), "--json", "-o", str(target))
    assert code == 0 and out == ""
    assert set(json.loads(target.read_text(encoding="utf-8"))) >= {"bead_plate", "big_road"}


# --- a hand-made journal ---------------------------------------------------------------------------


def test_latest_shoe_without_simulated_and_void_rounds(capsys, two_shoes: Path) -> None:
    code, out, err = run(capsys, "roadmap", str(two_shoes), "--json")
    assert code == 0 and err == ""
    assert json.loads(out) == {
        "bead_plate": ["T", "B", "B", "T", "P"],
        "bead_pairs": ["", "P", "", "", ""],
        "big_road": [
            [{"outcome": "B", "ties": 1, "player_pair": True, "banker_pair": False},  # the leading tie
             {"outcome": "B", "ties": 1, "player_pair": False, "banker_pair": False}],
            [{"outcome": "P", "ties": 0, "player_pair": False, "banker_pair": False}],
        ],
        "big_eye_boy": [], "small_road": [], "cockroach_pig": [],
    }
    code, out, _ = run(capsys, "roadmap", str(two_shoes))
    assert out.splitlines()[0] == "shoe S2: 5 rounds (banker 2, player 1, tie 2); 2 simulated or void not on the roads"


def test_an_earlier_shoe_by_id(capsys, two_shoes: Path) -> None:
    code, out, _ = run(capsys, "roadmap", str(two_shoes), "--shoe", "S1", "--json")
    assert code == 0
    assert json.loads(out)["bead_plate"] == ["B", "P"]


# --- errors ----------------------------------------------------------------------------------------


def test_unknown_shoe_is_exit_2_and_names_the_shoes(capsys, two_shoes: Path) -> None:
    code, out, err = run(capsys, "roadmap", str(two_shoes), "--shoe", "S9")
    assert (code, out) == (2, "")
    assert err == "shoectl roadmap: error: no shoe 'S9' in the journal; its shoes: S1, S2\n"


def test_unknown_shoe_among_many_names_the_first_and_last(capsys, tmp_path: Path) -> None:
    path = tmp_path / "many.db"
    with Journal.open(path, table_id="T1") as j:
        j.append_batch([Record("shoe_start", {"decks": 8, "shoe": f"S{n:02d}"}, shoe=f"S{n:02d}") for n in range(1, 31)])
        witnessed(j)
    code, out, err = run(capsys, "roadmap", str(path), "--shoe", "S99")
    assert (code, out) == (2, "")
    assert err == "shoectl roadmap: error: no shoe 'S99' in the journal; its shoes: S01, S02, S03, ..., S28, S29, S30 (30 shoes)\n"


def test_default_is_the_latest_shoe_with_rounds_not_the_one_being_shuffled(capsys, two_shoes: Path) -> None:
    """A journal that ends as the next shoe is shuffled (as every `shoectl run --shoes N` does)."""
    with Journal.open(two_shoes, table_id="T1") as j:
        j.append_batch([Record("shoe_start", {"decks": 8, "shoe": "S3"}, shoe="S3")])
    code, out, err = run(capsys, "roadmap", str(two_shoes))
    assert code == 0 and err == ""
    assert out.startswith("shoe S2: 5 rounds (banker 2, player 1, tie 2)")
    code, out, _ = run(capsys, "roadmap", str(two_shoes), "--shoe", "S3")
    assert code == 0 and out.startswith("shoe S3: 0 rounds")


def test_missing_journal_is_exit_2(capsys, tmp_path: Path) -> None:
    code, out, err = run(capsys, "roadmap", str(tmp_path / "nope.db"))
    assert (code, out) == (2, "")
    assert err.startswith("shoectl roadmap: error: ") and "no such journal" in err and err.count("\n") == 1


def test_journal_without_shoes_is_exit_2(capsys, tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    with Journal.open(path, table_id="T1") as j:
        j.append("note", {"text": "no shoe yet"})
        witnessed(j)
    code, out, err = run(capsys, "roadmap", str(path))
    assert (code, out, err) == (2, "", "shoectl roadmap: error: no shoe in the journal\n")


def test_json_and_format_are_exclusive(capsys, two_shoes: Path) -> None:
    code, out, err = run(capsys, "roadmap", str(two_shoes), "--json", "--format", "svg")
    assert code == 2 and out == "" and "not allowed with argument" in err and err.count("\n") == 1
