"""``shoectl run`` refuses a bad value of any of its options before anything is opened or created
(issue 12: ``--speed fast`` once failed after the journal file was created): one line, exit 2,
no traceback, and the folder it runs in is exactly as it was."""
from __future__ import annotations

from pathlib import Path

import pytest

from cli_run import run

BAD = [
    ("--speed", "fast"),
    ("--speed", "0"),
    ("--faults", "corrupt=2"),
    ("--faults", "bogus=1"),
    ("--table-id", ""),
    ("--table-id", "T 1"),
    ("--log-file", "no-folder/run.log"),
    ("--log-file", "a-folder"),
    ("--dealt-log", "no-folder/dealt.txt"),
    ("--journal", "a-folder"),
    ("--control", "a-folder"),
    ("--control-group", "no-such-group-shoectl-test"),
    ("--operators", "missing-operators.toml"),
    ("--hmac-key", "missing.key"),
    ("--submission", "no-such-preset"),
    ("--device", "no-such-profile@/dev/ttyUSB0"),
    ("--device", "emulated-shoe"),
    ("--shoes", "0"),
    ("--rounds", "-1"),
    ("--seed", "x"),
    ("--lockout", "0"),
    ("--control-connections", "0"),
    ("--stop-grace", "0"),
    ("--display", "x"),
    ("--log-level", "loud"),
]


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.mark.parametrize("option, value", BAD, ids=[f"{o}={v}" for o, v in BAD])
def test_a_bad_value_is_refused_before_anything_is_created(capsys, monkeypatch, tmp_path: Path,
                                                            option: str, value: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a-folder").mkdir()
    before = _listing(tmp_path)
    code, out, err = run(capsys, "run", "--speed", "max", "--shoes", "1", f"{option}={value}")
    assert code == 2, err
    assert out == "" and err.count("\n") == 1 and err.startswith("shoectl run: error: "), err
    assert "Traceback" not in err and "None" not in err and "Error" not in err
    assert _listing(tmp_path) == before  # no var/, no journal, no log file, no socket or lock file


@pytest.mark.parametrize("extra", [["--speed", "max"], ["--faults", "corrupt=0.01"], ["--dealt-log", "dealt.txt"],
                                   ["--speed", "5", "--faults", "drop=0.1"]])
def test_built_in_emulator_options_beside_a_device_are_refused_not_ignored(capsys, monkeypatch, tmp_path: Path,
                                                                         extra: list[str]) -> None:
    """``--speed``, ``--faults`` and ``--dealt-log`` set the built-in emulator; with ``--device``
    there is none, so an operator who gives them is told so (once they were silently ignored:
    a fault test that injected nothing)."""
    monkeypatch.chdir(tmp_path)
    before = _listing(tmp_path)
    code, out, err = run(capsys, "run", "--device", "emulated-shoe@/dev/null", "--shoes", "1", *extra)
    assert code == 2, err
    assert err.count("\n") == 1 and "only for the built-in emulator" in err and extra[0] in err, err
    assert _listing(tmp_path) == before
