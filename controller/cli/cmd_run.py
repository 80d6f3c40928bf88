"""``shoectl run``: the main job — a whole table.

With no ``--device``: the embedded defaults — an emulated shuffler and card-reading shoe with a
scripted dealer, served over pseudo-terminals and reached through pyserial like real hardware,
the automated dealer and floorperson, the default Rules Submission, and the journal
``./var/journal.db``. With ``--device PROFILE@PORT`` (repeatable; roles from the profiles' kinds):
attached hardware or a separately emulated table (``shoectl emulate --table``): a shuffler and a
shoe, one shoe with the shuffler built in (profile kind ``shuffler-shoe``, e.g. an automatic
reshuffling shoe, 681a.5(h)), which then takes the shuffler's commands too, or a shoe alone: a table
without a shuffler, where the dealer puts preshuffled decks in play before play commences and
shuffles each dealt shoe's cards by hand (681a.5(a), 681a.7(d)).

A journal that already holds entries is resumed: every journaled input is fed to the table core
again (the state the journal proves), the links are told which device events are already stored,
and the devices resend what was not yet acknowledged.

Output: one line per round and per notice; ``--json`` writes every journal entry this run stores
as ``shoectl journal export`` does, and each notice as ``{"notice": {"level": ..., "text": ...}}``
(``controller.cli.run_output``). A reader that pauses does not hold the table: its output waits for
it, and the run ends when the reader has it all. A reader that goes away (``shoectl run --json |
head``) stops the table cleanly: exit 0.

A count or card-set fault holds the table until a floorperson acts. The automated floorperson
orders a few reshuffles (``controller.table.autodealer``); when the cards still count wrong it
closes the table, and ``shoectl run`` ends with one line on standard error saying why and exit 1.
With ``--manual`` the table waits in its count fault for an operator (``shoectl ctl``).

SIGTERM and SIGINT stop the table: exit 143 or 130, within ``--stop-grace`` seconds even when the
table's thread is stuck (``controller.cli.stopping``) or standard output's reader is.
"""
from __future__ import annotations

import argparse
import sys

