"""The ``shoectl`` command's entry point (``[project.scripts]``): ``controller.cli.main`` imported
and run under one guard, so that a stop (Ctrl-C) while the program is still loading is the same
clean stop as one while it runs, ``shoectl: interrupted`` and exit 130, never a traceback."""
from __future__ import annotations

import sys

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C


def main() -> int:
    try:
        from controller.cli.main import main as run  # noqa: PLC0415 - the import is what is guarded

        return run()
    except KeyboardInterrupt:
        sys.stderr.write("shoectl: interrupted\n")
        return EXIT_INTERRUPTED
