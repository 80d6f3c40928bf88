"""``shoectl run`` when its journal cannot grow, through the real path (a process, the built-in
emulator, SQLite on a real file): the kernel refuses the journal's writes past a size, as a full
disk would. The process's file size limit (RLIMIT_FSIZE) does it without a filesystem of its own:
a write past the limit fails with EFBIG (Python ignores SIGXFSZ), as one on a full disk fails with
ENOSPC; SQLite then fails the append.

The table must stop rather than deal a card it cannot record, say so in one line (exit 2: the
systemd unit does not restart it, docs/deployment.md), and leave a journal that verifies, from
which a later start, with room to write, resumes and deals on."""
from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

from controller.journal import JournalReader, verify

SHOECTL = [sys.executable, "-m", "controller.cli.main"]
HANG = 120  # seconds before a run is declared hung (never a performance limit)
ROOM = 600 * 1024  # bytes any file of the first run may reach: a few rounds' worth of WAL


def hashes(journal: Path) -> list[str]:
    with JournalReader.open(journal) as reader:
        return [e.hash for e in reader.entries()]


def test_a_journal_that_cannot_grow_stops_the_table_in_one_line_and_a_restart_resumes(tmp_path: Path) -> None:
    journal = tmp_path / "journal.db"
    run = [*SHOECTL, "run", "--journal", str(journal), "--speed", "max", "--seed", "3", "--display", "lines"]

    def no_room() -> None:  # in the child, before it runs shoectl
        resource.setrlimit(resource.RLIMIT_FSIZE, (ROOM, ROOM))

    full = subprocess.run([*run, "--shoes", "3"], capture_output=True, text=True, timeout=HANG,
                          preexec_fn=no_room)
    assert full.returncode == 2, full.stderr[-2000:]
    assert "Traceback" not in full.stderr
    last = full.stderr.strip().splitlines()[-1]
    assert last.startswith(f"shoectl run: error: {journal}: cannot append: ") and last.endswith("nothing was stored")
    assert "round   1" in full.stdout  # it dealt until the journal could not grow, not from the start
    stored = verify(journal)
    assert stored.ok, stored
    before = hashes(journal)
    assert before

    again = subprocess.run([*run, "--rounds", "5"], capture_output=True, text=True, timeout=HANG)
    assert again.returncode == 0, again.stderr[-2000:]
    assert again.stdout.startswith(f"resumed from {journal}: ")
    assert verify(journal).ok
    after = hashes(journal)
    assert after[:len(before)] == before and len(after) > len(before)  # nothing lost, and it dealt on
