"""``shoectl run``'s table from its checked options to its exit code: ``run_table(args, held, out,
err)`` opens, starts, serves and stops it (``controller.cli.cmd_run`` has the options and what
each does). Also the seed a resumed table deals with (``resumed_seed``), the built-in emulator,
the links to the devices, and the anchors recorded as the table deals (``_anchored``).
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import os
import sys
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

from controller.cli.cmd_feed import FeedThread, run_feed_options
from controller.cli.cmd_scoreboard import bind_run_scoreboard, start_run_scoreboard
from controller.cli.cmd_systemd import service_watch
from controller.cli.common import same_terminal, submission_for
from controller.cli.outages import OutageLines
from controller.cli.run_control import claim_run_control
from controller.cli.run_devices import capacity_problem, parse_devices, table_capabilities
from controller.cli.run_options import (
    DEFAULT_SPEED, check_dealer_options, check_emulator_options, check_paths, run_log_path,
)
from controller.cli.run_display import LineDisplay
from controller.cli.run_output import JournalLines, StdoutLines
from controller.cli.stopping import run_until_signalled
from controller.errors import UsageError
from controller.journal import Journal, kinds, load_hmac_key
from controller.journal.anchors import AnchorFile, AnchorWitness, record_anchor
from controller.journal.errors import JournalContentError
from controller.journal.verification import require_intact
from controller.logconfig import configure_logging
from controller.queued_output import QueuedOutput
from controller.table.autodealer import AutoDealer
from controller.table.checks import cards_lost_with
from controller.table.core import TableCore
from controller.table.edge_monitor import EdgeMonitor
from controller.table.io import OperatorInput, TableRecord
from controller.table.errors import Refused
from controller.table.recovery import rules_asked_for
from controller.roles import AUTOMATED_FLOORPERSON, Role
from controller.table.runner import TableRunner
from shoectl_config.text import safe

__all__ = ["ROUND_ANCHOR_S", "resumed_seed", "run_table"]


def run_table(args: argparse.Namespace, held: list[int], out: StdoutLines, err: QueuedOutput) -> int:
    """The run's exit code: its table opened, started, served and stopped (``_Run``)."""
    table = _Run(args, held, out, err)
    table.open()
    try:
        table.start()
        stopped_by = table.serve()
    finally:
        table.stop()
    return table.exit_code(stopped_by)


