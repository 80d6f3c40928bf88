"""An option that takes one value, given twice, is refused (an integrator review): the second
silently replaced the first, so a ``--journal`` in the service's ``SHOECTL_RUN_ARGS`` replaced the
unit's own and the table dealt into another journal without a word."""
from __future__ import annotations

from pathlib import Path

from cli_run import run


def test_an_option_given_twice_is_one_line_and_nothing_is_made(capsys, tmp_path: Path) -> None:
    a, b = tmp_path / "unit.db", tmp_path / "other.db"
    code, out, err = run(capsys, "run", "--journal", str(a), "--shoes", "1", "--journal", str(b))
    assert (code, out) == (2, "")
    assert err == f"shoectl run: error: argument --journal: given twice ('{a}', then '{b}'): give it once\n"
    assert list(tmp_path.iterdir()) == []


def test_a_value_given_twice_is_said_as_written(capsys) -> None:
    """``--speed max`` twice was "given twice (inf, then inf)": the value as read, not as written (a
    review of bad inputs)."""
    code, out, err = run(capsys, "run", "--speed", "max", "--speed", "MAX")
    assert (code, out) == (2, "")
    assert err == "shoectl run: error: argument --speed: given twice ('max', then 'MAX'): give it once\n"


def test_options_meant_to_be_repeated_still_are(capsys, tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("x\n", encoding="utf-8")
    code, _, err = run(capsys, "rules", "check", str(bad), str(bad))  # positional: many files
    assert code == 2 and "given twice" not in err
    code, _, err = run(capsys, "run", "--device", "emulated-shoe@/nonexistent", "--device",
                       "emulated-shoe@/nonexistent2", "--journal", str(tmp_path / "j.db"))
    assert code == 2 and "a shoe is already attached" in err  # --device repeats: refused for what it says


def test_one_port_given_to_two_devices_is_one_line_and_nothing_is_made(capsys, tmp_path: Path) -> None:
    """The shuffler and the shoe on one port (an integrator review): the table created its
    journal, then waited for ever for a port "in use by another program" that was its own other
    link. The same file reached through a symlink (/dev/shoectl/NAME) is the same port."""
    port = tmp_path / "ttyUSB0"  # not plugged in yet (a regular file is refused as never a port)
    link = tmp_path / "shoe-link"
    link.symlink_to(port)
    journal = tmp_path / "j.db"
    code, out, err = run(capsys, "run", "--device", f"emulated-shuffler@{port}", "--device",
                         f"emulated-shoe@{link}", "--journal", str(journal))
    assert (code, out) == (2, "")
    assert err == (f"shoectl run: error: --device 'emulated-shoe@{link}': {link} is already the shuffler's port: "
                   "give each device its own\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["shoe-link"]
