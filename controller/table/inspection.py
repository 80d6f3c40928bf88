"""An idle table's inspection (681a.5(g)), as one object that owns its state.

The cards are spread for "the first player arriving at the table", "face down unless a player
requests that the cards be spread face up"; then they are washed and shuffled by hand (no
automated shuffler: 681a.5(g)(1)), or put into the automated shuffler and the batch already in it
taken out, which is dealt without being spread "unless a player requests otherwise", provided the
shuffler "stores a single batch of shuffled cards inside the shuffler in a secure manner"
(681a.5(g)(2)). ``Inspection`` keeps who arrived first, how the cards lie and what comes next,
and decides; the table's handlers (``decks``, ``actions``, ``preparation``) journal and show what
it decided. Every method checks before it changes anything: one that raises ``Refused`` leaves
the inspection as it was.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from controller.table.errors import Refused


class AfterInspection(Enum):
    """What ``Inspection.done`` decided comes after the first player's inspection."""

    WASH = "wash"                          # (g)(1): washed and shuffled by hand
    SHUFFLE = "shuffle"                    # (g)(2): the inspected cards into the shuffler, its batch dealt
    SPREAD_BATCH = "spread batch"          # (g)(2): the batch taken out is spread for inspection first


@dataclass
class Inspection:
    """681a.5(g): the state of an idle table's spread cards and of the shuffle after them.

    ``face_up``: a player asked for the spread face up (a batch spread after it lies face up too);
    ``batch_spread``: what lies spread is the batch taken out of the shuffler (681a.5(g)(2));
    ``first_seat``: the first player to arrive at the spread cards (None: nobody yet);
    ``washing``: the next hand shuffle follows a wash (681a.5(g)(1)).
    """

    face_up: bool = False
    batch_spread: bool = False
    first_seat: int | None = None
    washing: bool = False

    def spread(self, *, face_up: bool) -> None:
        """The table is declared idle and its cards are spread; the players seated already are not
        the first to arrive at them."""
        self.face_up, self.batch_spread, self.first_seat = face_up, False, None

    def player_sat(self, seat: int) -> None:
        """A player sat down while the cards lie spread: the first one may inspect them."""
        if self.first_seat is None:
            self.first_seat = seat

    def turn_face_up(self) -> None:
        """A player asked to see the spread cards face up."""
        if self.face_up:
            raise Refused("the cards are already spread face up")
        self.face_up = True

    def done(self, *, reshuffle_batch: bool, has_shuffler: bool, keeps_one_batch: bool) -> AfterInspection:
        """The first player has inspected the spread cards: what follows (``AfterInspection``).
        ``reshuffle_batch``: a player asked to see the batch taken out of the shuffler spread and
        reshuffled; ``keeps_one_batch``: the shuffler stores a single batch securely.

        Refused until a player has sat down since the cards were spread (681a.5(g) shuffles them
        "after the first player arriving at the table is afforded an opportunity to visually
        inspect the cards"; a player seated before the table went idle is not one arriving)."""
        if self.first_seat is None:
            raise Refused("681a.5(g): the cards stay spread until the first player arriving at the table "
                          "has had the chance to inspect them; no player has sat down since they were spread")
        if not has_shuffler:
            if reshuffle_batch:
                raise Refused("there is no automated shuffler and so no batch taken out of it: "
                              "the inspected cards are washed and shuffled by hand (681a.5(g)(1))")
            self.washing = True
            return AfterInspection.WASH
        if self.batch_spread:
            if reshuffle_batch:
                raise Refused("the batch taken out of the shuffler is already spread: inspection_done reshuffles it")
            self.batch_spread = False
            return AfterInspection.SHUFFLE  # the requested reshuffle, in the automated shuffler
        if not reshuffle_batch and keeps_one_batch:
            return AfterInspection.SHUFFLE
        self.batch_spread = True
        return AfterInspection.SPREAD_BATCH

    def stack_replaced(self) -> None:
        """A new stack is ready (shuffled by hand, or a preshuffled pack): a spread asked for face
        up was of the cards before it."""
        self.washing = self.face_up = False

    def record(self, *, turned: bool = False) -> dict[str, Any]:
        """The ``inspection`` record of the spread as it lies now (``turned``: turned face up)."""
        payload: dict[str, Any] = {"clause": "681a.5(g)(2)" if self.batch_spread else "681a.5(g)",
                                   "face_up": self.face_up}
        return {**payload, "turned": True} if turned else payload

    def prompt(self) -> str:
        """What the shoe's display tells the dealer to spread."""
        spread = "SPREAD FACE UP" if self.face_up else "SPREAD"
        # the batch out of the shuffler is a second spread: said so, or the display reads as before
        return f"{spread} THE SHUFFLER'S BATCH" if self.batch_spread else spread
