"""The line of a forced exit (a second stop signal) says what the command itself keeps: the
feed its cursor, the collector the broker's session. Both said ``shoectl run``'s "every committed
input is in the journal" (a floor operator's review). The command runs for real in a process of
its own; only its work is replaced by one that never stops, so that the second signal is needed."""
from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

SCRIPT = """
import sys, time
import {module} as target
def run(self, *args):
    print("ready", flush=True)
    time.sleep(600)
target.{cls}.run = run
from controller.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def forced_exit(module: str, cls: str, *argv: str) -> tuple[int, str]:
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(SCRIPT.format(module=module, cls=cls)), *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n", proc.stderr.read()
        proc.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, err.strip().splitlines()[-1]


def test_the_feeds_forced_exit_says_its_cursor_is_saved(five_entry_journal: Path) -> None:
    code, line = forced_exit("controller.floor.feed", "JournalFeed", "feed", "--journal", str(five_entry_journal),
                             "--broker", "mqtt://127.0.0.1:1")
    assert code == 143
    assert line == ("shoectl feed: stopped by SIGTERM: a second stop signal; exiting now (the cursor is saved; "
                    "what the broker had not acknowledged is published again by the next feed)")


def test_the_collectors_forced_exit_says_the_broker_keeps_what_was_not_committed(floor_db: str) -> None:
    code, line = forced_exit("controller.floor.collector", "Collector", "floor", "collect", "--broker",
                             "mqtt://127.0.0.1:1", "--db", floor_db)
    assert code == 143
    assert line == ("shoectl floor collect: stopped by SIGTERM: a second stop signal; exiting now (what was not "
                    "committed stays unacknowledged in the broker's session and comes again)")
