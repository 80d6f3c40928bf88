"""The CLI's own surface: ``--help`` for every command, ``--version``, a command group without a
subcommand, and no abbreviated options. Commands are discovered from the parser, so a command
added later is covered without editing this file."""
from __future__ import annotations

import argparse
import errno
import importlib.metadata
import subprocess
import sys
from collections.abc import Iterator

import pytest

from controller.cli.main import build_parser
from cli_run import run


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name (aliases of one parser listed once)."""
    out: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen: set[int] = set()
            for name, child in action.choices.items():
                if id(child) not in seen:
                    seen.add(id(child))
                    out[name] = child
    return out


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    yield path, parser
    for name, child in _subcommands(parser).items():
        yield from _walk(child, (*path, name))


PARSERS = list(_walk(build_parser()))
GROUPS = [(path, parser) for path, parser in PARSERS if _subcommands(parser)]


def _ids(item: tuple[tuple[str, ...], argparse.ArgumentParser]) -> str:
    return " ".join(item[0]) or "shoectl"


def test_the_walk_finds_nested_commands() -> None:
    """Guards the discovery itself: a walk that found only the top level would make the
    parametrised tests below pass vacuously."""
    paths = {path for path, _ in PARSERS}
    assert ("run",) in paths and ("journal", "verify") in paths and ("udev", "check") in paths
    assert len(PARSERS) > 20


@pytest.mark.parametrize("item", PARSERS, ids=_ids)
def test_help_works_for_every_command(capsys, item) -> None:
    path, parser = item
    code, out, err = run(capsys, *path, "--help")
    assert code == 0, err
    assert err == ""
    assert out.startswith(f"usage: {parser.prog}")
    assert "Traceback" not in out
    for name in _subcommands(parser):
        assert name in out, f"{' '.join(path)} --help does not list {name}"


@pytest.mark.parametrize("item", PARSERS, ids=_ids)
def test_no_parser_accepts_abbreviated_options(item) -> None:
    assert item[1].allow_abbrev is False


def test_an_abbreviated_option_is_refused_in_one_line(capsys, tmp_path) -> None:
    """``--shoe 1`` once silently meant ``--shoes 1``."""
    code, out, err = run(capsys, "run", "--shoe", "1", "--journal", str(tmp_path / "j.db"))
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1 and "--shoe" in err
    assert not (tmp_path / "j.db").exists()


@pytest.mark.parametrize("item", GROUPS, ids=_ids)
def test_a_command_group_alone_lists_its_commands(capsys, item) -> None:
    """``shoectl`` (or ``shoectl journal``) without a command is a usage error that shows the
    commands, as git does: exit 2, the help and then one error line on standard error, nothing
    on standard output."""
    path, parser = item
    code, out, err = run(capsys, *path)
    assert code == 2
    assert out == ""
    assert err.startswith(f"usage: {parser.prog}")
    assert err.splitlines()[-1].startswith(f"{parser.prog}: error: no ")
    for name in _subcommands(parser):
        assert name in err


def test_version_comes_from_the_package_metadata(capsys) -> None:
    code, out, err = run(capsys, "--version")
    assert code == 0 and err == ""
    assert out == f"shoectl {importlib.metadata.version('shoectl')}\n"


@pytest.mark.parametrize("failure, said", [
    (importlib.metadata.PackageNotFoundError("shoectl"), "(version unknown: not installed)"),
    (ModuleNotFoundError("No module named 'email.parser'"), "(version unknown: its metadata cannot be read)"),
    (OSError(13, "Permission denied"), "(version unknown: its metadata cannot be read)"),
])
def test_an_unreadable_version_is_said_never_raised(mocker, capsys, failure: Exception, said: str) -> None:
    """The version is a label (``--version``, the journal's ``controller_started``): a table
    whose package metadata cannot be read (a service user that cannot reach the interpreter's
    own modules, found running the table as ``nobody``) must not stop for it."""
    from controller.version import shoectl_version

    mocker.patch("importlib.metadata.version", side_effect=failure)
    shoectl_version.cache_clear()
    try:
        assert shoectl_version() == said
        assert run(capsys, "--version") == (0, f"shoectl {said}\n", "")
    finally:
        shoectl_version.cache_clear()


def test_the_version_alone_loads_no_command() -> None:
    """``shoectl --version`` printed the version after importing every command's module (0.5 s,
    where reading the version takes a tenth of that): it needs none of them."""
    probe = ("import sys\nfrom controller.cli import main as cli\ntry:\n    cli.main(['--version'])\n"
             "except SystemExit as stop:\n    assert stop.code in (0, None)\n"
             "print(sorted(n for n in sys.modules if n.startswith('controller.cli.cmd_')))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"shoectl {importlib.metadata.version('shoectl')}", "[]"]


def test_an_unknown_command_before_the_version_is_refused_naming_every_command(capsys) -> None:
    code, out, err = run(capsys, "bogus", "--version")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "invalid choice: 'bogus' (choose from " in err and "'journal'" in err and "'run'" in err


def test_a_version_whose_reader_cannot_be_imported_is_said_never_raised(mocker) -> None:
    """Found in CI: a table out of file descriptors (a flood of control connections) could not
    read the source of importlib.metadata, and the OSError ended the table at its start."""
    from controller.version import shoectl_version

    class OutOfDescriptors:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name.startswith("importlib.metadata"):
                raise OSError(errno.EMFILE, "Too many open files")
            return None

    mocker.patch.dict(sys.modules)
    for name in [n for n in sys.modules if n.startswith("importlib.metadata")]:
        del sys.modules[name]
    mocker.patch.object(sys, "meta_path", [OutOfDescriptors(), *sys.meta_path])
    shoectl_version.cache_clear()
    try:
        assert shoectl_version() == "(version unknown: its metadata cannot be read)"
    finally:
        shoectl_version.cache_clear()


def test_each_command_alone_parses_as_in_the_whole_parser() -> None:
    """A command line imports only its command's modules (``COMMANDS``): every command there is
    registered by exactly the modules the table names, and its help (and every subcommand's) is
    the same as in the parser of every command (which the top-level help and completion use)."""
    import argparse

    from controller.cli import main as cli_main

    def helps(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], str]:
        out = {path: parser.format_help()} if path else {}
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, child in action.choices.items():
                    out.update(helps(child, (*path, name)))
        return out

    whole = helps(cli_main.build_parser())
    assert {path[0] for path in whole} == set(cli_main.COMMANDS)
    for command in cli_main.COMMANDS:
        alone = helps(cli_main.build_parser([command, "--help"]))
        same_modules = {c for c, mods in cli_main.COMMANDS.items() if set(mods) <= set(cli_main.COMMANDS[command])}
        assert {path[0] for path in alone} == same_modules  # ctl and console: one module
        assert alone == {path: text for path, text in whole.items() if path[0] in same_modules}


@pytest.mark.parametrize("columns", [80, 120])
def test_ctl_help_fits_its_commands_list_to_the_width(capsys, monkeypatch, columns: int) -> None:
    """A review of terminals: `shoectl ctl --help`'s list of table commands ran past an 80-column
    terminal (20 lines), broken mid-word (`colle` / `cted`); argparse fitted only its own parts."""
    from controller.table.commands import COMMANDS

    import sys

    monkeypatch.setenv("COLUMNS", str(columns))
    code, piped, _ = run(capsys, "ctl", "--help")
    assert code == 0 and any(len(line) > columns for line in piped.splitlines())  # into a pipe: as written
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)  # a terminal of COLUMNS
    code, out, _ = run(capsys, "ctl", "--help")
    assert code == 0 and all(len(line) <= columns for line in out.splitlines()), \
        [line for line in out.splitlines() if len(line) > columns]
    words = set(out.split())
    assert all(c.name in out and c.help.split()[0] in words for c in COMMANDS.values())
