"""The link layer over a real pty: request round trip and event throughput (figures, not a test).

``run(quick=False) -> dict`` measures, in one run and on the same machine:

- ``raw_echo_us``: a raw pty round trip of the same byte counts as a STATUS exchange: the host
  writes the STATUS frame's length through ``SerialTransport`` and reads back the STATUS_REPLY
  frame's length, written by a bare echo thread (``os.read``/``os.write`` on the master);
- ``link_round_trip_us``: ``DeviceLink.request(StatusRequest())`` to its reply, against the
  scripted protocol device of the tests (``tests/link/fake_device.py``: ``DeviceConnection``
  on the pty master);
- ``ratio_median`` / ``ratio_p99``: link / raw; the goal (issue 15) is a median of at most 1.5x;
- ``device_answer_us``: the device's own work per STATUS, timed on its thread, from the bytes it
  read to the reply it hands to the pty (decoding the command, building and encoding the reply);
  ``ratio_without_device_work``: (link median - that median) / raw median, the host's share;
- ``events_per_s``: CARD_READ events emitted by the device as fast as it can, through the link
  (decode, order, exactly-once filter) to a consumer callback, acknowledged as they go.

Median and p99 are in microseconds. Raw and link round trips alternate in blocks of ``BLOCK``
(10), so both see the same load: with blocks of 50, a burst of load on a shared machine could
land on one side only and move the ratio anywhere from 1.2 to 5; one by one, each raw echo would
start while the link's reader thread is still returning to its read. The device runs in this
process (one more Python thread sharing the interpreter), for both the raw and the link figures;
the link figure includes that device's own protocol work (``device_answer_us``), which a firmware
device does not spend in this interpreter. Where the rest goes: docs/performance.md, "Link
STATUS round trip".

Run from the project root: ``python -m benchmarks link [--quick]`` or
``python -m benchmarks.bench_link [--quick]``.
"""
from __future__ import annotations

import json
import os
import select
import statistics
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path

from firmware_bridge.errors import TransportError
from firmware_bridge.link import DeviceLink, LinkEvent
from firmware_bridge.profiles import Timing
from firmware_bridge.protocol import (
    DeviceMode,
    DeviceState,
    EventBufferFullError,
    StatusReply,
    StatusRequest,
    encode_message,
)
from firmware_bridge.transport import SerialTransport

try:
    from benchmarks.stats import percentile, summary_row
except ImportError:  # run as a script from benchmarks/
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.stats import percentile, summary_row

from tests.link.fake_device import FakeDevice, card  # noqa: E402 - the tests' scripted device

GOAL_RATIO = 1.5  # issue 15: the link round trip at most 1.5x the raw pty echo
BLOCK = 10        # raw and link round trips alternate in blocks of this many
TIMING = Timing(response_timeout_ms=250, heartbeat_interval_ms=1000, retries=3,
                reconnect_min_ms=100, reconnect_max_ms=5000)

REQUEST_BYTES = len(encode_message(StatusRequest(), 1))
REPLY_BYTES = len(encode_message(StatusReply(DeviceState.IDLE, DeviceMode.NORMAL, False, False,
                                             False, 0, 0, 0), 1))


def _figures(samples_s: list[float]) -> dict[str, float]:
    us = [s * 1e6 for s in samples_s]
    return {"median": round(statistics.median(us), 1), "p99": round(percentile(us, 99), 1),
            "n": len(us)}


