"""``shoectl diagram [--doc] [-o FILE]``: the table's state machine as Mermaid (or the whole
docs/state-machine.md with ``--doc``)."""
from __future__ import annotations

import argparse

from controller.cli.common import write_output
from controller.errors import new_file_argument


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("diagram", help="write the table's state machine as a Mermaid diagram")
    p.add_argument("--doc", action="store_true", help="the whole docs/state-machine.md page")
    p.add_argument("-o", "--output", type=new_file_argument, metavar="FILE", help="write to FILE instead of standard output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.table.diagram import mermaid, state_machine_doc

    text = state_machine_doc() if args.doc else mermaid()
    if args.output:
        write_output(text, args.output)
    else:
        print(text, end="" if text.endswith("\n") else "\n")
    return 0
