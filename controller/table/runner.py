"""The table runner: one thread owns the table core; the links, the senders and the operators only
enqueue.

For each input, in the order it was queued:
1. a device event already in the journal (same device serial, event epoch and counter: resent
   after a crash or a reconnect) is not processed again;
2. the core decides (``TableCore.handle``);
3. the input and every record the core made from it are appended in ONE transaction
   (``Journal.append_batch``: all or nothing, durable when it returns); device events that are
   waiting together in the inbox are decided one after the other and share one transaction
   (group commit: one fsync for the lot);
4. only then do the core's outputs go out (displays, subscribers, device commands to the senders),
   and then each device event stored is acknowledged: the owner calls ``link.acknowledge`` and the
   link's supervisor sends EVENT_ACK at once.
A crash anywhere loses nothing: an input not yet committed is resent by its device (device
events) or was never acted on (operator commands); a committed one is found in the journal at the
restart, where ``recover`` feeds every journaled input to a fresh core to rebuild its state; the
commands the restart re-issues wait until every link has said which device answers (``DevicesHeard``).

Threads: the owner (``run``), one sender per device role (``link.request`` may block for a reply
or a retry), and the links' own threads. Nothing here blocks the owner on device I/O. A device
event crosses one thread boundary: the link's reader hands it over (``link_options``: hand-off
delivery, ``auto_ack=False``) onto the inbox, and the owner takes it from there to the journal
and the acknowledgement (docs/architecture.md, "The path of one card").
"""
from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

import structlog

from controller.journal import Journal
from controller.table.core import TableCore
from controller.table.devices_heard import DevicesHeard
from controller.table.events import shoe_of_input
from controller.table.faults import held_level
from controller.table.io import (CommandFailed, DeviceInput, DeviceStatus, GiveUpMissingEvents, Notice, OperatorInput,
                                 SendCommand, TableRecord)
from controller.table.inbox import DeviceItem, JournalNote, OperatorItem, OwnerTask, Stop, drain
from controller.table.senders import DeviceSenders
from controller.table.subscribers import Subscribers
from controller.table.stored_events import StoredEvents
from controller.table.link_wiring import acknowledge_stored, link_options
from controller.table.run_limits import RunLimits
from controller.table.journaling import (command_failed_record, device_input_record, note_record, operator_input_record,
                                         output_records, rules_record, started_record, status_input_record)
from controller.table.recovery import replay_journal
from controller.signature import signature_label
from controller.version import shoectl_version

log = structlog.get_logger()

MAX_GROUP = 64  # device events journaled in one transaction at most


