"""Throughput of the journal (figures, not a pass/fail test), on real files in a temp directory.

``run(quick=False) -> dict``:

- ``single_appends_per_s``: ``Journal.append`` of a card-read-sized device event, each its own
  durable transaction (WAL, synchronous=FULL: one fsync each), median over repeats;
- ``batch10_entries_per_s`` / ``batch100_entries_per_s``: entries per second through
  ``append_batch`` in batches of 10 and 100 (one fsync per batch);
- ``verify_entries_per_s``: ``verify`` (SQLite quick_check + the chain) and
  ``verify_chain_only_entries_per_s`` (without quick_check), over a journal of many entries, beside
  ``hash_floor_entries_per_s`` (hashlib alone over the bytes the chain hashes, built beforehand)
  and the ratio to it (``*_over_floor``); ``verify_cpu_entries_per_s`` the same verify per CPU
  second of this process, beside its floor ``read_hash_floor_cpu_entries_per_s``: what any
  verify of the file pays, per CPU second (SQLite's quick_check, every column of every row
  fetched in verify's batches, and one SHA-256 or HMAC per entry over the bytes the chain hashes,
  built beforehand, in a plain loop), and the ratio (``verify_cpu_over_read_hash_floor``);
  ``hmac_*`` the same for an HMAC journal; goal (issue 15): 300,000 entries/s; ``real_run_*`` the
  same over a journal ``shoectl run`` wrote (5 shoes at speed max: its payloads have more shapes
  than card reads alone); ``verify_split_*``: verify as ``shoectl journal verify`` runs a long
  journal on this machine, in two processes (``controller.journal.split_check``), per second
  beside the read-and-hash floor per second (one process), and per CPU second of both processes.
  The summary rows, on the real journal: the split verify per second beside its floor, and one
  pass per CPU second beside its floor per CPU second;
- ``checked_read_entries_per_s``: entries read back (decoded) and checked as they are read, as
  every reader of a journal does (``verify.checked_read``), over the same journal;
- ``fsync_floor_commits_per_s``: bare single-row SQLite commits with the same settings, the floor
  that the disk sets (about 6,700/s on these machines when first measured).

The table needs a few dozen entries per round, so even the single-append figure is far above need.
Run from the project root: ``python -m benchmarks journal [--quick]`` or
``python -m benchmarks.bench_journal [--quick]``.
"""
from __future__ import annotations

import json
import os
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from controller.journal import Journal, Record, verify
from controller.journal.chain import Hasher, entry_body
from controller.journal.entry import COLUMNS
from controller.journal.shapes import _integer_runs_patterns
from controller.journal.chaincheck import BATCH_ROWS
from controller.journal.verification import checked_read

from benchmarks.stats import summary_row

GOAL_VERIFY = 300_000  # entries/s (issue 15)
_KEY = b"bench-journal-hmac-key-32-bytes!"


def _payload(i: int) -> dict:
    return {"card": "AS", "rank": i % 13 + 1, "suit": i % 4, "position": i % 416 + 1, "face_up": False,
            "timestamp_ms": 1_000_000 + 37 * i}


def _single(path: Path, n: int) -> float:
    with Journal.open(path, table_id="bench") as j:
        start = time.perf_counter()
        for i in range(n):
            j.append("card.read", _payload(i), shoe="S1", round=i // 6, device_serial="shoe-1", epoch=1, counter=i + 1)
        return n / (time.perf_counter() - start)


def _batched(path: Path, n: int, size: int, key: bytes | None = None) -> float:
    with Journal.open(path, table_id="bench", hmac_key=key) as j:
        start = time.perf_counter()
        for b in range(0, n, size):
            j.append_batch([Record("card.read", _payload(i), shoe="S1", round=i // 6, device_serial="shoe-1", epoch=1,
                                   counter=i + 1) for i in range(b, min(n, b + size))])
        return n / (time.perf_counter() - start)


def _floor(path: Path, n: int) -> float:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, x TEXT)")
    start = time.perf_counter()
    for i in range(n):
        conn.execute("INSERT INTO t (x) VALUES (?)", (json.dumps(_payload(i)),))
    rate = n / (time.perf_counter() - start)
    conn.close()
    return rate


