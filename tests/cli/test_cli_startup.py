"""What a short-lived command loads: a control client or a journal reader starts without the
logging library (structlog, which loads rich and asyncio: about 0.15 s of every process) and
without the journal's writer. Checked in a fresh interpreter, by the modules it ends up with."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

_PROBE = """
import contextlib, io, json, sys
from controller.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
print(json.dumps(sorted(sys.modules)))
"""


def _modules_after(*argv: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.parametrize("argv", [("ctl", "--help"), ("journal", "verify", "--help"), ("operators", "--help")])
def test_short_commands_do_not_load_the_logging_library_or_the_writer(argv: tuple[str, ...]) -> None:
    loaded = _modules_after(*argv)
    assert "controller.cli.main" in loaded  # the probe ran the command line
    assert not {"structlog", "controller.journal.store"} & loaded, sorted({"structlog", "controller.journal.store"} & loaded)


def test_the_control_client_does_not_load_the_terminal_display() -> None:
    loaded = _modules_after("ctl", "--help")
    assert "controller.cli.cmd_ctl" in loaded
    assert not {"rich", "controller.table.display"} & loaded


def test_version_reads_the_package_metadata_only_when_asked() -> None:
    assert "importlib.metadata" not in _modules_after("ctl", "--help")
    done = subprocess.run([sys.executable, "-m", "controller.cli.main", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("shoectl ") and done.stderr == ""



def test_a_stop_while_the_command_is_still_loading_is_a_clean_stop(capsys, monkeypatch) -> None:
    """Ctrl-C in the first tenth of a second, the command's modules still loading, printed a
    KeyboardInterrupt traceback (a review, on this machine: 20-50 ms after the start); now it is
    the same clean stop as later: one line, exit 130. The instant of a signal cannot be aimed at
    from outside (a stop during the interpreter's own start-up is the interpreter's), so the
    interrupt is raised where the import of the command line lands."""
    import types

    from controller.cli import entry

    class Interrupted(types.ModuleType):
        def __getattr__(self, name: str) -> object:
            raise KeyboardInterrupt

    monkeypatch.setitem(sys.modules, "controller.cli.main", Interrupted("controller.cli.main"))
    assert entry.main() == 130
    assert capsys.readouterr() == ("", "shoectl: interrupted\n")
