"""A table's restart from its journal, in one pass over it.

``replay_journal(core, journal) -> Replayed``: what the table's start uses. It reads the inputs
and feeds them to the core as it reads them, at most ``REPLAY_CHUNK`` held at once, so that a
start's memory does not grow with the journal (a review of long shifts: every input of a 250-shoe
journal held at once took 138 MB, and left the heap that much larger for the table's life); as
``replay`` below, held to each input's verdict, and under the rules and starts as they lie among
them. ``Replayed``: how many inputs, each device role's last serial, the last Rules Submission.

``JournalInputs``: inputs to feed the core again, in order with their seqs; the verdict each met
when it was journaled (the reason of the ``refused`` record written just after it, or None: it was
taken); the Rules Submissions journaled, each with the input it came before; where the controller
started (its ``controller_started`` records), by the input each came before. The decisions audit
(``redecision``) holds them all, as it rebuilds a core at each start.

``replay(core, read)`` feeds them to the core (``TableCore.recover``) under the rules the journal
says they met (each ``submission`` record puts its rules in force from there on, whatever rules the
core was made with), telling it where each start fell (``TableCore.restarted``, as the live table
was told then), held to those verdicts: an
input refused now and taken then (rules an earlier shoectl took, such as a House Money payout
placed in parts), or the other way round, would leave the table in another state than its journal
records, so it raises ``JournalContentError`` naming the entry instead. The journal stays readable.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.journal import kinds
from controller.journal.errors import JournalContentError
from controller.rules.errors import SubmissionError
from controller.rules.submission import submission_from_document
from controller.table.core import TableCore
from controller.table.errors import Refused
from controller.table.io import DeviceInput
from controller.table.journaling import INPUT_KINDS, input_from
from controller.table.machine import state_words
from shoectl_config.text import quoted


@dataclass
class JournalInputs:
    """See the module docstring."""

    seqs: list[int] = field(default_factory=list)
    inputs: list[Any] = field(default_factory=list)
    verdicts: list[str | None] = field(default_factory=list)
    rules_before: dict[int, dict[str, Any]] = field(default_factory=dict)  # input index -> the rules then in force
    # input index a start of the controller came before -> who drove the table from there (its ``driver``)
    starts_before: dict[int, str | None] = field(default_factory=dict)


REPLAY_CHUNK = 4096  # inputs held at once by replay_journal


@dataclass
class Replayed:
    """What ``replay_journal`` fed the core: see the module docstring."""

    inputs: int = 0
    serial_of_role: dict[str, str] = field(default_factory=dict)
    rules_journaled: dict[str, Any] | None = None


def replay_journal(core: TableCore, journal: Any) -> Replayed:
    """See the module docstring. A ``refused`` record follows the input it refuses at once, so the
    inputs held are fed (their verdicts whole) before the next input is held, and before a start
    or a Rules Submission is applied."""
    done = Replayed()
    seqs: list[int] = []
    inputs: list[Any] = []
    verdicts: list[str | None] = []

    def feed() -> None:
        _feed(core, seqs, inputs, verdicts)
        done.inputs += len(inputs)
        seqs.clear()
        inputs.clear()
        verdicts.clear()

    for e in journal.entries(kinds=(*INPUT_KINDS, kinds.SUBMISSION, kinds.REFUSED, kinds.CONTROLLER_STARTED)):
        if e.kind == kinds.CONTROLLER_STARTED:
            feed()
            core.restarted(e.payload.get("driver"))
        elif e.kind == kinds.SUBMISSION:
            feed()
            core.sub, done.rules_journaled = rules_of_record(e.payload), e.payload
        elif e.kind == kinds.REFUSED:  # written with the input it refuses, just after it
            if inputs:
                verdicts[-1] = str(e.payload.get("reason", ""))
        elif (inp := input_from(e)) is not None:
            if len(inputs) >= REPLAY_CHUNK:
                feed()
            seqs.append(e.seq)
            inputs.append(inp)
            verdicts.append(None)
            if isinstance(inp, DeviceInput) and e.device_serial is not None:
                done.serial_of_role[inp.device_role] = e.device_serial
    feed()
    return done


def replay(core: TableCore, read: JournalInputs) -> None:
    """Feed ``read`` (every input held: the decisions audit, which rebuilds a core at each start)."""
    done = 0
    for end in sorted({*read.rules_before, *read.starts_before, len(read.inputs)}):
        _feed(core, read.seqs[done:end], read.inputs[done:end], read.verdicts[done:end])
        if end in read.starts_before:  # written before the rules in force at a start
            core.restarted(read.starts_before[end])
        if end in read.rules_before:
            core.sub = rules_of_record(read.rules_before[end])
        done = end


def _feed(core: TableCore, seqs: list[int], inputs: list[Any], verdicts: list[str | None]) -> None:
    """``core.recover(inputs, verdicts)``; JournalContentError naming the entry whose verdict differs."""
    differs = core.recover(inputs, verdicts)
    if differs is not None:
        i, now = differs
        what = f"refused now ({now}) and taken" if now is not None else f"taken now and refused ({verdicts[i]})"
        raise JournalContentError(f"entry {seqs[i]}: {what} when it was journaled: the journal was written "
                                  "under rules this shoectl does not apply the same way")


def rules_asked_for(core: TableCore, sub: Any) -> None:
    """After ``replay`` the core plays the rules its journal holds; ``sub``, other rules asked for
    (``run --submission``; the same rules read from elsewhere are not other rules), is put in
    force at a closed table, as a floorperson's
    ``set_submission`` would be (the runner journals it), and ``Refused`` while a shoe is in play,
    whose rounds its own rules decide."""
    if core.sub.same_rules(sub):
        return  # the same rules under another path: nothing changes (a review: refused as other rules)
    if core.state != "closed":
        raise Refused(f"the journal's table plays {quoted(core.sub.name)} and is {state_words(core.state)}; resume "
                      "it without --submission (its rules change at a closed table: close, then set_submission)")
    core.sub = sub


def rules_of_record(payload: dict[str, Any]) -> Any:
    """The Rules Submission a ``submission`` record holds (``journaling.rules_record``: the whole
    submission and its source). JournalContentError if it is not one."""
    try:
        return submission_from_document(payload, "the journal")
    except SubmissionError as exc:
        raise JournalContentError(f"a submission record that is not a Rules Submission: {exc}") from None