def _run_journal(path: Path, shoes: int) -> int:
    """A real ``shoectl run`` journal (built-in emulator at speed max, automated dealer, the edge
    monitor on as by default) of ``shoes`` shoes; its number of entries."""
    subprocess.run([sys.executable, "-m", "controller.cli.main", "run", "--journal", str(path), "--shoes", str(shoes),
                    "--speed", "max", "--seed", "5", "--display", "lines"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
    return verify(path).entries


def _hashed_bytes(path: Path) -> list[bytes]:
    """What the chain hashes for each entry (``prev_hash || body``), read and built beforehand."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return [row[11].encode() + entry_body(*row[:11]) for row in conn.execute(f"SELECT {', '.join(COLUMNS)} FROM entries")]
    finally:
        conn.close()


def _read_hash_floor(path: Path, data: list[bytes], key: bytes | None) -> tuple[float, float]:
    """Entries per CPU second and per second of what any verify of the journal at ``path`` pays, in
    one process: SQLite's quick_check, every column of every row fetched in seq order in verify's
    batches, and one hash per entry over ``data`` (the bytes the chain hashes, built beforehand),
    in a plain loop."""
    hex_digest = Hasher(key).hex_digest
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    try:
        cpu, start = time.process_time(), time.perf_counter()
        conn.execute("PRAGMA quick_check(5)").fetchall()
        cur = conn.execute(f"SELECT {', '.join(COLUMNS)} FROM entries ORDER BY seq")
        items, n = iter(data), 0
        while rows := cur.fetchmany(BATCH_ROWS):
            for _row, item in zip(rows, items):
                hex_digest(item)
            n += len(rows)
        return n / (time.process_time() - cpu), n / (time.perf_counter() - start)
    finally:
        conn.close()


def _as_a_new_process() -> None:
    """Forget what a verify of this journal left compiled (its type shapes' patterns, in ``re``'s
    cache; the integer patterns), as a ``shoectl journal verify`` process starts without them: the
    repeats after the first were 4-8 % quicker than the command (a review of the benchmarks)."""
    re.purge()
    _integer_runs_patterns.cache_clear()


def _verify_figures(path: Path, key: bytes | None, repeats: int, n: int) -> dict:
    """``verify`` in one pass with and without quick_check beside hashlib alone over the same
    bytes (SHA-256, or HMAC-SHA-256 from precomputed keyed states), and per CPU second beside its
    read-and-hash floor (``_read_hash_floor``); ``verify_split``: as ``shoectl journal verify``
    checks a long journal on a machine of two CPUs or more (in two processes,
    ``controller.journal.split_check``), per second beside the same floor's rate per second in one
    process, and ``verify_split_cpu`` its CPU seconds, both processes counted. Rates as median,
    min, max over the repeats, each run's verify over its floors measured right after it (the
    machine is noisy)."""
    data = _hashed_bytes(path)
    hex_digest = Hasher(key).hex_digest
    runs: dict[str, list[float]] = {"verify": [], "verify_chain_only": [], "hash_floor": [], "verify_cpu": [],
                                    "read_hash_floor_cpu": [], "verify_split": [], "verify_split_cpu": [],
                                    "read_hash_floor": []}
    for _ in range(max(3, repeats)):
        for name, check in (("verify", True), ("verify_chain_only", False)):
            _as_a_new_process()
            start, cpu = time.perf_counter(), time.process_time()
            report = verify(path, hmac_key=key, integrity_check=check, processes=1)
            runs[name].append(report.entries / (time.perf_counter() - start))
            if check:  # CPU seconds: what a busy machine's other processes do not inflate
                runs["verify_cpu"].append(report.entries / (time.process_time() - cpu))
            assert report.ok and report.entries == n
        _as_a_new_process()
        start, cpu, child_cpu = time.perf_counter(), time.process_time(), _children_cpu()
        report = verify(path, hmac_key=key, processes=2)
        runs["verify_split"].append(report.entries / (time.perf_counter() - start))
        runs["verify_split_cpu"].append(report.entries / (time.process_time() - cpu + _children_cpu() - child_cpu))
        assert report.ok and report.entries == n
        start = time.perf_counter()
        for item in data:
            hex_digest(item)
        runs["hash_floor"].append(n / (time.perf_counter() - start))
        floor_cpu, floor_wall = _read_hash_floor(path, data, key)
        runs["read_hash_floor_cpu"].append(floor_cpu)
        runs["read_hash_floor"].append(floor_wall)
    out: dict = {}
    for name, rates in runs.items():
        out[f"{name}_entries_per_s"] = round(statistics.median(rates))
        out[f"{name}_entries_per_s_min_max"] = [round(min(rates)), round(max(rates))]
    for name, floor in (("verify", "hash_floor"), ("verify_chain_only", "hash_floor"),
                        ("verify_cpu", "read_hash_floor_cpu"), ("verify_split", "read_hash_floor")):
        ratios = [v / f for v, f in zip(runs[name], runs[floor])]
        key_name = f"{name}_over_floor" if floor == "hash_floor" else f"{name}_over_{floor.removesuffix('_cpu')}"
        out[key_name] = {"median": round(statistics.median(ratios), 3), "min": round(min(ratios), 3),
                         "max": round(max(ratios), 3)}
    out["verify_goal_entries_per_s"] = GOAL_VERIFY
    return out


def _children_cpu() -> float:
    """CPU seconds of this process's reaped children (verify's second process)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _median(fn, repeats: int, d: Path, name: str, *args) -> float:
    return statistics.median(fn(d / f"{name}{r}.db", *args) for r in range(repeats))


