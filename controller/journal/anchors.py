"""Anchors: a journal's head (the last ``seq`` and its ``hash``) kept outside the journal.

A hash chain cannot show that its last entries were removed, nor (without HMAC) that it was
rewritten from some entry on with recomputed hashes, nor that an HMAC journal was re-chained with
plain SHA-256 and relabelled. An anchor can: ``verify`` checks that the entry an anchor names still
has the anchored hash, and that the journal is still the one (table, creation time, hash algorithm
and key id) the anchor was taken of.

``Anchor`` holds those fields, when it was taken (``ts``), and for an HMAC journal a ``mac``:
HMAC-SHA-256 with the journal's key over the other fields. Only a holder of the key can write a
valid one, so the anchors of an HMAC journal also record, in a way its key proves, that the
journal is HMAC-protected.

A witness is anything with ``record(anchor)`` (``AnchorWitness``). ``AnchorFile`` appends one JSON
line per anchor to a file, by default ``<journal>.anchors`` beside the journal, and fsyncs it;
``shoectl run`` records one when it opens the journal, at every shoe end and when it stops. The
file beside the journal is in reach of whoever can edit the journal: copy it elsewhere, or let a
witness out of that reach keep the anchors (the floor store, which receives every entry anyway, is
the natural one: it records the same ``Anchor`` objects). ``verify --anchors FILE`` checks a copy.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from controller.fsutil import (TABLE_FILE_MODE, foreign_append_target, fsync_dir, refuse_another_owners_file,
                              refuse_foreign_symlink, tighten_to, write_synced)
from controller.journal.chain import ALGORITHMS, Hasher, canonical_json, is_hex, key_id_shown
from controller.journal.errors import JournalError
from shoectl_config.files import NotARegularFile, require_regular_file

FORMAT = "shoectl-journal-anchor/1"
_DOMAIN = b"shoectl-journal anchor\x00"  # never the start of an entry's hash input (64 hex digits)
_SIGNED = ("table_id", "journal_created", "seq", "hash", "algorithm", "key_id", "ts")
_MAX_TEXT = 200
MAX_FILE_BYTES = 64 * 1024 * 1024  # an anchor a shoe is ~300 bytes: decades of them


@dataclass(frozen=True)
class Anchor:
    """The head of one journal at one moment. ``seq`` 0 (with the genesis hash) is an empty
    journal: it still records the journal's identity and hash algorithm."""

    table_id: str
    journal_created: str
    seq: int
    hash: str
    algorithm: str
    key_id: str | None
    ts: str
    mac: str | None = None

    @property
    def text(self) -> str:
        """``SEQ:HASH``, as ``verify --anchor`` takes it."""
        return f"{self.seq}:{self.hash}"

    def signed_bytes(self) -> bytes:
        return canonical_json({name: getattr(self, name) for name in _SIGNED}).encode("utf-8")

    def signed(self, hasher: Hasher) -> Anchor:
        """This anchor with the ``mac`` of ``hasher``'s key (None for a journal without one)."""
        return dataclasses.replace(self, mac=hasher.mac(_DOMAIN, self.signed_bytes()))

    def signature_holds(self, hasher: Hasher) -> bool:
        """The ``mac`` is the one ``hasher``'s key gives."""
        return self.mac is not None and self.mac == hasher.mac(_DOMAIN, self.signed_bytes())

    def to_json(self) -> dict[str, Any]:
        return {"format": FORMAT, **{name: getattr(self, name) for name in _SIGNED}, "mac": self.mac}

    @classmethod
    def from_json(cls, obj: Any) -> Anchor:
        """The anchor in a ``to_json`` object; ValueError (the reason in words) if it is not one."""
        if not isinstance(obj, Mapping) or obj.get("format") != FORMAT:
            raise ValueError(f"not an anchor (no \"format\": \"{FORMAT}\")")
        if set(obj) != {"format", *_SIGNED, "mac"}:
            raise ValueError("not an anchor (unexpected or missing fields)")
        seq = obj["seq"]
        if type(seq) is not int or not 0 <= seq < 2**63:
            raise ValueError("not an anchor (seq is not a whole number)")
        if not is_hex(obj["hash"], 64) or not (obj["mac"] is None or is_hex(obj["mac"], 64)):
            raise ValueError("not an anchor (a hash is not 64 lowercase hex digits)")
        if obj["algorithm"] not in ALGORITHMS:
            raise ValueError("not an anchor (unknown hash algorithm)")
        for name in ("table_id", "journal_created", "ts"):
            value = obj[name]
            if not isinstance(value, str) or not value or len(value) > _MAX_TEXT or not value.isprintable():
                raise ValueError(f"not an anchor ({name} is not a line of text)")
        if not (obj["key_id"] is None or is_hex(obj["key_id"], 16)):
            raise ValueError("not an anchor (key_id is not 16 hex digits)")
        return cls(**{name: obj[name] for name in (*_SIGNED, "mac")})

    def differs_from(self, meta: Mapping[str, str]) -> str | None:
        """Why this anchor was not taken of the journal whose ``meta`` this is (None if it was)."""
        if (self.table_id, self.journal_created) != (meta.get("table_id"), meta.get("created")):
            return (f"it was taken of another journal (table {self.table_id}, created {self.journal_created}; "
                    f"this one: table {meta.get('table_id')}, created {meta.get('created')})")
        if (self.algorithm, self.key_id) != (meta.get("hash_algorithm"), meta.get("key_id")):
            was = self.algorithm + key_id_shown(self.key_id)
            now = str(meta.get("hash_algorithm")) + key_id_shown(meta.get("key_id"))
            return f"it says the journal's chain is {was}, the journal says {now}: re-chained and relabelled?"
        return None


