"""The decisions audit's allowance for what an earlier program's genuine records say otherwise than
this program decides them, and its limits (the rules in full: ``controller.table.redecision``'s
docstring; docs/audit.md). Three things change from version to version without changing a decision:

- optional keys version 2 gained after it began (``kinds.ADDED_IN_VERSION_2``, each with the
  start's mark of the programs that write it, ``signature`` or ``driver``);
- record kinds version 2 gained after it began that only say more (``kinds.KINDS_ADDED_IN_VERSION_2``,
  marked alike): an earlier program made the same decision without the record;
- what an earlier program said otherwise, where no start so far is this very program's: an
  ``irregularity``'s reason in other words (``kinds.REASON_IS_WORDS``: the action, clause, card
  and position are compared), another record's reason only in an earlier program's known words
  for the same (``EARLIER_WORDS``), a schema-version-1 ``held_card_used``'s clause (that program
  named 627a.13(a) for every held card); a refusal's words at any time (``same_refusal``);
- the round column of a record of a card dealt in error after a round's end
  (``kinds.ROUND_ADDED_IN_VERSION_2``), journaled with none before 2026-12-05 21:25.

``EarlierPrograms(compared_without, reworded, kinds_not_written, rounds_not_named)``, one per walk
over a journal, reporting into the dicts it is given (kind -> keys; the others kind -> records):

- ``started(payload)`` at each ``controller_started``: a start that names a mark, or a later one
  (``kinds.started_since``), or carries this very program's signature, is a program's that writes
  what that mark brought, and so is every start after it;
- ``lenient(kind, seq, text, journaled, decided)`` -> whether the journaled record (``text``, its
  canonical JSON) is the decided one without keys it lacks, allowed there;
- ``reworded(kind, seq, journaled, decided, version_1=...)`` -> whether it is the decided one said
  otherwise (and maybe without such keys);
- ``may_lack_round(kind, after_its_round=...)`` / ``lacked_round(kind)``: whether a record of
  ``kind`` may name no round where this program names the round it follows, and the count of those
  that did;
- ``not_written(kind, seq)`` -> whether a decided record of ``kind`` that the journal does not hold
  here is one an earlier program did not write;
- ``carried(kind, payload)`` -> for a record found equal, why it cannot be (it carries a key, or is
  of a kind, that a record since the same start was passed over without: one program writes it in
  all of them or in none), or None. What only that start left out is then no longer reported.
"""
from __future__ import annotations

from typing import Any

from controller.journal import kinds
from controller.journal.chain import canonical_json
from controller.signature import is_this_program
from controller.table.dealing import TWENTYONE_CARD_IN_ERROR

_LATEST = len(kinds.START_MARKS) - 1
# The clause the first evening's program (schema version 1) named in every held_card_used record,
# whichever clause set the card aside (627a.13(a), (b), (c)(2) or (d) since 2026-11-30 23:29).
HELD_CLAUSE_OF_VERSION_1 = "627a.13(a)"

#: (kind, an earlier program's reason) -> this program's words for the same, for the kinds whose
#: reason is more than words (``kinds.REASON_IS_WORDS``; found in the history of the code that
#: writes them).
EARLIER_WORDS: dict[tuple[str, str], str] = {
    (kinds.DISCARD, "21 Baccarat: a card drawn when none was called for goes to the discard rack, as a burn card "
                    "(681a.7(c)); it may have been seen while wagers could be placed"): TWENTYONE_CARD_IN_ERROR,  # to 2026-12-05 15:26
}


def same_refusal(kind: str, journaled: Any, decided: dict[str, Any]) -> bool:
    """Two ``refused`` records that differ only in their ``reason``: the same refusal (the input,
    the state, the operator), said in the words of another version of the program. A refusal
    changes nothing, and its words are mended from version to version (a review of this audit:
    a journal of the day before failed it on a reworded refusal, and read as tampered with)."""
    if kind != kinds.REFUSED or not isinstance(journaled, dict) or not isinstance(journaled.get("reason"), str):
        return False
    return canonical_json({**journaled, "reason": ""}) == canonical_json({**decided, "reason": ""})


