"""``shoectl run``: the main job.

Until the table controller (issue 4) lands, ``shoectl run`` deals shoes of the default Rules
Submission through the rules core exactly as ``shoectl simulate --rounds`` does, printing each
round and a summary. The device bridge and the journal will take over here.
"""
from __future__ import annotations

import argparse

from controller.cli import cmd_simulate


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="the main job (for now: deal shoes of the default submission, printing each round)")
    cmd_simulate.add_arguments(p, default_shoes=1)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    args.rounds = True
    return cmd_simulate.run(args)
