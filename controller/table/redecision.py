"""Deciding a journal again: are its records what a table decides from its inputs?

A chain that verifies proves that no entry changed after it was written. It cannot prove that the
records are what a table decides from the inputs beside them: whoever holds the HMAC key, or
recomputes a keyless chain, can write a round's result with other cards, a settlement with another
payout, a cut that was never offered. ``redecide(entries) -> Redecision`` finds that: it feeds
every journaled input, in order, to a fresh ``TableCore`` under the Rules Submission and the
devices the journal says were in force, and compares each record the core makes with the record
the journal holds in its place (``shoectl audit decisions``, docs/audit.md).

Rules of the comparison:

- The records a table makes from an input are journaled with it, in one transaction, right after
  it and in order; each is compared whole: kind, shoe, round and payload (as canonical JSON, the
  journal's own text, in the current schema's words: ``current_payload``). The first record that
  differs, is missing, or was made by no input ends the comparison (the table's state may differ
  from there on, so what follows would only repeat it): ``Redecision.difference``.
- A ``refused`` record is compared without its ``reason``: the words of a refusal are mended
  from version to version of the program, and a refusal changes nothing; the input, the state
  and the operator it names are compared.
- A record that lacks an optional key version 2 gained after it began (``kinds.ADDED_IN_VERSION_2``)
  is compared without it where no start up to it names the key's mark or a later one (or no start
  is journaled): ``signature`` (2026-12-06) for the keys added before the programs signed their
  starts, ``driver`` (2026-12-07) for ``discard``'s ``disclosed``; an earlier program may not have
  written the key (an upgrade review: every journal of the first week failed the audit, read as
  forged). A start that names the mark, whatever its value, or carries this program's own
  signature, was written by a program that writes the key, and every start after it is held to
  it too (a table rolled back to an earlier program then fails: it cannot be told from a forger's
  inserted start); nor where a record of that kind since the same start carries the key, before or
  after it: one program writes it in all or in none (``controller.table.earlier_programs``).
  ``Redecision.compared_without`` names the keys so left out, by kind. A record of a kind added
  alike (``kinds.KINDS_ADDED_IN_VERSION_2``: ``cover_card_early``) that the journal does not hold
  is passed over on the same terms (``kinds_not_written``). What it cannot tell: a keyless journal
  re-chained with the key (or the record) stripped from every record of a start and that mark and
  every later one deleted from every start up to it (the signature another program's) reads as an
  earlier program's; such records lose detail (who counted the cards, ...), never a decision.
- Where no start so far is this very program's (by its signature), what an earlier program said
  otherwise is compared as this one's (``earlier_programs``; ``reworded``): an ``irregularity``'s
  reason (its action, clause, card and position are the decision), another record's reason only in
  known earlier words (a void round's cause, a discard's rule are more than words), a version-1
  ``held_card_used``'s clause; and the ``irregularity`` and ``discard`` of a card dealt after a
  round's end, journaled with no round before 2026-12-05 (``rounds_not_named``).
- Records made outside the core are not decided again but put in force where they lie, as the
  running table did: ``controller_started`` (the core is told of the start; the devices its
  ``capabilities`` name, when they differ, make a new core that replays every input so far, as a
  restarted table does; its ``replayed`` count and ``state`` are checked), a ``submission`` no input
  made (its rules decide what follows), the edge monitor's ``edge`` and ``edge_alert``
  (``shoectl odds --journal`` recomputes those) and the control socket's refusals.
- A journal written before ``controller_started`` named the devices is decided with the built-in
  emulator's (a batch shuffler and a card-reading shoe): ``Redecision.assumed_devices`` says so.
- ``Redecision.written_by``: the program (version and signature) the last start before the
  difference named, so that the caller can tell a journal that another build wrote, whose
  decisions may differ from this one's for that reason alone, from one that this very program
  wrote and that its inputs do not decide to.

The entries are anything with the ``Entry`` fields (``JournalReader.entries()``), every kind, in
seq order. Nothing here reads a file or a clock.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from controller.journal import kinds
from controller.journal.chain import canonical_json
from controller.journal.errors import JournalContentError, malformed_entry
from controller.journal.vocabulary import current_payload
from controller.table.alert_check import AlertsDue
from controller.table.core import TableCore
from controller.table.io import TableRecord, jsonable
from controller.table.journaling import BUILT_IN_DEVICES, INPUT_KINDS, input_from, operator_column
from controller.table.earlier_programs import EarlierPrograms, same_refusal
from controller.table.errors import Refused
from controller.table.recovery import JournalInputs, replay, rules_asked_for, rules_of_record

__all__ = ["BUILT_IN_DEVICES", "Difference", "Redecision", "redecide"]

# Records written by the running table outside its core (see the module docstring).
NOT_DECIDED = frozenset({kinds.CONTROLLER_STARTED, kinds.SUBMISSION, kinds.EDGE, kinds.EDGE_ALERT,
                         kinds.CONNECTION_REFUSED, kinds.BAD_REQUEST, kinds.AUTH_REFUSED, kinds.REFUSALS_SUMMARY,
                         kinds.EVENTS_GIVEN_UP,  # journaled by a device's sender once it gave them up
                         kinds.CLOCK_STEP})  # journaled by the journal's writer (controller.journal.clockwatch)


@dataclass(frozen=True)
class Difference:
    """Where the journal and its decision part: at entry ``seq`` (None: after the last entry),
    ``why`` in words; ``journaled`` and ``decided``: the record on each side (kind, shoe, round,
    payload), None where that side has none."""

    seq: int | None
    why: str
    journaled: dict[str, Any] | None = None
    decided: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "why": self.why, "journaled": self.journaled, "decided": self.decided}


@dataclass
class Redecision:
    """What deciding the journal again found (see the module docstring)."""

    entries: int = 0
    inputs: int = 0
    records: int = 0          # the core's records compared and found equal
    starts: int = 0           # controller_started records
    rounds: int = 0           # round_result records among them
    assumed_devices: bool = False
    used_given_rules: bool = False  # the rules given (--submission) decided inputs the journal named none for
    difference: Difference | None = None
    last_seq: int = 0
    # The program the table's last start before the difference (or the journal's end) named:
    # {"version", "signature"} as ``controller_started`` journaled them; None before any start.
    written_by: dict[str, Any] | None = None
    compared_without: dict[str, list[str]] = field(default_factory=dict)  # kind -> keys an earlier program did not write
    reworded: dict[str, int] = field(default_factory=dict)  # kind -> records another program said in other words
    kinds_not_written: dict[str, int] = field(default_factory=dict)  # kind -> records an earlier program did not write
    rounds_not_named: dict[str, int] = field(default_factory=dict)  # kind -> records an earlier program gave no round

    @property
    def ok(self) -> bool:
        return self.difference is None

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "entries": self.entries, "inputs": self.inputs, "records": self.records,
                "starts": self.starts, "rounds": self.rounds, "assumed_devices": self.assumed_devices,
                "written_by": self.written_by, "compared_without": self.compared_without, "reworded": self.reworded,
                "kinds_not_written": self.kinds_not_written, "rounds_not_named": self.rounds_not_named,
                "difference": self.difference.to_json() if self.difference else None}


def _side(kind: str, shoe: str | None, rnd: int | None, operator: str | None, payload: Any) -> dict[str, Any]:
    return {"kind": kind, "shoe": shoe, "round": rnd, "operator": operator, "payload": payload}


def _decided(r: TableRecord) -> dict[str, Any]:
    return _side(r.kind, r.shoe, r.round, operator_column(r.kind, r.payload), r.payload)


def _journaled(e: Any, payload: Any = None) -> dict[str, Any]:
    return _side(e.kind, e.shoe_id, e.round_no, e.operator, current_payload(e) if payload is None else payload)


class _Redecider:
    """The walk over the entries (``redecide``); stops at the first difference."""

    def __init__(self, rules: Any = None) -> None:
        self.rules_given = rules      # for inputs before the journal names its rules
        self.result = Redecision()
        self.earlier = EarlierPrograms(self.result.compared_without, self.result.reworded,
                                       self.result.kinds_not_written, self.result.rounds_not_named)
        self.read = JournalInputs()   # every input so far, for a core rebuilt at a start
        self.core: TableCore | None = None
        self.table_id = "T1"
        self.devices: dict[str, Any] | None = None  # the capabilities the last start named
        self.expected: deque[TableRecord] = deque()  # what the last input made, not yet matched
        self.inputs_since_start = 0  # a submission no command made is written at a start, before any input
        self.alerts = AlertsDue()  # the surveillance notices the edge figures call for
        self.rounds_over: set[tuple[str | None, int | None]] = set()  # (shoe, round) whose result is compared

    def differ(self, seq: int | None, why: str, journaled: dict[str, Any] | None = None,
               decided: dict[str, Any] | None = None) -> None:
        self.result.difference = Difference(seq, why, journaled, decided)

    def pass_over_unwritten(self, kind: str | None, seq: int | None) -> None:
        """Decided records of a kind an earlier program did not write, which the journal does not
        hold here (``EarlierPrograms.not_written``): passed over."""
        while self.expected and self.expected[0].kind != kind and self.earlier.not_written(self.expected[0].kind, seq):
            self.expected.popleft()

    def missing(self, seq: int | None) -> None:
        r = self.expected[0]
        where = f"before entry {seq}" if seq is not None else "after the last entry"
        self.differ(seq, f"deciding again makes a {r.kind} record that the journal does not hold ({where})",
                    decided=_decided(r))

    def take(self, e: Any) -> None:
        if self.alerts.pending and e.kind != kinds.EDGE_ALERT:
            self.differ(e.seq, str(self.alerts.finish()), journaled=_journaled(e))
            return
        self.result.entries += 1
        self.result.last_seq = e.seq
        self.pass_over_unwritten(e.kind, e.seq)
        self.table_id = e.table_id or self.table_id
        if e.kind in INPUT_KINDS:
            if self.expected:
                self.missing(e.seq)
                return
            self.decide(e)
        elif self.expected:
            self.compare(e)
        elif e.kind == kinds.CONTROLLER_STARTED:
            self.started(e)
        elif e.kind == kinds.SUBMISSION:
            self.rules(e)
        elif e.kind in (kinds.EDGE, kinds.EDGE_ALERT):
            try:
                why = self.alerts.take(e)
            except (KeyError, TypeError, ValueError, ZeroDivisionError) as exc:
                raise malformed_entry(e, exc) from None
            if why is not None:
                self.differ(e.seq, why, journaled=_journaled(e))
        elif e.kind not in NOT_DECIDED:
            self.differ(e.seq, f"a record of kind {e.kind} that no input made: the table makes it only with the input "
                               "it decides on", journaled=_journaled(e))

    def decide(self, e: Any) -> None:
        inp = input_from(e)
        core = self.core
        if core is None and self.rules_given is not None:
            self.rules_in_force(jsonable(self.rules_given.to_dict()), self.rules_given)
            self.result.used_given_rules = True
            core = self.core
        if core is None:
            self.differ(e.seq, "an input before any Rules Submission: nothing says by which rules it was decided "
                               "(--submission names them)")
            return
        self.result.inputs += 1
        self.inputs_since_start += 1
        outs = core.handle(inp)
        refused = next((o.payload.get("reason") for o in outs if isinstance(o, TableRecord) and o.kind == kinds.REFUSED),
                       None)
        self.read.seqs.append(e.seq)
        self.read.inputs.append(inp)
        self.read.verdicts.append(None if refused is None else str(refused))
        self.expected.extend(o for o in outs if isinstance(o, TableRecord))

    def compare(self, e: Any) -> None:
        r = self.expected[0]
        payload = current_payload(e)
        try:
            text = canonical_json(payload)
        except ValueError:  # NaN or an infinity, read with --no-verify: no table writes one (a review's traceback)
            self.differ(e.seq, f"the journal's {e.kind} record holds a number no table writes (not a number, or "
                               "infinite)", decided=_decided(r))
            return
        # the columns too: the operator's was never compared, and who gave a command could be changed
        # unseen (a surveillance review). Empty where a table wrote one: an earlier shoectl's record
        # (the column came later), whose payload names the operator, compared below.
        unnamed = (e.round_no is None and r.round is not None
                   and self.earlier.may_lack_round(e.kind, after_its_round=(r.shoe, r.round) in self.rounds_over))
        same = (e.kind == r.kind and e.shoe_id == r.shoe and (e.round_no == r.round or unnamed)
                and e.operator in (None, operator_column(r.kind, r.payload))
                and (text == canonical_json(r.payload) or same_refusal(e.kind, payload, r.payload)
                     or self.earlier.lenient(e.kind, e.seq, text, payload, r.payload)
                     or self.earlier.reworded(e.kind, e.seq, payload, r.payload,
                                              version_1=e.schema_version == 1)))
        if not same:
            self.differ(e.seq, f"the journal's {e.kind} record is not what the table decides from the input before it",
                        journaled=_journaled(e, payload), decided=_decided(r))
            return
        if (why := self.earlier.carried(e.kind, payload)) is not None:
            self.differ(e.seq, why, journaled=_journaled(e, payload), decided=_decided(r))
            return
        if unnamed:
            self.earlier.lacked_round(e.kind)
        self.expected.popleft()
        self.result.records += 1
        if e.kind == kinds.ROUND_RESULT:
            self.result.rounds += 1
            self.rounds_over.add((r.shoe, r.round))

    def started(self, e: Any) -> None:
        p = e.payload
        self.result.starts += 1
        self.result.written_by = {"version": p.get("version"), "signature": p.get("signature")}
        self.earlier.started(p)
        devices = _devices(e)
        if devices is None:
            devices = BUILT_IN_DEVICES
            self.result.assumed_devices = True
        if self.core is not None and devices != self.devices:
            self.rebuild(e, devices)
            if self.result.difference is not None:
                return
        self.devices = devices
        self.inputs_since_start = 0
        self.read.starts_before[len(self.read.inputs)] = p.get("driver")
        if self.core is None:
            return
        if p.get("replayed") != len(self.read.inputs):
            self.differ(e.seq, f"the controller says it replayed {p.get('replayed')} inputs; the journal holds "
                               f"{len(self.read.inputs)} before it", journaled=_journaled(e))
            return
        if p.get("state") != self.core.state:
            self.differ(e.seq, f"the controller started in state {p.get('state')}; deciding the inputs again leaves "
                               f"the table {self.core.state}", journaled=_journaled(e))
            return
        self.core.restarted(p.get("driver"))

    def rebuild(self, e: Any, devices: dict[str, Any]) -> None:
        """A start with other devices: a new core replays every input so far (as the restarted
        table did, ``recovery.replay``)."""
        first_rules = self.read.rules_before[min(self.read.rules_before)]
        try:
            core = TableCore(rules_of_record(first_rules), table_id=self.table_id, **devices)
            replay(core, self.read)
        except (JournalContentError, TypeError) as exc:
            self.differ(e.seq, f"the table restarted with other devices and cannot decide its journal again: {exc}",
                        journaled=_journaled(e))
            return
        self.core = core

    def rules(self, e: Any) -> None:
        """A ``submission`` record no command made: the running table writes one as it starts,
        before any input, and other rules than those in force only at a closed table
        (``recovery.rules_asked_for``); one anywhere else is a forger's (a review: a commission
        changed between two rounds, and the settlements after it, decided again to themselves)."""
        sub = rules_of_record(e.payload)
        if self.inputs_since_start:
            self.differ(e.seq, "a submission record that no command made, after the table's inputs since it started: "
                               "the table writes one only as it starts", journaled=_journaled(e))
        else:
            if self.core is not None:
                try:
                    rules_asked_for(self.core, sub)
                except Refused:
                    self.differ(e.seq, f"other rules put in force at a start while the table is {self.core.state}: a "
                                       "table takes other rules only closed", journaled=_journaled(e))
                    return
            unlike = _unlike_its_preset(e.payload)
            if unlike:  # a forger's paytable under a shipped preset's name decided again to itself (a surveillance review)
                self.differ(e.seq, f"the submission record names the shipped {e.payload['source']}, but its rules are "
                                   f"not that preset's: {unlike}", journaled=_journaled(e))
                return
            self.rules_in_force(e.payload, sub)

    def rules_in_force(self, payload: dict[str, Any], sub: Any) -> None:
        self.read.rules_before[len(self.read.inputs)] = payload
        if self.core is None:
            self.core = TableCore(sub, table_id=self.table_id, **(self.devices or BUILT_IN_DEVICES))
            self.result.assumed_devices |= self.devices is None
        else:
            self.core.sub = sub


def _devices(e: Any) -> dict[str, Any] | None:
    """A ``controller_started`` record's ``capabilities`` (None: written before they were
    journaled); JournalContentError naming the entry when they are not ``BUILT_IN_DEVICES``' keys
    with values of their kinds."""
    devices = e.payload.get("capabilities")
    if devices is None:
        return None
    if not isinstance(devices, dict):
        raise malformed_entry(e, TypeError("capabilities"))
    devices = {"deck_capacity": None, **devices}  # (journaled before the capacity was: 2026-12-07)
    capacity = devices["deck_capacity"]
    if (set(devices) != set(BUILT_IN_DEVICES)
            or not all(type(v) is bool for k, v in devices.items() if k not in ("approval", "deck_capacity"))
            or not isinstance(devices["approval"], (str, type(None)))
            or not (capacity is None or (type(capacity) is int and capacity >= 1))):
        raise malformed_entry(e, TypeError("capabilities"))
    return devices


def redecide(entries: Iterable[Any], *, rules: Any = None) -> Redecision:
    """Decide the journal's inputs again and compare (see the module docstring). ``rules``: the
    Rules Submission of the inputs before the journal's first ``submission`` record (a journal
    written before they were journaled); without it such an input is a difference. A malformed
    input or ``submission`` record is a difference, named by its entry."""
    walk = _Redecider(rules)
    for e in entries:
        try:
            walk.take(e)
        except JournalContentError as exc:
            walk.differ(e.seq, str(exc))
        if walk.result.difference is not None:
            return walk.result
    walk.pass_over_unwritten(None, None)
    if walk.expected:
        walk.missing(None)
    elif (why := walk.alerts.finish()) is not None:
        walk.differ(None, why)
    return walk.result


def _unlike_its_preset(payload: dict[str, Any]) -> str:
    """Where a ``submission`` record that names a shipped preset (``source`` ``preset:NAME``)
    differs from this program's preset of that name, in words (``paytable.tie: 9:1, the preset's
    8:1``); empty when it does not, or names none this program ships."""
    from controller.rules.submission import preset_named  # noqa: PLC0415 - the audit's alone

    source = payload.get("source")
    preset = preset_named(source) if isinstance(source, str) and source.startswith("preset:") else None
    if preset is None:
        return ""
    shipped = jsonable(preset.to_dict())
    said = [f"{where}: {mine}, the preset's {theirs}" for where, mine, theirs in _differences(payload, shipped)]
    return "; ".join(said[:4]) + (f"; and {len(said) - 4} more" if len(said) > 4 else "")


def _differences(mine: Any, theirs: Any, where: str = "") -> Iterable[tuple[str, Any, Any]]:
    if isinstance(mine, dict) and isinstance(theirs, dict):
        for key in sorted(set(mine) | set(theirs), key=str):
            yield from _differences(mine.get(key), theirs.get(key), f"{where}.{key}" if where else str(key))
    elif mine != theirs:
        yield where, mine, theirs
