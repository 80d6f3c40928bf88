"""One round in progress: its wagers, its engine, who holds the cards in a squeeze and what was
added from House Money; and a card set aside for a round to come (``SetAside``)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from controller.money import money_text
from controller.rules.cards import Card
from controller.rules.engine import RoundEngine, RoundResult
from controller.rules.model import Target, WagerKind
from controller.rules.wagers import BONUS_WAGERS, Settlement, Wager
from controller.table.errors import Refused

HIDDEN_CARD = "??"  # a card dealt face down, not turned over yet (RoundInProgress.shown_cards)


def unnamed(payload: dict[str, Any]) -> dict[str, Any]:
    """How the table's subscribers (the event stream, the notice hook) see a record naming a card
    nobody at the table may know yet (not disclosed: 627a.13(a)-(c); dealt face down: 629a.8(c)):
    the card as ``HIDDEN_CARD``; the journal keeps the record as it is."""
    return dict(payload, card=HIDDEN_CARD)


@dataclass(frozen=True)
class SetAside:
    """A card out of the shoe that waits for its place: the first card of the next hand
    (627a.13(a)/(b)) or of a simulated round (627a.13(c)(2)/(d)). ``position`` is where it left
    the shoe; ``clause`` is the clause that put it aside."""

    card: Card
    position: int
    clause: str
    # 627a.13(b)'s card: the round it is the unauthorised third card of, and that round's first
    # four cards, for the decision should the card be said disclosed after all (627a.13(c))
    of_round: int | None = None
    first_four: tuple[Card, ...] = ()


@dataclass
class RoundInProgress:
    """``kind`` is ``normal``, ``simulated`` (627a.13(c)(2)/(d): no wagers) or ``void`` (627a.13(e))."""

    number: int
    kind: str
    wagers: list[Wager]
    engine: RoundEngine
    cards: list[tuple[Card, Target, int]] = field(default_factory=list)  # (card, target, position)
    house_money: list[Settlement] = field(default_factory=list)
    house_money_settled: bool = False
    squeezed: set[str] = field(default_factory=set)   # hands already squeezed and returned face up
    squeeze_phase: str | None = None                  # "player" | "banker" while a hand is with a player
    holders: dict[str, int | None] = field(default_factory=dict)  # hand -> seat (None: the dealer)
    # 629a.8(d): the seats that gave up their own right to turn cards over (for the round), and
    # those that declined a hand offered to them (for that hand only: a player who declines the
    # Player's Hand keeps the right (c)(2) gives to the Banker's Hand's highest wager).
    relinquished: set[int] = field(default_factory=set)
    declined: dict[str, set[int]] = field(default_factory=dict)
    entitled: dict[str, int | None] = field(default_factory=dict)  # hand -> the seat (c)(1)-(2) names
    house_money_added: dict[int, tuple[WagerKind, int]] = field(default_factory=dict)  # seat -> (side, amount)
    result: RoundResult | None = None
    settled: bool = False
    third_card_in_error: bool = False  # a card out after its four, none needed: 627a.13(b)-(c) decided once

    @classmethod
    def begin(cls, number: int, kind: str, wagers: list[Wager], submission: Any) -> RoundInProgress:
        bonus = any(w.kind in BONUS_WAGERS for w in wagers)
        engine = RoundEngine(submission.game, getattr(submission, "twentyone", None), bonus_in_play=bonus)
        return cls(number, kind, wagers, engine)

    def main_wagers(self) -> list[Wager]:
        return [w for w in self.wagers if w.kind is not WagerKind.HOUSE_MONEY]

    def house_money_wagers(self) -> list[Wager]:
        return [w for w in self.wagers if w.kind is WagerKind.HOUSE_MONEY]

    def unsettled_wagers(self) -> list[Wager]:
        """The wagers not yet settled: all of them, less House Money wagers once settled before
        any third card (629a.8(c)(3))."""
        return self.main_wagers() if self.house_money else list(self.wagers)

    def check_house_money_add(self, seat: int) -> Settlement:
        """629a.8(c)(3)(i)(A)-(B): the seat's House Money settlement, if its payout is not yet
        placed: it goes onto one original wager, once (the amount is ``add_house_money``'s to
        check). A seat that placed House Money more than once has one payout, the sum of its
        wagers' ("all of the winning House Money payout"). ``Refused`` otherwise; changes nothing."""
        mine = [s for s in self.house_money if s.seat == seat]
        if not mine:
            raise Refused(f"seat {seat} has no House Money wager")
        hm = mine[0] if len(mine) == 1 else replace(
            mine[0], amount=sum(s.amount for s in mine), win=sum(s.win for s in mine))
        if seat in self.house_money_added:
            added_side, added = self.house_money_added[seat]
            raise Refused(f"seat {seat}'s House Money payout ({money_text(added)}) is already on its {added_side.value} wager; "
                          "it goes onto one original wager, once")
        return hm

    def house_money_add(self, seat: int, side: WagerKind, amount: int) -> None:
        self.house_money_added[seat] = (side, amount)

    def first_four(self) -> list[Card]:
        return [c for c, _, _ in self.cards[:4]]

    def hand_cards(self, target: Target) -> list[str]:
        """The cards dealt to ``target`` so far, as text, in deal order."""
        return [str(c) for c, t, _ in self.cards if t is target]

    def shown_cards(self, target: Target, face_down: bool) -> list[str]:
        """``hand_cards`` as the table may show them: in a round dealt face down (629a.8(c)) a card
        not turned over yet is ``HIDDEN_CARD``: the initial cards until their hand's squeeze ends,
        a third card while the player who holds its hand squeezes it. The journal holds them all."""
        out = []
        for k, (c, t, _) in enumerate(self.cards, start=1):
            if t is not target:
                continue
            hand = t.hand
            hidden = face_down and (hand not in self.squeezed if k <= 4
                                    else self.squeeze_phase == hand and k == len(self.cards))
            out.append(HIDDEN_CARD if hidden else str(c))
        return out

    def cards_json(self) -> list[dict[str, str]]:
        return [{"card": str(c), "to": t.value} for c, t, _ in self.cards]

    # -- who holds the cards in a squeeze (629a.8(c)(1)-(2), (6), (d)) ---------------------------
    def highest_wager_seat(self, side: WagerKind, seats: list[int]) -> int | None:
        """629a.8(c)(1)-(2), (6): the highest wager on the hand; ties go to the player closest to
        the dealer counterclockwise (earliest in the counterclockwise seat order)."""
        totals: dict[int, int] = {}
        for w in self.wagers:
            if w.kind is side:
                totals[w.seat] = totals.get(w.seat, 0) + w.amount
        if not totals:
            return None
        order = {s: i for i, s in enumerate(seats)}
        return min(totals, key=lambda s: (-totals[s], order[s]))

    def next_holder(self, previous: int, seats: list[int], occupied: set[int], hand: str) -> int | None:
        """629a.8(d): the player immediately to the right of the previous player, then each other
        player in turn counterclockwise (none who gave up the right in this round, nor who declined
        ``hand`` already)."""
        i = seats.index(previous)
        passed = self.relinquished | self.declined.get(hand, set())
        for k in range(1, len(seats)):
            s = seats[(i + k) % len(seats)]
            if s in occupied and s not in passed:
                return s
        return None


