"""docs/emulator.md "Faults": the values each fault takes and refuses, and what the line faults do
(found by mutation testing of firmware_bridge/emulator/faults.py: no test held these)."""
from __future__ import annotations

import pytest

from firmware_bridge.emulator.faults import FaultSpec, LineFaults
from firmware_bridge.errors import FaultSpecError
from firmware_bridge.protocol.framing import DELIMITER


@pytest.mark.parametrize("spec", [
    "corrupt=1", "drop=0", "dup=1.0",                  # a probability from 0 to 1, both ends
    "drop=0e5", "corrupt=1e-300",                      # 0 written otherwise; a small one that is one
    "delay=0ms", "delay=0.001ms",                      # a delay may be none, or the least there is
    "face-up-at=1", "misread-at=1000000000",           # a stack position from 1 to 10^9
    "jam-at=0", "reset-at=1000000000",                 # a count from 0 (off) to 10^9
    "both-ways=0", "both-ways=1",
    "dealer-miss=ABCDEFGHIJKLMNOP",                    # a prompt's first word, up to 16 capitals
    "refuse-command=GATE_UNLOCK",
])
def test_a_value_in_range_is_taken(spec: str) -> None:
    off = ("drop=0", "drop=0e5", "delay=0ms", "jam-at=0", "both-ways=0")
    assert FaultSpec.parse(spec) != FaultSpec() or spec in off


@pytest.mark.parametrize("spec, expected", [
    ("corrupt=1.01", "a probability from 0 to 1"),
    # too small to be one: taken as 0, then refused as if out of range (reviews of bad inputs)
    ("drop=1e-400", r"a probability from 0 to 1 \(above 0: at least 1e-300\)"),
    ("delay=0." + "0" * 400 + "1ms", r"a duration .* \(e.g. 500ms, 2s; 0, or at least 0.001ms\)"),
    ("delay=0.0001ms", r"a duration .* \(e.g. 500ms, 2s; 0, or at least 0.001ms\)"),
    ("unplug-for=0.0001ms", r"a duration above 0 .* \(e.g. 500ms, 2s; at least 0.001ms\)"),
    ("unplug-every=0s", "a duration above 0"),
    ("unplug-for=0ms", "a duration above 0"),
    ("face-up-at=0", "a stack position from 1 to 1000000000"),
    ("cover-at=1000000001", "a stack position from 1 to 1000000000"),
    ("jam-at=-1", "a whole number from 0 to 1000000000"),
    ("both-ways=2", "0 or 1"),
    ("dealer-miss=ABCDEFGHIJKLMNOPQ", "a prompt's first word in capitals"),
    ("refuse-command=HELLO", "one of SHUFFLE, DELIVER, GATE_LOCK, GATE_UNLOCK, RESET, DISPLAY"),
])
def test_a_value_out_of_range_is_refused_naming_what_the_fault_takes(spec: str, expected: str) -> None:
    with pytest.raises(FaultSpecError, match="expected " + expected):
        FaultSpec.parse(spec)


def test_a_fault_given_twice_is_refused() -> None:
    with pytest.raises(FaultSpecError, match="fault jam-at is given twice"):
        FaultSpec.parse("jam-at=3,jam-at=4")


def test_defaults() -> None:
    spec = FaultSpec.parse(None)
    assert spec.unplug_for == 0.2 and spec.face_up_at == -1 and str(spec) == "none"
    assert FaultSpec.parse("unplug-every=3s").unplug_for == 0.2  # "default 200ms"


def test_a_delay_alone_is_a_line_fault() -> None:
    assert FaultSpec.parse("delay=5ms").line_faults
    assert not FaultSpec.parse("jam-at=3").line_faults


def test_both_ways_gives_the_hosts_bytes_a_random_stream_of_their_own() -> None:
    assert FaultSpec.parse("corrupt=0.5").host_line() is None
    spec = FaultSpec.parse("corrupt=0.5,both-ways=1,seed=7")
    host = spec.host_line()
    assert host is not None and host.spec is spec
    device = LineFaults.from_spec(spec, stream=0)
    assert [host.rng.random() for _ in range(4)] != [device.rng.random() for _ in range(4)]
    again = FaultSpec.parse("corrupt=0.5,both-ways=1,seed=7").host_line()
    fresh = spec.host_line()
    assert [again.rng.random() for _ in range(4)] == [fresh.rng.random() for _ in range(4)]  # seeded: reproducible


def test_dup_sends_a_frame_twice_and_a_duplicated_frame_repeats_right_after_itself() -> None:
    line = LineFaults.from_spec(FaultSpec.parse("dup=1,seed=1"))
    frame = b"\x01\x02" + DELIMITER
    assert line.apply(frame) == [frame, frame] and line.duplicated == 1
    a, b = b"\x01A" + DELIMITER, b"\x02B" + DELIMITER
    assert line.apply_received(a + b + b"\x03") == a + a + b + b + b"\x03\x03"


def test_drop_1_drops_every_byte_and_corrupt_1_replaces_every_byte() -> None:
    line = LineFaults.from_spec(FaultSpec.parse("drop=1,seed=2"))
    assert line.apply(b"abc") == [] and line.dropped == 3
    line = LineFaults.from_spec(FaultSpec.parse("corrupt=1,seed=2"))
    out = line.apply(b"abcd")
    assert len(out) == 1 and len(out[0]) == 4 and line.corrupted == 4
