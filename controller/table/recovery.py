"""A table's restart from its journal, in one pass over it.

``read_journal_inputs(journal) -> JournalInputs``: the inputs to feed the core again, in order
with their seqs; the verdict each met when it was journaled (the reason of the ``refused`` record
written just after it, or None: it was taken); each device role's last serial (for seeding the
links); and the last Rules Submission journaled.

``replay(core, read)`` feeds them to the core (``TableCore.recover``), held to those verdicts: an
input refused now and taken then (rules an earlier shoectl took, such as a House Money payout
placed in parts), or the other way round, would leave the table in another state than its journal
records, so it raises ``JournalContentError`` naming the entry instead. The journal stays readable.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.journal import kinds
from controller.journal.errors import JournalContentError
from controller.table.core import TableCore
from controller.table.io import DeviceInput
from controller.table.journaling import INPUT_KINDS, input_from


@dataclass
class JournalInputs:
    """See the module docstring."""

    seqs: list[int] = field(default_factory=list)
    inputs: list[Any] = field(default_factory=list)
    verdicts: list[str | None] = field(default_factory=list)
    serial_of_role: dict[str, str] = field(default_factory=dict)
    rules_journaled: dict[str, Any] | None = None


def read_journal_inputs(journal: Any) -> JournalInputs:
    read = JournalInputs()
    for e in journal.entries(kinds=(*INPUT_KINDS, kinds.SUBMISSION, kinds.REFUSED)):
        if e.kind == kinds.SUBMISSION:
            read.rules_journaled = e.payload
        elif e.kind == kinds.REFUSED:  # written with the input it refuses, just after it
            if read.inputs:
                read.verdicts[-1] = str(e.payload.get("reason", ""))
        elif (inp := input_from(e)) is not None:
            read.seqs.append(e.seq)
            read.inputs.append(inp)
            read.verdicts.append(None)
            if isinstance(inp, DeviceInput) and e.device_serial is not None:
                read.serial_of_role[inp.device_role] = e.device_serial
    return read


def replay(core: TableCore, read: JournalInputs) -> None:
    differs = core.recover(read.inputs, read.verdicts)
    if differs is not None:
        i, now = differs
        what = f"refused now ({now}) and taken" if now is not None else f"taken now and refused ({read.verdicts[i]})"
        raise JournalContentError(f"entry {read.seqs[i]}: {what} when it was journaled: the journal was written "
                                  "under rules this shoectl does not apply the same way")
