"""Every command's ``--seed`` is a whole number from 0, in ASCII digits (``controller.cli.common.
whole_number``): a negative or malformed seed is one line in the user's words and exit 2, before
anything is dealt or created; never a traceback (numpy's generator refuses negative seeds) nor a
Python type's name ("invalid int value")."""
from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import run


def _commands(tmp_path: Path) -> dict[str, list[str]]:
    return {
        "simulate": ["simulate", "--shoes", "5"],
        "simulate-python": ["simulate", "--shoes", "1", "--engine", "python"],
        "run": ["run", "--journal", str(tmp_path / "j.db"), "--speed", "max", "--rounds", "1"],
        "emulate": ["emulate", "--table", "--link", str(tmp_path / "link")],
        "audit": ["audit", "shuffle", str(tmp_path / "j.db")],
    }


@pytest.mark.parametrize("command", ["simulate", "simulate-python", "run", "emulate", "audit"])
@pytest.mark.parametrize("seed", ["-1", "abc", "1.5", "１"])
def test_a_bad_seed_is_one_line_and_exit_2(capsys, tmp_path: Path, command: str, seed: str) -> None:
    code, out, err = run(capsys, *_commands(tmp_path)[command], f"--seed={seed}")
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert "--seed" in err and "Traceback" not in err and "int value" not in err, err
    assert list(tmp_path.iterdir()) == []  # nothing created


def test_seed_zero_simulates(capsys) -> None:
    code, out, err = run(capsys, "simulate", "--shoes", "2", "--seed", "0", "--json")
    assert code == 0, err
    assert '"seed":0' in out
