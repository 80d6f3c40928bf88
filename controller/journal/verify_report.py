"""What a check of a journal found (``VerifyReport``, made by ``verification``) and how it reads:
``verdict_line``, `journal verify`'s one line; ``is_hash``, whether a text is a hash as the chain
writes one (64 lowercase hex digits)."""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

from controller.journal.chain import GENESIS_HASH, is_hex
from controller.journal.errors import JournalDamagedError
from shoectl_config.text import safe



@dataclass(frozen=True)
class VerifyReport:
    """The outcome of ``verify``.

    ok: everything checked is intact.
    entries: entries found good (all of them when ok; those before the first bad one otherwise, or,
        when an entry differs from its anchor, those up to the last entry an anchor proves).
    first_bad_seq: the seq of the first bad (or missing) entry; None when ok or when the failure
        is not about one entry (integrity check, key, an anchor that does not fit the journal).
    reason: why it failed, one line; None when ok.
    last_seq, last_hash: the last good entry (0 and the genesis hash when none).
    total: rows in the entries table.
    algorithm, key_id: the journal's hash algorithm and HMAC key id (from its meta table).
    needs_key: the journal is HMAC-protected and no key was given (nothing was verified).
    anchors: how many anchors were checked (given, read from anchors files, expected count and
        last hash).
    links_only: the hashes were not recomputed (an HMAC journal read without its key).
    warnings: one line each: checked without any anchor, a -wal file SQLite ignores, ...
    """

    ok: bool
    entries: int
    first_bad_seq: int | None
    reason: str | None
    last_seq: int = 0
    last_hash: str = GENESIS_HASH
    total: int = 0
    algorithm: str = ""
    key_id: str | None = None
    needs_key: bool = False
    path: str = ""
    anchors: int = 0
    links_only: bool = False
    warnings: tuple[str, ...] = ()

    @classmethod
    def damaged(cls, path: str | os.PathLike[str], exc: JournalDamagedError) -> VerifyReport:
        """The verdict on a file SQLite finds damaged: a check that failed, at the journal."""
        return cls(False, 0, None, exc.reason, path=os.fspath(path))

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out["warnings"] = list(self.warnings)
        return out


def is_hash(text: str) -> bool:
    return is_hex(text, 64)


def verdict_line(path: str | os.PathLike[str], r: VerifyReport) -> str:
    """`journal verify`'s one line about ``r``."""
    algo = r.algorithm + (f", key id {r.key_id}" if r.key_id else "")
    path = safe(os.fspath(path))
    if r.ok:
        return f"{path}: ok: {r.entries} entries, last hash {r.last_hash} ({algo})"
    where = f"entry {r.first_bad_seq}" if r.first_bad_seq is not None else "the journal"
    return f"{path}: FAILED at {where}: {r.reason} ({r.entries} entries good before it{'; ' + algo if algo else ''})"
