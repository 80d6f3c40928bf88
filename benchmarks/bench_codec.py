"""Throughput of the protocol codec on CARD_READ frames (figures, not a pass/fail test).

``run(quick=False) -> dict`` measures, on one core, the median over several repeats of:

- ``decode``: bytes -> ``FrameDecoder`` -> ``decode_message`` -> ``CardRead`` objects;
- ``host``: the same through ``HostConnection.next_event`` (plus duplicate/gap tracking and the
  ``EventReceived`` wrapper): what the link layer really pays per card;
- ``encode``: ``CardRead`` -> ``encode_message`` -> wire bytes;
- ``device_send``: ``DeviceConnection.send`` (counter assignment, event store, encoding).

Input is fed in 4 KiB pieces, as a link layer reading a port would. The goal is at least
200,000 CARD_READ frames/s decoded into typed messages.

Run from the project root: ``python -m benchmarks.bench_codec [--quick]``.
"""
from __future__ import annotations

import json
import platform
import statistics
import sys
import time
from collections.abc import Callable

from firmware_bridge.protocol import (
    NEED_DATA,
    Capability,
    CardRead,
    DeviceConnection,
    Frame,
    FrameDecoder,
    HostConnection,
    Identity,
    decode_message,
    encode_message,
)

GOAL_DECODE_FRAMES_PER_S = 200_000
CHUNK = 4096


def _cards(n: int) -> list[CardRead]:
    return [CardRead(rank=i % 13 + 1, suit=i % 4, face_up=False, position=i % 416 + 1,
                     timestamp_ms=1_000_000 + 37 * i, counter=i + 1) for i in range(n)]


def _chunks(data: bytes) -> list[bytes]:
    return [data[i:i + CHUNK] for i in range(0, len(data), CHUNK)]


def _median_rate(work: Callable[[], int], repeats: int) -> float:
    """Items per second of ``work`` (which returns how many items it handled), median of runs."""
    rates = []
    for _ in range(repeats):
        start = time.perf_counter()
        count = work()
        rates.append(count / (time.perf_counter() - start))
    return statistics.median(rates)


def run(quick: bool = False) -> dict[str, object]:
    """Measure and return the figures (rates in frames/s, MB/s of wire bytes)."""
    n = 20_000 if quick else 200_000
    repeats = 3 if quick else 7
    cards = _cards(n)
    wire = b"".join(encode_message(card, card.counter & 0xFF) for card in cards)
    pieces = _chunks(wire)

    def decode() -> int:
        decoder = FrameDecoder()
        count = 0
        for piece in pieces:
            decoder.receive_data(piece)
            while (item := decoder.next_frame()) is not None:
                if type(item) is Frame:
                    decode_message(item)
                    count += 1
        return count

    def host() -> int:
        connection = HostConnection()
        count = 0
        for piece in pieces:
            connection.receive_data(piece)
            while connection.next_event() is not NEED_DATA:
                count += 1
        return count

    def encode() -> int:
        for card in cards:
            encode_message(card, card.counter & 0xFF)
        return n

    identity = Identity(1, Capability.CARD_RECOGNITION, 8, 1, "BENCH", "0", "0")
    blanks = [CardRead(c.rank, c.suit, c.face_up, c.position, c.timestamp_ms) for c in cards]

    def device_send() -> int:
        device = DeviceConnection(identity, max_unacknowledged=n)
        for card in blanks:
            device.send(card)
        return n

    assert decode() == n and host() == n, "benchmark input did not decode completely"
    decode_rate = _median_rate(decode, repeats)
    host_rate = _median_rate(host, repeats)
    frame_size = len(wire) / n
    return {
        "python": platform.python_version(),
        "frames": n,
        "repeats": repeats,
        "card_read_wire_bytes": frame_size,
        "decode_frames_per_s": round(decode_rate),
        "decode_mb_per_s": round(decode_rate * frame_size / 1e6, 2),
        "host_frames_per_s": round(host_rate),
        "host_mb_per_s": round(host_rate * frame_size / 1e6, 2),
        "encode_frames_per_s": round(_median_rate(encode, repeats)),
        "device_send_frames_per_s": round(_median_rate(device_send, repeats)),
        "goal_decode_frames_per_s": GOAL_DECODE_FRAMES_PER_S,
        "goal_met": decode_rate >= GOAL_DECODE_FRAMES_PER_S,
    }


if __name__ == "__main__":
    print(json.dumps(run(quick="--quick" in sys.argv[1:]), indent=2))
