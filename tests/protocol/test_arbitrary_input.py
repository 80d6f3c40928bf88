"""Neither connection role raises on any input but the remote errors it reports, and the fuzz
target (tests/fuzz/fuzz_codec.py) stays runnable and holds on hypothesis-generated inputs."""
from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_bridge.protocol import (
    NEED_DATA,
    AutoReply,
    CommandReceived,
    DeviceConnection,
    Dropped,
    Nak,
    NakCode,
    RemoteProtocolError,
)

from .harness import IDENTITY, synced_host
from .strategies import noise, wire_frames


@given(st.lists(st.one_of(wire_frames, noise), max_size=20))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_host_raises_nothing_but_remote_errors_on_any_input(pieces: list[bytes]) -> None:
    host = synced_host()
    host.receive_data(b"".join(pieces))
    remote_errors = 0
    while True:
        try:
            if host.next_event() is NEED_DATA:
                break
        except RemoteProtocolError:
            remote_errors += 1
    assert remote_errors <= len(pieces)  # at most one per frame, then it carries on
    assert host.next_event() is NEED_DATA


@given(st.lists(st.one_of(wire_frames, st.binary(max_size=40)), max_size=20))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_device_never_raises_on_any_input(pieces: list[bytes]) -> None:
    device = DeviceConnection(IDENTITY)
    device.receive_data(b"".join(pieces))
    while (event := device.next_event()) is not NEED_DATA:
        if isinstance(event, CommandReceived):
            device.send(Nak(NakCode.NOT_SUPPORTED))
        assert isinstance(event, (Dropped, CommandReceived, AutoReply))


def _load_fuzz_target() -> Callable[[bytes], None]:
    path = Path(__file__).resolve().parents[1] / "fuzz" / "fuzz_codec.py"
    spec = importlib.util.spec_from_file_location("fuzz_codec", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.test_one_input  # type: ignore[no-any-return]


FUZZ_ONE_INPUT = _load_fuzz_target()


@given(st.integers(0, 255), st.lists(st.tuples(noise, wire_frames), max_size=8))
@settings(suppress_health_check=[HealthCheck.too_slow])
def test_fuzz_target_holds_on_generated_inputs(piece_size: int,
                                               pairs: list[tuple[bytes, bytes]]) -> None:
    data = bytes([piece_size]) + b"".join(n + f for n, f in pairs)
    # The target asserts its invariants itself; every valid frame must also come out.
    assert FUZZ_ONE_INPUT(data) >= len(pairs)