class _Run:
    """One ``shoectl run``, step by step: ``open`` reads and checks every option, binds
    ``--scoreboard``'s port, claims the control socket and opens the journal, in that order;
    ``start`` makes the table, resumes it from its journal and starts its devices and services;
    ``serve`` runs it until it stops or a signal comes; ``stop`` (whatever ``start`` or
    ``serve`` raised) closes what was started; ``exit_code`` says how the run ended. A refusal
    is a ``UsageError`` raised before anything a later step makes exists."""

    def __init__(self, args: argparse.Namespace, held: list[int], out: StdoutLines, err: QueuedOutput) -> None:
        self.args, self.held, self.out, self.err = args, held, out, err
        self.emulator: Any = None  # the built-in emulator, when no --device is given
        self.service: Any = None  # systemd's notifications, once the table runs
        self.monitor: EdgeMonitor | None = None  # the edge monitor (docs/edge-monitor.md), once the table runs
        self.scoreboard: Any = None  # --scoreboard: the page of the table, once the table runs
        self.feed: Any = None  # --feed: the journal to the floor's broker (controller.cli.cmd_feed), once it runs
        self.anchor: Any = None  # the journal's anchor as it closed (stop)

    def open(self) -> None:
        """Every option read and checked, then ``--scoreboard``'s port bound, the control socket
        claimed (closed again if the journal cannot be opened), the log configured and the
        journal opened; the display that writes the run's records to standard output."""
        args, err, out = self.args, self.err, self.out
        self.sub = submission_for(None, args.submission)
        self.attached = parse_devices(args.device)
        self.profiles = [p for p, _ in self.attached.values()]
        if not Path(args.journal).exists() and (problem := capacity_problem(self.profiles, self.sub.decks)):
            raise UsageError(problem)  # a new table: its rules are known now, before anything is made
        check_emulator_options(args, self.attached)
        check_dealer_options(args)
        self.key = load_hmac_key(args.hmac_key) if args.hmac_key else None
        self.journal_path = journal_path = Path(args.journal)
        self.verified = check_paths(args, journal_path, self.key)  # every option checked before anything is created
        self.feed_options = run_feed_options(args)
        self.scoreboard_sock = bind_run_scoreboard(args)  # a port in use is refused before anything is created
        # before the journal: a second table on the socket changes nothing
        self.control = control = claim_run_control(args, journal_path)
        try:
            journal_path.parent.mkdir(parents=True, exist_ok=True)
            configure_logging(level=args.log_level, file=str(run_log_path(args, journal_path)), table=args.table_id,
                              stderr=err)
            self.journal = journal = Journal.open(journal_path, table_id=args.table_id, hmac_key=self.key)
        except BaseException:
            control.close()
            raise
        self.display: Any = JournalLines(journal, out) if args.json else LineDisplay(out)
        self.witness = AnchorFile.beside(journal_path)  # anchors at opening, at every shoe end, at stopping

    def say(self, text: str) -> None:
        """A line for people on standard error, in order with the log's."""
        self.err.write(text + "\n", always=True)

    # -- start ------------------------------------------------------------------------------

    def start(self) -> None:
        """The table made and resumed from its journal, its anchor at opening recorded, its
        devices linked, then the control socket, systemd's watch, the scoreboard and the feed."""
        self.make_table()
        resumed = self.resume()
        if isinstance(self.display, LineDisplay):
            self.display.resumed_from_journal(self.core.snapshot())
        # The anchor at opening once every refusal of the resumed journal is past (a refused
        # --submission rewrote the anchors file: a review of bad inputs); replaying writes nothing.
        self.witness.record(self.journal.take_anchor())
        self.link_devices(resumed)
        self.control.start(self.runner)
        for warning in self.control.warnings:
            self.say(f"!! {warning}")
        self.service = service_watch(self.runner).start()
        self.scoreboard = start_run_scoreboard(self.scoreboard_sock, self.journal_path, self.key)
        if self.feed_options is not None:  # after the journal's first entries: a feed follows an existing journal
            self.feed = FeedThread(self.journal_path, self.feed_options, self.key,
                                   stop_grace=self.args.stop_grace).start()

    def make_table(self) -> None:
        """The table core (the journal verified first when resuming it), the display its mode
        asks for, the automated dealer unless ``--manual``, and the runner between them."""
        args, journal = self.args, self.journal
        if journal.last_seq and not self.verified:
            require_intact(self.journal_path, hmac_key=self.key)  # resuming replays it: only a journal that verifies
        self.core = core = TableCore(self.sub, table_id=args.table_id, **table_capabilities(self.profiles))
        if not args.json:
            self.display.snapshot = core.snapshot
        # TERM=dumb cannot redraw: the live screen stayed blank for the whole run (a review of terminals)
        redraws = sys.stdout.isatty() and os.environ.get("TERM") != "dumb"
        self.mode = args.display or ("live" if redraws and not args.json else "lines")
        if self.mode == "live" and not args.json:
            from controller.table.display import LiveDisplay

            self.display = LiveDisplay(lambda: runner.latest_snapshot)
        self.auto = auto = None if args.manual else AutoDealer(seed=args.seed)
        self.runner = runner = TableRunner(
            core, journal, autodealer=auto, on_record=_anchored(self.display.record, self.witness, journal),
            on_notice=self.display.notice, rounds=args.rounds, shoes=args.shoes, pace=(args.pace or 0) / 1000)
        self.out.on_gone = runner.stop  # the reader went away: stop as after --shoes N
        if auto is not None:
            auto.on_give_up = lambda why: (_log_give_up(why), runner.stop())  # a person must act: in the log too

    def resume(self) -> int:
        """Replay the journal into the table (how many inputs), then refuse a ``--submission`` it
        may not take now, rules the devices cannot deal, and a journal whose cards the edge
        monitor cannot read; attach the edge monitor."""
        args, journal_path, runner = self.args, self.journal_path, self.runner
        try:
            resumed = runner.recover_from_journal()
        except JournalContentError as exc:  # a journal that verifies, with an input no table wrote
            raise UsageError(f"{journal_path}: {exc}: the table does not resume from it") from None
        if args.submission is not None:
            try:
                rules_asked_for(self.core, self.sub)
            except Refused as exc:
                raise UsageError(f"--submission {args.submission}: {exc}") from None
            runner.refresh_snapshot()
        if (problem := capacity_problem(self.profiles, self.core.sub.decks)) is not None:
            raise UsageError(problem)  # the rules the journal holds (a new table's were looked at above)
        if not args.no_edge_monitor:
            self.monitor = monitor = EdgeMonitor(Decimal(0) if args.edge_threshold is None else args.edge_threshold)
            if resumed:
                try:
                    monitor.prime_from(self.journal)
                except JournalContentError as exc:  # a card record no table wrote
                    raise UsageError(f"{journal_path}: {exc}: the table does not resume from it") from None
            monitor.attach(runner)
        return resumed

    def link_devices(self, resumed: int) -> None:
        """The seed drawn for a resumed journal, the built-in emulator started unless ``--device``
        (giving up the shoe a resumed journal left in play), and the links to the devices."""
        args, runner = self.args, self.runner
        seed = resumed_seed(args.seed, self.journal.last_seq if resumed else 0)  # the emulator's and the dealer's
        if resumed and self.auto is not None and seed is not None:
            self.auto.rng.seed(seed)
        if resumed and not args.json:
            self.out.line(f"resumed from {self.journal_path}: {resumed} inputs replayed; "
                          f"the table is {self.core.state}")
        attached = self.attached
        if not attached:
            self.emulator, attached = _start_emulator(args, seed)
            if resumed and cards_lost_with("shoe", self.core.state):
                # A new built-in emulator holds no cards: the shoe the journal left in play is gone
                # (the table says in which states a device holds them: not while shuffling, nor
                # with the cards spread for inspection). Its devices come back with new event
                # epochs, so the table gives that shoe up itself (``events.device_replaced``; in a
                # fault, once the faults clear). A --manual table has no automated floorperson, and
                # a person told to restart the shoe would throw away the new one (a console review).
                if args.manual:
                    self.say("!! the built-in emulator was restarted without the cards of the shoe in play: the "
                             "table gives that shoe up as its devices come back, and starts another")
                else:
                    runner.submit(OperatorInput("restart_shoe", {"reason": "the built-in emulator was restarted"},
                                                AUTOMATED_FLOORPERSON, Role.FLOORPERSON))
        # the live display shows faults itself
        runner.links = _make_links(runner, attached, self.say, outage_lines=self.mode != "live",
                                   seeded=self.emulator is None)

    # -- serve and stop ---------------------------------------------------------------------

    def serve(self) -> int | None:
        """Run the table until it stops (None) or a signal stops it (the signal's number)."""
        def stop() -> None:
            self.service.stopping()  # at once: closing the links may take seconds
            self.runner.stop()
        if self.mode == "live" and not self.args.json:
            above = same_terminal(sys.stdout, sys.stderr)  # warnings above the screen, not under its
            self.display.start(stderr_above=above)  # redraws (a review of terminals); drawn before the first record
            if above:
                self.err.divert = self.display.print_above
        gc.freeze()  # start-up's objects live as long as the table: a full collection (~10 ms) skips them
        try:
            return run_until_signalled(self.runner.run, stop, name="shoectl run", grace_s=self.args.stop_grace,
                                       held=self.held)
        finally:
            gc.unfreeze()  # an in-process caller (the tests' CLI runner) gets its heap back as it was

    def stop(self) -> None:
        """Close what ``start`` made, in this order: systemd told the table stops, the edge
        monitor, the scoreboard (or its port), the display, the control socket, the built-in
        emulator; then the anchor at stopping (not for a journal gone), the feed, and the
        journal, its last anchor kept for ``exit_code``."""
        if self.service is not None:
            self.service.stopping()
        if self.monitor is not None:
            self.monitor.close()
        if self.scoreboard is not None:
            self.scoreboard.stop()
        elif self.scoreboard_sock is not None:
            self.scoreboard_sock.close()
        self.display.close()
        self.control.close()
        if self.emulator is not None:
            self.emulator.close()
        journal = self.journal
        if self.witness.recorded and journal.gone is None:  # a journal gone: its anchor is not for what comes there
            record_anchor(self.witness, journal)
        if self.feed is not None:
            self.feed.stop()  # it publishes what the journal holds, for a few seconds
        self.anchor = journal.anchor() if journal.last_seq else None
        journal.close()

    def exit_code(self, stopped_by: int | None) -> int:
        """The journal's last line (without ``--json``), then 0; 1 with a line saying why when
        the table stayed closed or standard output lost lines; 128 + the signal that stopped it."""
        if not self.args.json:
            # a byte not UTF-8 as \xff
            self.out.line(safe(f"journal {self.journal_path}: {self.anchor or 'empty'}"), always=True)
        auto = self.auto
        if stopped_by is None and auto is not None and auto.gave_up:
            self.say(f"shoectl run: the table stays closed: {auto.gave_up}")
            return 1
        if stopped_by is None and self.out.write_failed:  # the table dealt on: its journal has every entry
            self.say(f"shoectl run: standard output could not be written ({self.out.write_failed}): lines are "
                     f"missing from it; the journal {self.journal_path} holds every entry")
            return 1
        return 0 if stopped_by is None else 128 + stopped_by  # 143 after SIGTERM, 130 after SIGINT


