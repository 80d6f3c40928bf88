"""Fault-mix soak: ``shoectl run --rounds R`` on the built-in emulator (or on an automatic shoe
served by ``shoectl emulate --table``) under mixes of faults, each with its lines unplugged again
and again, at several seeds, a few runs at a time; every run must finish by itself, and its
journal must still add up.

``python -m benchmarks.soak_faults [--seeds N] [--rounds R] [--jobs J] [--limit S] [--speed X] [--keep DIR]
[--random N [--random-seed S]]`` (run from the project root; ``make soak`` runs it after the crash
soak). docs/hardening.md explains it. ``--random N`` runs N mixes drawn at random instead of the
fixed ones (``benchmarks.fault_mixes``): faults combined as no fixed mix combines them.

What it finds is the table waiting for ever: a prompt, a command or an event lost with a line at
the wrong moment, which nothing sends again (a DELIVER, a SHOE_LOADED, a CLOSE DOOR, a RESET and a
DELIVER refused by a restarted shuffler were, each found by a run of these mixes). A run is a defect when it does not finish its rounds
within ``--limit`` seconds (the state it waits in and its last records are printed), exits with
another status than 0, or leaves a journal that does not verify, whose CARD_READs are not the
emulator's dealt log card for card, or whose money does not add up (the crash soak's checks:
``benchmarks.soak_crash``).

Not in the mixes, by design: lines noisy *and* unplugged at once (each link's reconnect backs off to
5 s after failed handshakes, so such a run is slow, not stuck), a misread card (it holds the table
until a floorperson enters it; the automated one does not) and a card missing from every shuffle
(the automated floorperson closes the table after three reshuffles, exit 1).

Exit status 0 when every run holds, 1 on a defect (its directory is kept), 2 for a usage error.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

from benchmarks.fault_mixes import AUTOSHOE, random_mixes
from benchmarks.soak_checks import SHOECTL, Defect, check_journal, shoectl_lines
from benchmarks.soak_table import Table
from controller.cli.run_options import emulator_speed

UNPLUG = "unplug-every=300ms,unplug-for=100ms"


class Mix(NamedTuple):
    """A mix of faults (without the seed) for a Rules Submission, run at every seed: on the built-in
    emulator, or with ``shoe_profile`` on a table of that one device (``shoectl emulate --table
    --shoe-profile``, driven by ``shoectl run --device``)."""

    faults: str
    submission: str
    shoe_profile: str | None = None


MIXES: tuple[tuple[str, ...], ...] = (
    ("unplug-every=250ms,unplug-for=100ms", "minibaccarat"),
    ("corrupt=0.01,drop=0.002,dup=0.02", "minibaccarat"),
    ("corrupt=0.002,drop=0.0005,dup=0.005,both-ways=1", "minibaccarat"),  # the host's commands and acks too
    (f"corrupt=0.002,drop=0.0005,dup=0.005,both-ways=1,{UNPLUG}", "ez-baccarat"),
    ("jam-at=40,door-open-at=90,unplug-every=350ms,unplug-for=120ms", "minibaccarat"),
    (f"reset-at=50,door-open-at=120,{UNPLUG}", "minibaccarat"),
    (f"corrupt=0.002,drop=0.0005,dup=0.005,both-ways=1,reset-at=50,door-open-at=120,{UNPLUG}",
     "21-baccarat"),  # the shoe's prompts lost from one shoe's end to the next load (docs/hardening.md)
    (f"reset-at=1,{UNPLUG}", "minibaccarat"),                 # the shuffler restarts in the shoe's preparation
    (f"reset-at=2,jam-at=3,{UNPLUG}", "ez-baccarat"),
    (f"door-open-at=1,{UNPLUG}", "minibaccarat"),
    (f"face-up-at=35,{UNPLUG}", "minibaccarat"),
    (f"cover-at=60,refuse-display=UNLOAD,{UNPLUG}", "minibaccarat"),  # the UNLOAD refused (NAK BUSY) once
    (f"dealer-extra-at=40,{UNPLUG}", "minibaccarat"),
    (f"dealer-expose-at=40,{UNPLUG}", "minibaccarat"),
    (UNPLUG, "midibaccarat"),
    (UNPLUG, "ez-baccarat"),
    (UNPLUG, "21-baccarat"),
    # an automatic shoe: the shuffle asked for again at a reconnect, its stack's DELIVER and the last
    # shoe's UNLOAD on the one line that drops (docs/hardening.md)
    (f"corrupt=0.002,drop=0.0005,dup=0.005,both-ways=1,{UNPLUG}", "minibaccarat", AUTOSHOE),
    (f"reset-at=50,door-open-at=120,{UNPLUG}", "ez-baccarat", AUTOSHOE),
)


def one_run(work: Path, faults: str, submission: str, seed: int, rounds: int, limit_s: float,
            speed: str = "max", shoe_profile: str | None = None) -> dict:  # type: ignore[type-arg]
    """One ``shoectl run`` in ``work`` (created); its figures, or ``Defect``. With ``shoe_profile``
    the faults and the speed go to ``shoectl emulate --table`` serving that one device."""
    work.mkdir(parents=True)
    journal, dealt = work / "journal.db", work / "dealt.log"
    argv = [*SHOECTL, "run", "--journal", str(journal), "--rounds", str(rounds), "--seed", str(seed),
            "--submission", submission, "--json"]
    emulator = ["--speed", speed, "--faults", f"{faults},seed={seed}", "--dealt-log", str(dealt)]
    started = time.monotonic()
    with open(work / "stdout", "w") as out, open(work / "stderr", "w") as err:
        table = Table(work, seed, faults, shoe_profile=shoe_profile, speed=speed) if shoe_profile else None
        argv += table.device_args() if table else emulator
        try:
            status = subprocess.run(argv, stdout=out, stderr=err, timeout=limit_s).returncode
        except subprocess.TimeoutExpired:
            raise Defect(f"did not finish {rounds} rounds in {limit_s:g} s; {_where(journal)}") from None
        finally:
            if table:
                table.stop()
    seconds = time.monotonic() - started
    if status != 0:
        said = (work / "stderr").read_text(encoding="utf-8", errors="replace").strip().splitlines()
        raise Defect(f"exited with status {status}: {said[-1] if said else 'nothing said'}")
    checked = check_journal(journal, dealt)
    return {"seconds": round(seconds, 1), "cards": checked["cards"], "rounds": checked["rounds"],
            "wagers": sum(checked["wagers"].values())}


def _where(journal: Path) -> str:
    """The state a stuck table waits in and its last records other than link changes."""
    try:
        entries = shoectl_lines("export", "--no-verify", str(journal))  # what it holds, for a look
    except Defect as exc:
        return str(exc)
    states = [e["payload"]["state"] for e in entries if e["kind"] == "resumed"]
    shown = [f"{e['seq']} {e['kind']} {json.dumps(e['payload'])[:120]}" for e in entries
             if e["kind"] not in ("input.status", "fault", "fault_cleared")][-6:]
    return (f"{len(entries)} entries, last resumed in {states[-1] if states else '-'}; last records:\n  "
            + "\n  ".join(shown))


def soak(work: Path, seeds: int, rounds: int, jobs: int, limit_s: float, speed: str = "max",
         mixes: tuple[tuple[str | None, ...], ...] | None = None) -> tuple[list[dict], list[str]]:  # type: ignore[type-arg]
    """Every mix (``MIXES`` unless given) at every seed; (the figures of the runs that held, the defects)."""
    mixes = MIXES if mixes is None else mixes
    runs = [(Mix(*mix), 1000 * (m + 1) + s) for m, mix in enumerate(mixes) for s in range(1, seeds + 1)]
    held: list[dict] = []  # type: ignore[type-arg]
    defects: list[str] = []

    def run(job: tuple[Mix, int]) -> None:
        mix, seed = job
        where = work / f"seed-{seed}"
        named = f"{mix.faults} {mix.submission}" + (f" on {mix.shoe_profile}" if mix.shoe_profile else "")
        try:
            figures = one_run(where, mix.faults, mix.submission, seed, rounds, limit_s, speed, mix.shoe_profile)
        except Defect as exc:
            defects.append(f"{named} seed={seed} ({where}): {exc}")
            print(f"DEFECT {named} seed={seed}", flush=True)
            return
        held.append({**mix._asdict(), "seed": seed, **figures})
        shutil.rmtree(where, ignore_errors=True)

    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(run, runs))
    return held, defects


def _speed(text: str) -> str:
    """``--speed``, refused here as ``shoectl run`` would refuse it (exit 2), passed on as written."""
    emulator_speed(text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.soak_faults", description="Fault-mix soak (docs/hardening.md).")
    ap.add_argument("--seeds", type=int, default=3, metavar="N", help="seeds per mix (default 3)")
    ap.add_argument("--rounds", type=int, default=100, metavar="R",
                    help="rounds per run (default 100: past a shoe's end, so a reshuffle, cut and load too)")
    ap.add_argument("--jobs", type=int, default=3, metavar="J", help="runs at a time (default 3)")
    ap.add_argument("--limit", type=float, default=240.0, metavar="S", help="seconds a run may take (default 240)")
    ap.add_argument("--speed", type=_speed, default="max", metavar="X",
                    help="the emulator's speed (default max; e.g. 20: shuffles take time, lines drop during them)")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR (created) and keep it")
    ap.add_argument("--random", type=int, metavar="N", help="N mixes drawn at random instead of the fixed ones")
    ap.add_argument("--random-seed", type=int, default=1, metavar="S",
                    help="the seed the random mixes are drawn from (default 1; the same seed, the same mixes)")
    args = ap.parse_args(argv)
    if min(args.seeds, args.rounds, args.jobs) < 1 or not args.limit > 0:
        ap.error("--seeds, --rounds and --jobs must be at least 1, --limit above 0")
    if args.random is not None and args.random < 1:
        ap.error("--random must be at least 1")
    mixes = MIXES if args.random is None else random_mixes(args.random, args.random_seed)
    drawn = "" if args.random is None else f" drawn at random (--random-seed {args.random_seed})"
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="shoectl-fault-soak-"))
    work.mkdir(parents=True, exist_ok=not args.keep)  # mkdtemp made it already
    print(f"fault soak: {len(mixes)} mixes{drawn} x {args.seeds} seeds, {args.rounds} rounds each, {args.jobs} "
          f"at a time, in {work}", flush=True)
    started = time.monotonic()
    held, defects = soak(work, args.seeds, args.rounds, args.jobs, args.limit, args.speed, mixes)
    seconds = [r["seconds"] for r in held]
    print(json.dumps({"runs": len(held) + len(defects), "held": len(held), "defects": len(defects),
                      "cards": sum(r["cards"] for r in held), "rounds": sum(r["rounds"] for r in held),
                      "slowest_run_s": max(seconds, default=0), "seconds": round(time.monotonic() - started, 1)},
                     indent=2))
    if defects:
        print("\n".join(f"DEFECT: {d}" for d in defects), file=sys.stderr)
        return 1
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