class EarlierPrograms:
    """See the module docstring."""

    def __init__(self, compared_without: dict[str, list[str]], reworded: dict[str, int],
                 kinds_not_written: dict[str, int], rounds_not_named: dict[str, int]) -> None:
        self.compared_without, self.reworded_kinds, self.kinds_not_written = compared_without, reworded, kinds_not_written
        self.rounds_not_named = rounds_not_named
        # since the last start: (kind, key) or (kind, None) for a record kind, carried by a record,
        # or passed over (the entry of the first record without it); and passed over before it
        self._carried: set[tuple[str, str | None]] = set()
        self._left_out: dict[tuple[str, str | None], int | None] = {}
        self._left_before: set[tuple[str, str | None]] = set()
        # The latest mark a start so far named (``kinds.START_MARKS``): no start after it is an
        # earlier program's, whatever it names (a forger's inserted start).
        self._since = -1
        self._own = False  # a start so far carried this very program's signature (one after it: a forger's)

    def started(self, payload: dict[str, Any]) -> None:
        self._left_before.update(self._left_out)
        self._carried, self._left_out = set(), {}  # another program may write from here
        self._own = self._own or is_this_program(payload.get("signature"))
        # This very program's start, whatever else it lacks: it names every mark and writes every
        # key (a review: a start signed by it, its driver deleted, passed a stripped disclosed).
        self._since = max(self._since, _LATEST if self._own else kinds.started_since(payload))

    def _before(self, mark: str) -> bool:
        return kinds.START_MARKS.index(mark) > self._since

    def lenient(self, kind: str, seq: int, text: str, journaled: Any, decided: dict[str, Any]) -> bool:
        marks = kinds.ADDED_IN_VERSION_2.get(kind, {})
        added = [k for k in marks if k in decided and k not in journaled]
        if not added or any(not self._before(marks[k]) or (kind, k) in self._carried for k in added):
            return False  # a program that writes the key (its start's mark says so), or this start's records carry it
        if text != canonical_json({k: v for k, v in decided.items() if k not in added}):
            return False
        known = self.compared_without.setdefault(kind, [])
        known.extend(k for k in added if k not in known)
        for k in added:
            self._left_out.setdefault((kind, k), seq)
        return True

    def reworded(self, kind: str, seq: int, journaled: Any, decided: dict[str, Any], *, version_1: bool) -> bool:
        # Only while no start so far is this very program's (an upgrade review: every journal of the
        # first week with an undisclosed card drawn in error failed at that card's irregularity, its
        # card's name taken out of the sentence since; reviews of the mend: a discard's (c)(1) made
        # (c)(2), and a void round's cause, passed as other words).
        if self._own or kind == kinds.REFUSED or not isinstance(journaled, dict):
            return False
        as_decided = dict(journaled)
        said = journaled.get("reason")
        if isinstance(said, str) and isinstance(decided.get("reason"), str) and said != decided["reason"]:
            if kind not in kinds.REASON_IS_WORDS and EARLIER_WORDS.get((kind, said)) != decided["reason"]:
                return False  # another cause or rule, not other words
            as_decided["reason"] = decided["reason"]
        if version_1 and kind == kinds.HELD_CARD_USED and journaled.get("clause") == HELD_CLAUSE_OF_VERSION_1:
            as_decided["clause"] = decided.get("clause")  # that program named it for every held card
        if as_decided == journaled:
            return False  # nothing said otherwise
        text = canonical_json(as_decided)
        if text != canonical_json(decided) and not self.lenient(kind, seq, text, as_decided, decided):
            return False
        self.reworded_kinds[kind] = self.reworded_kinds.get(kind, 0) + 1
        return True

    def may_lack_round(self, kind: str, *, after_its_round: bool) -> bool:
        mark = kinds.ROUND_ADDED_IN_VERSION_2.get(kind)
        return after_its_round and mark is not None and self._before(mark)

    def lacked_round(self, kind: str) -> None:
        self.rounds_not_named[kind] = self.rounds_not_named.get(kind, 0) + 1

    def not_written(self, kind: str, seq: int | None) -> bool:
        mark = kinds.KINDS_ADDED_IN_VERSION_2.get(kind)
        if mark is None or not self._before(mark) or (kind, None) in self._carried:
            return False
        self._left_out.setdefault((kind, None), seq)
        self.kinds_not_written[kind] = self.kinds_not_written.get(kind, 0) + 1
        return True

    def carried(self, kind: str, payload: Any) -> str | None:
        if kind in kinds.KINDS_ADDED_IN_VERSION_2:
            self._carried.add((kind, None))
            if (kind, None) in self._left_out:
                if (kind, None) not in self._left_before:
                    del self.kinds_not_written[kind]
                return (f"the journal holds a {kind} record, where at entry {self._left_out[kind, None]} deciding "
                        "again made one it does not hold: one program writes them all or none")
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
