"""A fault's duration carries its unit (docs/emulator.md: "Durations are written `5ms` or `2s`"):
``delay=5`` was taken as five seconds where 5 ms was likely meant; now it is refused with one
line, by ``shoectl emulate --faults`` and ``shoectl run --faults`` alike (exit 2)."""
from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import run

from firmware_bridge.emulator.faults import FaultSpec
from firmware_bridge.errors import FaultSpecError


@pytest.mark.parametrize("spec, said", [
    ("delay=5", "fault delay='5': give a unit (5ms or 5s)"),
    ("unplug-every=3", "fault unplug-every='3': give a unit (3ms or 3s)"),
    ("unplug-every=300ms,unplug-for=0.5", "fault unplug-for='0.5': give a unit (0.5ms or 0.5s)"),
    ("delay=0", "fault delay='0': give a unit (0ms or 0s)"),
])
def test_a_duration_without_a_unit_is_refused(spec: str, said: str) -> None:
    with pytest.raises(FaultSpecError) as info:
        FaultSpec.parse(spec)
    assert str(info.value) == said


def test_a_duration_with_its_unit_is_taken() -> None:
    spec = FaultSpec.parse("delay=5ms,unplug-every=3s,unplug-for=0.5s")
    assert (spec.delay, spec.unplug_every, spec.unplug_for) == (0.005, 3.0, 0.5)
    with pytest.raises(FaultSpecError, match=r"^fault delay='5 min': expected a duration and at most a day, in ms "
                                             r"or s \(e.g. 500ms, 2s; 0, or at least 0.001ms\)$"):
        FaultSpec.parse("delay=5 min")


@pytest.mark.parametrize("spec", ["unplug-every=1e20s", "unplug-for=1e6h", "unplug-every=" + "9" * 47 + "s",
                                  "unplug-for=86401s"])
def test_a_duration_past_a_day_or_in_another_unit_is_refused_in_words_that_say_so(spec: str) -> None:
    """A review of bad inputs: `unplug-every=1e20s` was "expected a duration above 0" (it is above
    0: it is the exponent and the unit that are not taken) while 10^47 s was taken."""
    key = spec.split("=", 1)[0]
    with pytest.raises(FaultSpecError) as info:
        FaultSpec.parse(spec)
    assert str(info.value) == (f"fault {key}={spec.split('=', 1)[1]!r}: expected a duration above 0 and at most a "
                               "day, in ms or s (e.g. 500ms, 2s; at least 0.001ms)")
    assert FaultSpec.parse(f"{key}=86400s")  # a day is taken


@pytest.mark.timeout(60)  # without the check, the emulator starts and serves until stopped
def test_emulate_refuses_it_with_one_line(capsys) -> None:
    code, out, err = run(capsys, "emulate", "--profile", "emulated-shoe", "--faults", "delay=5")
    assert (code, out) == (2, "")
    assert err == "shoectl emulate: error: fault delay='5': give a unit (5ms or 5s)\n"


@pytest.mark.timeout(60)
def test_run_refuses_it_with_one_line(capsys, tmp_path: Path) -> None:
    code, out, err = run(capsys, "run", "--rounds", "1", "--journal", str(tmp_path / "j.db"), "--faults", "delay=5")
    assert (code, out) == (2, "")
    assert err == "shoectl run: error: argument --faults: fault delay='5': give a unit (5ms or 5s)\n"
    assert not (tmp_path / "j.db").exists()
