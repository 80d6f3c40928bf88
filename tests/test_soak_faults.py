"""The fault-mix soak (``benchmarks.soak_faults``, run by ``make soak``) as a tool: a run that
holds is checked and cleaned up, a run that does not finish in time is a defect that names the
state it waited in and keeps its directory, and bad arguments are a usage error. The soak itself
(every mix at several seeds) takes minutes and is not run here."""
from __future__ import annotations

import pytest

from benchmarks import soak_faults


def test_a_run_that_holds_is_checked_and_one_that_does_not_finish_is_a_defect(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(soak_faults, "MIXES", (("unplug-every=250ms,unplug-for=100ms", "minibaccarat"),))
    held, defects = soak_faults.soak(tmp_path / "ok", seeds=1, rounds=2, jobs=1, limit_s=120)
    assert defects == [] and len(held) == 1
    assert held[0]["rounds"] == 2 and held[0]["cards"] >= 8 and held[0]["wagers"] >= 1
    assert not (tmp_path / "ok" / "seed-1001").exists()  # cleaned up

    # 5,000 rounds cannot be dealt in 1 s on any machine (40 once were, on an idle one)
    code = soak_faults.main(["--seeds", "1", "--rounds", "5000", "--limit", "1", "--jobs", "1",
                             "--keep", str(tmp_path / "slow")])
    err = capsys.readouterr().err
    assert code == 1 and "DEFECT: unplug-every=250ms" in err and "did not finish 5000 rounds in 1 s" in err
    # kept for a look: the run's directory with what it said (its journal too, once it got that
    # far: a run slowed by a loaded machine may be stopped at 1 s before it has opened one)
    assert {"stdout", "stderr"} <= {p.name for p in (tmp_path / "slow" / "seed-1001").iterdir()}


def test_a_mix_on_an_automatic_shoe_runs_against_its_own_emulator(tmp_path, monkeypatch) -> None:
    """A mix naming a shoe profile is dealt on a table of that one device: ``shoectl emulate
    --table --shoe-profile`` with the faults, ``shoectl run --device`` driving it; the same checks."""
    monkeypatch.setattr(soak_faults, "MIXES", (("unplug-every=250ms,unplug-for=100ms", "minibaccarat",
                                                 soak_faults.AUTOSHOE),))
    held, defects = soak_faults.soak(tmp_path, seeds=1, rounds=2, jobs=1, limit_s=120)
    assert defects == [] and len(held) == 1
    assert held[0]["shoe_profile"] == "emulated-autoshoe" and held[0]["rounds"] == 2 and held[0]["cards"] >= 5


@pytest.mark.parametrize("argv", [["--seeds", "0"], ["--limit", "0"], ["--jobs", "-1"]])
def test_bad_arguments_are_a_usage_error(argv: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        soak_faults.main(argv)
    assert exit_.value.code == 2 and "must be at least 1" in capsys.readouterr().err
