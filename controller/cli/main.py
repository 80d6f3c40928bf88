"""``shoectl`` entry point: builds the argument parser from the command modules and maps errors to
exit codes.

Exit codes (a stable contract):
- 0 success;
- 1 a check that ran and failed (e.g. a journal that does not verify, an audit that fails);
- 2 usage and input errors: bad arguments (an empty file name among them: every argument that
  names a file or a folder has ``type=controller.errors.path_argument``), unknown card, bad Rules
  Submission, unreadable file — one line on standard error, never a traceback; a command group
  without its subcommand (``shoectl``, ``shoectl journal``) prints its help, which lists the
  subcommands, and then that line, on standard error;
- 130 interrupted (Ctrl-C);
- 141 the reader of standard output went away before the command finished (``| head``), as a
  Unix tool stopped by SIGPIPE reports it, so that a check's failure is never read as a success
  in a pipeline (``set -o pipefail``); no line is written (nobody reads it). ``shoectl run`` takes
  its reader's going as an end asked for and exits 0 (``controller.cli.run_output``).

A command module exposes ``register(subparsers)`` (adding its parser with
``set_defaults(func=run)``) and ``run(args) -> int``. Every parser is a ``_Parser``
(``add_subparsers`` passes the class on): options are never abbreviated (``--shoe`` is refused,
not taken for ``--shoes``), a negative number with an exponent (``--edge-threshold -1e-3``) is a
value as ``-1`` and ``-.5`` are, not an option, and argparse's own errors are one line with exit 2.

Every error line goes through ``shoectl_config.text.readable``: a byte of the user's input that
is not UTF-8 (a file name, an argument) reads ``\xff`` however the message quoted it.
"""
from __future__ import annotations

import argparse
import importlib
import contextlib
import io
import os
import re
import sys
from collections.abc import Iterator, Sequence
from functools import partial

from controller.cli.entry import EXIT_INTERRUPTED
from controller.errors import UsageError, in_words
from controller.rules.errors import RulesError
from controller.version import shoectl_version
from firmware_bridge.errors import BridgeError
from shoectl_config.errors import ConfigError
from shoectl_config.text import is_utf8, readable

# Each top-level command and the modules that register it (in order: a module that adds to a
# command group comes after the group's own). A command runs with only its own modules imported:
# importing all of them cost every ``shoectl`` process a third of a second or more.
COMMANDS: dict[str, tuple[str, ...]] = {
    "rules": ("cmd_rules",),
    "odds": ("cmd_odds",),
    "simulate": ("cmd_simulate",),
    "run": ("cmd_run",),
    "profiles": ("cmd_profiles",),
    "udev": ("cmd_udev",),
    "devices": ("cmd_devices",),
    "systemd-unit": ("cmd_systemd",),
    "completion": ("cmd_completion",),
    "journal": ("cmd_journal", "cmd_replay"),
    "emulate": ("cmd_emulate",),
    "diagram": ("cmd_diagram",),
    "operators": ("cmd_operators",),
    "roadmap": ("cmd_roadmap",),
    "ctl": ("cmd_ctl",),
    "console": ("cmd_ctl",),
    "audit": ("cmd_audit",),
    "floor": ("cmd_floor",),
    "scoreboard": ("cmd_scoreboard",),
    "feed": ("cmd_feed",),
    "signature": ("cmd_signature",),
}
# The commands that log through structlog (they call controller.logconfig.configure_logging).
LOGGING_COMMANDS = frozenset({"run", "feed", "floor", "scoreboard"})
COMMAND_MODULES = tuple(dict.fromkeys(f"controller.cli.{m}" for mods in COMMANDS.values() for m in mods))

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_READER_GONE = 141  # 128 + SIGPIPE
SERVICES = frozenset({"run", "feed"})  # the commands a service manager runs and restarts by their exit
# argparse's own takes only -1 and -.5 for a number: -1e-3 was an unknown option, and its option
# "expected one argument". As argparse's, it applies while no option looks like a negative number.
NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


