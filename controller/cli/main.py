"""``shoectl`` entry point: builds the argument parser from the command modules and maps errors to
exit codes.

Exit codes (a stable contract):
- 0 success;
- 1 a check that ran and failed (e.g. a journal that does not verify, an audit that fails);
- 2 usage and input errors: bad arguments, unknown card, bad Rules Submission, unreadable file —
  one line on standard error, never a traceback;
- 130 interrupted (Ctrl-C).

A command module exposes ``register(subparsers)`` (adding its parser with
``set_defaults(func=run)``) and ``run(args) -> int``.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from controller.errors import UsageError
from controller.rules.errors import RulesError
from firmware_bridge.errors import BridgeError
from firmware_bridge.profiles import ProfileError

COMMAND_MODULES = (
    "controller.cli.cmd_rules",
    "controller.cli.cmd_odds",
    "controller.cli.cmd_simulate",
    "controller.cli.cmd_run",
    "controller.cli.cmd_profiles",
    "controller.cli.cmd_udev",
    "controller.cli.cmd_devices",
    "controller.cli.cmd_journal",
    "controller.cli.cmd_replay",
    "controller.cli.cmd_emulate",
    "controller.cli.cmd_diagram",
    "controller.cli.cmd_operators",
    "controller.cli.cmd_roadmap",
    "controller.cli.cmd_ctl",
    "controller.cli.cmd_audit",
)

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2 (argparse's own convention)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="shoectl",
        description="Controller for automated card shufflers and card-reading baccarat shoes.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("shoectl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): not an error of ours.
        sys.stderr.close()
        return EXIT_OK
    except (UsageError, RulesError, ProfileError, BridgeError, OSError) as exc:
        # User-facing errors: bad input (UsageError, RulesError, ProfileError, a bad fault spec)
        # or a file or device that cannot be used (OSError, TransportError). One line, exit 2. Anything else is a bug and
        # keeps its traceback.
        print(f"shoectl {args.command}: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_USAGE


def _one_line(exc: BaseException) -> str:
    text = str(exc) or exc.__class__.__name__
    if isinstance(exc, OSError) and exc.filename and str(exc.filename) not in text:
        text = f"{exc.filename}: {text}"
    return " ".join(text.split())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
