"""Protocol soak: millions of adversarial inputs into the sans-I/O protocol core, both roles.

``python -m benchmarks.soak_protocol [--inputs N] [--workers W] [--seed S] [--memory-limit-mb M]``
(run from the project root; ``make soak`` runs it with the defaults: 10,000,000 inputs on 2
workers). docs/hardening.md says what it proves and how to read the figures.

Each worker draws inputs from ``tests/fuzz/protocol_inputs.py`` (random bytes, valid frames of
every type, frames damaged under or over the CRC, truncated, duplicated, reordered, event floods
with gaps) and puts every one through the fuzz target's checks (``tests/fuzz/fuzz_codec.py``):
the frame decoder's byte accounting, the message round trip, and one long-lived host and device
(``Stream``) that see all of the worker's inputs in turn, so state builds up as on a link that
stays up for days.

Pass/fail, exit status 1 on either:

- an exception the protocol's contract does not allow: anything outside the
  ``firmware_bridge.protocol.errors`` tree (undocumented), or a documented one where the contract
  says none (the device raising for received bytes, the host raising anything but
  ``RemoteProtocolError`` for them), or a broken invariant. The failing input is shrunk to a
  minimal reproducer, printed as hex with the command that replays it (``--replay HEX ...``).
- a worker's resident memory growing by more than ``--memory-limit-mb`` after the warm-up (the
  first tenth of its inputs): something a peer sends is kept without bound.

It prints inputs/s while it runs and the totals at the end (also as JSON with ``--json FILE``).
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import queue
import signal
import sys
import time
import traceback
from collections import Counter, deque
from pathlib import Path

from firmware_bridge.protocol import ProtocolError
from tests.fuzz.fuzz_codec import Stream, check_decoder, check_messages
from tests.fuzz.protocol_inputs import ProtocolInputs

RECENT = 200            # inputs kept per worker to rebuild a failure from a fresh stream
REPORT_EVERY = 20_000   # inputs between a worker's progress reports (and memory samples)
PRINT_EVERY_S = 10.0
_PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    """This process's resident set size now (Linux /proc; 0 where unavailable)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except OSError:
        return 0


def check_one(data: bytes, stream: Stream) -> int:
    """The soak's checks on one input (the long-lived ``stream`` sees it too); returns the
    number of frames that passed the CRC. Raises whatever the protocol core raises."""
    found = check_decoder(data)
    check_messages(found)
    stream.feed(data)
    return len(found)


def check_inputs(inputs: list[bytes]) -> int:
    """``check_one`` on each of ``inputs`` in turn, on a fresh stream; returns the frames."""
    stream = Stream()
    return sum(check_one(data, stream) for data in inputs)


