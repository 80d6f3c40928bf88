"""The command-line contract of `shoectl rules`, `simulate` and `run` (other programs parse it)."""
from __future__ import annotations

import io
import json
import subprocess
import sys

import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from cli_run import run
from controller.cli.common import percent
from controller.rules.odds import exact_odds
from controller.rules.submission import load_preset, load_submission, preset_names




def test_rules_deal_json_contract(capsys) -> None:
    code, out, err = run(capsys, "rules", "deal", "--cards", "2H,3D,3C,3S,4H,KC", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    assert d["game"] == "punto-banco"
    assert d["player"] == {"cards": ["2H", "3C", "4H"], "total": 9}
    assert d["banker"] == {"cards": ["3D", "3S"], "total": 6}
    assert (d["outcome"], d["natural"], d["cards_used"]) == ("player", False, 5)


def test_rules_deal_ez_and_21_keys(capsys) -> None:
    code, out, _ = run(capsys, "rules", "deal", "--game", "ez-baccarat", "--cards", "3S,AH,3D,AC,5S", "--json")
    d = json.loads(out)
    assert code == 0 and d["dragon7"] is True and d["panda8"] is False
    code, out, _ = run(capsys, "rules", "deal", "--game", "21-baccarat", "--cards", "AS,5H,KD,5C,5D", "--bonus", "--json")
    d = json.loads(out)
    assert code == 0 and d["banker"]["bonus_rank"] == "three_of_a_kind" and d["banker"]["bonus_cards"] == ["5H", "5C", "5D"]
    assert d["dealt"][4] == {"card": "5D", "to": "banker_bonus"}


@pytest.mark.parametrize("game", ["punto-banco", "ez-baccarat"])
def test_rules_deal_refuses_a_bonus_wager_outside_21_baccarat(capsys, game: str) -> None:
    """681a.7(f)(2)'s Bonus Wager is 21 Baccarat's: asked of another game, ``--bonus`` was ignored
    without a word."""
    code, out, err = run(capsys, "rules", "deal", "--game", game, "--cards", "9S,9H,8C,8D", "--bonus")
    assert (code, out) == (2, "") and f"a Bonus Wager is 21 Baccarat's (681a.7(f)(2)); this round is {game}'s" in err


def test_rules_deal_text(capsys) -> None:
    code, out, _ = run(capsys, "rules", "deal", "--cards", "as 9h 2c kd")
    assert code == 0 and "banker wins (natural)" in out


@pytest.mark.reg("627a.13(e)")
def test_too_few_cards_exit_2_round_void(capsys) -> None:
    """627a.13(e): "If there are insufficient cards remaining in the dealing shoe to complete a round
    of play, that round shall be void": three cards cannot complete a round; ``rules deal`` says
    the round is void, in one line, and exits 2."""
    code, out, err = run(capsys, "rules", "deal", "--cards", "AS,9H,2C")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "void" in err and "insufficient cards" in err


@pytest.mark.parametrize(
    "argv, needle",
    [(["rules", "deal", "--cards", "AS,ZZ,2C,3C"], "unknown card 'ZZ'"),
     (["rules", "deal", "--game", "21-baccarat", "--cards", "AS,AS,AS,AS,AS,AS,AS"], "holds 6"),
     (["rules", "deal", "--game", "baccarat-royale", "--cards", "AS"], "invalid choice"),
     (["rules", "deal", "--submission", "/nonexistent/sub.toml", "--cards", "AS,2C,3C,4C"], "/nonexistent/sub.toml"),
     (["rules", "deal", "--submission", "ez-baccarat", "--game", "punto-banco", "--cards", "AS,2C,3C,4C"], "does not match"),
     (["simulate", "--shoes", "0"], "at least 1"),
     (["nonsense"], "invalid choice")],
)
def test_input_errors_are_one_line_exit_2(capsys, argv: list[str], needle: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert needle in err and err.strip().count("\n") == 0 and "Traceback" not in err


def test_bad_submission_file_names_file_and_key(capsys, tmp_path) -> None:
    f = tmp_path / "bad.toml"
    f.write_text('[submission]\ngame = "punto-banco"\n[paytable]\ntiee = "8:1"\n')
    code, _, err = run(capsys, "rules", "deal", "--submission", str(f), "--cards", "AS,2C,3C,4C")
    assert code == 2 and str(f) in err and "paytable.tiee" in err


def test_rules_deal_reads_rounds_from_stdin(capsys, monkeypatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("AS,9H,2C,KD\n\n# a comment\nAS,XX\n2H,3D,3C,3S,4H\n"))
    code, out, err = run(capsys, "rules", "deal", "--cards", "-", "--json")
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 2  # one bad line
    assert lines[0]["outcome"] == "banker"
    assert lines[1] == {"line": 4, "error": lines[1]["error"]} and "XX" in lines[1]["error"]
    assert lines[2]["outcome"] == "player"
    assert "line 4" in err


def test_simulate_json(capsys) -> None:
    code, out, _ = run(capsys, "simulate", "--shoes", "3", "--seed", "1", "--json")
    d = json.loads(out)
    assert code == 0 and d["shoes"] == 3 and d["rounds"] > 100
    assert set(d["outcomes"]) >= {"player", "banker", "tie", "player_pair", "banker_pair"}
    lo, hi = d["wagers"]["banker"]["ci95"]
    assert lo <= d["wagers"]["banker"]["value"] <= hi


def test_rules_show_and_presets(capsys) -> None:
    code, out, _ = run(capsys, "rules", "show", "midibaccarat", "--json")
    assert code == 0 and json.loads(out)["submission"]["dealing"] == "face-down"
    code, out, _ = run(capsys, "rules", "presets")
    assert code == 0 and "minibaccarat" in out and "21-baccarat" in out


@pytest.mark.parametrize("preset", preset_names())
def test_rules_show_prints_toml_that_rules_check_accepts_and_loads_to_the_same_submission(
        capsys, tmp_path: Path, preset: str) -> None:
    """Issue 12: what `rules show` prints is a Rules Submission a user can copy (it printed
    Python dicts before), with each wager's house edge kept, as TOML comments."""
    code, out, err = run(capsys, "rules", "show", preset)
    assert code == 0 and err == ""
    copied = tmp_path / "our-rules.toml"
    copied.write_text(out, encoding="utf-8")
    code, checked, err = run(capsys, "rules", "check", str(copied))
    assert code == 0 and checked.startswith(f"{copied}: ok"), err
    expected = load_preset(preset)
    assert replace(load_submission(copied), source=expected.source) == expected
    report = exact_odds(expected)
    edges = {line.split()[1]: line.split()[-1] for line in out.splitlines() if line.startswith("#   ")}
    assert edges == {kind: percent(float(w["house_edge"])) for kind, w in report.wagers.items()}
    assert "house_edge" not in tomllib.loads(out)  # the edges are comments, not keys


def test_rules_show_of_a_file_with_awkward_text_gives_it_back_whole(capsys, tmp_path: Path) -> None:
    """Quotes, a backslash and accents in the name, a newline in the file's name: the TOML escapes
    them and the first comment stays one line."""
    source = tmp_path / "our\nrules.toml"
    source.write_text('[submission]\nname = "Casino \\"Nord\\" \\\\ table 3 \u2013 \u00e9t\u00e9"\n'
                      'game = "ez-baccarat"\n', encoding="utf-8")
    original = load_submission(source)
    assert original.name == 'Casino "Nord" \\ table 3 \u2013 \u00e9t\u00e9'
    code, out, err = run(capsys, "rules", "show", str(source))
    assert code == 0 and err == ""
    assert out.splitlines()[0].startswith("# Rules Submission: ") and "our\\nrules.toml" in out.splitlines()[0]
    copied = tmp_path / "copy.toml"
    copied.write_text(out, encoding="utf-8")
    assert replace(load_submission(copied), source=original.source) == original


def test_rules_show_of_a_file_with_limits_gives_them_back(capsys, tmp_path: Path) -> None:
    """``[limits]`` is printed as inline tables (``banker = { min = 2500, max = 500000 }``) that
    ``rules check`` accepts and that load to the same limits."""
    source = Path(__file__).resolve().parents[2] / "docs" / "examples" / "minibaccarat-limits.toml"
    code, out, err = run(capsys, "rules", "show", str(source))
    assert code == 0 and err == "" and "banker = { min = 2500, max = 500000 }" in out
    copied = tmp_path / "copy.toml"
    copied.write_text(out, encoding="utf-8")
    original = load_submission(source)
    assert original.limits and replace(load_submission(copied), source=original.source) == original


def test_console_script_runs_as_a_process() -> None:
    proc = subprocess.run([sys.executable, "-m", "controller.cli.main", "rules", "deal", "--cards", "AS,ZZ"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_run_prints_each_round_and_the_journal_anchor(tmp_path) -> None:
    journal = tmp_path / "j.db"
    proc = subprocess.run([sys.executable, "-m", "controller.cli.main", "run", "--journal", str(journal), "--rounds", "3",
                           "--seed", "4", "--speed", "max"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(" round ") == 3 and f"journal {journal}: " in proc.stdout
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    "device, needle",
    [("emulated-shoe", "is a serial device: give its port"),
     ("emulated-usb-shuffler@/dev/ttyS0", "is a USB device"),
     ("nope@/dev/ttyS0", "nope"),
     ("emulated-shoe@", "expected PROFILE@PORT")],
)
def test_run_device_errors_are_one_line_exit_2(capsys, tmp_path, device: str, needle: str) -> None:
    code, out, err = run(capsys, "run", "--journal", str(tmp_path / "j.db"), "--device", device)
    assert code == 2 and needle in err and err.strip().count("\n") == 0


def test_cards_a_round_does_not_use_are_said_not_passed_over(capsys) -> None:
    """Eight cards for a round that uses six: the last two were passed over without a word (a
    review of bad inputs); like a shoe's, they are not dealt, and the line says so."""
    code, out, err = run(capsys, "rules", "deal", "--cards", "AS,KD,2C,3H,4S,5D,6C,7H")
    assert (code, err) == (0, "")
    assert out == ("Player AS 2C 4S = 7 | Banker KD 3H 5D = 8 -> banker wins; 6 cards "
                   "(6C 7H not dealt: the round needed no more)\n")
    code, out, err = run(capsys, "rules", "deal", "--cards", "AS,KD,2C,3H,4S,5D,6C,7H", "--json")
    assert code == 0 and json.loads(out)["not_dealt"] == ["6C", "7H"]
    code, out, err = run(capsys, "rules", "deal", "--cards", "AS,KD,2C,3H,4S,5D", "--json")
    assert code == 0 and "not_dealt" not in json.loads(out)