class RawEcho:
    """A bare pty echo: the device side answers REQUEST_BYTES with REPLY_BYTES, no protocol."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        self._stop_r, self._stop_w = os.pipe()
        self._thread = threading.Thread(target=self._echo, daemon=True)
        self.transport = SerialTransport(os.ttyname(self.slave))
        self.request = b"\x55" * (REQUEST_BYTES - 1) + b"\x00"

    def _echo(self) -> None:
        reply = b"\x55" * (REPLY_BYTES - 1) + b"\x00"
        pending = 0
        while True:
            ready, _, _ = select.select([self.master, self._stop_r], [], [])
            if self._stop_r in ready:
                return
            pending += len(os.read(self.master, 4096))
            while pending >= REQUEST_BYTES:
                pending -= REQUEST_BYTES
                os.write(self.master, reply)

    def __enter__(self) -> RawEcho:
        self._thread.start()
        self.transport.open()
        return self

    def round_trip(self) -> float:
        t0 = time.perf_counter()
        self.transport.write(self.request)
        got = 0
        while got < REPLY_BYTES:
            got += len(self.transport.read(1.0))
        return time.perf_counter() - t0

    def __exit__(self, *exc: object) -> None:
        self.transport.close()
        os.write(self._stop_w, b"x")
        self._thread.join()
        for fd in (self.master, self.slave, self._stop_r, self._stop_w):
            os.close(fd)


class TimedDevice(FakeDevice):
    """The tests' scripted device, timing its own work on each command: from the bytes read to the
    reply handed to the pty (``answers``, seconds)."""

    def __init__(self, directory: str, *, name: str) -> None:
        super().__init__(directory, name=name)
        self.answers: list[float] = []
        self._received_at: float | None = None

    def _receive(self, data: bytes) -> None:
        self._received_at = time.perf_counter()
        super()._receive(data)

    def _write(self, data: bytes) -> None:
        received_at, self._received_at = self._received_at, None
        if received_at is not None:
            self.answers.append(time.perf_counter() - received_at)
        super()._write(data)


def round_trips(n: int, directory: str) -> tuple[list[float], list[float], list[float], dict[str, int]]:
    """``n`` raw and ``n`` link round trips, alternating in blocks of ``BLOCK`` so that both see the same
    machine conditions (these machines are shared), and the device's own time on each of the link
    round trips; the first tenth of each warms up."""
    device = TimedDevice(directory, name="bench-rtt").start()
    link = DeviceLink(SerialTransport(str(device.path)), timing=TIMING, profile_name="bench")
    raw: list[float] = []
    linked: list[float] = []
    try:
        link.start()
        if not link.wait_connected(30):
            raise TransportError("the benchmark device did not connect")
        request = StatusRequest()

        def one_link() -> float:
            t0 = time.perf_counter()
            link.request(request)
            return time.perf_counter() - t0

        with RawEcho() as echo:
            warm = max(5 * BLOCK, n // 10)
            for _ in range(warm):
                echo.round_trip()
                one_link()
            with device.lock:
                device.answers.clear()
            while len(raw) < n:
                raw.extend(echo.round_trip() for _ in range(BLOCK))
                linked.extend(one_link() for _ in range(BLOCK))
        stats = link.stats
        with device.lock:
            answers = device.answers[:n]
    finally:
        link.stop()
        device.stop()
    return raw[:n], linked[:n], answers, stats


def event_throughput(n: int, directory: str) -> dict[str, float]:
    device = FakeDevice(directory, name="bench-events").start()
    done = threading.Event()
    count = 0

    def consume(event: LinkEvent) -> None:
        nonlocal count
        count += 1
        if count >= n:
            done.set()

    link = DeviceLink(SerialTransport(str(device.path)), timing=TIMING, profile_name="bench",
                      on_event=consume)
    try:
        link.start()
        if not link.wait_connected(30):
            raise TransportError("the benchmark device did not connect")
        cards = [card(i) for i in range(n)]
        full_waits = 0
        t0 = time.perf_counter()
        for event in cards:
            while True:
                try:
                    device.emit(event)
                    break
                except EventBufferFullError:  # the device holds 4096: wait for acknowledgements
                    full_waits += 1
                    time.sleep(0.0005)
        emitted = time.perf_counter()
        if not done.wait(120):
            raise TransportError(f"only {count} of {n} events arrived")
        elapsed = time.perf_counter() - t0
        stats = link.stats
    finally:
        link.stop()
        device.stop()
    return {"events": n, "events_per_s": round(n / elapsed),
            "emit_seconds": round(emitted - t0, 3), "total_seconds": round(elapsed, 3),
            "device_buffer_full_waits": full_waits, "acks": stats["acks"],
            "resend_requests": stats["resend_requests"]}


def run(quick: bool = False) -> dict[str, object]:
    n = 1000 if quick else 10_000
    events = 5000 if quick else 50_000
    with tempfile.TemporaryDirectory(prefix="bench-link-") as directory:
        raw, link, answers, stats = round_trips(n, directory)
        throughput = event_throughput(events, directory)
    raw_f, link_f, device_f = _figures(raw), _figures(link), _figures(answers)
    ratio = link_f["median"] / raw_f["median"]
    return {
        "request_bytes": REQUEST_BYTES,
        "reply_bytes": REPLY_BYTES,
        "raw_echo_us": raw_f,
        "link_round_trip_us": link_f,
        "ratio_median": round(ratio, 2),
        "ratio_p99": round(link_f["p99"] / raw_f["p99"], 2),
        "goal_ratio": GOAL_RATIO,
        "goal_met": ratio <= GOAL_RATIO,
        "device_answer_us": device_f,
        "ratio_without_device_work": round((link_f["median"] - device_f["median"]) / raw_f["median"], 2),
        "summary": [summary_row("link STATUS round trip (median)", link_f["median"], "us",
                                f"<= {GOAL_RATIO:g}x the raw pty echo", ratio <= GOAL_RATIO,
                                floor=raw_f["median"], ratio=round(ratio, 2))],
        "link_retransmissions": stats["retransmissions"],
        **throughput,
    }


if __name__ == "__main__":
    print(json.dumps(run(quick="--quick" in sys.argv[1:]), indent=2))
