"""The shoe in play: its cut and cover cards, its cards out, and its reconciliation.

``Shoe`` owns what the controller knows about one shoe, from the shuffle to the reshuffle, and
answers the questions the procedure asks of it. Its ``check_*`` methods raise ``Refused`` and
change nothing; the matching methods without ``check_`` change it (the core calls the check
first, then journals, then applies). Clauses: 681a.5(b)-(d) (the cut, cover cards), 681a.7(c)
(burns), 681a.7(d)(1)-(2) (collect, count, reshuffle).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.audit.cardset import verify_cardset  # at start-up, not on the card that ends a shoe
from controller.rules.shoe import CutError, check_cut, check_second_cover
from controller.table.errors import Refused
from firmware_bridge.protocol import messages as m


@dataclass
class Shoe:
    """What the controller knows about the shoe in play."""

    id: str
    decks: int
    stack_size: int
    cut_position: int | None = None
    cut_by: str | None = None
    cover_from_bottom: int | None = None
    loaded_count: int | None = None
    burned: list[str] = field(default_factory=list)
    dealt: int = 0          # cards that left the shoe (burns included)
    cover_reached: bool = False
    reads: list[tuple[int, int, int]] = field(default_factory=list)  # (position, rank, suit) as read
    cut_offer: list[int] = field(default_factory=list)   # seats still to be offered the cut, in order
    cut_sweep: list[int] = field(default_factory=list)   # every seat, clockwise from the first offered
    cut_offeree: int | None = None                       # None and no offer left = the dealer cuts
    delivery_due: bool = False  # a DELIVER of this stack failed or got no reply: every resume sends it again
    load_held: bool = False  # loaded while a fault held the table: it goes on from the load when resumed
    shoe_full: bool = False  # its DELIVER(SHOE) was refused: the shoe still held cards (not this stack)
    emptied: bool = False  # the shoe reported itself emptied (SHOE_EMPTY) before this stack went in
    shuffle_held: bool = False  # shuffled while a fault held the table: it goes on from it when resumed
    shuffles_out: int = 0  # SHUFFLEs sent for it, not yet reported done nor refused (``commands_out``)
    deliveries_out: int = 0  # DELIVERs sent for it, not refused, while it is not in the shoe
    restarted: bool = False  # the controller started again while it was prepared (``TableCore.restarted``)
    collected: bool = False  # 681a.7(d)(1): its cards were collected and reconciled (the shoe is over)
    # 681a.7(d)(1): the shoe whose collected cards this stack is made of: their first count since
    # is this stack's (the shuffler's, or the shoe's at loading), which finds a card gone missing
    made_of: str | None = None
    # 681a.5(a), 681a.7(d)(1)-(2): those collected cards are shuffled (at a table without a shuffler,
    # by hand): a pack of preshuffled decks takes the place of a shuffle only before play commences,
    # or of cards whose count or card set failed (``preparation.start_shuffle``)
    collected_to_shuffle: bool = False
    exhausted: bool = False  # it reported itself empty (SHOE_EMPTY) while a round still needed cards
    counted: tuple[int, int] | None = None  # 681a.5(a): (cards its shuffle counted, the device's expected)
    count_problem: str | None = None  # why its count or its card-set check failed (the table in count_fault)
    _cardset_cache: tuple[tuple[Any, ...], Any] | None = field(default=None, repr=False, compare=False)

    # -- its stack's commands --------------------------------------------------------------------
    def sent(self, message: Any) -> None:
        """The table sent ``message`` for this stack: a SHUFFLE or DELIVER is counted as out."""
        self._count(m.wire_name(message), 1)

    def settled(self, command: str) -> None:
        """One of the stack's commands (wire name ``command``) is no longer out: the device refused
        it, or (a SHUFFLE) reported it done."""
        self._count(command, -1)

    def stack_loaded(self) -> None:
        """The stack is in the shoe: no DELIVER of it is out any more."""
        self.deliveries_out = 0

    def _count(self, command: str, step: int) -> None:
        if command == "SHUFFLE":
            self.shuffles_out = max(0, self.shuffles_out + step)
        elif command == "DELIVER":
            self.deliveries_out = max(0, self.deliveries_out + step)

    def commands_out(self, command: str) -> bool:
        """Whether a command of the stack sent before may keep the device busy: for a SHUFFLE, a
        SHUFFLE; for a DELIVER, a DELIVER or a SHUFFLE (one asked for again at a reconnect is
        carried out before the DELIVER sent after the first one's report). A command whose outcome
        was unknown stays counted: the device may have carried it out. Only what the core sent as
        it handled its inputs is counted, so that a replay of the journal counts the same; the
        commands a restart re-issues are not (their failures say so: ``CommandFailed.resent``),
        but once the controller started again while the stack was prepared, any may be out."""
        return self.restarted or self.shuffles_out > 0 or (command == "DELIVER" and self.deliveries_out > 0)

    # -- cards out -------------------------------------------------------------------------------
    @property
    def remaining(self) -> int | None:
        """Cards still in the shoe (None before it is loaded)."""
        return None if not self.loaded_count else self.loaded_count - self.dealt

    def card_left(self, position: int, rank: int, suit: int) -> None:
        """A card left the shoe (read, or unreadable)."""
        self.dealt += 1
        self.reads.append((position, rank, suit))

    def next_card_mark(self) -> str:
        """``@N``: the N-th card out of this shoe. A prompt shown again (after a restart or a
        reconnect) names the same card, so the dealer never draws twice for it."""
        return f"@{self.dealt + 1}"

    # -- the cut (681a.5(b)-(d)) ---------------------------------------------------------------
    @staticmethod
    def cut_sweep_of(seats: list[int], occupied: set[int]) -> list[int]:
        """681a.5(b): every seat, clockwise from the highest-numbered occupied one (``seats`` are
        listed counterclockwise from the dealer's right); empty when no seat is occupied."""
        taken = [s for s in seats if s in occupied]
        if not taken:
            return []
        start = seats.index(max(taken))
        return [seats[(start - k) % len(seats)] for k in range(len(seats))]

    def start_cut_offer(self, seats: list[int], occupied: set[int]) -> None:
        """A new cut: any earlier cut and cover are forgotten (a recut); the stack is to be offered
        to the occupied seats of the sweep, in its order."""
        self.cut_position = self.cover_from_bottom = None
        self.cut_sweep = self.cut_sweep_of(seats, occupied)
        self.cut_offer = [s for s in self.cut_sweep if s in occupied]

    def offer_next(self) -> int | None:
        """The next seat to be offered the cut, or None: the dealer cuts."""
        self.cut_offeree = self.cut_offer.pop(0) if self.cut_offer else None
        return self.cut_offeree

    def withdraw_from_cut(self, seat: int) -> bool:
        """A player left before the stack was cut: not offered the cut any more. True when the
        seat was the one offered it now (the offer then moves on to the next seat)."""
        if self.cut_position is not None:
            return False
        if seat in self.cut_offer:
            self.cut_offer.remove(seat)
        return self.cut_offeree == seat

    def admit_to_cut(self, seat: int) -> bool:
        """A player sat down at ``seat`` while the cut is offered: True when the offer has not yet
        passed that seat, which then waits for it in its clockwise place (681a.5(b): "offer the
        stack to each player until a player accepts the cut"). A seat the offer has passed, or an
        offer that has ended (the dealer cuts), is not reopened."""
        sweep = self.cut_sweep
        if (self.cut_position is not None or self.cut_offeree is None or seat not in sweep
                or sweep.index(seat) <= sweep.index(self.cut_offeree)):
            return False
        self.cut_offer = sorted({*self.cut_offer, seat}, key=sweep.index)
        return True

    def check_decline(self, seat: int) -> None:
        if self.cut_offeree is None:
            raise Refused("no seat is offered the cut now: the dealer cuts")
        if self.cut_offeree != seat:
            raise Refused(f"the cut is offered to seat {self.cut_offeree}, not seat {seat}")

    def check_cut(self, position: int, seat: int | None, min_depth: int) -> str:
        """Who cuts (``seat N`` or ``dealer``) if a cut at ``position`` is allowed now."""
        if self.cut_position is not None:
            raise Refused("the stack is already cut; place the second cover card")
        if self.cut_offeree is not None and seat != self.cut_offeree:
            raise Refused(f"the cut is offered to seat {self.cut_offeree}; it cuts, or declines first")
        if self.cut_offeree is None and seat is not None:
            raise Refused("no seat is offered the cut now (none is occupied, or every player declined): "
                          "the dealer cuts, without a seat")
        try:
            check_cut(self.stack_size, position, min_depth)
        except CutError as exc:
            raise Refused(str(exc)) from None
        return f"seat {seat}" if seat is not None else "dealer"

    def cut(self, position: int, by: str) -> None:
        self.cut_position, self.cut_by = position, by

    def check_cover(self, from_bottom: int, min_depth: int, burn: int) -> None:
        if self.cut_position is None:
            raise Refused("cut the stack before placing the second cover card")
        try:
            check_second_cover(self.stack_size, from_bottom, min_depth, burn)
        except CutError as exc:
            raise Refused(str(exc)) from None

    # -- the end of the shoe (681a.7(d)) --------------------------------------------------------
    def cardset(self) -> Any:
        """The card-set check (controller.audit.cardset): the cards read against the N-deck
        composition; the cards left in the shoe are counted, not read. Cached per state."""
        key = (len(self.reads), self.dealt, self.loaded_count)
        if self._cardset_cache is None or self._cardset_cache[0] != key:  # asked up to 3 times per reshuffle
            left = max(0, (self.loaded_count or 0) - self.dealt)
            report = verify_cardset(self.reads, decks=self.decks, loaded=self.loaded_count, remaining=left, shoe=self.id)
            self._cardset_cache = (key, report)
        return self._cardset_cache[1]

    def cardset_bad(self) -> bool:
        return self.loaded_count is not None and not self.cardset().ok

    def reconciliation(self, remaining_counted_by: str) -> dict[str, Any]:
        """681a.7(d)(1): the cards out plus the cards left against the decks shuffled. The cards
        left in the shoe were never read: ``remaining_in_shoe`` is the loaded count less the cards
        out, and they are counted with the whole set when it is next counted, by
        ``remaining_counted_by`` (``shuffler``: its count after the next shuffle; ``shoe``: its count
        of the next stack loaded); a card missing is found there (``made_of``). ``ok``: what can be
        checked now holds (the load count, and no card read extra, foreign or twice)."""
        left = (self.loaded_count or 0) - self.dealt
        cardset = self.cardset() if self.loaded_count is not None else None
        return {
            "loaded": self.loaded_count, "left_shoe": self.dealt, "burned": len(self.burned),
            "remaining_in_shoe": left, "total": self.dealt + left, "expected": self.decks * 52,
            "ok": self.dealt + left == self.decks * 52 and (cardset is None or cardset.ok),
            "remaining_counted_by": remaining_counted_by,
        }

