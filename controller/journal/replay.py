"""Reconstruct shoes and rounds from a journal (681a.7(l): any hand can be reconstructed).

``replay(entries, shoe=None, round=None, hold=None) -> Iterator[dict]`` yields, in journal order (a replay
of one shoe needs only what ``entries_needed(shoe)`` keeps):
- ``{"type": "shoe", "shoe", "started", "decks", "cut": {"position", "by"}, "cover_from_bottom",
  "cuts_before": [{"position", "by", "cover_from_bottom"}, ...] (the cuts a recut undid, in order), "burned": [...], "loaded", "rounds", "cover_card_position", "reconciliation"}`` when a shoe ends
  (or at the end of the journal for the shoe in play);
- ``{"type": "round", "shoe", "round", "kind": "normal"|"simulated"|"void", "cards": [{"card",
  "to", "position", "seq", "ts", "device_event"}, ...] (in the order they left the shoe; from the
  ``card`` record that placed it, null for one no such record placed: ``position``, its place in
  the stack, ``seq`` and ``ts``, that record's; ``device_event``: ``{"serial", "epoch",
  "counter"}`` of the device's CARD_READ of that place of the shoe, when the entries read hold
  the inputs; null for a card entered by hand, whose read was unreadable), "player": {"cards", "total"}, "banker": {...},
  "outcome", "wagers": [...], "settlements": [...], "started", "decided"}`` for each completed round
  (``started``: the journal time of its ``round_start``, ``decided``: of its ``round_result``; a
  shoe's ``started``: of its ``shoe_start``; UTC, as the entries hold it);
- each wager (a round's, the layout's) holds ``placed_by``: the operator whose command placed it,
  when the entries read hold the inputs (else null);
- with ``open_rounds`` (a reading of a journal as written, ``journal replay``; not a live one), a
  round begun and never decided (a fault holds the table, the table was killed mid-round), when
  its shoe or the entries end: the same, with ``"unfinished": True`` and no hands or outcome; and
  each shoe holds ``"layout"``: the wagers placed and in no round, never returned.
Each also holds ``"events"``: what surveillance asks after beside the cards, in journal order,
``{"seq", "kind", "operator", "payload"}`` each (``operator``: whose command it followed, when
the entries read hold the inputs, else the entry's own; null for what no one gave): the
procedures (a declined cut, an inspection, a reshuffle ordered, a shoe restarted, a count
fault), the irregularities (a card entered by hand, a card discarded and why, a wager returned),
faults and their clearing, dealer sign-ins, device replacements, the controller's restarts, a
hand's squeeze and its reveal, a House Money addition, every input refused (a command, a login,
a malformed request: each changed nothing), and every operator command but the routine ones of
a round (``ROUTINE_COMMANDS``, whose effects the round's own records and the events above show). A round's go with
the round (those journaled while it was dealt, and, when rounds are held (``hold``: by default
in a reading of one ``round``), an irregularity of it journaled after, as a card dealt to the
Player when no third card was due, 627a.13(b)-(c)), and the irregularity or deferral journaled
between rounds that set aside the card a round's ``held_card_used`` takes (627a.13(a)-(d)) goes
with that round, with every decision on that card after it (a floorperson's ``card_disclosed``
decides it again); the others with the shoe. A reading of one
``shoe`` or ``round`` shows the clock steps journaled where it shows nothing else (another shoe or
round), and every reading the steps journaled between rounds (shown among the shoe's events, which
come after its rounds), on the next document it yields that began after them, as
``"clock_steps_before"`` (events as above; the key only when there are some): the times of that
document and after are the stepped clock's.
Only the core's records are read; inputs are not needed. A record whose payload lacks what its
kind needs, or holds it as another type (a card that is not text, a total or a net that is not a
whole number), and a round whose cards go to the rack without its result, raise
``JournalContentError`` naming the entry: a journal whose chain verifies may still have been
written by a forger who recomputed it.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from controller.journal import kinds
# One pass is ``replay_state.ReplayPass``'s; the records it lists as events are named there, and
# imported from here as before.
from controller.journal.replay_state import EVENT_KINDS, ROUTINE_COMMANDS, ReplayPass

__all__ = ["EVENT_KINDS", "READ_FROM_EVERY_SHOE", "ROUTINE_COMMANDS", "entries_needed", "replay"]


# What a reading of one shoe needs besides that shoe's own records and those of no shoe: who gave
# each command (the inputs of every shoe), where each shoe begins (the chosen one ends there), and
# the Rules Submission in force (``edge_figures.after_round``), and the clock's steps (the times
# shown after one are the stepped clock's: ``clock_steps_before``).
READ_FROM_EVERY_SHOE = frozenset({*kinds.INPUT_KINDS, kinds.SHOE_START, kinds.SUBMISSION, kinds.CLOCK_STEP})


def entries_needed(shoe: str | None) -> Callable[[str, str | None], bool] | None:
    """For a reading of ``shoe`` alone (its replay, its roads, its cards left after a round): a
    test on an entry's kind and shoe id that is false for what such a reading would read and not
    use (the other shoes' records), so that a reader need not decode them
    (``CheckedRead.entries(keep=...)``); None for a reading of every shoe. The replay of the
    entries it keeps is the replay of them all, and ``after_round`` of that shoe on them is
    ``after_round`` on them all."""
    if shoe is None:
        return None

    def needed(kind: str, shoe_id: str | None) -> bool:
        return shoe_id == shoe or shoe_id is None or kind in READ_FROM_EVERY_SHOE

    return needed


def replay(entries: Iterable[Any], *, shoe: str | None = None, round: int | None = None,
           hold: bool | None = None, open_rounds: bool = False) -> Iterator[dict[str, Any]]:
    """The documents of ``entries`` (the module docstring): of one ``shoe``, of one ``round``,
    ``hold`` each decided round until the next (by default in a reading of one ``round``),
    ``open_rounds`` for a reading of a journal as written. A payload a record's kind cannot read
    raises ``JournalContentError`` naming the entry."""
    yield from ReplayPass(shoe=shoe, round=round, hold=hold, open_rounds=open_rounds).run(entries)
