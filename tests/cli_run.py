"""Running the ``shoectl`` CLI in-process for tests, and the files it takes.

``run(capsys, *argv)`` / ``run_captured(*argv)``: exit code, stdout, stderr; ``dealt_journal(path,
*options)``: a journal dealt by ``shoectl run``; ``preset_with_decks(path, preset, decks)``: a
shipped preset written to ``path`` with another number of decks, for ``--submission``."""
from __future__ import annotations

import importlib.resources
import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from controller.cli import main as cli_main


def _exit_code(argv: tuple[str, ...]) -> int:
    """``main(argv)``'s exit code; argparse's own errors exit through SystemExit, like a process.
    ``COMMAND_MODULES`` is looked up at call time, so a test's monkeypatched list applies."""
    try:
        return cli_main.main(list(argv))
    except SystemExit as exc:
        return exc.code


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """Run the CLI in-process and return (exit code, stdout, stderr)."""
    code = _exit_code(argv)
    out, err = capsys.readouterr()
    return code, out, err


def run_captured(*argv: str) -> tuple[int, str, str]:
    """Run the CLI in-process with its output captured here, for fixtures that have no ``capsys``:
    (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = _exit_code(argv)
    return code, out.getvalue(), err.getvalue()


def dealt_journal(journal: Path, *options: str) -> Path:
    """``journal`` written by ``shoectl run --speed max --display lines *options`` on the built-in
    emulated table, run in this process: the same code and the same ptys as a ``shoectl run``
    process, without a new interpreter and its imports for every journal a test needs."""
    code, _, err = run_captured("run", "--journal", str(journal), "--speed", "max", "--display", "lines", *options)
    assert code == 0, err[-3000:]
    return journal


def preset_with_decks(path: Path, preset: str, decks: int) -> Path:
    """The shipped preset ``preset`` written to ``path`` with ``decks`` decks instead of eight (a
    shorter shoe, or one whose composition swings sooner); ``path`` is returned."""
    text = (importlib.resources.files("controller.rules") / "presets" / f"{preset}.toml").read_text(encoding="utf-8")
    assert "decks = 8" in text, preset
    path.write_text(text.replace("decks = 8", f"decks = {decks}"), encoding="utf-8")
    return path


def journal_of_a_clock_stepped_back(tmp_path: Path, shoes: int = 1) -> Path:
    """A ``dealt_journal`` (``shoes`` shoes of two decks, seed 5, no edge monitor) whose
    wall clock steps back an hour after its first 100 readings, the steady clock left alone, as an
    NTP step leaves it: one ``clock_step`` in its first shoe."""
    from datetime import datetime, timedelta, timezone

    from controller.journal import store

    readings = 0

    def stepped_clock() -> datetime:
        nonlocal readings
        readings += 1
        now = datetime.now(timezone.utc)
        return now - timedelta(hours=1) if readings > 100 else now

    real = store.utc_now
    store.utc_now = stepped_clock
    try:
        return dealt_journal(tmp_path / "table.db", "--shoes", str(shoes), "--seed", "5", "--no-edge-monitor",
                             "--submission", str(preset_with_decks(tmp_path / "two.toml", "minibaccarat", 2)))
    finally:
        store.utc_now = real
