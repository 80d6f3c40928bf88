"""A new journal beside devices an older journal used (README, "Starting a table afresh", with the
devices left on): ``shoectl emulate --table`` in one process, two ``shoectl run`` one after the
other, each on its own journal. The devices keep their event counters (a real device keeps them
in non-volatile memory, docs/protocol.md E2), so the second table meets events acknowledged to
the first. It waited for them for ever in ``shuffling`` (an integrator review); it now deals,
and its journal says where it took the devices' events from."""
from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from controller.journal import JournalReader, verify

from .test_run_device_replaced import SHOECTL, start_emulator


def test_a_new_journal_deals_with_devices_an_older_journal_used(tmp_path: Path) -> None:
    emu, ports = start_emulator(tmp_path, tmp_path / "dealt.log")
    devices = [a for role in ("shuffler", "shoe") for a in ("--device", f"emulated-{role}@{ports[f'emulated-{role}']}")]
    try:
        for name in ("old.db", "new.db"):
            run = subprocess.run([*SHOECTL, "run", *devices, "--automated", "--journal", str(tmp_path / name),
                                  "--rounds", "2", "--seed", "1", "--display", "lines"],
                                 capture_output=True, text=True, timeout=90)
            assert run.returncode == 0, (name, run.stderr[-2000:])
    finally:
        emu.send_signal(signal.SIGTERM)
        emu.communicate(timeout=20)
    with JournalReader.open(tmp_path / "new.db") as r:
        entries = list(r.entries())
    said = [e.payload.get("reason") or "" for e in entries if e.kind == "input.status"]
    assert any("were acknowledged before this host had any (another journal or host): its events are taken "
               "from" in s for s in said), said
    assert sum(e.kind == "round_result" for e in entries) >= 2
    assert verify(tmp_path / "new.db").ok
