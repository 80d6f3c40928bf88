"""The table's durable, tamper-evident journal (SQLite WAL, synchronous=FULL, hash chain).

Write with ``Journal.open(path, table_id=...)`` (one writer, one thread); read with
``JournalReader.open(path)`` (read-only, any number); check with ``verify(path)``.
See docs/journal.md.

The names below are loaded on first use (PEP 562): ``from controller.journal import kinds`` (the
record vocabulary, which a control client needs) does not load the writer, SQLite's layer and the
logging library behind it, about a tenth of a second of every process's start.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# Each exported name and the submodule that defines it.
_EXPORTS = {
    "GENESIS_HASH": "chain", "HMAC_SHA256": "chain", "SHA256": "chain", "canonical_json": "chain",
    "key_id": "chain", "load_hmac_key": "chain",
    "DeviceEventConflict": "errors", "JournalBusyError": "errors", "JournalError": "errors",
    "JournalWriteError": "errors", "NotAJournalError": "errors", "PayloadError": "errors",
    "SCHEMA_VERSION": "store", "Entry": "store", "Journal": "store", "JournalReader": "store",
    "Record": "store", "format_ts": "store", "parse_ts": "store",
    "VerifyReport": "verify_report", "verify": "verification",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:
    from controller.journal.chain import GENESIS_HASH, HMAC_SHA256, SHA256, canonical_json, key_id, load_hmac_key
    from controller.journal.errors import (
        DeviceEventConflict,
        JournalBusyError,
        JournalError,
        JournalWriteError,
        NotAJournalError,
        PayloadError,
    )
    from controller.journal.store import SCHEMA_VERSION, Entry, Journal, JournalReader, Record, format_ts, parse_ts
    from controller.journal.verification import verify
    from controller.journal.verify_report import VerifyReport


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # looked up once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
