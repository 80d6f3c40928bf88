"""The emulator's shuffle models (good and weak), their --faults syntax, and the shuffler's use of
them."""
from __future__ import annotations

import random

import pytest

from firmware_bridge.emulator import FaultSpec, ManualClock, build_device, standard_stack
from firmware_bridge.emulator.shuffle_models import (
    UNIFORM,
    Riffle,
    Strip,
    Stuck,
    gsr_riffle,
    parse_model,
)
from firmware_bridge.errors import FaultSpecError


@pytest.mark.parametrize("text, model", [
    ("uniform", UNIFORM), ("CSPRNG", UNIFORM), ("riffle", Riffle(1)), ("riffle:4", Riffle(4)),
    (" strip ", Strip(1)), ("strip:3", Strip(3)), ("stuck:17", Stuck(17)),
])
def test_parse_model(text: str, model: object) -> None:
    assert parse_model(text) == model
    assert parse_model(model.spec) == model  # type: ignore[attr-defined]


@pytest.mark.parametrize("text", ["", "bogus", "riffle:0", "riffle:65", "riffle:x", "riffle:2.5", "stuck",
                                  "stuck:0", "stuck:-3", "uniform:2", "strip:"])
def test_bad_models_are_one_line_fault_spec_errors(text: str) -> None:
    with pytest.raises(FaultSpecError) as info:
        parse_model(text)
    assert "\n" not in str(info.value) and repr(text) in str(info.value)
    with pytest.raises(FaultSpecError):
        FaultSpec.parse(f"shuffle={text}")


def test_fault_spec_carries_the_model() -> None:
    spec = FaultSpec.parse("shuffle=riffle:2,seed=3")
    assert spec.shuffle == "riffle:2" and spec.seed == 3
    assert str(spec) == "shuffle=riffle:2,seed=3"
    assert FaultSpec.parse("shuffle=strip").shuffle == "strip:1"
    assert FaultSpec().shuffle == "uniform" and str(FaultSpec.parse("shuffle=csprng")) == "none"


def test_uniform_consumes_the_generator_like_rng_shuffle() -> None:
    stack = list(range(416))
    expected = list(stack)
    random.Random(9).shuffle(expected)
    assert UNIFORM.shuffle(stack, random.Random(9)) == expected
    assert stack == list(range(416))  # the input is not modified


@pytest.mark.parametrize("model", [Riffle(1), Riffle(3), Strip(1), Strip(2), Stuck(17), UNIFORM])
def test_every_model_permutes_the_stack(model: object) -> None:
    stack = list(range(416))
    out = model.shuffle(stack, random.Random(1))  # type: ignore[attr-defined]
    assert sorted(out) == stack and out != stack


def _descents_of_inverse(out: list[int]) -> list[int]:
    where = {x: i for i, x in enumerate(out)}
    return [x for x in range(1, len(out)) if where[x] < where[x - 1]]


def test_gsr_riffle_interleaves_two_packets_in_order() -> None:
    rng = random.Random(5)
    cuts = []
    for _ in range(2000):
        out = gsr_riffle(list(range(52)), rng)
        descents = _descents_of_inverse(out)
        assert len(descents) <= 1  # two packets, each in order: at most two rising sequences
        if descents:
            cut = descents[0]
            assert [x for x in out if x < cut] == list(range(cut))
            cuts.append(cut)
    # the cut is Binomial(52, 1/2) (seen when the riffle is not the identity): mean about 26
    assert 25 < sum(cuts) / len(cuts) < 27


def test_strip_reverses_packets_and_keeps_each_in_order() -> None:
    out = Strip(1).shuffle(list(range(416)), random.Random(2))
    runs = [[out[0]]]
    for x in out[1:]:
        if x == runs[-1][-1] + 1:
            runs[-1].append(x)
        else:
            runs.append([x])
    assert all(len(r) <= 52 for r in runs) and len(runs) >= 416 // 52
    assert [r[0] for r in runs] == sorted((r[0] for r in runs), reverse=True)


def test_stuck_slot_keeps_its_card() -> None:
    stack = list(range(416))
    rng = random.Random(3)
    for _ in range(20):
        out = Stuck(17).shuffle(stack, rng)
        assert out[16] == 16
    assert sorted(Stuck(500).shuffle(stack, rng)) == stack  # beyond the stack: just uniform


def test_the_emulated_shuffler_uses_the_model_and_keeps_the_count_faults() -> None:
    clock = ManualClock()
    shuffler = build_device("emulated-shuffler", clock=clock, seed=4, faults=FaultSpec.parse("shuffle=stuck:5"))
    for _ in range(5):
        stack = shuffler.shuffled_stack(8)
        assert stack[4] == standard_stack(8)[4] and len(stack) == 416
    short = build_device("emulated-shuffler", clock=clock, seed=4, faults=FaultSpec.parse("shuffle=riffle:1,missing-card=2"))
    assert len(short.shuffled_stack(8)) == 414
    plain = build_device("emulated-shuffler", clock=clock, seed=4)
    expected = list(standard_stack(8))
    random.Random(4).shuffle(expected)
    assert plain.shuffled_stack(8) == expected  # the default is unchanged: seeded runs deal as before
