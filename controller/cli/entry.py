"""The ``shoectl`` command's entry point (``[project.scripts]``): ``controller.cli.main`` imported
and run under one guard, so that a stop (Ctrl-C) while the program is still loading is the same
clean stop as one while it runs, ``shoectl: interrupted`` and exit 130, never a traceback."""
from __future__ import annotations

import signal
import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C
# The commands that run until stopped, whose SIGHUP opens the log file again (``cli.stopping``):
# until that handler is installed, after the imports, SIGHUP's default ended them at once, which
# systemd counts as a clean exit, so the unit was not restarted (a review of signals).
LONG_RUNNING = frozenset({("run",), ("feed",), ("emulate",), ("scoreboard",), ("floor", "collect")})


def main() -> int:
    if tuple(sys.argv[1:2]) in LONG_RUNNING or tuple(sys.argv[1:3]) in LONG_RUNNING:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        from controller.cli.main import main as run  # noqa: PLC0415 - the import is what is guarded

        return run()
    except KeyboardInterrupt:
        sys.stderr.write("shoectl: interrupted\n")
        return EXIT_INTERRUPTED
