"""``shoectl udev``: generate the udev rules from the device profiles, or check the checked-in file.

- ``udev generate [--include-test-profiles] [-o FILE]``: the rules for the profiles of the
  search path, on standard output or written to FILE (replaced atomically). The production rules
  leave out shoectl's emulated test profiles; ``--include-test-profiles`` adds them (a machine
  that tests with the emulated USB shuffler).
- ``udev check [--include-test-profiles] [FILE]``: exit 0 if FILE equals the generated rules,
  else print a unified diff and exit 1 (a missing file also exits 1). The default FILE: in a
  checkout, the repository's ``udev/99-shoectl.rules``; in an installed copy, the installed
  ``/etc/udev/rules.d/99-shoectl.rules`` (``firmware_bridge.udev.default_rules_path``).

Installing the rules: ``docs/udev.md``.
"""
from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

from controller.errors import UsageError, new_file_argument, path_argument
from controller.fsutil import atomic_writer
from firmware_bridge.profiles import list_profiles
from firmware_bridge.udev import INSTALLED_RULES_PATH, SYMLINK_DIR, default_rules_path, generate_rules
from shoectl_config.files import read_regular_file
from shoectl_config.text import safe, shell_word

EXIT_DIFFERS = 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("udev", help="generate udev rules from the device profiles")
    us = p.add_subparsers(dest="udev_command", metavar="SUBCOMMAND", parser_class=type(p))
    us.required = True

    g = us.add_parser("generate", help="print (or write) the rules")
    g.add_argument("-o", "--output", type=new_file_argument, metavar="FILE", help="write to FILE instead of standard output")
    _test_profiles_option(g)
    g.set_defaults(func=run_generate)

    c = us.add_parser("check", help="exit 1 if the rules file differs from the generated rules")
    c.add_argument("file", nargs="?", type=path_argument, metavar="FILE", help="default: the repository's udev/99-shoectl.rules in a "
                   f"checkout, else the installed {INSTALLED_RULES_PATH}")
    _test_profiles_option(c)
    c.set_defaults(func=run_check)


def _test_profiles_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--include-test-profiles", action="store_true",
                   help="also give shoectl's emulated test devices (emulated-*) to group shoectl")


def run(args: argparse.Namespace) -> int:
    """Dispatch to the subcommand (for callers that build their own parser)."""
    return int(args.func(args) or 0)


def run_generate(args: argparse.Namespace) -> int:
    text = generate_rules(list_profiles(), include_test_profiles=args.include_test_profiles)
    if not args.output:
        sys.stdout.write(text)
        return 0
    _write_atomically(Path(args.output), text)
    print(f"wrote {safe(str(args.output))}", file=sys.stderr)
    return 0


MAX_RULES_BYTES = 1 << 20  # a rules file is a few kilobytes


def run_check(args: argparse.Namespace) -> int:
    path = Path(args.file) if args.file else default_rules_path()
    shown, generate = safe(str(path)), f"shoectl udev generate -o {shell_word(str(path))}"
    profiles = list_profiles()
    expected = generate_rules(profiles, include_test_profiles=args.include_test_profiles)
    if not path.exists():
        print(f"{shown}: missing; run: {generate}")
        return EXIT_DIFFERS
    # the configuration files' reader: a FIFO never opened, a file that cannot be read named with why
    _, raw, _ = read_regular_file(path, MAX_RULES_BYTES, lambda shown, _key, why: UsageError(f"{shown}: {why}"))
    try:
        actual = raw.decode("utf-8")
    except UnicodeDecodeError:
        print(f"{shown}: not UTF-8 text; run: {generate}")
        return EXIT_DIFFERS
    if actual == expected:
        print(f"{shown}: up to date")
        return 0
    diff = difflib.unified_diff(
        actual.splitlines(keepends=True), expected.splitlines(keepends=True),
        fromfile=str(path), tofile="generated",
    )
    sys.stdout.writelines(diff)
    unknown = sorted(set(_RULE_PROFILE.findall(actual)) - {p.name for p in profiles})
    if unknown:
        # Generated here, the file would lose them, and the service its devices (an integrator
        # review: run as advised without the service's SHOECTL_PROFILE_PATH, it did).
        print(f"{shown}: differs from the generated rules, and gives devices of profiles not found here "
              f"({', '.join(unknown)}): find them first (SHOECTL_PROFILE_PATH, as the service's environment file "
              f"gives it), then run: {generate}")
        return EXIT_DIFFERS
    print(f"{shown}: differs from the generated rules; run: {generate}")
    return EXIT_DIFFERS


# A generated rule's profile: the link it makes, /dev/shoectl/NAME (firmware_bridge.udev).
_RULE_PROFILE = re.compile(rf'SYMLINK\+="{re.escape(SYMLINK_DIR)}/([^"/]+)"')


def _write_atomically(path: Path, text: str) -> None:
    with atomic_writer(path, mode=0o644) as fh:
        fh.write(text)
