"""The fields a replay takes from a record's payload, each checked for its type (a journal whose
chain verifies may still have been written by a forger who recomputed it: what a field should
hold and does not is a ``TypeError`` or ``KeyError`` naming it, which ``controller.journal.replay``
turns into a ``JournalContentError`` naming the entry), and the round's cards placed in the stack."""
from __future__ import annotations

from typing import Any

from controller.journal.errors import text_field

__all__ = ["OUTCOMES", "UNREADABLE_RANK", "dealt_field", "hand_field", "outcome_field", "placed_cards",
           "wager_field", "whole_field"]

OUTCOMES = ("player", "banker", "tie")  # a round_result's outcome (docs/journal.md)


def whole_field(p: Any, key: str) -> int:
    value = p[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(key)
    return value


def hand_field(p: Any, key: str) -> dict[str, Any]:
    hand = p[key]
    whole_field(hand, "total")
    if not all(isinstance(c, str) for c in hand["cards"]):
        raise TypeError(key)
    return hand


def outcome_field(p: Any) -> str:
    outcome = text_field(p, "outcome")
    if outcome not in OUTCOMES:
        raise TypeError("outcome")
    return outcome


def placed_cards(dealt: list[dict[str, Any]], read: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The round's cards as its result has them (``dealt``), each with its place in the stack from
    the ``card`` record that dealt it (``read``, in order; ``None`` where none did: a card held from
    an earlier round, entered by hand)."""
    unused = list(read)
    out = []
    for d in dealt:
        match = next((c for c in unused if c["card"] == d["card"] and c["to"] == d["to"]), None)
        if match is not None:
            unused.remove(match)
        out.append({**d, **(match or _UNPLACED)})  # a match's card and hand are ``d``'s own
    return out


_UNPLACED = {"position": None, "seq": None, "ts": None, "device_event": None}
# A CARD_READ's rank for a card the shoe could not read, as journaled: the wire's CARD_UNREADABLE
# (docs/protocol.md), restated because the journal never imports the device side
# (tests/table/test_replay_set_aside_cards.py holds the two equal).
UNREADABLE_RANK = 0xFF


def wager_field(p: Any) -> dict[str, Any]:
    """A wager (a ``wager`` record, one of a ``round_start``'s, a settlement's), its sum checked to be a
    whole number (each use copies what it keeps)."""
    whole_field(p, "amount")
    return p


def dealt_field(p: Any) -> list[dict[str, str]]:
    return [{"card": text_field(d, "card"), "to": text_field(d, "to")} for d in p["dealt"]]