class TableRunner:
    """Owns a ``TableCore``; see the module docstring.

    Args:
        core: the table core (fresh; ``recover_from_journal`` rebuilds it).
        journal: an open ``Journal`` (written only by the owner thread).
        links: device role ("shuffler", "shoe") -> a ``DeviceLink`` not yet started, created with
            ``**runner.link_options(role)``.
        autodealer: gives operator commands when the table waits for people (or None).
        on_record / on_notice: display hooks, called on the owner thread.
        rounds / shoes: stop after this many rounds / shoes dealt (``RunLimits``; None: until stopped).
        pace: seconds the automated dealer waits between its actions.
    """

    def __init__(self, core: TableCore, journal: Journal, links: dict[str, Any] | None = None, *,
                 autodealer: Any = None, on_record: Callable[[TableRecord], None] | None = None,
                 on_notice: Callable[[Notice], None] | None = None, rounds: int | None = None,
                 shoes: int | None = None, pace: float = 0.0) -> None:
        self.core = core
        self.journal = journal
        self.links: dict[str, Any] = dict(links or {})
        self.autodealer = autodealer
        self.on_record = on_record
        self.on_notice = on_notice
        self.limits = RunLimits(rounds, shoes)
        self.pace = pace
        self._starting: DevicesHeard | None = None  # until the links said which devices answer
        self.inbox: queue.SimpleQueue[Any] = queue.SimpleQueue()  # the cheapest wake-up of the owner
        self._stored = StoredEvents(journal)
        self._stopping = threading.Event()
        self._log = log.bind(table=core.table_id)
        self._senders = DeviceSenders(self._stopping, self.inbox.put, self._log, note=self.note)
        self._last_auto = 0.0
        self._auto_waits = False  # the automated dealer had nothing to do at its last turn
        self.error: BaseException | None = None
        self.on_stopping: list[Callable[[], None]] = []  # run on the owner thread before the table stops
        self.latest_snapshot: dict[str, Any] = core.snapshot()  # replaced (not mutated) by the owner
        self.turns = 0  # the owner loop's turns (at least one per 0.2 s while it runs): its liveness
        # What recover_from_journal keeps (not the inputs: a month's held 600 MB, a long-run review).
        self._replayed = 0                        # how many journaled inputs it fed to the core
        self._serial_of_role: dict[str, str] = {}  # each device role's last serial
        self._rules_journaled: dict[str, Any] | None = None  # the last submission record (recover_from_journal)
        self._subscribers = Subscribers()

    def link_options(self, role: str) -> dict[str, Any]:
        """The keyword arguments of the ``DeviceLink`` for ``role`` (``link_wiring``): its events
        and state changes onto this runner's inbox, each event acknowledged by the owner."""
        return link_options(self.inbox.put, lambda r: getattr(self.links.get(r), "identity", None), role)

    def submit(self, op: OperatorInput) -> None:
        """Queue an operator command (from the console or a script)."""
        self.inbox.put(op)

    def submit_and_wait(self, op: OperatorInput, timeout: float = 10.0) -> list[Any]:
        """Queue an operator command and return the core's outputs for it. TimeoutError when the
        owner has not taken it within ``timeout`` (it is then withdrawn: never carried out), or
        took it but gave no answer within ``timeout`` more (it may be in the journal)."""
        item = OperatorItem(op, queue.Queue(maxsize=1))
        self.inbox.put(item)
        result = item.answer(timeout)
        if isinstance(result, BaseException):
            raise result
        return result

    def note(self, kind: str, payload: dict[str, Any], operator: str | None = None,
             shown: dict[str, Any] | None = None) -> None:
        """Journal a record on the owner thread (e.g. an authentication refusal); ``shown``: its
        payload as the control socket's event streams show it, when that is less (the journal
        keeps that an id was unknown; a subscriber reads what the person who tried was told)."""
        self.inbox.put(JournalNote(kind, payload, operator, shown))

    def call_on_owner(self, task: Callable[[], None]) -> None:
        """Run ``task`` on the owner thread, in inbox order (e.g. the edge monitor's figures,
        computed elsewhere, journaled by the owner through ``journal_outputs``)."""
        self.inbox.put(OwnerTask(task))

    def journal_outputs(self, outs: list[Any]) -> None:
        """(owner thread) Journal the records among ``outs`` in one transaction, then dispatch
        ``outs`` (displays, subscribers) as the core's own outputs are."""
        self.journal.append_batch(output_records([o for o in outs if isinstance(o, TableRecord)]))
        for o in outs:
            self._dispatch(o)

    def subscribe(self, maxsize: int = 1000, *, since_start: bool = False, surveillance: bool = False) -> queue.Queue[Any]:
        """A queue that receives every record and notice as a JSON-ready dict (dropped when full);
        ``since_start``: those since the table started first; ``surveillance``: surveillance's too
        (``Subscribers``)."""
        return self._subscribers.add(maxsize, since_start=since_start, surveillance=surveillance)

    def unsubscribe(self, q: queue.Queue[Any]) -> None:
        self._subscribers.remove(q)

    def recover_from_journal(self) -> int:
        """Feed every journaled input to the core, held to the verdicts they met then
        (``recovery``: JournalContentError naming an entry that meets another); returns how many.
        Remembers each device role's serial (``last_delivered_for``) and the last Rules
        Submission journaled (``journal_rules_in_force``)."""
        done = replay_journal(self.core, self.journal)
        self._rules_journaled = done.rules_journaled
        self._replayed, self._serial_of_role = done.inputs, done.serial_of_role
        self.refresh_snapshot()
        return self._replayed

    def refresh_snapshot(self) -> None:
        """``latest_snapshot`` taken again from the core: by the owner after each transaction, and
        by the starting thread once it has set the core (recovery, ``run --submission``), before
        the control socket or a display shows the table (they would show a fresh, closed one)."""
        self.latest_snapshot = self.core.snapshot()

    def journal_rules_in_force(self) -> bool:
        """Journal the Rules Submission the core decides by unless it is the one last journaled
        (``journaling.rules_record``; after ``recover_from_journal``, which replays a
        floorperson's ``set_submission``). True if it wrote the record."""
        record = rules_record(self.core.sub, self._rules_journaled)
        if record is not None:
            self.journal.append_batch([record])
            self._rules_journaled = record.payload
        return record is not None

    def last_delivered_for(self, role: str) -> tuple[str, tuple[int, int]] | None:
        """(device serial, (epoch, counter)) of the last stored event from the device in ``role``
        (after ``recover_from_journal``)."""
        serial = self._serial_of_role.get(role)
        if serial is None:
            return None
        last = self.journal.last_device_counter(serial)
        return (serial, last) if last else None

    # -- running ------------------------------------------------------------------------------------
    def start_links(self) -> None:
        for role, link in self.links.items():
            if link.auto_ack:  # it would acknowledge events before the owner stored them
                raise ValueError(f"the {role} link must be made with runner.link_options(role)")
        for role, link in self.links.items():
            self._senders.start(role, link)
            link.start()

    def run(self) -> None:
        """Process inputs until stopped (``stop()``, or the rounds/shoes limit)."""
        self.journal.checkpoint_in_background()  # no WAL checkpoint inside a card's commit
        driver = "automated" if self.autodealer is not None else "operators"
        self.journal.append_batch([started_record(self.core, self._replayed, shoectl_version(), signature_label(), driver)])
        self.core.restarted(driver)  # where the record lies among the inputs: a replay does the same there
        self.journal_rules_in_force()
        self._starting = DevicesHeard(self.links)
        self.start_links()
        try:
            while not self._stopping.is_set():
                self.turns += 1
                if self._starting is not None and self._starting.ready:
                    starting, self._starting = self._starting, None
                    for o in starting.to_reissue(self.core.resume_outputs(restart=True)):  # what a restart re-issues
                        self._dispatch(o)
                try:
                    item = self.inbox.get_nowait()
                except queue.Empty:
                    # Nothing from the devices or the console: the people at the table act. Their
                    # act may end the last round (a reveal, at a squeeze): the limit is looked at
                    # (a review: a Midibaccarat run of 5 rounds dealt 35, a wager left in none).
                    if self._auto():
                        if self.limits.reached:
                            break
                        continue
                    try:
                        item = self.inbox.get(timeout=self._idle_timeout())
                    except queue.Empty:
                        continue
                if type(item) is DeviceItem:
                    item = self._process_device_items(item)  # the item after the device events, if any
                if isinstance(item, Stop):
                    break
                if item is not None:
                    self._process(item)
                if self.limits.reached:
                    break
        except BaseException as exc:  # a journal that cannot be written stops the table
            self.error = exc
            self._log.error("table stopped", error=str(exc))
            raise
        finally:
            self._stopping.set()
            if self.error is None:
                self._last_notes()
            self._shutdown()

    def stop(self) -> None:
        self._stopping.set()
        self.inbox.put(Stop())

    def _idle_timeout(self) -> float:
        # The automated dealer decides on the core's state alone: idle, wait for an input; pacing, its turn.
        if self._starting is not None:  # no later than the devices' wait ends
            return min(max(self._starting.time_left(), 0.001), 0.2)
        if self.autodealer is None or self._auto_waits:
            return 0.2
        return min(max(self.pace - (time.monotonic() - self._last_auto), 0.001), 0.2)

    def _auto(self) -> bool:
        """Let the automated dealer act (at most once per ``pace``); True if it did."""
        if self.autodealer is None or self._starting is not None:
            return False
        now = time.monotonic()
        if now - self._last_auto < self.pace:
            return False
        op = self.autodealer.next_input(self.core)
        self._auto_waits = op is None
        if op is None:
            return False
        self._last_auto = now
        self._process(op)
        return True

    # -- one input ----------------------------------------------------------------------------------
    def _where(self) -> tuple[str | None, int | None]:
        """The shoe and round in play (bound to the log lines that follow)."""
        shoe, rnd = self.core.in_play()
        structlog.contextvars.bind_contextvars(shoe=shoe, round=rnd)
        return shoe, rnd

    def _process(self, item: Any) -> None:
        core = self.core
        shoe, rnd = self._where()
        if isinstance(item, OperatorInput):
            outs = core.handle(item)
            self._commit(operator_input_record(item, shoe, rnd), outs)
        elif isinstance(item, OperatorItem):
            if not item.take():  # its caller stopped waiting: never carried out (it was told so)
                return
            try:
                outs = core.handle(item.op)
                self._commit(operator_input_record(item.op, shoe, rnd), outs)
            except BaseException as exc:
                item.reply.put(exc)
                raise
            item.reply.put(outs)
        elif isinstance(item, JournalNote):
            note = note_record(item.kind, item.payload, item.operator, shoe, rnd)  # journaled whatever it holds
            self.journal.append_batch([note])
            shown = note.payload if item.shown is None else item.shown
            self._subscribers.publish_record(self.journal, note.kind, shoe, rnd, shown)
        elif isinstance(item, DeviceStatus):
            if self._starting is not None:
                self._starting.heard(item)
            outs = core.handle(item)
            self._commit(status_input_record(item, shoe, rnd), outs)
        elif isinstance(item, CommandFailed):
            outs = core.handle(item)
            self._commit(command_failed_record(item, shoe, rnd), outs)
        elif isinstance(item, OwnerTask):
            item.task()

    def _process_device_items(self, item: DeviceItem) -> Any:
        """``item`` and the device events queued right behind it (group commit): each one the
        journal does not hold yet is decided by the core in turn; all are journaled in ONE
        transaction; then the outputs go out, in order, and each is acknowledged. A failed commit
        raises: none is acknowledged and the devices resend them. Returns the first other input
        taken from the inbox (to process next), or None."""
        acks, outs, records = [], [], []
        other = None
        while True:
            ev = item.link_event
            link = self.links[item.role]
            # The link's sequencer dropped what this process already stored; the journal's key is
            # the backstop for what a crash left unacknowledged (docs/link.md, section 6).
            if not self._stored.contains(ev.serial, ev.epoch, ev.counter):
                inp = DeviceInput(item.role, ev.message)
                shoe, rnd = shoe_of_input(self.core, inp), self._where()[1]  # asked before it is decided
                decided = self.core.handle(inp)
                records.append(device_input_record(inp, ev.serial, ev.epoch, ev.counter, shoe, rnd))
                records.extend(output_records([o for o in decided if isinstance(o, TableRecord)]))
                outs.extend(decided)
                self._stored.add(ev.serial, ev.epoch, ev.counter)
            acks.append((link, ev))
            if len(acks) >= MAX_GROUP:
                break
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                break
            if type(item) is not DeviceItem:
                other = item
                break
        if records:
            try:
                self.journal.append_batch(records, results=False)
            except BaseException:
                self._stored.rolled_back()
                raise
            self._stored.committed()
            self.refresh_snapshot()
        for o in outs:  # the decision first (displays, the next prompt), then the acknowledgements
            self._dispatch(o)
        acknowledge_stored(acks, self._log)
        return other

    def _commit(self, first: Any, outs: list[Any]) -> None:
        """Journal ``first`` and the core's records in one transaction; then the outputs."""
        records = [o for o in outs if isinstance(o, TableRecord)]
        self.journal.append_batch([first, *output_records(records)], results=False)
        self.refresh_snapshot()
        for o in outs:
            self._dispatch(o)

    def _dispatch(self, o: Any) -> None:
        if isinstance(o, TableRecord):
            if (held := held_level(o.kind, o.payload, automated=self.autodealer is not None)) is not None:
                getattr(log, held[0])("the table is held by a fault", fault=held[1])
            self.limits.count(o)
            if self.on_record is not None:
                self.on_record(o)
            self._subscribers.publish_output(self.journal, o)
        elif isinstance(o, Notice):
            if self.on_notice is not None:
                self.on_notice(o)
            self._subscribers.publish_output(self.journal, o)
        elif isinstance(o, SendCommand | GiveUpMissingEvents):
            if self._starting is not None and isinstance(o, SendCommand):
                self._starting.sent(o)
            self._senders.send(o)  # a role without a device is said there

    def _last_notes(self) -> None:
        """Before the table stops: the ``on_stopping`` hooks (e.g. the control socket's last
        refusal summary), then every note still queued is journaled — a record handed to ``note``
        is never lost to a stop. Other queued inputs are left: a device event not acknowledged is
        resent by its device, and a command not answered was never confirmed to its operator."""
        for hook in self.on_stopping:
            try:
                hook()
            except Exception as exc:  # noqa: BLE001 - stopping: report, go on
                self._log.warning("stop hook failed", error=str(exc))
        for note in drain(self.inbox, JournalNote):
            self._process(note)

    def _shutdown(self) -> None:
        for link in self.links.values():
            try:
                link.stop()
            except Exception as exc:  # noqa: BLE001 - shutting down: report, go on
                self._log.warning("link stop failed", error=str(exc))
        self._senders.join(timeout=2)

