"""Crash soak: SIGKILL ``shoectl run`` at random moments, again and again, against one external
emulated table; then prove that the journal lost nothing, doubled nothing and still adds up.

``python -m benchmarks.soak_crash [--kills N] [--seed S] [--keep DIR] [--faults SPEC]
[--submission NAME] [--shoe-profile NAME]`` (run from the project root; ``make soak`` runs it with
the default 100 kills; ``--faults`` gives the emulated table line faults as well; ``--submission``
deals another game than ``shoectl run``'s default; ``--shoe-profile emulated-autoshoe`` makes the
table one automatic shoe). docs/hardening.md explains the figures.

1. ``shoectl emulate --table --speed max --dealt-log FILE`` serves a shuffler and a shoe (or the
   one automatic shoe) on ptys for the whole soak; its dealt log is the ground truth of every card that left the shoe.
2. ``shoectl run`` (the automated dealer, on one journal) is started, killed with SIGKILL at a
   random moment, and started again, ``--kills`` times: a quarter of the kills while it starts
   (journal, replay, handshakes), the others after a random number of its journal records
   (mid-round, between settlements, in a shuffle). A controller that exits by itself, writes no
   record for a minute, or a table that stops dealing, is a defect.
3. A last ``shoectl run --rounds R`` must finish by itself, cleanly.
4. The checks (``benchmarks.soak_checks``), all through the CLI (``shoectl journal verify``,
   ``export`` and ``replay``):
   - the journal verifies;
   - the shoe's CARD_READs in the journal are the dealt log, card for card, in order: none
     lost, none twice;
   - every wager placed is staked in exactly one round or returned before one (none lost across
     a restart, none staked twice), and every wager staked in a round is settled (won, lost,
     pushed, or returned when the round is void) exactly once; no round is started or decided
     twice.

Exit status 0 when every check holds, 1 on a defect (it says which, and keeps the directory with
the journal, the dealt log and the controller's output), 2 for a usage error.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import selectors
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.soak_checks import SHOECTL, Defect, check_journal
from benchmarks.soak_table import Table
from controller.cli.run_options import fault_spec
from controller.rules.errors import SubmissionError
from controller.rules.submission import resolve_submission
from firmware_bridge.profiles import ProfileError, resolve_profile

STARTUP_KILL_S = (0.05, 2.5)  # a kill "at a random time" comes this long (uniform) after the start
KILL_AFTER_LINES = 300         # a kill "after a random record" comes after 1 to this many records
HANG_S = 60.0                  # a controller with no record this long after its start hangs
STALL_CYCLES = 10              # this many "after a random record" lives in a row without a card: a hang
FINAL_ROUNDS = 10
FINAL_TIMEOUT_S = 300.0


def run_command(table: Table, journal: Path, seed: int, *extra: str) -> list[str]:
    game = ["--submission", table.submission] if table.submission else []
    return [*SHOECTL, "run", *table.device_args(), "--journal", str(journal), "--json", "--seed", str(seed),
            *game, *extra]


class Controller:
    """One ``shoectl run``, its JSON lines counted as they come (appended to ``run.out``)."""

    def __init__(self, command: list[str], work: Path) -> None:
        self._out = open(work / "run.out", "ab")  # noqa: SIM115 - closed in kill()
        self._err_path = work / "run.err"
        self._err = open(self._err_path, "wb")  # noqa: SIM115
        self.started = time.monotonic()
        self.proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=self._err)
        self.lines = 0
        self.first_line_s: float | None = None

    def read_until(self, lines: int, deadline: float) -> None:
        """Count output lines until ``lines`` have come, the deadline passes or the process ends."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while self.lines < lines and (left := deadline - time.monotonic()) > 0:
                if not sel.select(left):
                    continue
                data = os.read(fd, 65536)
                if not data:
                    return
                self._out.write(data)
                if self.first_line_s is None and b"\n" in data:
                    self.first_line_s = time.monotonic() - self.started
                self.lines += data.count(b"\n")

    def kill(self) -> int | None:
        """SIGKILL it unless it already exited; return its exit status if it did."""
        code = self.proc.poll()
        if code is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=30)
        if self.proc.stdout is not None:
            self._out.write(self.proc.stdout.read())
            self.proc.stdout.close()
        self._out.close()
        self._err.close()
        return code

    def stderr_tail(self) -> str:
        return self._err_path.read_text(encoding="utf-8", errors="replace")[-3000:]


