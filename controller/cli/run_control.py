"""The control socket of ``shoectl run``: its options, the operators file and the server.

``add_run_control_options(parser)`` adds ``--control``, ``--control-connections``,
``--control-group``, ``--operators``, ``--submissions``, ``--lockout`` and ``--remember-pin``;
``claim_run_control(args, journal_path)`` claims the socket before the journal is opened (a second
table on the same socket changes nothing) and returns the server, which ``start(runner)`` serves.
Defaults sit beside the journal: ``<journal>.sock``, ``operators.toml``, ``submissions/``.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from controller.cli.common import group_name, stderr_line, whole_number
from controller.control.client import OPERATORS_GROUP
from controller.errors import UsageError, path_argument

__all__ = ["add_run_control_options", "claim_run_control"]

# --lockout and --remember-pin: at most a day. Beyond that a lockout is a ban (and a huge one was
# printed as "locked out for 153722867280912930 min"); a remembered PIN, a PIN not checked again.
MAX_AUTH_SECONDS = 86_400


def add_run_control_options(p: argparse.ArgumentParser) -> None:
    """The control socket's options, on ``run``'s parser (and so in its ``--help``, in this order)."""
    p.add_argument("--control", type=path_argument, metavar="PATH", help="control socket for shoectl ctl/console (default: the journal's "
                   "name with .sock, beside it: var/journal.sock)")
    p.add_argument("--control-connections", type=whole_number(1, 65_535), default=64, metavar="N",
                   help="most connections the control socket serves at once (default 64, at most 65535)")
    p.add_argument("--control-group", type=group_name, metavar="GROUP", help="group of the control socket: the operators who may use "
                   f"ctl and the console (default: {OPERATORS_GROUP}, if it exists)")
    p.add_argument("--operators", type=path_argument, metavar="FILE", help="operators file (default: operators.toml beside the journal, if present)")
    p.add_argument("--submissions", type=path_argument, metavar="DIR",
                   help="folder of the Rules Submission files a floorperson's set_submission may name, beside the "
                        "presets (default: submissions beside the journal)")
    p.add_argument("--lockout", type=whole_number(1, MAX_AUTH_SECONDS), default=300, metavar="SECONDS",
                   help=f"how long five wrong PINs in a row lock an operator out (default 300, at most "
                        f"{MAX_AUTH_SECONDS}: a day)")
    p.add_argument("--remember-pin", type=whole_number(0, MAX_AUTH_SECONDS), default=300, metavar="SECONDS",
                   help=f"how long a PIN that passed its check is accepted again without another (default 300, at "
                        f"most {MAX_AUTH_SECONDS}: a day; 0: check every PIN in full)")


def claim_run_control(args: argparse.Namespace, journal_path: Path) -> Any:
    """The control socket's server, its path claimed (refused while another table uses it), with
    the authenticator of the operators file (``--operators``, else ``operators.toml`` beside the
    journal, followed even before it is there); ``start(runner)`` serves the table."""
    from controller.control.endpoint import ControlFolderUnusable
    from controller.control.server import ControlServer
    from controller.operators.auth import Authenticator
    from controller.operators.following import FollowedOperators, load_table_operators
    from controller.operators.store import operators_file_beside

    ops_path = Path(args.operators) if args.operators else operators_file_beside(journal_path)
    # followed even while it is not there: operators added beside the journal count without a restart
    followed = FollowedOperators(ops_path)
    operators: Any = {}
    if args.operators or ops_path.exists():
        operators = load_table_operators(ops_path)
        for warning in operators.warnings:
            stderr_line(f"!! {warning}")
    elif args.manual:
        stderr_line(f"!! no operators file yet ({ops_path}): the control socket takes commands once operators are "
                    "added there (`shoectl operators add ID --role ROLE --file FILE`), and without the automated "
                    "dealer nothing deals until then")
    followed.read_at_start(operators)
    auth = Authenticator(operators, lockout_s=args.lockout, remember_s=args.remember_pin, reload=followed.changed)
    path = Path(args.control) if args.control else journal_path.with_suffix(".sock")
    submissions = Path(args.submissions) if args.submissions else journal_path.parent / "submissions"
    server = ControlServer(path, auth, max_connections=args.control_connections, submissions=submissions,
                           group=args.control_group or OPERATORS_GROUP, group_required=bool(args.control_group))
    try:
        return server.claim()
    except ControlFolderUnusable as exc:
        if args.control:
            raise
        raise UsageError(f"--journal {journal_path}: cannot make files in its folder {exc.folder} ({exc.why}); "
                         "give another --journal path") from None
