"""``shoectl profiles``: list, show and check device profiles (``docs/device-profiles.md``).

- ``profiles list [--json]``: one line per profile of the search path (name, kind, vendor, model,
  transport summary); ``--json``: one array of ``{name, kind, vendor, model, transport, summary,
  source}``.
- ``profiles show NAME|FILE [--json]``: every key of one profile, defaults filled in; ``--json``:
  ``Profile.to_json()`` (the TOML layout plus ``name`` and ``source``).
- ``profiles check [FILE ...]``: validate the files (default: every file of the search path,
  shadowed ones too); one ``FILE: ok (...)`` line per good file on standard output, one ``FILE:
  error: KEY: REASON`` line per bad one on standard error (as ``rules check`` says its errors);
  exit 2 if any file is bad.

A bad profile in ``list`` / ``show`` raises ``ProfileError`` (one line, exit 2 through main).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from controller.cli.common import print_json
from controller.errors import path_argument
from firmware_bridge.profiles import Profile, check_profiles, list_profiles, profile_dirs, resolve_profile
from shoectl_config.text import readable

EXIT_BAD_PROFILE = 2


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("profiles", help="list, show and check device profiles")
    ps = p.add_subparsers(dest="profiles_command", metavar="SUBCOMMAND", parser_class=type(p))
    ps.required = True

    ls = ps.add_parser("list", help="the profiles in the search path")
    ls.add_argument("--json", action="store_true", help="one JSON array")
    ls.set_defaults(func=run_list)

    sh = ps.add_parser("show", help="every key of one profile")
    sh.add_argument("profile", type=path_argument, metavar="NAME|FILE")
    sh.add_argument("--json", action="store_true")
    sh.set_defaults(func=run_show)

    ck = ps.add_parser("check", help="validate profile files (default: all in the search path); exit 2 if any is bad")
    ck.add_argument("files", nargs="*", type=path_argument, metavar="FILE")
    ck.set_defaults(func=run_check)


def run(args: argparse.Namespace) -> int:
    """Dispatch to the subcommand (for callers that build their own parser)."""
    return int(args.func(args) or 0)


def _summary(p: Profile) -> dict[str, Any]:
    return {
        "name": p.name,
        "kind": p.kind,
        "vendor": p.vendor,
        "model": p.model,
        "transport": p.transport.type,
        "summary": p.transport.summary(),
        "source": p.source,
    }


def run_list(args: argparse.Namespace) -> int:
    profiles = list_profiles()
    if args.json:
        print_json([_summary(p) for p in profiles])
        return 0
    if not profiles:
        print(f"no profiles found in: {', '.join(str(d) for d in profile_dirs())}")
        return 0
    width = max(len(p.name) for p in profiles)
    kwidth = max(len(p.kind) for p in profiles)
    for p in profiles:
        print(f"{p.name:<{width}}  {p.kind:<{kwidth}}  {p.vendor} {p.model}  [{p.transport.summary()}]")
    return 0


def run_show(args: argparse.Namespace) -> int:
    p = resolve_profile(args.profile)
    if args.json:
        print_json(p.to_json())
        return 0
    print(f"name: {p.name}")
    print(f"source: {p.source}")
    for section, values in p.to_dict().items():
        print(f"[{section}]")
        for key, value in values.items():
            print(f"  {key} = {_value(key, value)}")
    return 0


def _value(key: str, value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and (key in ("vid", "pid", "usb_vid", "usb_pid")):
        return f"0x{value:04x}"
    if isinstance(value, int) and key.startswith("endpoint_"):
        return f"0x{value:02x}"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def run_check(args: argparse.Namespace) -> int:
    results = check_profiles(args.files or None)
    if not results:
        print(f"no profile files found in: {', '.join(str(d) for d in profile_dirs())}")
        return 0
    bad = 0
    for r in results:
        if r.profile is not None:
            p = r.profile
            note = f"; shadowed by {r.shadowed_by}" if r.shadowed_by else ""
            print(f"{r.path}: ok ({p.name}: {p.kind}, {p.transport.summary()}{note})")
        else:
            bad += 1
            err = r.error
            assert err is not None
            where = f"{err.key}: " if err.key else ""
            print(readable(f"{r.path}: error: {where}{err.reason}"), file=sys.stderr)
    return EXIT_BAD_PROFILE if bad else 0