def kill_cycles(table: Table, work: Path, journal: Path, kills: int, rng: random.Random,
                progress: dict[str, float]) -> dict[str, list[float]]:
    """Start, SIGKILL and restart the controller ``kills`` times.

    A quarter of the kills come at a random time up to ``STARTUP_KILL_S`` after the start (most
    while it opens and replays the journal and shakes hands with the devices); the others right
    after a random number (1 to ``KILL_AFTER_LINES``) of the controller's journal records,
    wherever they fall: between a card and its decision, between two settlements, in a shuffle.
    Returns, by kind of kill, the seconds each controller lived, and the seconds to its first
    record; ``progress`` holds the kills so far."""
    lived: dict[str, list[float]] = {"at a random time": [], "after a random record": [], "first record": []}
    stalled = 0
    for cycle in range(kills):
        before = table.cards_dealt()
        controller = Controller(run_command(table, journal, rng.randrange(1 << 30)), work)
        try:
            if rng.random() < 0.25:
                kind = "at a random time"
                controller.read_until(1 << 62, controller.started + rng.uniform(*STARTUP_KILL_S))
            else:
                kind = "after a random record"
                controller.read_until(rng.randint(1, KILL_AFTER_LINES), controller.started + HANG_S)
                if controller.lines == 0 and controller.proc.poll() is None:
                    raise Defect(f"restart {cycle + 1}: no journal record in {HANG_S:g} s: the "
                                 "controller hangs")
        finally:  # also when the soak itself is interrupted
            code = controller.kill()
        if code is not None:
            raise Defect(f"restart {cycle + 1}: the controller exited by itself with status "
                         f"{code} before its SIGKILL:\n{controller.stderr_tail()}")
        lived[kind].append(time.monotonic() - controller.started)
        progress["kills"] = cycle + 1
        if controller.first_line_s is not None:
            lived["first record"].append(controller.first_line_s)
        table.check_alive()
        stalled = 0 if table.cards_dealt() > before or kind == "at a random time" else stalled + 1
        if stalled >= STALL_CYCLES:
            raise Defect(f"no card dealt in {stalled} restarts in a row (restart {cycle + 1}): "
                         "the table stopped dealing")
        if (cycle + 1) % 10 == 0:
            print(f"  {cycle + 1:>4} kills  {table.cards_dealt():>7,} cards dealt", flush=True)
    return lived