def resumed_seed(seed: int | None, resumed_at: int) -> int | None:
    """The seed of the built-in emulator and the automated dealer: ``--seed`` for a new journal;
    for one resumed at entry ``resumed_at``, one drawn from both, so that a table resumed with the
    same command does not deal again the shoes it dealt (a surveillance review saw shoe 3 dealt as
    shoe 1, card for card, and the shuffle audit fail on it) nor place again the wagers it placed
    (a lab's review), and the same journal resumed alike deals alike."""
    if seed is None or not resumed_at:
        return seed
    return int.from_bytes(hashlib.sha256(f"{seed}:{resumed_at}".encode()).digest()[:8], "big")


def _start_emulator(args: argparse.Namespace, seed: int | None) -> tuple[Any, dict[str, tuple[Any, str]]]:
    from firmware_bridge.emulator.faults import FaultSpec
    from firmware_bridge.emulator.serving import serve_table
    from firmware_bridge.emulator.table import EmulatedTable
    from firmware_bridge.profiles import get_profile

    # --speed and --faults were parsed with the arguments (controller.cli.run_options)
    speed = DEFAULT_SPEED if args.speed is None else args.speed
    table = EmulatedTable(seed=seed, speed=speed, faults=args.faults or FaultSpec(), dealt_log=args.dealt_log)
    server = serve_table(table)
    ports = {d["profile"]: d["port"] for d in server.devices()}
    attached = {"shuffler": (get_profile("emulated-shuffler"), ports["emulated-shuffler"]),
                "shoe": (get_profile("emulated-shoe"), ports["emulated-shoe"])}
    return server, attached


