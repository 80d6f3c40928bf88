"""Errors of the journal.

::

    JournalError (+OSError)            the journal file cannot be used; one line, exit 2 in the CLI
    +-- NotAJournalError               not SQLite, or SQLite without the journal's schema
    |   +-- NotAnObjectPayload         an entry's payload is JSON but not an object
    |   +-- JournalDamagedError        SQLite finds the file damaged: a journal that does not
    |                                  verify (exit 1 where a journal is read; 2 for ``run``)
    +-- JournalBusyError               locked by another connection, or another writer holds it
    |   +-- JournalLockedError         another connection held its lock past the busy timeout:
    |                                  temporary, exit 75 in run and feed (EX_TEMPFAIL: restarted)
    +-- JournalWriteError              an append failed (disk full, I/O error); nothing was stored
    +-- JournalFileGone                the journal's file was deleted or moved while it was written
    +-- JournalIntegrityError          a reader following the journal found its chain broken
    PayloadError (+ValueError)         a payload or column value the journal refuses (e.g. a float)
    JournalContentError (+ValueError)  a stored entry whose payload is not what its kind needs
                                       (found by a reader of the table's records: replay, audit)
    DeviceEventConflict (+ValueError)  a device event whose (device, epoch, counter) is stored
                                       with a different kind or payload

``JournalError`` is an ``OSError`` so that ``controller.cli.main`` reports it as one line with
exit 2 without knowing the journal; ``PayloadError`` and ``DeviceEventConflict`` are programming or
device errors that the caller (the table) must handle.
"""
from __future__ import annotations

from typing import Any


class JournalError(OSError):
    """The journal file cannot be opened, read or written."""

    def __init__(self, message: str) -> None:
        super().__init__(message)

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__


class NotAJournalError(JournalError):
    """The file is not SQLite, or is SQLite without the journal's schema."""


class NotAnObjectPayload(NotAJournalError):
    """An entry whose payload is JSON but not an object: the writer stores none, the check refuses
    it; a reader that reads a journal that does not verify leaves the entry out."""


class JournalDamagedError(NotAJournalError):
    """SQLite finds the file damaged ("database disk image is malformed"): a journal that does not
    verify, said by its readers as a check that failed. ``reason`` is the damage in words."""

    def __init__(self, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.reason = reason or message


class JournalBusyError(JournalError):
    """The database is locked, or another process has the journal open for writing."""



class JournalLockedError(JournalBusyError):
    """Another connection (a tool writing the journal: a ``sqlite3`` shell in a write transaction)
    held its lock past the busy timeout. Temporary: ``exit_status`` 75 (EX_TEMPFAIL), which
    ``controller.cli.main`` gives instead of 2, so that a service manager restarts the table
    (``RestartPreventExitStatus=2`` kept it down for a lock that clears by itself: a review of
    signals)."""

    exit_status = 75

class JournalWriteError(JournalError):
    """An append or batch could not be committed. The journal is exactly as before the call."""


class JournalFileGone(JournalError):
    """The journal's file is no longer at its path (deleted, or moved: the writer's entries went
    into a file that is not the journal any more). Raised after the commit that found it; the
    writer appends nothing more and the caller acknowledges nothing of what it committed."""


class _AtAnEntry:
    """An error about one entry: ``seq`` (where known) and ``reason``, its words without the
    journal's path (for a page that must not show where the journal is kept)."""

    def __init__(self, message: str, *, seq: int | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.seq = seq
        self.reason = reason


class JournalIntegrityError(_AtAnEntry, JournalError):
    """The journal's chain does not hold where a reader following it got to (``JournalTail``):
    the message is one line naming the first bad entry (``seq``), ``reason`` the check's words."""


class PayloadError(ValueError):
    """A payload or column value that the journal refuses (float, non-JSON type, bad key)."""


class DeviceEventConflict(ValueError):
    """A device event arrived again with the same (device, epoch, counter) but a different kind or
    payload: not a harmless resend. Nothing was stored; ``existing`` is the stored entry."""

    def __init__(self, message: str, existing: Any, kind: str, payload: dict[str, Any]) -> None:
        super().__init__(message)
        self.existing = existing
        self.kind = kind
        self.payload = payload


class JournalContentError(_AtAnEntry, ValueError):
    """A stored entry whose payload is not what a reader of its kind needs (e.g. a ``cut`` without
    a position): a bug, or a forger. The message names the entry; ``seq`` and ``reason`` (what is
    wrong with it, and its kind) are given where it is known."""


def text_field(p: Any, key: str) -> str:
    """A payload's text field as journaled; ``TypeError`` naming it for anything else (``malformed_entry``
    turns it into the entry's refusal)."""
    value = p[key]
    if not isinstance(value, str):
        raise TypeError(key)
    return value


def malformed_entry(entry: Any, exc: BaseException) -> JournalContentError:
    """The ``JournalContentError`` for ``entry``, whose payload made a reader raise ``exc``."""
    seq = getattr(entry, "seq", None)
    where = f"entry {seq}" if seq is not None else "an entry"
    if isinstance(exc, KeyError) and exc.args:
        what = f"no field {exc.args[0]!r}"
    elif isinstance(exc, TypeError) and len(exc.args) == 1 and isinstance(exc.args[0], str) and exc.args[0].isidentifier():
        what = f"field {exc.args[0]!r} of the wrong kind"  # raised by a reader's own check, naming the field
    else:
        what = "a field of the wrong kind"
    kind = getattr(entry, "kind", "?")
    return JournalContentError(f"{where} ({kind}): malformed payload: {what}", seq=seq,
                               reason=f"malformed payload: {what} ({kind})")
