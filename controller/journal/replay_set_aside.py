"""Where `journal replay` shows the events that set a card aside between rounds (627a.13(a)-(d):
an ``irregularity`` decided on a card drawn in error, a ``card_deferred``): with the round whose
``held_card_used`` takes that card, before that record, not with the shoe (a surveillance review:
`--round N` showed the card and not why it was there).

``SetAsideCards`` follows one pass over a journal:

- ``waits(shoe, card, event)``: ``event`` set ``card`` aside between rounds;
- ``held(shoe, round_no, card, held, shoe_doc, round_doc)``: the round's ``held_card_used``
  (the event ``held``) takes a card of that name. The waiting events of one physical card (its
  position in the shoe) go together: the first decision and every later one on it (a
  floorperson's ``card_disclosed`` decides it again: a review saw the round show the decision
  superseded and not the one that gave it its first card). When one card of that name waits they
  move at once; when two do (the same card from two decks, both drawn in error), the round's first
  card, by its position, says which (``left_shoe``: the first set aside was taken before, and told
  the story of the other card, a review);
- ``left_shoe(shoe, round_no, position)``: a card, burn or discard at ``position`` left the shoe:
  what waited for the held card of that round at that position moves to it; any other event
  that set that position's card aside waits no more (the card was used otherwise, e.g. dealt when
  a fault cleared). A held card whose first card never comes (a journal cut short) leaves its
  events with the shoe.
"""
from __future__ import annotations

from typing import Any

__all__ = ["SetAsideCards"]

Event = dict[str, Any]


class SetAsideCards:
    """See the module docstring."""

    def __init__(self) -> None:
        self._waiting: dict[tuple[str, Any], list[Event]] = {}  # by (shoe, card), in journal order
        # rounds whose held card is one of two or more of its name: (shoe, round) -> card, docs, held event
        self._unsure: dict[tuple[str, Any], tuple[Any, Event, Event, Event]] = {}

    def waits(self, shoe: str, card: Any, event: Event) -> None:
        self._waiting.setdefault((shoe, card), []).append(event)

    def held(self, shoe: str, round_no: Any, card: Any, held: Event, shoe_doc: Event, round_doc: Event) -> None:
        waiting = self._waiting.get((shoe, card))
        if not waiting:
            return
        positions = {_position_of(e) for e in waiting}
        if len(positions) == 1 or None in positions:  # one card (or a journal without positions): at once
            self._move(shoe, card, _position_of(waiting[0]), shoe_doc, round_doc, held)
        else:
            self._unsure[(shoe, round_no)] = (card, held, shoe_doc, round_doc)

    def left_shoe(self, shoe: str, round_no: Any, position: Any) -> None:
        unsure = self._unsure.pop((shoe, round_no), None)
        if unsure is not None:
            card, held, shoe_doc, round_doc = unsure
            self._move(shoe, card, position, shoe_doc, round_doc, held)
        for key in [key for key in self._waiting if key[0] == shoe]:
            self._keep(key, [e for e in self._waiting[key] if _position_of(e) != position])

    def _move(self, shoe: str, card: Any, position: Any, shoe_doc: Event, round_doc: Event, held: Event) -> None:
        """The events that set aside ``card`` at ``position`` (the first waiting when ``position``
        is None), from the shoe's events to the round's, before its ``held`` record."""
        waiting = self._waiting[(shoe, card)]
        taken = [e for i, e in enumerate(waiting) if (i == 0 if position is None else _position_of(e) == position)]
        self._keep((shoe, card), [e for e in waiting if not any(e is t for t in taken)])
        at = next((i for i, e in enumerate(round_doc["events"]) if e is held), len(round_doc["events"]))
        for event in taken:
            if any(e is event for e in shoe_doc["events"]):
                shoe_doc["events"][:] = [e for e in shoe_doc["events"] if e is not event]
                round_doc["events"].insert(at, event)
                at += 1

    def _keep(self, key: tuple[str, Any], events: list[Event]) -> None:
        if events:
            self._waiting[key] = events
        else:
            self._waiting.pop(key, None)


def _position_of(event: Event) -> Any:
    return event["payload"].get("position")
