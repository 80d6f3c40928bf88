"""The soaks' own arguments: a speed or a fault spec the emulator would refuse is a usage error of
the soak (one line, exit 2), found before any run starts, not a defect of every run."""
from __future__ import annotations

import pytest

from benchmarks import soak_crash, soak_faults


@pytest.mark.parametrize("speed", ["fast", "0", "inf"])
def test_the_fault_soak_refuses_a_speed_shoectl_run_would_refuse(speed: str, capsys, tmp_path) -> None:
    with pytest.raises(SystemExit) as exit_:
        soak_faults.main(["--speed", speed, "--keep", str(tmp_path / "w")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert "argument --speed: expected max or a finite positive number" in err.strip().splitlines()[-1]
    assert not (tmp_path / "w").exists()  # nothing run


@pytest.mark.parametrize("spec", ["unplug-every=banana", "no-such-fault=1"])
def test_the_crash_soak_refuses_a_fault_spec_the_emulator_would_refuse(spec: str, capsys, tmp_path) -> None:
    with pytest.raises(SystemExit) as exit_:
        soak_crash.main(["--faults", spec, "--keep", str(tmp_path / "w")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("python -m benchmarks.soak_crash: error: argument --faults: ")
    assert not (tmp_path / "w").exists()


def test_the_crash_soak_refuses_a_fault_seed_of_its_own(capsys, tmp_path) -> None:
    # The soak seeds the emulator's faults with its own --seed; a second seed in the spec used to
    # be refused as "given twice", naming a seed the user never wrote.
    with pytest.raises(SystemExit) as exit_:
        soak_crash.main(["--faults", "dup=0.02,seed=5", "--keep", str(tmp_path / "w")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert err.strip().splitlines()[-1] == ("python -m benchmarks.soak_crash: error: argument --faults: "
                                            "give the faults without seed=: the soak's --seed seeds them as well")
    assert not (tmp_path / "w").exists()


def test_the_crash_soak_refuses_a_submission_run_would_refuse(capsys, tmp_path) -> None:
    with pytest.raises(SystemExit) as exit_:
        soak_crash.main(["--submission", "no-such-game", "--keep", str(tmp_path / "w")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("python -m benchmarks.soak_crash: error: argument --submission: ")
    assert "no-such-game" in last and "minibaccarat" in last  # what was given, and what may be
    assert not (tmp_path / "w").exists()


@pytest.mark.parametrize(("profile", "said"), [("no-such-shoe", "unknown profile"),
                                                ("emulated-shuffler", "emulated-shuffler: a shuffler, not a shoe")])
def test_the_crash_soak_refuses_a_shoe_profile_the_emulator_would_refuse(profile: str, said: str, capsys,
                                                                         tmp_path) -> None:
    with pytest.raises(SystemExit) as exit_:
        soak_crash.main(["--shoe-profile", profile, "--keep", str(tmp_path / "w")])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("python -m benchmarks.soak_crash: error: argument --shoe-profile: ") and said in last
    assert not (tmp_path / "w").exists()
