"""Running the ``shoectl`` CLI in-process for tests."""
from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

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


def run_captured(*argv: str) -> tuple[int, str, str]:
    """Run the CLI in-process with its output captured here, for fixtures that have no ``capsys``:
    (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = cli_main.main(list(argv))
        except SystemExit as exc:
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def dealt_journal(journal: Path, *options: str) -> Path:
    """``journal`` written by ``shoectl run --speed max --display lines *options`` on the built-in
    emulated table, run in this process: the same code and the same ptys as a ``shoectl run``
    process, without a new interpreter and its imports for every journal a test needs."""
    code, _, err = run_captured("run", "--journal", str(journal), "--speed", "max", "--display", "lines", *options)
    assert code == 0, err[-3000:]
    return journal
