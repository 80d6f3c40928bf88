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


@pytest.mark.parametrize("argv", [["--seeds", "0"], ["--limit", "0"], ["--jobs", "-1"], ["--random", "0"]])
def test_bad_arguments_are_a_usage_error(argv: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        soak_faults.main(argv)
    assert exit_.value.code == 2 and "must be at least 1" in capsys.readouterr().err


def test_random_mixes_are_the_same_for_a_seed_and_each_is_a_mix_the_emulator_and_run_take() -> None:
    """``--random N --random-seed S`` runs a found defect's mix again: the same seed draws the same
    mixes. Each one's faults parse as the emulator's, its submission is a preset, and the faults
    the soak leaves out by design (a misread card, a card missing from or added to every shuffle)
    never appear."""
    from benchmarks.fault_mixes import DEALER_WORDS, random_mixes
    from controller.rules.submission import preset_names
    from firmware_bridge.emulator.faults import FaultSpec

    mixes = random_mixes(200, 7)
    assert mixes == random_mixes(200, 7) and mixes != random_mixes(200, 8)
    for faults, submission, shoe_profile in mixes:
        spec = FaultSpec.parse(faults)
        assert spec.misread_at == -1 and not spec.missing_card and not spec.extra_card
        assert not (spec.unplug_every and spec.corrupt > 0.002)  # noisy and unplugged: slow, not stuck
        assert submission in preset_names() and shoe_profile in (None, soak_faults.AUTOSHOE)
        assert spec.dealer_miss in ("", *DEALER_WORDS)
    names = {item.split("=")[0] for faults, _, _ in mixes for item in faults.split(",")}
    assert {"unplug-every", "corrupt", "both-ways", "jam-at", "reset-at", "refuse-display", "cover-at",
            "dealer-miss", "refuse-command"} <= names
    assert {shoe for _, _, shoe in mixes} == {None, soak_faults.AUTOSHOE}
    missed = {(FaultSpec.parse(faults).dealer_miss, shoe) for faults, _, shoe in mixes}
    assert ("UNLOAD", None) in missed and ("DRAW", None) in missed  # the two-device table's dealer too


def test_the_soak_runs_random_mixes_when_asked(tmp_path, capsys) -> None:
    code = soak_faults.main(["--random", "1", "--random-seed", "3", "--seeds", "1", "--rounds", "2", "--jobs", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "1 mixes drawn at random (--random-seed 3)" in out and '"held": 1' in out