def finish(table: Table, journal: Path, seed: int, work: Path) -> None:
    """A last controller that must finish ``FINAL_ROUNDS`` rounds and exit 0 by itself."""
    try:
        done = subprocess.run(run_command(table, journal, seed, "--rounds", str(FINAL_ROUNDS)),
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                              timeout=FINAL_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        raise Defect(f"the final run did not finish {FINAL_ROUNDS} rounds in {FINAL_TIMEOUT_S:g} s") from None
    (work / "final.err").write_text(done.stderr, encoding="utf-8")
    if done.returncode != 0:
        raise Defect(f"the final run exited with status {done.returncode}:\n{done.stderr[-3000:]}")


def soak(kills: int, seed: int, work: Path, progress: dict[str, float],
         faults: str | None = None, submission: str | None = None,
         shoe_profile: str | None = None) -> dict:  # type: ignore[type-arg]
    """The whole soak; ``progress`` says how far it got (kills, cards, seconds) if it stops."""
    rng = random.Random(seed)
    journal = work / "journal.db"
    start = time.monotonic()
    table = Table(work, seed, faults, submission, shoe_profile)
    try:
        lived = kill_cycles(table, work, journal, kills, rng, progress)
        finish(table, journal, seed, work)
    finally:
        table.stop()
        progress.update(cards=table.cards_dealt(), seconds=round(time.monotonic() - start, 1))
    soaked = time.monotonic() - start
    return {"kills": sum(len(lived[k]) for k in ("at a random time", "after a random record")),
            **check_journal(journal, table.dealt_log), "seconds": round(soaked, 1), "seed": seed,
            "controller_seconds": {kind: _spread(times) for kind, times in lived.items()}}


def _spread(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    return {"n": len(values), "min": round(min(values), 2),
            "median": round(statistics.median(values), 2), "max": round(max(values), 2)}


def _faults(text: str) -> str:
    """``--faults``, checked as ``shoectl emulate`` will take it (with the soak's seed added):
    a bad spec is a usage error here (exit 2), not an emulator that does not start."""
    if fault_spec(text).seed is not None:
        raise argparse.ArgumentTypeError("give the faults without seed=: the soak's --seed seeds them as well")
    fault_spec(f"{text},seed=0")
    return text


def _submission(text: str) -> str:
    """``--submission``, checked as ``shoectl run`` will take it: a preset's name, or a file (made
    absolute); anything else is a usage error here, not a controller that exits at every start."""
    try:
        resolve_submission(text)
    except SubmissionError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return os.path.abspath(text) if os.path.exists(text) else text


def _shoe_profile(text: str) -> str:
    """``--shoe-profile``: a shoe's profile, checked here (a usage error, not an emulator that
    cannot start)."""
    try:
        profile = resolve_profile(text)
    except ProfileError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if profile.kind not in ("shoe", "shuffler-shoe"):
        raise argparse.ArgumentTypeError(f"{profile.name}: a {profile.kind}, not a shoe")
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.soak_crash",
                                 description="Crash soak (docs/hardening.md).")
    ap.add_argument("--kills", type=int, default=100, metavar="N", help="SIGKILLs (default 100)")
    ap.add_argument("--seed", type=int, default=1, metavar="S")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR (created) and keep it")
    ap.add_argument("--json", metavar="FILE", help="also write the figures to FILE")
    ap.add_argument("--faults", type=_faults, metavar="SPEC", help="the emulated table's faults as well, e.g. "
                    "unplug-every=300ms,unplug-for=100ms (shoectl emulate --faults; the soak's seed is added)")
    ap.add_argument("--submission", type=_submission, metavar="NAME|FILE",
                    help="the Rules Submission each shoectl run deals (shoectl run --submission; default: run's own)")
    ap.add_argument("--shoe-profile", type=_shoe_profile, metavar="NAME", help="the emulated table's shoe (shoectl emulate --shoe-profile; "
                    "emulated-autoshoe: one automatic shoe, no separate shuffler)")
    args = ap.parse_args(argv)
    if args.kills < 1:
        ap.error("--kills must be at least 1")
    if args.keep:
        work = Path(args.keep)
        work.mkdir(parents=True, exist_ok=False)
    else:
        work = Path(tempfile.mkdtemp(prefix="shoectl-crash-soak-"))
    print(f"crash soak: {args.kills} SIGKILLs of shoectl run, seed {args.seed}"
          f"{f', emulator faults {args.faults}' if args.faults else ''}"
          f"{f', submission {args.submission}' if args.submission else ''}"
          f"{f', shoe {args.shoe_profile}' if args.shoe_profile else ''}, in {work}", flush=True)
    progress: dict[str, float] = {"kills": 0}
    try:
        figures = soak(args.kills, args.seed, work, progress, args.faults, args.submission, args.shoe_profile)
    except Defect as exc:
        print(f"DEFECT: {exc}\n(journal, dealt log and outputs kept in {work})\n"
              f"so far: {json.dumps(progress)}", file=sys.stderr)
        return 1
    print(json.dumps(figures, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2), encoding="utf-8")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
