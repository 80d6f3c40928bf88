"""A table of one device end to end (``run_one_device_table``): ``shoectl emulate --table`` serving
that device alone, driven by ``shoectl run --device profile@PORT``."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

SHOECTL = [sys.executable, "-m", "controller.cli.main"]


def run_one_device_table(tmp_path: Path, emulate_args: list[str], profile: str, seed: int) -> Path:
    """Serve ``shoectl emulate --table *emulate_args`` (one device, ``profile``, with a dealt log in
    ``tmp_path``), drive it with ``shoectl run --device profile@PORT --shoes 2 --json`` and return
    the journal; both commands must exit 0."""
    (tmp_path / "dev").mkdir()
    emu = subprocess.Popen([*SHOECTL, "emulate", "--table", *emulate_args, "--seed", str(seed), "--speed", "max",
                            "--dealt-log", str(tmp_path / "dealt.log"), "--dir", str(tmp_path / "dev")],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        devices = json.loads(emu.stdout.readline())["devices"]
        assert [d["profile"] for d in devices] == [profile]  # one device
        journal = tmp_path / "journal.db"
        run = subprocess.run([*SHOECTL, "run", "--device", f"{profile}@{devices[0]['port']}", "--journal",
                              str(journal), "--shoes", "2", "--seed", str(seed), "--json", "--automated"],
                             capture_output=True, text=True, timeout=180)
        assert run.returncode == 0, run.stderr[-3000:]
    finally:
        emu.send_signal(signal.SIGTERM)
        _, err = emu.communicate(timeout=20)
    assert emu.returncode == 0, err[-2000:]
    return journal
