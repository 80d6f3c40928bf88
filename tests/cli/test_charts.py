"""`simulate --plot` and `audit shuffle --plot` through the CLI: PNG and SVG by the suffix, the file
checked before any work, one line without matplotlib; the running hold ends on the report's own
figure; the position heat-map is centred under a uniform shuffle and lights up a stuck one; and
the progress bars: on a terminal only."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pexpect
import pytest

from audit.conftest import shuffled_specs, write_journal
from cli_run import run
from controller.cli.charts import RunningHold, position_residuals
from controller.rules.submission import load_preset
from controller.simulation import simulate, wager_holds

PNG = b"\x89PNG\r\n\x1a\n"
NO_MATPLOTLIB = "--plot needs matplotlib: pip install 'matplotlib<4,>=3.8' (shoectl's plot extra)"


def test_simulate_plot_png_and_svg(capsys, tmp_path: Path) -> None:
    for name in ("hold.png", "hold.svg"):
        code, out, err = run(capsys, "simulate", "--shoes", "60", "--seed", "3", "--plot", str(tmp_path / name))
        assert code == 0 and err == "" and "wager" in out
    assert (tmp_path / "hold.png").read_bytes()[:8] == PNG
    svg = ET.parse(tmp_path / "hold.svg").getroot()
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    text = (tmp_path / "hold.svg").read_text()
    for wager in ("banker", "player", "tie", "exact 1.0579%"):  # minibaccarat's banker edge, by exact odds
        assert wager in text


def test_running_hold_ends_on_the_report_figure() -> None:
    sub = load_preset("minibaccarat")
    running = RunningHold(sub, 90)
    tally = simulate(sub, 90, seed=5, on_shoe=running.add)
    report = wager_holds(tally, sub)
    for name, est in report.items():
        points = running.series[name]
        shoes, hold, low, high = points[-1]
        assert shoes == 90 and hold == pytest.approx(est.mean, rel=1e-12)
        assert (low, high) == (pytest.approx(est.low, rel=1e-9), pytest.approx(est.high, rel=1e-9))
        assert [p[0] for p in points] == sorted({p[0] for p in points}) and points[0][0] >= 2
        assert len(points) > 40  # spread over the run, not only its end


def test_simulate_plot_refused_before_dealing(capsys, tmp_path: Path, monkeypatch) -> None:
    code, out, err = run(capsys, "simulate", "--shoes", "5", "--plot", str(tmp_path / "hold.pdf"))
    assert (code, out) == (2, "") and err.count("\n") == 1 and "name it .png or .svg" in err
    code, out, err = run(capsys, "simulate", "--shoes", "5", "--plot", str(tmp_path / "no" / "hold.png"))
    assert (code, out) == (2, "") and f"no such folder {tmp_path / 'no'}" in err
    # a folder that takes no new file: said before 50,000 shoes are dealt (it was said after them)
    code, out, err = run(capsys, "simulate", "--shoes", "50000", "--plot", "/proc/hold.png")
    assert (code, out, err) == (2, "", "shoectl simulate: error: argument --plot: /proc/hold.png: cannot be created: "
                                       "its folder /proc takes no new files (No such file or directory)\n")
    # a symbolic link in such a folder, to a file in a folder that takes new files: taken (the chart
    # replaces the file it points to), as before the check
    link = tmp_path / "hold-link.png"
    link.symlink_to(tmp_path / "real.png")
    monkeypatch.setattr(os.path, "dirname", lambda p, _real=os.path.dirname: "/proc" if p == str(link) else _real(p))
    code, out, err = run(capsys, "simulate", "--shoes", "2", "--plot", str(link))
    monkeypatch.undo()
    assert code == 0 and (tmp_path / "real.png").stat().st_size > 0, err
    # one shoe has no interval to draw (it was a traceback from the plotting library)
    code, out, err = run(capsys, "simulate", "--shoes", "1", "--plot", str(tmp_path / "hold.png"))
    assert (code, out, err) == (2, "", "shoectl simulate: error: --plot needs at least 2 shoes: the chart's "
                                       "intervals come from batches of whole shoes\n")
    assert not (tmp_path / "hold.png").exists()
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the plot extra were not installed
    code, out, err = run(capsys, "simulate", "--shoes", "50000", "--plot", str(tmp_path / "hold.png"))
    assert (code, out, err) == (2, "", f"shoectl simulate: error: {NO_MATPLOTLIB}\n")
    code, out, err = run(capsys, "audit", "shuffle", str(tmp_path / "nothing.db"), "--plot", str(tmp_path / "a.svg"))
    assert (code, out, err) == (2, "", f"shoectl audit shuffle: error: {NO_MATPLOTLIB}\n")


def test_position_residuals_are_centred_under_a_uniform_shuffle_and_show_a_stuck_one() -> None:
    uniform = [spec.stack for spec in shuffled_specs(60, decks=1, seed=4)]
    z = [x for row in position_residuals(uniform, 1) for x in row]
    assert len(z) == 13 * 52
    mean = sum(z) / len(z)
    var = sum((x - mean) ** 2 for x in z) / len(z)
    assert abs(mean) < 0.05 and 0.7 < var < 1.3
    stuck = [spec.stack for spec in shuffled_specs(60, decks=1, seed=4, model="stuck:5")]
    assert max(abs(x) for row in position_residuals(stuck, 1) for x in row) > 8


def test_audit_shuffle_plot_png_and_svg(capsys, tmp_path: Path) -> None:
    journal = write_journal(tmp_path / "j.db", shuffled_specs(6, decks=8, seed=2, model="riffle:2"))
    code, out, _ = run(capsys, "audit", "shuffle", str(journal), "--plot", str(tmp_path / "audit.png"), "--json")
    assert code == 1 and json.loads(out)["verdict"] == "fail"  # two riffles: the chart is drawn for a fail too
    assert (tmp_path / "audit.png").read_bytes()[:8] == PNG
    code, _, _ = run(capsys, "audit", "shuffle", str(journal), "--plot", str(tmp_path / "audit.svg"))
    text = (tmp_path / "audit.svg").read_text()
    assert code == 1 and ET.fromstring(text.encode()).tag == "{http://www.w3.org/2000/svg}svg"
    for words in ("where each rank landed: 6 shoes", "rising sequences", "alpha 0.01", "FAIL at 99%"):
        assert words in text


@pytest.mark.slow
def test_progress_bar_on_a_terminal_only(tmp_path: Path) -> None:
    """A bar on standard error when it is a terminal; not a byte of it when it is piped."""
    argv = ["-m", "controller.cli.main", "simulate", "--shoes", "4000", "--seed", "1"]
    env = dict(os.environ, TERM="xterm-256color")
    child = pexpect.spawn(sys.executable, argv, env=env, encoding="utf-8", dimensions=(24, 100), timeout=120)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "dealing 4000 shoes" in child.before and "wager" in child.before
    piped = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=120)
    assert piped.returncode == 0 and piped.stderr == "" and "dealing" not in piped.stdout
    journal = write_journal(tmp_path / "j.db", shuffled_specs(3, decks=8, seed=2))
    child = pexpect.spawn(sys.executable, ["-m", "controller.cli.main", "audit", "shuffle", str(journal)], env=env,
                          encoding="utf-8", dimensions=(24, 100), timeout=120)
    child.expect(pexpect.EOF)
    child.close()
    assert "reading j.db" in child.before and "running the randomness tests" in child.before and "verdict: PASS" in child.before
    # a terminal that cannot redraw, or does not take UTF-8 (the bar's marks): no bar either (a review
    # of terminals saw each redraw left on a Latin-1 screen)
    for other in ({"TERM": "dumb"}, {"PYTHONIOENCODING": "latin-1"}):
        child = pexpect.spawn(sys.executable, argv, env=dict(env, **other), encoding="latin-1", dimensions=(24, 100),
                              timeout=120)
        child.expect(pexpect.EOF)
        child.close()
        assert child.exitstatus == 0 and "dealing 4000 shoes" not in child.before and "wager" in child.before, other
