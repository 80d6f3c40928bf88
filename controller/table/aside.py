"""Cards out of the shoe that wait for their place, as one object that owns them.

A card never goes back into the shoe, and none is lost: one drawn while a fault held the table
waits to be applied in order (and, unread, for the floorperson to enter it); one drawn in error
waits as the next hand's first card (627a.13(a)/(b)) or to open a simulated round
(627a.13(c)(2)/(d)); and 627a.13(c)(1) may owe the discard rack one more card. ``CardsAside``
holds them; the table's modules (``dealing``, ``rounds``, ``preparation``, ``actions``) decide
where each goes and journal it. When the shoe ends, whatever still waits is collected with the
cards (``collect``: 681a.7(d)(1)).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from controller.rules.cards import Card
from controller.table.errors import Refused
from controller.table.round import SetAside


class Deferred(NamedTuple):
    """A card out of the shoe while a fault held the table, or early while its round's hands waited
    (``early``: at the squeeze or House Money, the round needing a card): ``card`` None while it is
    one the shoe could not read, until the floorperson enters it; ``face_up`` as it left the shoe."""

    card: Card | None
    face_up: bool
    position: int
    early: bool = False


@dataclass
class CardsAside:
    """See the module docstring. ``held``: the next hand's first card (627a.13(a)/(b)), and
    ``held_later`` those drawn in error after it, each the first card of a hand after it, in order;
    ``simulated``: each opens a simulated round, in order; ``discards_owed``: cards still to be
    drawn face down to the discard rack (627a.13(c)(1)), ``owed_of_round``: the decided round whose
    irregularity owes them; ``deferred``: the cards out while a fault held the table, in order."""

    held: SetAside | None = None
    held_later: list[SetAside] = field(default_factory=list)
    simulated: list[SetAside] = field(default_factory=list)
    discards_owed: int = 0
    owed_of_round: int | None = None
    deferred: list[Deferred] = field(default_factory=list)
    latest: SetAside | None = None  # the card held for a next hand, while it is the last card out (burns aside)

    def defer(self, card: Card | None, *, face_up: bool, position: int, early: bool = False) -> None:
        """A card out while a fault holds the table (None: unread), applied when it resumes; or
        ``early``, while its round's hands waited, applied when they are done."""
        self.deferred.append(Deferred(card, face_up, position, early))

    def next_deferred(self) -> Deferred | None:
        """The earliest deferred card, taken to be applied (None: none waits)."""
        return self.deferred.pop(0) if self.deferred else None

    def enter(self, card: Card) -> int:
        """The floorperson names the earliest card the shoe could not read; it keeps its place and
        face-up flag. Returns how many unread cards still wait after it; ``Refused`` if none did."""
        unread = [i for i, d in enumerate(self.deferred) if d.card is None]
        if not unread:
            # What to do instead said: a card entered stands (a dealer's review typed a second,
            # right one, and read only that none waited).
            raise Refused("no misread card is waiting: a card entered stands; a round still being dealt on a wrong "
                          "one may be voided (void_round)")
        self.deferred[unread[0]] = self.deferred[unread[0]]._replace(card=card)
        return len(unread) - 1

    def hold(self, aside: SetAside) -> None:
        """627a.13(a)/(b): a card "used as the first card of the next hand of play": the next
        hand's, or, when that hand has one already, the first card of the hand after it (a hand has
        one first card; the clause lets none be thrown away), in the order they were drawn."""
        if self.held is None:
            self.held = aside
        else:
            self.held_later.append(aside)
        self.latest = aside

    def card_out(self) -> None:
        """Another card left the shoe and took the place after the card held last (a burn does
        not: ``dealing.accept_card``), which is not the last card out any more."""
        self.latest = None

    def take_latest(self) -> SetAside:
        """The card held last, while it is still the last card out and waits for its hand, taken
        from the held cards (to be placed otherwise: ``card_disclosed``); ``Refused`` if none."""
        latest = self.latest
        if latest is None or not (latest is self.held or latest in self.held_later):
            raise Refused("no card drawn in error waits for the next hand as the last card out of the shoe "
                          "(burns aside)")
        if latest is self.held:
            self.held = self.held_later.pop(0) if self.held_later else None
        else:
            self.held_later.remove(latest)
        self.latest = None
        return latest

    def take_held(self) -> SetAside | None:
        """The held card, as the next normal round begins (None: none); the next one held waits
        for the hand after it."""
        held, self.held = self.held, (self.held_later.pop(0) if self.held_later else None)
        return held

    def simulate(self, aside: SetAside) -> None:
        """627a.13(c)(2)/(d): a disclosed card that opens a simulated round after those before it."""
        self.simulated.append(aside)

    def take_simulated(self) -> SetAside:
        """The card that opens the simulated round beginning now."""
        return self.simulated.pop(0)

    def owe_discard(self, of_round: int | None) -> None:
        """627a.13(c)(1): "one additional card, drawn face down", to the discard rack."""
        self.discards_owed, self.owed_of_round = 1, of_round

    def pay_discard(self) -> int | None:
        """An owed card went to the discard rack: the round whose irregularity owed it."""
        self.discards_owed -= 1
        return self.owed_of_round

    def cancel_owed(self) -> None:
        """The shoe is given up: no card is owed to the discard rack any more."""
        self.discards_owed, self.owed_of_round = 0, None

    def collect(self) -> list[tuple[Card | None, int, str]]:
        """The shoe ended: every card still waiting, as (card, position, why it waited), in the
        order held, simulated, deferred; nothing waits or is owed afterwards."""
        held = [self.held] if self.held else []
        waiting = [(a.card, a.position, a.clause) for a in held + self.held_later + self.simulated]
        waiting += [(d.card, d.position, "drawn while the table was held, or before the round's hands were turned over"
                     if d.card else
                     "never read (the shoe ended before it was entered)") for d in self.deferred]
        self.held, self.held_later, self.simulated, self.deferred = None, [], [], []
        self.discards_owed, self.owed_of_round, self.latest = 0, None, None
        return waiting