def signature(exc: BaseException) -> tuple[str, str]:
    """What identifies a failure while shrinking it: the exception type and where it was raised."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f"{tb[-1].filename}:{tb[-1].lineno}" if tb else "?"
    return type(exc).__name__, where


def classify(exc: BaseException) -> str:
    if isinstance(exc, AssertionError):
        return "broken invariant"
    if isinstance(exc, ProtocolError):
        return "documented exception where the contract allows none"
    return "undocumented exception"


# --- the workers ---------------------------------------------------------------------------------

def worker_seed(seed: int, index: int) -> int:
    return seed * 1_000_003 + index


def run_worker(index: int, seed: int, count: int, reports: multiprocessing.Queue,
               stop: multiprocessing.Event) -> None:  # type: ignore[valid-type]
    """Check ``count`` inputs of worker ``index``'s stream; put progress and one final result."""
    parent = os.getppid()
    inputs = ProtocolInputs(worker_seed(seed, index))
    stream = Stream()
    recent: deque[bytes] = deque(maxlen=RECENT)
    nbytes = frames = done = 0
    samples: list[tuple[int, int]] = []
    failure = None
    warmup = max(count // 10, REPORT_EVERY)
    baseline = 0
    while done < count:
        data = inputs.next()
        recent.append(data)
        try:
            frames += check_one(data, stream)
        except Exception as exc:  # noqa: BLE001 - every exception is a finding to report
            failure = {"index": done, "type": type(exc).__name__, "kind": classify(exc),
                       "traceback": traceback.format_exc(), "recent": [d.hex() for d in recent]}
            break
        nbytes += len(data)
        done += 1
        if done % REPORT_EVERY == 0 or done == count:
            rss = rss_bytes()
            if done >= warmup and not baseline:
                baseline = rss
            samples.append((done, rss))
            reports.put(("progress", index, done, rss))
            if stop.is_set() or os.getppid() != parent:  # stopped, or the soak itself is gone
                break
    hosts = {"host": stream.host, "lonely": stream.lonely}
    reports.put(("done", index, {
        "inputs": done, "bytes": nbytes, "frames": frames, "kinds": dict(inputs.counts),
        "host_saw": dict(stream.host.seen), "device_saw": dict(stream.device.seen),
        "lonely_saw": dict(stream.lonely.seen),
        "events_held_ahead_of_gaps": {k: h.events.buffered_count for k, h in hosts.items()},
        "missing_ranges": {k: len(h.events.missing()) for k, h in hosts.items()},
        "device_unacknowledged": stream.device.connection.unacknowledged_count,
        "rss_baseline_mb": round(baseline / 2**20, 1),
        "rss_max_after_warmup_mb": round(max((r for d, r in samples if d >= warmup), default=0) / 2**20, 1),
        "rss_final_mb": round(samples[-1][1] / 2**20, 1) if samples else 0.0,
        "failure": failure}))


# --- shrinking -----------------------------------------------------------------------------------

def _fails_like(inputs: list[bytes], target: tuple[str, str]) -> bool:
    try:
        check_inputs(inputs)
    except Exception as exc:  # noqa: BLE001
        return signature(exc) == target
    return False


def _ddmin(items: list, fails) -> list:  # type: ignore[type-arg]
    """Zeller's delta debugging: a 1-minimal sublist of ``items`` for which ``fails`` holds."""
    n = 2
    while len(items) >= 2:
        size = max(1, len(items) // n)
        chunks = [items[i:i + size] for i in range(0, len(items), size)]
        for i in range(len(chunks)):
            rest = [x for j, c in enumerate(chunks) if j != i for x in c]
            if rest and fails(rest):
                items, n = rest, max(n - 1, 2)
                break
        else:
            if size == 1:
                break
            n = min(n * 2, len(items))
    return items


def shrink(recent: list[bytes], target: tuple[str, str]) -> list[bytes] | None:
    """The fewest, shortest inputs that, fed to a fresh stream, fail as ``target`` did; ``None``
    when the recent inputs alone do not reproduce it (the state came from further back)."""
    if not _fails_like(recent, target):
        return None
    inputs = _ddmin(list(recent), lambda xs: _fails_like(xs, target))
    for k in range(len(inputs)):
        def fails(body: list[int], k: int = k) -> bool:
            trial = inputs[:k] + [inputs[k][:1] + bytes(body)] + inputs[k + 1:]
            return _fails_like(trial, target)
        inputs[k] = inputs[k][:1] + bytes(_ddmin(list(inputs[k][1:]), fails))
    return inputs


# --- the driver ----------------------------------------------------------------------------------

def soak(total: int, workers: int, seed: int, only: int | None) -> dict:  # type: ignore[type-arg]
    ctx = multiprocessing.get_context("spawn")
    reports: multiprocessing.Queue = ctx.Queue()  # type: ignore[type-arg]
    stop = ctx.Event()
    share = [total // workers + (1 if i < total % workers else 0) for i in range(workers)]
    chosen = [only] if only is not None else list(range(workers))
    procs = [ctx.Process(target=run_worker, args=(i, seed, share[i], reports, stop), daemon=True)
             for i in chosen]
    start = time.perf_counter()
    for p in procs:
        p.start()
    progress = {i: (0, 0) for i in chosen}
    results: dict[int, dict] = {}  # type: ignore[type-arg]
    last_print = start
    try:
        while len(results) < len(chosen):
            try:
                msg = reports.get(timeout=1.0)
            except queue.Empty:
                if not any(p.is_alive() for p in procs):
                    raise RuntimeError("a worker died without a result") from None
                continue
            if msg[0] == "progress":
                progress[msg[1]] = (msg[2], msg[3])
            else:
                results[msg[1]] = msg[2]
                if msg[2]["failure"]:
                    stop.set()
            now = time.perf_counter()
            if now - last_print >= PRINT_EVERY_S:
                last_print = now
                done = sum(d for d, _ in progress.values())
                rss = "  ".join(f"w{i} {r / 2**20:.0f} MB" for i, (_, r) in progress.items())
                print(f"  {done:>12,} / {sum(share[i] for i in chosen):,} inputs  "
                      f"{done / (now - start):>9,.0f} inputs/s  rss {rss}", flush=True)
    finally:  # normally the workers have finished; after an interrupt they stop here
        stop.set()
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
                p.join()
    seconds = time.perf_counter() - start
    inputs = sum(r["inputs"] for r in results.values())
    totals: dict[str, Counter[str]] = {name: Counter() for name in
                                       ("kinds", "host_saw", "device_saw", "lonely_saw")}
    for r in results.values():
        for name, total in totals.items():
            total.update(r[name])
    return {"inputs": inputs, "bytes": sum(r["bytes"] for r in results.values()),
            "frames": sum(r["frames"] for r in results.values()),
            **{name: dict(total.most_common()) for name, total in totals.items()},
            "workers": len(chosen), "seed": seed, "seconds": round(seconds, 1),
            "inputs_per_s": round(inputs / seconds), "per_worker": results}


def report_failure(index: int, failure: dict, seed: int, total: int) -> None:  # type: ignore[type-arg]
    print(f"\nDEFECT ({failure['kind']}) in worker {index} at its input {failure['index']:,}:",
          file=sys.stderr)
    print(failure["traceback"], file=sys.stderr)
    recent = [bytes.fromhex(h) for h in failure["recent"]]
    try:
        check_inputs(recent)
    except Exception as exc:  # noqa: BLE001
        target = signature(exc)
    else:
        target = None
    minimal = shrink(recent, target) if target else None
    if minimal is None:
        print("The last inputs alone do not reproduce it; replay the whole stream:\n"
              f"  python -m benchmarks.soak_protocol --inputs {total} --seed {seed} "
              f"--only-worker {index}", file=sys.stderr)
        return
    hexes = " ".join(d.hex() for d in minimal)
    print(f"Minimal reproducer ({len(minimal)} input(s), {sum(map(len, minimal))} bytes; each "
          "input's first byte is the piece size - 1):\n"
          f"  python -m benchmarks.soak_protocol --replay {hexes}", file=sys.stderr)


def replay(hexes: list[str]) -> int:
    try:
        inputs = [bytes.fromhex(h) for h in hexes]
    except ValueError:
        print("--replay takes inputs in hex", file=sys.stderr)
        return 2
    try:
        frames = check_inputs(inputs)
    except Exception as exc:  # noqa: BLE001
        traceback.print_exc()
        print(f"reproduced: {classify(exc)}", file=sys.stderr)
        return 1
    print(f"no defect: {len(inputs)} input(s), {frames} frame(s) checked")
    return 0


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.soak_protocol",
                                 description="Protocol soak (docs/hardening.md).")
    ap.add_argument("--inputs", type=int, default=10_000_000, metavar="N")
    ap.add_argument("--workers", type=int, default=2, metavar="W")
    ap.add_argument("--seed", type=int, default=1, metavar="S")
    ap.add_argument("--memory-limit-mb", type=float, default=32.0, metavar="M",
                    help="allowed growth of a worker's resident memory after warm-up (default 32)")
    ap.add_argument("--only-worker", type=int, metavar="K", help="run only worker K's stream")
    ap.add_argument("--replay", nargs="+", metavar="HEX", help="check these inputs and exit")
    ap.add_argument("--json", metavar="FILE", help="also write the figures to FILE")
    args = ap.parse_args(argv)
    if args.replay:
        return replay(args.replay)
    if args.inputs < 1 or args.workers < 1 or not (args.only_worker is None
                                                   or 0 <= args.only_worker < args.workers):
        ap.error("--inputs and --workers must be at least 1, --only-worker below --workers")
    print(f"protocol soak: {args.inputs:,} inputs on {args.workers} worker(s), seed {args.seed}",
          flush=True)
    signal.signal(signal.SIGTERM, _interrupted)
    try:
        figures = soak(args.inputs, args.workers, args.seed, args.only_worker)
    except KeyboardInterrupt:
        print("interrupted: no figures", file=sys.stderr)
        return 130
    status = 0
    for index, result in sorted(figures["per_worker"].items()):
        if result["failure"]:
            report_failure(index, result["failure"], args.seed, args.inputs)
            status = 1
        growth = result["rss_max_after_warmup_mb"] - result["rss_baseline_mb"]
        result["rss_growth_mb"] = round(growth, 1)
        if result["rss_baseline_mb"] and growth > args.memory_limit_mb:
            print(f"\nDEFECT (memory) in worker {index}: resident memory grew {growth:.1f} MB after "
                  f"warm-up (limit {args.memory_limit_mb:g} MB); its hosts hold "
                  f"{result['events_held_ahead_of_gaps']} events ahead of gaps",
                  file=sys.stderr)
            status = 1
        result.pop("failure")
    figures["result"] = "defect" if status else "ok"
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main())