class _StoreOnce(argparse._StoreAction):
    """An option that takes one value (argparse's default action) refuses to be given twice: the
    second silently replaced the first (``--journal`` in ``SHOECTL_RUN_ARGS`` replaced the service
    unit's own, and the table dealt into another journal without a word: an integrator review).
    Options meant to be repeated say so (``action="append"``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.given: object = _NOT_GIVEN  # per parse: a parser is built for each command line
        self.written: object = None      # the text of the value being stored, as the user wrote it

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        # Said as written: "--speed max" twice was "given twice (inf, then inf)" (a review of bad inputs).
        if option_string is not None and self.given is not _NOT_GIVEN:
            parser.error(f"argument {option_string}: given twice ({self.given!r}, then {self.written!r}): give it once")
        self.given = self.written
        super().__call__(parser, namespace, values, option_string)


_NOT_GIVEN = object()


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)
        self._negative_number_matcher = NEGATIVE_NUMBER

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> object:
        if isinstance(action, _StoreOnce):  # what _StoreOnce says of a value given twice
            action.written = " ".join(arg_strings)
        return super()._get_values(action, arg_strings)

    def error(self, message: str) -> None:  # one line, exit 2 (argparse's own convention)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {readable(message)}\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole parser; given the arguments of one command line, only what that command needs
    (every command when they name none, or one that does not exist: the help lists them all)."""
    parser = _Parser(
        prog="shoectl",
        description="Controller for automated card shufflers and card-reading baccarat shoes.",
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name in _modules_for(argv):
        importlib.import_module(name).register(sub)
    for group, action in _command_groups(parser):
        # Not argparse's "the following arguments are required: COMMAND": the group's help,
        # which lists what can follow.
        action.required = False
        group.set_defaults(func=partial(_list_subcommands, group, action.metavar or "COMMAND"))
    return parser


def _modules_for(argv: Sequence[str] | None) -> tuple[str, ...]:
    """The command modules to register for ``argv``: the named command's; none when ``--version``
    comes before any word (argparse prints the version and exits as it reaches it); else all of
    them (the help, or the refusal of an unknown command, lists every command)."""
    command = _command_of(argv)
    if command is not None:
        return tuple(f"controller.cli.{m}" for m in COMMANDS[command])
    words = list(argv or ())
    if "--version" in words and all(a.startswith("-") for a in words[:words.index("--version")]):
        return ()
    return COMMAND_MODULES


def _command_of(argv: Sequence[str] | None) -> str | None:
    """The one command ``argv`` runs, or None (none named, an unknown one, or ``--version``)."""
    if argv is None:
        return None
    command = next((a for a in argv if not a.startswith("-")), None)
    if command not in COMMANDS or "--version" in argv[: list(argv).index(command)]:
        return None
    return command


class _VersionAction(argparse.Action):
    """``--version``: the installed package's version, looked up only when asked for (reading the
    package metadata costs every process about 40 ms)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS,
                         help="show the program's version and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        sys.stdout.write(f"{parser.prog} {shoectl_version()}\n")  # on standard output, as argparse's own
        parser.exit()


def _command_groups(parser: argparse.ArgumentParser) -> Iterator[tuple[argparse.ArgumentParser, argparse._SubParsersAction]]:
    """Every parser that has subcommands (this one and those below it), with its subparsers action."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield parser, action
            for child in {id(p): p for p in action.choices.values()}.values():
                yield from _command_groups(child)


def _chosen_parser(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub)command ``args`` chose: the deepest one below ``parser``."""
    current = parser
    while True:
        action = next((a for a in current._actions if isinstance(a, argparse._SubParsersAction)), None)
        chosen = getattr(args, action.dest, None) if action is not None else None
        if action is None or chosen not in action.choices:
            return current
        current = action.choices[chosen]


def _list_subcommands(group: argparse.ArgumentParser, metavar: str, args: argparse.Namespace) -> int:
    sys.stderr.write(f"{group.format_help()}\n{group.prog}: error: no {metavar} given\n")
    return EXIT_USAGE


def _import_structlog_without_rich() -> None:
    """Import structlog with rich hidden from it. structlog imports rich, when it can, only for
    tracebacks that shoectl does not use (``controller.logconfig`` asks for plain ones): half of
    structlog's import, about 50 ms of every ``shoectl`` process. rich itself stays importable
    (the live display and the progress bars use it)."""
    if "structlog" in sys.modules or "rich" in sys.modules:  # too late, or rich is in use already
        return
    sys.modules["rich"] = None  # type: ignore[assignment]  # "import rich" raises ImportError
    try:
        import structlog  # noqa: F401
    finally:
        del sys.modules["rich"]


def configure_command_logging(command: str | None) -> None:
    """For a command that does not configure logging itself (``LOGGING_COMMANDS`` do, from their
    options) but whose modules, imported, log through structlog (``emulate``'s devices): warnings
    and errors to standard error. Unconfigured, structlog prints to standard output, into what the
    command writes for scripts. A command whose modules do not log does not pay for the import;
    logging configured already (a process running commands in turn, as the tests do) is kept."""
    if command not in LOGGING_COMMANDS and "structlog" in sys.modules and not sys.modules["structlog"].is_configured():
        from controller.logconfig import configure_logging

        configure_logging("warning")


def _standard_streams_open() -> None:
    """A standard stream closed by the caller (``>&-``, ``<&-``) is ``/dev/null`` from here on,
    as if redirected there: Python leaves ``sys.stdout`` None (every command's first print raised,
    a review of bad inputs: ``shoectl run >&-`` stopped its table), and the first file this
    process opened would take the free descriptor, so that a write meant for the terminal, or a
    child's, went into it (a journal). Input then ends at once; output goes nowhere."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
        except OSError:
            devnull = os.open(os.devnull, os.O_RDWR)  # the lowest free descriptor: fd, or a lower one closed too
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
            if getattr(sys, name) is None:
                setattr(sys, name, open(fd, "r" if fd == 0 else "w", encoding="utf-8", closefd=False))


def _output_shows_what_it_cannot_encode() -> None:
    """Standard output and error on a terminal that is not UTF-8 (a Latin-1 pit terminal) write a
    character they lack as its escape (``\\u0141``), never raise: a dealer's name or a reason an
    operator typed made `ctl status`, `ctl watch`, `journal replay` and `export` end in a traceback
    and exit 1 there, which for `journal replay` means "does not verify" (a review of terminals)."""
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and not is_utf8(stream.encoding):
            with contextlib.suppress(ValueError, OSError):  # a stream closed, or one that cannot be changed
                stream.reconfigure(errors="backslashreplace")


def main(argv: Sequence[str] | None = None) -> int:
    _standard_streams_open()
    _output_shows_what_it_cannot_encode()
    try:
        try:
            return _main(argv)
        finally:
            # Whatever is left in the buffer is written now, so that a reader gone shows here and not
            # at the interpreter's exit ("Exception ignored ... BrokenPipeError", status 120: the
            # status of every command whose output is buffered, a review found, `--help` too).
            sys.stdout.flush()
    except BrokenPipeError:
        from controller.cli.common import point_at_devnull  # only then: its imports are a command's

        with contextlib.suppress(OSError, ValueError):  # (a test's StringIO has no descriptor)
            point_at_devnull(sys.stdout.fileno())
        return EXIT_READER_GONE


def _main(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if _command_of(argv) in LOGGING_COMMANDS:
        _import_structlog_without_rich()
    parser = build_parser(argv)
    args, unknown = parser.parse_known_args(argv)
    chosen = _chosen_parser(parser, args)
    if unknown:  # said by the command's own parser: "shoectl feed: error: ...", not "shoectl: error"
        chosen.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.prog = chosen.prog  # every message's prefix: "shoectl journal replay", as argparse's own
    configure_command_logging(_command_of(argv))
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("shoectl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`| head`) before the command finished: it did not see the verdict.
        # Until 2026-12-06 this was exit 0, and `journal verify TAMPERED | head` passed in a pipeline.
        raise  # (main's: before the OSErrors below, which would take it for a file that cannot be used)
    except (UsageError, RulesError, ConfigError, BridgeError, OSError) as exc:
        # User-facing errors: bad input (UsageError, RulesError, a configuration file's ConfigError:
        # a profile, a Rules Submission, an operators file; a bad fault spec)
        # or a file or device that cannot be used (OSError, TransportError). One line, exit 2. Anything else is a bug and
        # keeps its traceback.
        print(f"{args.prog}: error: {readable(in_words(exc))}", file=sys.stderr)
        # A service's error may say it is temporary (a journal locked by another program: 75,
        # EX_TEMPFAIL), which a service manager restarts; 2 is not (RestartPreventExitStatus).
        # Other commands keep 2, as their documented exit codes say.
        return int(getattr(exc, "exit_status", EXIT_USAGE)) if _command_of(argv) in SERVICES else EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
