"""The protocol fuzz in ``make test``: seeded, bounded, both roles (the long run is the soak,
``python -m benchmarks.soak_protocol``, docs/hardening.md).

The inputs (``protocol_inputs``) are random bytes, valid frames of every type, frames damaged
under and over the CRC, truncated, duplicated and reordered, and event floods with gaps. The
target (``fuzz_codec``) fails on any exception the protocol's contract does not allow and on any
broken invariant; the assertions here prove the inputs reached the parts worth reaching, so the
fuzz cannot pass by feeding noise that the frame layer throws away.
"""
from __future__ import annotations

import fuzz_codec
import pytest
from protocol_inputs import ProtocolInputs

INPUTS = 15_000  # `make soak` feeds 10 million; here a seeded sample that runs in `make test`
LINK_INPUTS = 6_000  # each drives a whole exchange between the two roles: dearer
SEED = 20_240_901


@pytest.mark.slow
def test_fresh_connections_hold_on_seeded_adversarial_inputs() -> None:
    inputs = ProtocolInputs(SEED)
    frames = sum(fuzz_codec.test_one_input(inputs.next()) for _ in range(INPUTS))
    assert set(inputs.counts) == {"random", "frames", "mutated", "gaps"}
    assert frames > INPUTS  # most inputs carry frames that pass the CRC, not just noise


@pytest.mark.slow
def test_a_long_lived_link_holds_on_seeded_adversarial_inputs() -> None:
    stream = fuzz_codec.Stream(reconnect_every=500)
    inputs = ProtocolInputs(SEED + 1)
    for _ in range(LINK_INPUTS):
        stream.feed(inputs.next())
    host, device = stream.host.seen, stream.device.seen
    assert {"ReplyReceived", "StaleReply", "EventReceived", "Dropped", "UnexpectedMessageError",
            "MalformedPayloadError", "UnknownMessageTypeError", "sequencer queued",
            "sequencer buffered"} <= set(host), host
    assert {"CommandReceived", "AutoReply", "Dropped", "NAK SEQUENCE_REUSED", "NAK BAD_PAYLOAD",
            "NAK UNKNOWN_COMMAND", "NAK BAD_FRAME", "NAK UNSUPPORTED_VERSION",
            "NAK BAD_EVENT_ACK"} <= set(device), device
    assert host["ReplyReceived"] > LINK_INPUTS // 2  # the two really talk to each other
