"""Running the ``shoectl`` CLI in-process for tests."""
from __future__ import annotations

from controller.cli import main as cli_main


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """Run the CLI in-process and return (exit code, stdout, stderr); argparse's own errors exit
    through SystemExit, like a process. ``COMMAND_MODULES`` is looked up at call time, so a
    test's monkeypatched list applies."""
    try:
        code = cli_main.main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err
