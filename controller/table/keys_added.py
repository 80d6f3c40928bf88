"""The decisions audit's allowance for records an earlier program wrote without the optional keys
version 2 gained after it began (``kinds.ADDED_IN_VERSION_2``, each with the start's mark of the
programs that write it: ``signature`` or ``driver``), and its limits
(the rules in full: ``controller.table.redecision``'s docstring; docs/audit.md).

``KeysAddedSince(compared_without)``, one per walk over a journal:

- ``started(payload)`` at each ``controller_started``: a start that names a key's mark, or a later
  one (``kinds.started_since``), is a program's that writes the key, and so is every start after it;
- ``lenient(kind, seq, text, journaled, decided)`` -> whether the journaled record (``text``, its
  canonical JSON) is the decided one without keys it lacks, allowed there; the keys so left out go
  into ``compared_without`` (kind -> keys, the audit's report);
- ``carried(kind, payload)`` -> for a record found equal, why it cannot be (it carries a key a
  record of its kind since the same start was compared without: one program writes a key in all of
  them or in none), or None. A key left out only by that start's records is no longer reported.
"""
from __future__ import annotations

from typing import Any

from controller.journal import kinds
from controller.journal.chain import canonical_json
from controller.signature import is_this_program


class KeysAddedSince:
    """See the module docstring."""

    def __init__(self, compared_without: dict[str, list[str]]) -> None:
        self.compared_without = compared_without
        self._carried: set[tuple[str, str]] = set()       # since the last start, by a record carrying it
        self._left_out: dict[tuple[str, str], int] = {}   # since the last start: the first record without it
        self._left_before: set[tuple[str, str]] = set()   # left out by an earlier start's records
        # The latest mark a start so far named (``kinds.START_MARKS``): no start after it is an
        # earlier program's, whatever it names (a forger's inserted start).
        self._since = -1

    def started(self, payload: dict[str, Any]) -> None:
        self._left_before.update(self._left_out)
        self._carried, self._left_out = set(), {}  # another program may write from here
        since = kinds.started_since(payload)
        if since < len(kinds.START_MARKS) - 1 and is_this_program(payload.get("signature")):
            # This very program's start, whatever else it lacks: it names every mark and writes every
            # key (a review: a start signed by it, its driver deleted, passed a stripped disclosed).
            since = len(kinds.START_MARKS) - 1
        self._since = max(self._since, since)

    def lenient(self, kind: str, seq: int, text: str, journaled: Any, decided: dict[str, Any]) -> bool:
        marks = kinds.ADDED_IN_VERSION_2.get(kind, {})
        added = [k for k in marks if k in decided and k not in journaled]
        if not added or any(kinds.START_MARKS.index(marks[k]) <= self._since or (kind, k) in self._carried
                            for k in added):
            return False  # a program that writes the key (its start's mark says so), or this start's records carry it
        if text != canonical_json({k: v for k, v in decided.items() if k not in added}):
            return False
        known = self.compared_without.setdefault(kind, [])
        known.extend(k for k in added if k not in known)
        for k in added:
            self._left_out.setdefault((kind, k), seq)
        return True

    def carried(self, kind: str, payload: Any) -> str | None:
        for key in kinds.ADDED_IN_VERSION_2.get(kind, ()):
            if not (isinstance(payload, dict) and key in payload):
                continue
            self._carried.add((kind, key))
            if (kind, key) in self._left_out:  # not an earlier program's, then: not said as one
                if (kind, key) not in self._left_before:  # an earlier start's records were, all the same
                    left = self.compared_without[kind]
                    left.remove(key)
                    if not left:
                        del self.compared_without[kind]
                return (f"the journal's {kind} record carries {key}, which its {kind} record at entry "
                        f"{self._left_out[kind, key]} lacks: one program writes it in all of them or in none")
        return None