class AnchorWitness(Protocol):
    """Something outside the journal that keeps its anchors."""

    def record(self, anchor: Anchor) -> None:
        """Keep ``anchor`` durably; raise OSError if it could not be kept."""


def anchors_path(journal_path: str | os.PathLike[str]) -> Path:
    """``<journal>.anchors``: where ``shoectl run`` keeps the anchors of a journal, and where
    ``verify`` and the readers look for them."""
    return Path(os.fspath(journal_path) + ".anchors")


@dataclass(frozen=True)
class AnchorLines:
    """An anchors file as read: the anchors, and the lines that are not anchors, each with its
    place (``FILE line N``)."""

    anchors: list[tuple[str, Anchor]]
    bad: list[tuple[str, str]]
    torn_last_line: str | None = None


class AnchorFile:
    """Anchors appended to a file, one JSON object a line, each write fsynced (``AnchorWitness``)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.recorded = 0  # anchors recorded through this object
        self._checked = False
        self._last: tuple[str, int, str] | None = None

    @classmethod
    def beside(cls, journal_path: str | os.PathLike[str]) -> AnchorFile:
        return cls(anchors_path(journal_path))

    def record(self, anchor: Anchor) -> None:
        """Append ``anchor`` (unless it is the head this object recorded last). Refuses
        (JournalError) a file that holds the anchors of another journal (e.g. left beside a new
        journal at the same path): move it away with its journal."""
        head = (anchor.journal_created, anchor.seq, anchor.hash)
        if head == self._last:
            return
        if not self._checked:
            self.refuse_another_journals(anchor.table_id, anchor.journal_created)
            self._checked = True
        data = (json.dumps(anchor.to_json(), separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        created = not self.path.exists()
        refuse_foreign_symlink(self.path)
        # A link planted after that look is not followed; the owner is that of the file opened.
        follow = 0 if self.path.is_symlink() else os.O_NOFOLLOW
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | follow, TABLE_FILE_MODE)
        try:
            refuse_another_owners_file(fd, self.path)
            tighten_to(fd)
            size = _whole_lines_size(fd, self.path)
            try:
                write_synced(fd, data)
            except OSError as exc:
                # A write cut short (a full disk) is taken back: the next anchor would be glued onto
                # its torn line, which no reader takes for an anchor (a review of disk faults).
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, size)
                    os.fsync(fd)
                raise OSError(exc.errno, f"cannot record the journal's anchor: {exc.strerror or exc}", str(self.path)) \
                    from None
        finally:
            os.close(fd)
        if created:
            fsync_dir(self.path.parent.absolute())
        self.recorded += 1
        self._last = head

    def refuse_another_journals(self, table_id: str | None, journal_created: str | None) -> None:
        """JournalError when the file holds the anchors of another journal than the one of
        ``table_id`` created at ``journal_created`` (both None: no journal yet, so any anchor is
        another journal's), or when it is not this account's to write (``foreign_append_target``).
        ``shoectl run`` asks before it creates anything."""
        problem = foreign_append_target(self.path)
        if problem is not None:
            raise JournalError(f"{self.path}: {problem}")
        if not self.path.exists():
            return
        lines = self.read()
        if lines.anchors:
            last = lines.anchors[-1][1]
            if (last.table_id, last.journal_created) != (table_id, journal_created):
                raise JournalError(
                    f"{self.path}: holds the anchors of another journal (table {last.table_id}, created "
                    f"{last.journal_created}): move it away with that journal")

    def read(self) -> AnchorLines:
        """Every line of the file. JournalError if it cannot be read. A last line without its
        newline (a write cut short) is not counted as an anchor but reported apart."""
        try:
            require_regular_file(self.path)
            with open(self.path, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
        except FileNotFoundError:
            raise JournalError(f"{self.path}: no such anchors file") from None
        except NotARegularFile as exc:
            raise JournalError(str(exc)) from None
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot read the anchors file: {exc.strerror or exc}") from None
        if len(data) > MAX_FILE_BYTES:
            raise JournalError(f"{self.path}: the anchors file is larger than {MAX_FILE_BYTES} bytes: not ours")
        anchors: list[tuple[str, Anchor]] = []
        bad: list[tuple[str, str]] = []
        lines = data.split(b"\n")
        torn = None
        if lines[-1]:
            torn = f"{self.path} line {len(lines)}: an incomplete last line (a write cut short) is not an anchor"
        for number, raw in enumerate(lines[:-1], start=1):
            where = f"{self.path} line {number}"
            try:
                obj = json.loads(raw.decode("utf-8"))
            except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
                bad.append((where, "not an anchor (not a line of JSON)"))
                continue
            try:
                anchors.append((where, Anchor.from_json(obj)))
            except ValueError as exc:
                bad.append((where, str(exc)))
        return AnchorLines(anchors, bad, torn)


def _whole_lines_size(fd: int, path: Path) -> int:
    """The size of the anchors file open at ``fd`` once a torn last line (a write cut short by a
    crash, with no newline) is cut off: appended to, it would make one line of it and the next
    anchor, and neither would read as an anchor. The torn bytes were never an anchor."""
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return size
    whole = os.pread(fd, min(size, MAX_FILE_BYTES), 0).rfind(b"\n") + 1  # rare: read it all
    os.ftruncate(fd, whole)
    os.fsync(fd)
    import structlog  # here, not at the top: every journal reader imports this module, few log

    structlog.get_logger().warning("an incomplete last line of the anchors file removed before the next anchor",
                                   anchors=str(path), bytes=size - whole)
    return whole


def record_anchor(witness: AnchorWitness, journal: Any) -> None:
    """Record ``journal.take_anchor()`` with ``witness``; a failure is logged (a person must see
    to it: the table goes on, but its journal is not anchored) and not raised."""
    try:
        witness.record(journal.take_anchor())
    except OSError as exc:
        import structlog  # here, not at the top: every journal reader imports this module, few log

        structlog.get_logger().error("journal anchor not recorded", witness=str(getattr(witness, "path", witness)),
                                     error=str(exc))