def run(quick: bool = False) -> dict:
    repeats = 2 if quick else 5
    n_single = 300 if quick else 2000
    n_batch = 2000 if quick else 20000
    n_verify = 5000 if quick else 100_000
    with tempfile.TemporaryDirectory(prefix="bench-journal-") as tmp:
        d = Path(tmp)
        figures: dict = {
            "single_appends_per_s": round(_median(_single, repeats, d, "single", n_single)),
            "batch10_entries_per_s": round(_median(_batched, repeats, d, "b10", n_batch, 10)),
            "batch100_entries_per_s": round(_median(_batched, repeats, d, "b100", n_batch, 100)),
            "fsync_floor_commits_per_s": round(_median(_floor, repeats, d, "floor", n_single)),
        }
        big = d / "verify.db"
        _batched(big, n_verify, 1000)
        figures.update(_verify_figures(big, None, repeats, n_verify))
        keyed = d / "verify-hmac.db"
        _batched(keyed, n_verify, 1000, key=_KEY)
        figures.update({f"hmac_{k}": v for k, v in _verify_figures(keyed, _KEY, repeats, n_verify).items()
                        if k.startswith(("verify_", "hash_floor", "read_hash_floor"))})
        real = d / "real-run.db"
        n_real = _run_journal(real, shoes=1 if quick else 5)
        figures.update({f"real_run_{k}": v for k, v in _verify_figures(real, None, repeats, n_real).items()
                        if k.startswith(("verify_cpu", "verify_over", "verify_entries", "verify_split", "hash_floor",
                                         "read_hash_floor"))})
        figures["real_run_journal_entries"] = n_real
        figures["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        rates = []
        for _ in range(max(1, repeats - 1)):
            start = time.perf_counter()
            with checked_read(big) as read:
                count = sum(1 for _ in read.entries())
                assert read.report().ok and count == n_verify
            rates.append(count / (time.perf_counter() - start))
        figures["checked_read_entries_per_s"] = round(statistics.median(rates))
        figures["verify_journal_entries"] = n_verify
        figures["verify_journal_bytes"] = big.stat().st_size
    figures["settings"] = "WAL, synchronous=FULL, one writer; median of %d repeats" % repeats
    # The summary, on a real table's journal: verify as the command runs it (two processes on this
    # machine) per second, beside what any verify of it pays in one process (quick_check, reading,
    # hashing) per second; and one pass per CPU second (what other processes on a busy machine do
    # not inflate) beside that floor per CPU second. Each the median of each run's ratio.
    split, split_floor = figures["real_run_verify_split_entries_per_s"], figures["real_run_read_hash_floor_entries_per_s"]
    rate, floor = figures["real_run_verify_cpu_entries_per_s"], figures["real_run_read_hash_floor_cpu_entries_per_s"]
    figures["summary"] = [
        summary_row("journal verify as the command runs it (two processes), a real journal", split, "entries/s",
                    f">= {GOAL_VERIFY:,} entries/s", split >= GOAL_VERIFY, floor=split_floor,
                    ratio=figures["real_run_verify_split_over_read_hash_floor"]["median"],
                    spread=figures["real_run_verify_split_entries_per_s_min_max"], repeats=max(3, repeats)),
        summary_row("journal verify, one pass, a real journal, per CPU second", rate, "entries/s",
                    f">= {GOAL_VERIFY:,} entries/s", rate >= GOAL_VERIFY, floor=floor,
                    ratio=figures["real_run_verify_cpu_over_read_hash_floor"]["median"],
                    spread=figures["real_run_verify_cpu_entries_per_s_min_max"], repeats=max(3, repeats))]
    return figures


if __name__ == "__main__":
    print(json.dumps(run(quick="--quick" in sys.argv[1:]), indent=2))
