"""``Table``: the external emulated table a soak deals on (``shoectl emulate --table`` in a process
of its own, on pseudo-terminals), for the crash soak's whole run or one fault-soak run at an
automatic shoe."""
from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path

from benchmarks.soak_checks import SHOECTL, Defect

__all__ = ["Table"]


class Table:
    """``shoectl emulate --table`` in a process of its own, serving in ``work/dev`` with its dealt
    log in ``work/dealt.log`` (its devices' ``ports`` by profile), and the Rules Submission the
    controllers deal on it (None: ``shoectl run``'s default). ``faults`` without the seed (``seed``
    is added), ``shoe_profile`` the table's shoe (``emulate --shoe-profile``), ``speed`` its
    mechanisms' (``emulate --speed``)."""

    def __init__(self, work: Path, seed: int, faults: str | None = None, submission: str | None = None,
                 shoe_profile: str | None = None, speed: str = "max") -> None:
        self.submission = submission
        self.dealt_log = work / "dealt.log"
        (work / "dev").mkdir()
        self._stderr = open(work / "emulator.err", "w")  # noqa: SIM115 - open for the table's life
        self.proc = subprocess.Popen(
            [*SHOECTL, "emulate", "--table", "--seed", str(seed), "--speed", speed,
             "--dealt-log", str(self.dealt_log), "--dir", str(work / "dev"),
             *(["--faults", f"{faults},seed={seed}"] if faults else []),
             *(["--shoe-profile", shoe_profile] if shoe_profile else [])],
            stdout=subprocess.PIPE, stderr=self._stderr, text=True)
        first = self.proc.stdout.readline() if self.proc.stdout else ""
        try:
            self.ports = {d["profile"]: d["port"] for d in json.loads(first)["devices"]}
        except (ValueError, KeyError):
            self.stop()
            raise Defect(f"the emulator did not start (see {work / 'emulator.err'})") from None

    def device_args(self) -> list[str]:
        """``shoectl run``'s ``--device`` options for every device the table serves, and ``--automated``
        (the automated dealer and floorperson drive an emulated table)."""
        return [*(f"--device={profile}@{port}" for profile, port in self.ports.items()), "--automated"]

    def check_alive(self) -> None:
        if self.proc.poll() is not None:
            raise Defect(f"the emulator exited with status {self.proc.returncode}")

    def cards_dealt(self) -> int:
        try:
            with open(self.dealt_log, "rb") as f:
                return sum(1 for _ in f)
        except FileNotFoundError:
            return 0

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.proc.stdout.close()
        self._stderr.close()
