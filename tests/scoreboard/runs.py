"""Journals of real emulated runs for the scoreboard's tests: ``shoectl_run`` (a journal written by
``shoectl run`` on the built-in emulated table) and ``copy`` (an entry read back as the ``Record``
that journals it again)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_run import dealt_journal
from controller.journal import Record


def shoectl_run(tmp: Path, *options: str) -> Path:
    """A journal written by `shoectl run` on the built-in emulated table."""
    return dealt_journal(tmp / "journal.db", *options)


def copy(entry: Any) -> Record:
    return Record(entry.kind, entry.payload, shoe=entry.shoe_id, round=entry.round_no,
                  device_serial=entry.device_serial, epoch=entry.device_epoch, counter=entry.device_counter,
                  operator=entry.operator)