@dataclass
class ShoeRounds:
    """The rounds of the shoe in play, as one object: how many have begun (``count``), the kind
    the next one begins as (``next_kind``: ``simulated`` once a disclosed card opens one,
    627a.13(c)(2)/(d)), the last one decided (``last``: until a card or a new round follows it; a
    card after it may be its irregularity, 627a.13(b)-(c)) and its outcome (``last_outcome``, the
    shoe's last result as the displays show it)."""

    count: int = 0
    next_kind: str = "normal"
    last: RoundInProgress | None = None
    last_outcome: str | None = None
    waiting_then: tuple[Wager, ...] = ()  # the wagers on the layout when ``last`` was decided

    def new_shoe(self) -> None:
        """A shoe is shuffled: its rounds are counted from one, and it has no result yet."""
        self.count, self.last_outcome = 0, None

    def begin(self) -> tuple[int, str]:
        """A round begins: its number and kind (the next one is ``normal`` again)."""
        self.last = None
        self.count += 1
        kind, self.next_kind = self.next_kind, "normal"
        return self.count, kind

    def next_simulated(self) -> None:
        """627a.13(c)(2)/(d): the next round begins as a simulated one."""
        self.next_kind = "simulated"

    def decided(self, r: RoundInProgress, waiting: list[Wager]) -> None:
        """Round ``r`` has its result; ``waiting`` are the wagers then on the layout for the next
        round (kept through a simulated round), to tell a wager placed since (``wager_placed_since``)."""
        self.last, self.last_outcome = r, r.result.outcome.value
        self.waiting_then = tuple(waiting)

    def wager_placed_since(self, waiting: list[Wager]) -> bool:
        """Whether the wagers on the layout (``waiting``) are not those there when the last round
        was decided: one was placed or taken back since."""
        kept = self.waiting_then
        return len(waiting) != len(kept) or any(a is not b for a, b in zip(waiting, kept))

    def take_last(self) -> RoundInProgress | None:
        """The last round decided, if no card nor round followed it yet; it is then followed."""
        last, self.last = self.last, None
        return last
