"""The table's durable, tamper-evident journal (SQLite WAL, synchronous=FULL, hash chain).

Write with ``Journal.open(path, table_id=...)`` (one writer, one thread); read with
``JournalReader.open(path)`` (read-only, any number); check with ``verify(path)``.
See docs/journal.md.
"""
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
from controller.journal.verify import VerifyReport, verify

__all__ = [
    "GENESIS_HASH", "HMAC_SHA256", "SHA256", "SCHEMA_VERSION",
    "DeviceEventConflict", "Entry", "Journal", "JournalBusyError", "JournalError", "JournalReader",
    "JournalWriteError", "NotAJournalError", "PayloadError", "Record", "VerifyReport",
    "canonical_json", "format_ts", "key_id", "load_hmac_key", "parse_ts", "verify",
]