def _make_links(runner: TableRunner, attached: dict[str, tuple[Any, str]], say: Callable[[str], None],
                outage_lines: bool = True, seeded: bool = True) -> dict[str, Any]:
    """The links of the attached devices; with ``outage_lines``, each says one line (``say``: on
    standard error) per outage (``controller.cli.outages``). ``seeded``: each link is told the last event the
    journal holds from its device; not for a built-in emulator started by this run, a new device
    (told, its link would only find the event counter restarted and warn at every resume)."""
    from firmware_bridge.link import DeviceLink

    links = {}
    for role, (profile, port) in attached.items():
        seed = runner.last_delivered_for(role) if seeded else None
        options = runner.link_options(role)
        lines = OutageLines.for_device(role, profile, port, say)
        if outage_lines:
            options["on_state"] = lines.wrap(options["on_state"])
        links[role] = DeviceLink.from_profile(profile, port, **options, last_delivered=seed[1] if seed else None,
                                              last_delivered_serial=seed[0] if seed else None)
        lines.for_link(links[role])
    return links


# A round's end is anchored once this long has passed since the last anchor: a first shoe (an hour at
# a table) was checked against its opening anchor alone (a surveillance review), and an anchor a
# round would grow the file by a line every minute or less at every table.
ROUND_ANCHOR_S = 60.0


def _anchored(on_record: Callable[[TableRecord], None], witness: AnchorWitness, journal: Journal,
              clock: Callable[[], float] = time.monotonic) -> Callable[[TableRecord], None]:
    """``on_record`` that also has ``witness`` record the journal's anchor at every shoe end (the
    reconciliation record) and at a round's end (its cards to the discard rack) ``ROUND_ANCHOR_S``
    or more after the last, on the table's thread (docs/journal.md, Anchors)."""
    last = [clock()]

    def record(r: TableRecord) -> None:
        on_record(r)
        if r.kind == kinds.RECONCILIATION or (r.kind == kinds.DISCARD_RACK and clock() - last[0] >= ROUND_ANCHOR_S):
            record_anchor(witness, journal)
            last[0] = clock()
    return record


def _log_give_up(why: str) -> None:
    """The automated floorperson gave up (the table stays closed for a person): logged, as every
    fault that holds the table is; it was in no log line (a review of logs)."""
    import structlog

    structlog.get_logger().error("the automated floorperson gave up: the table stays closed", reason=why)
