"""``shoectl signature [--list] [--json] [-o FILE]``: the installed program's signature
(``controller.signature``), which every table journals when it starts (``controller_started``),
so that a journal says which exact code dealt it (docs/deployment.md, "Which program dealt")."""
from __future__ import annotations

import argparse

from controller.cli.common import print_json, write_output
from controller.errors import new_file_argument


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("signature", help="the installed program's signature: one SHA-256 over all its files, "
                                         "as each table journals it at start")
    how = p.add_mutually_exclusive_group()
    how.add_argument("--list", action="store_true", help="each file's SHA-256 and path (sha256sum's format: "
                     "`sha256sum -c` checks it in the folder the paths start from; the listing's own SHA-256 is the signature)")
    how.add_argument("--json", action="store_true", help='one JSON object: {"version", "signature", "files", "root"}')
    p.add_argument("-o", "--output", type=new_file_argument, metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.signature import program_signature
    from controller.version import shoectl_version

    signature = program_signature()
    if args.json:
        print_json({"version": shoectl_version(), "signature": signature.digest, "files": len(signature.listing),
                    "root": str(signature.root)})
        return 0
    if args.list:
        text = signature.listing_text()
    else:
        text = (f"shoectl {shoectl_version()}: {signature.digest} ({len(signature.listing)} files under "
                f"{signature.root})\n")
    if args.output:
        write_output(text, args.output)
    else:
        print(text, end="")
    return 0