from controller.cli.cmd_feed import add_run_feed_options
from controller.cli.cmd_scoreboard import add_run_scoreboard_option
from controller.cli.common import non_negative_int, positive_int, whole_number
from controller.cli.run_control import add_run_control_options
from controller.cli.run_options import (
    DEFAULT_JOURNAL, check_edge_options, edge_engine, edge_threshold, emulator_speed, fault_spec, table_id,
)
from controller.cli.run_output import StdoutLines, output_read
from controller.cli.run_table import run_table
from controller.cli.stopping import STOP_GRACE_S, signals_held
from controller.errors import journal_argument, output_path_argument, path_argument
from controller.queued_output import QueuedOutput
from controller.rules.engines import ENGINES
from controller.rules.odds_main_game import using_engine


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="the main job: run a table (embedded emulated devices by default)")
    p.add_argument("--device", action="append", default=[], metavar="PROFILE[@PORT]",
                   help="attach a device (repeatable): a serial one at a port (acme-readershoe-s@/dev/shoectl/acme-readershoe-s), a USB one by its profile (acme-batchshuffler-x)")
    p.add_argument("--submission", type=path_argument, metavar="FILE|PRESET", help="Rules Submission (default: minibaccarat)")
    p.add_argument("--journal", default=str(DEFAULT_JOURNAL), type=journal_argument, metavar="PATH", help=f"journal file (default {DEFAULT_JOURNAL})")
    add_run_control_options(p)
    p.add_argument("--hmac-key", type=path_argument, metavar="FILE", help="key the journal's hash chain with HMAC-SHA-256 (a secret file, mode 0600)")
    p.add_argument("--table-id", type=table_id, default="T1", metavar="ID", help="the table's name (default T1)")
    p.add_argument("--shoes", type=positive_int, metavar="N", help="stop after N completed shoes (a shoe given up because a device was replaced is not one); "
                        "the next shoe's shuffle has begun by then, so its shoe_start is journaled and a "
                        "run resumed from the journal deals it")
    p.add_argument("--rounds", type=positive_int, metavar="N",
                   help="stop after N rounds, simulated and void ones counted (and a simulated round begun with the "
                        "last, 627a.13(d), is dealt to its end); when the "
                        "last ends a shoe, the next shoe's shuffle has begun: its shoe_start is journaled")
    p.add_argument("--seed", type=non_negative_int, metavar="S", help="seed for the built-in emulator and the automated dealer "
                   "(for a resumed journal: drawn from S and the journal's length, not to deal its shoes and wagers "
                   "again); the same S shuffles the same shoes whatever the game: give each sample its own")
    p.add_argument("--speed", type=emulator_speed, metavar="max|N", help="built-in emulator: mechanisms N times real time, or max (default 20)")
    p.add_argument("--faults", type=fault_spec, metavar="SPEC", help="built-in emulator faults, e.g. corrupt=0.001,unplug-every=5s")
    p.add_argument("--dealt-log", type=output_path_argument, metavar="FILE", help="built-in emulator: append every card the shoe delivers")
    p.add_argument("--require-device", action="store_true", help="refuse to start without --device (the service unit "
                   "passes it: a table computer never deals the built-in emulated table into its journal)")
    p.add_argument("--manual", action="store_true", help="no automated dealer: operators drive the table (always so with "
                   "--device, unless --automated)")
    p.add_argument("--automated", action="store_true", help="with --device: the automated dealer and floorperson drive "
                   "it, for an emulated table served by shoectl emulate (never at a real table: they seat players "
                   "and place wagers)")
    p.add_argument("--pace", type=whole_number(0, 10000), metavar="MS",
                   help="the automated dealer waits MS milliseconds between its actions (default 0; e.g. 25 deals a "
                        "round about every 150 ms, to watch a scoreboard)")
    p.add_argument("--json", action="store_true", help="write every journal entry as journal export does "
                   "(and each notice as {\"notice\": {...}}), one JSON line each")
    p.add_argument("--display", choices=["live", "lines"], help="live: the table redrawn in place with its roadmaps "
                   "(default on a terminal that can redraw: not TERM=dumb); lines: one line per round and fault")
    p.add_argument("--edge-threshold", type=edge_threshold, metavar="X",
                   help="the edge monitor's surveillance notice when a wager's player edge on the cards left "
                        "goes above X per unit, -1 to 1 (default 0: any player advantage)")
    p.add_argument("--no-edge-monitor", action="store_true", help="no edge figures after each round")
    p.add_argument("--edge-engine", choices=ENGINES,
                   help="the edge monitor's odds engine, the same figures by each (default: SHOECTL_EDGE_ENGINE "
                        "if set, else auto: numpy when installed)")
    p.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    p.add_argument("--log-file", type=output_path_argument, metavar="PATH", help="JSON log file (default: next to the journal)")
    p.add_argument("--stop-grace", type=whole_number(1, 3600), default=STOP_GRACE_S, metavar="SECONDS",
                   help=f"after SIGTERM or SIGINT, how long the table may take to stop before the process "
                        f"exits anyway (default {STOP_GRACE_S})")
    add_run_feed_options(p)
    add_run_scoreboard_option(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_edge_options(args)
    engine = edge_engine(args)
    # Standard output and standard error are written by threads of their own: a reader that pauses
    # never holds the table (controller.queued_output).
    out, err = StdoutLines(), QueuedOutput(sys.stderr, name="shoectl-stderr")
    # (the engine given back after: a caller running commands in turn in one process keeps its own)
    # A stop while starting up is a clean stop, within the stop grace like any other.
    with using_engine(engine), signals_held("shoectl run", args.stop_grace) as held:
        try:
            code = run_table(args, held, out, err)
        finally:
            output_read(out, err, held, args.stop_grace)
        if code == 0 and out.write_failed:  # what --json read after the table closed its journal (run_output)
            err.write(f"shoectl run: standard output lacks entries: {out.write_failed}; the journal has them\n",
                      always=True)
            return 1
        return code
