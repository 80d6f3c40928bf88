"""Wagers and their settlement. Money is integer minor units (cents); rates are Fractions.

Contract:
- ``Wager(seat, kind, amount)``: ``amount`` is a positive int of minor units.
- ``net_multiplier(kind, facts, submission) -> Fraction``: what one unit staked on ``kind`` nets
  given the round's ``RoundFacts``: ``+odds`` (less commission) on a win, ``0`` on a push, ``-1``
  on a loss. The single place where a wager's payout rule lives; exact odds and simulation use it.
- ``settle(result_or_facts, wagers, submission) -> list[Settlement]`` settles a completed round in
  the regulation's order (681a.7(h), 629a.11): seats counterclockwise from the dealer's right
  (``submission.seats``), the Player and Banker wagers first, then Tie and the side wagers.
  A win pays ``amount * multiplier`` rounded to a whole minor unit: a commissioned win (the
  Banker's, and in 21 Baccarat the Player's when ``[commission] player_rate`` is set) by the
  submission's ``commission_rounding``; any other win that is not a whole minor unit (odds such
  as 3:2 on an odd amount) down: the commission's rule is not a payout's (a gaming-lab review: a
  Player wager at 3:2 with ``rounding = "up"`` was paid one minor unit more than it won).
  A seat's wagers of the same kind count together, as at the limits and the squeeze: they are
  settled as one wager of their total, so the seat is paid the same however it placed its chips,
  and that total's gross (win and commission) is shared among the wagers in proportion to their
  amounts, then the commission within each wager's share, so that each wager's win and commission
  add up to its gross (in each sharing the minor units left over go one each to the largest
  remainders, the earlier wager first on a tie: two Banker wagers of 1.10 are paid 1.04 and
  1.05). Each wager still has exactly one settlement.
- ``settle_house_money(first_four, wagers, submission)`` settles House Money wagers after the first
  two cards of each hand and before any third card (629a.8(c)(3)); ``add_house_money(...)`` moves
  all or the allowed portion of a winning payout onto the player's Player or Banker wager
  (629a.8(c)(3)(i)(A)).
- ``void(wagers)`` returns every wager (627a.13(e)).
Errors: ``WagerError`` for an unknown seat, a wager not offered, a bad amount, a Bonus wager on a
round dealt without the Bonus in play, or a House Money addition above the allowed portion.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import Enum
from fractions import Fraction
from typing import Any

from .cards import Card
from .engine import RoundFacts, RoundResult
from .errors import WagerError
from .money import money_text
from .model import BonusRank, Game, Outcome, WagerKind

MAIN_WAGERS = frozenset({WagerKind.PLAYER, WagerKind.BANKER})
BONUS_WAGERS = frozenset({WagerKind.PLAYER_BONUS, WagerKind.BANKER_BONUS})


class Result(str, Enum):
    WIN = "win"
    LOSE = "lose"
    PUSH = "push"


@dataclass(frozen=True, slots=True)
class Wager:
    seat: int
    kind: WagerKind
    amount: int

    def __post_init__(self) -> None:
        if isinstance(self.amount, bool) or not isinstance(self.amount, int) or self.amount <= 0:
            kind = self.kind.value if isinstance(self.kind, WagerKind) else self.kind
            raise WagerError(f"seat {self.seat}: a {kind} wager must be a positive whole number of minor units, "
                             f"not {self.amount!r}")
        object.__setattr__(self, "kind", WagerKind(self.kind))

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "kind": self.kind.value, "amount": self.amount}


@dataclass(frozen=True, slots=True)
class Settlement:
    """One wager settled. ``win`` is what is paid beyond the returned stake; ``commission`` is the
    commission withheld from the gross win (``Submission.commission_on``)."""

    seat: int
    kind: WagerKind
    amount: int
    result: Result
    win: int = 0
    commission: int = 0

    @property
    def net(self) -> int:
        """The player's gain: ``win`` on a win, 0 on a push, ``-amount`` on a loss."""
        return self.win if self.result is Result.WIN else -self.amount if self.result is Result.LOSE else 0

    @property
    def returned(self) -> int:
        """What goes back to the player: stake + win, stake, or nothing."""
        return self.amount + self.net

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "kind": self.kind.value,
            "amount": self.amount,
            "result": self.result.value,
            "win": self.win,
            "commission": self.commission,
            "net": self.net,
        }


def _wins(outcome: Outcome, side: WagerKind) -> Fraction | None:
    """+1 / -1 / 0 for a Player or Banker wager by outcome (ties push)."""
    if outcome is Outcome.TIE:
        return Fraction(0)
    won = (outcome is Outcome.PLAYER) == (side is WagerKind.PLAYER)
    return Fraction(1) if won else Fraction(-1)


def net_multiplier(kind: WagerKind, facts: RoundFacts, submission: Any) -> Fraction:
    """Net return per unit staked on ``kind`` (see the module docstring)."""
    kind = WagerKind(kind)
    sub = submission
    if kind in MAIN_WAGERS:
        sign = _wins(facts.outcome, kind)
        if sign <= 0:
            return sign
        if kind is WagerKind.BANKER and sub.game is Game.EZ_BACCARAT and facts.dragon7:
            return Fraction(0)  # 627c.2: a winning three-card Banker 7 pushes
        return sub.payout(kind).ratio * (1 - Fraction(sub.commission_on(kind)))
    if kind is WagerKind.TIE:
        return sub.payout(kind).ratio if facts.outcome is Outcome.TIE else Fraction(-1)
    event = {
        WagerKind.PLAYER_PAIR: facts.player_pair,
        WagerKind.BANKER_PAIR: facts.banker_pair,
        WagerKind.DRAGON7: facts.dragon7,
        WagerKind.PANDA8: facts.panda8,
    }.get(kind)
    if event is not None:
        return sub.payout(kind).ratio if event else Fraction(-1)
    if kind in BONUS_WAGERS:
        rank = facts.player_bonus_rank if kind is WagerKind.PLAYER_BONUS else facts.banker_bonus_rank
        pay = sub.bonus_paytable.get(rank)
        return pay.ratio if pay is not None else Fraction(-1)
    if kind is WagerKind.HOUSE_MONEY:
        pairs = int(facts.player_pair) + int(facts.banker_pair)
        hm = sub.house_money
        return {0: Fraction(-1), 1: hm.either_pair.ratio, 2: hm.both_pairs.ratio}[pairs]
    raise WagerError(f"no settlement rule for wager kind {kind.value!r}")


def _round_money(value: Fraction, mode: str) -> int:
    """``value`` rounded to a whole minor unit by ``mode`` as Decimal's rounding of the same name
    (``down`` toward zero, ``up`` the ceiling, ``half-up`` ties away from zero, ``half-even``), in
    integers: exact at any size (a Decimal quotient kept 28 digits, and a payout near 10**16
    rounded down from 0.99999... came out one minor unit more: a money review)."""
    if mode == "up":
        return -(-value.numerator // value.denominator)
    sign, size = (-1, -value) if value < 0 else (1, value)
    whole, rest = divmod(size.numerator, size.denominator)
    twice = 2 * rest
    if mode == "half-up" and twice >= size.denominator:
        whole += 1
    elif mode == "half-even" and (twice > size.denominator or twice == size.denominator and whole % 2):
        whole += 1
    elif mode not in ("down", "half-up", "half-even"):
        raise ValueError(f"unknown rounding {mode!r}")
    return sign * whole


def settle_one(wager: Wager, facts: RoundFacts, submission: Any) -> Settlement:
    m = net_multiplier(wager.kind, facts, submission)
    if m < 0:
        return Settlement(wager.seat, wager.kind, wager.amount, Result.LOSE)
    if m == 0:
        return Settlement(wager.seat, wager.kind, wager.amount, Result.PUSH)
    commissioned = submission.commission_on(wager.kind)
    win = _round_money(wager.amount * m, submission.commission_rounding if commissioned else "down")
    commission = 0
    if commissioned:
        # Rounded up, the net of a win at odds that are not whole (3:2 on 1) could pass the gross,
        # which is rounded down as every payout: a commission never pays the player more than the
        # same win without it (a gaming lab's review), and win and commission add up to the gross.
        gross = _round_money(wager.amount * submission.payout(wager.kind).ratio, "down")
        win = min(win, gross)
        commission = gross - win
    return Settlement(wager.seat, wager.kind, wager.amount, Result.WIN, win, commission)


def _check(wagers: Iterable[Wager], submission: Any) -> list[Wager]:
    wagers = list(wagers)
    seats = set(submission.seats)
    for w in wagers:
        if not isinstance(w, Wager):
            raise WagerError(f"not a wager: {w!r}")
        if w.seat not in seats:
            raise WagerError(f"seat {w.seat} is not at this table (seats {', '.join(map(str, submission.seats))})")
        if w.kind not in submission.wagers:
            raise WagerError(f"seat {w.seat}: the {w.kind.value} wager is not offered under {submission.name}")
    return wagers


def settlement_order(wagers: Sequence[Wager], submission: Any) -> list[Wager]:
    """681a.7(h)/(k), 629a.11: House Money first (it was settled before any third card), then the
    Player and Banker wagers, then Tie and side wagers; within each group, seats counterclockwise
    starting from the player farthest to the dealer's right. Stable within a seat."""
    pos = {seat: i for i, seat in enumerate(submission.seats)}

    def group(w: Wager) -> int:
        if w.kind is WagerKind.HOUSE_MONEY:
            return 0
        return 1 if w.kind in MAIN_WAGERS else 2

    return sorted(wagers, key=lambda w: (group(w), pos[w.seat]))


def settle(round_: RoundResult | RoundFacts, wagers: Iterable[Wager], submission: Any) -> list[Settlement]:
    """Settle every wager of a completed round, in the regulation's order."""
    wagers = _check(wagers, submission)
    if isinstance(round_, RoundResult):
        if round_.game is not submission.game:
            raise WagerError(f"the round was dealt as {round_.game.value} but the table plays {submission.game.value}")
        if not round_.bonus_in_play and any(w.kind in BONUS_WAGERS for w in wagers):
            raise WagerError("a Bonus wager was placed but the round was dealt without the Bonus in play (681a.7(f)(2))")
        facts = round_.facts
    else:
        facts = round_
    return _settle_seat_totals(settlement_order(wagers, submission), facts, submission)


def _settle_seat_totals(ordered: Sequence[Wager], facts: RoundFacts, submission: Any) -> list[Settlement]:
    """``settle_one`` of each wager in ``ordered``, a seat's wagers of one kind settled on their
    total and the total's win and commission shared (module docstring)."""
    together: dict[tuple[int, WagerKind], list[int]] = {}
    for i, w in enumerate(ordered):
        together.setdefault((w.seat, w.kind), []).append(i)
    out: list[Settlement | None] = [None] * len(ordered)
    for (seat, kind), where in together.items():
        if len(where) == 1:
            out[where[0]] = settle_one(ordered[where[0]], facts, submission)
            continue
        amounts = [ordered[i].amount for i in where]
        whole = settle_one(Wager(seat, kind, sum(amounts)), facts, submission)
        # The gross (win and commission together) is shared first, then the commission within
        # each wager's gross, so that every wager's win and commission add up to its gross.
        gross = _shares(whole.win + whole.commission, amounts, None)
        commissions = _shares(whole.commission, amounts, gross)
        for i, amount, g, commission in zip(where, amounts, gross, commissions):
            out[i] = Settlement(seat, kind, amount, whole.result, g - commission, commission)
    return [s for s in out if s is not None]


def _shares(total: int, amounts: Sequence[int], caps: Sequence[int] | None) -> list[int]:
    """``total`` split in proportion to ``amounts`` in whole units that sum to it, none above its
    cap (``caps`` sum to at least ``total``): each its floor, then one more at a time to the
    largest remainders that are below their caps (the earlier first on a tie)."""
    whole = sum(amounts)
    limit = caps if caps is not None else [total] * len(amounts)
    shares = [min(total * a // whole, cap) for a, cap in zip(amounts, limit)]
    order = sorted(range(len(amounts)), key=lambda i: (-(total * amounts[i] % whole), i))
    left = min(total - sum(shares), sum(limit) - sum(shares))  # the caps always hold the total
    while left > 0:
        for i in order:
            if left and shares[i] < limit[i]:
                shares[i] += 1
                left -= 1
    return shares


def settle_house_money(first_four: Sequence[Card], wagers: Iterable[Wager], submission: Any) -> list[Settlement]:
    """629a.8(c)(3)(i): settle House Money wagers once the first two cards of each hand are face up
    (``first_four`` in deal order P1 B1 P2 B2), before any third card, counterclockwise from the
    dealer's right."""
    if len(first_four) != 4:
        raise WagerError("House Money wagers are settled on exactly the first four cards (P1 B1 P2 B2)")
    hm = [w for w in _check(wagers, submission) if w.kind is WagerKind.HOUSE_MONEY]
    p1, b1, p2, b2 = first_four
    facts = RoundFacts(Outcome.TIE, player_pair=p1.rank == p2.rank, banker_pair=b1.rank == b2.rank)
    return _settle_seat_totals(settlement_order(hm, submission), facts, submission)


def house_money_to_add(settlement: Settlement, submission: Any) -> int:
    """What of a winning House Money payout is placed on the original wager, when it is placed
    there and not handed to the player (629a.8(c)(3)(i)(A)-(B)): "all of the winning House Money
    payout or ... only a specified portion" (the Rules Submission's ``portion``), rounded down; 0
    for a House Money wager that did not win."""
    if settlement.kind is not WagerKind.HOUSE_MONEY or settlement.result is not Result.WIN:
        return 0
    return settlement.win * Fraction(submission.house_money.portion) // 1


def _amount_words(amount: object) -> str:
    """An amount an operator gave, as the refusal says it: in major units when it is one."""
    return money_text(amount) if isinstance(amount, int) and not isinstance(amount, bool) else repr(amount)


def add_house_money(
    wagers: Sequence[Wager], settlement: Settlement, side: WagerKind, amount: int, submission: Any
) -> list[Wager]:
    """Return ``wagers`` with ``amount`` of a winning House Money payout added to the same seat's
    original Player or Banker wager (629a.8(c)(3)(i)(A)-(B)). The added amount is then settled with
    that wager on the round's outcome. Raises ``WagerError`` if the seat has no such wager, the
    House Money wager did not win, or ``amount`` is not ``house_money_to_add``: all of the payout or
    the Rules Submission's portion, neither more nor less."""
    side = WagerKind(side)
    if side not in MAIN_WAGERS:
        raise WagerError("a House Money payout can be added only to a Player or Banker wager")
    due = house_money_to_add(settlement, submission)
    if settlement.result is not Result.WIN:
        raise WagerError(f"seat {settlement.seat}: the House Money wager did not win; nothing to add")
    share = "all" if Decimal(submission.house_money.portion) == 1 else "the Rules Submission's portion"
    if due == 0:
        raise WagerError(f"seat {settlement.seat}: {share} of a payout of {money_text(settlement.win)} is less "
                         "than the smallest unit; it is handed to the player")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount != due:
        # The amount to give said as it is typed too (minor units): a dealer typed "30.00" as told,
        # and was refused again (a review of the dealer's console).
        raise WagerError(f"seat {settlement.seat}: {share} of the House Money payout is placed on the wager "
                         f"(629a.8(c)(3)(i)(A)-(B)): {money_text(due)} (amount={due}), not {_amount_words(amount)}")
    out, done = [], False
    for w in wagers:
        if not done and w.seat == settlement.seat and w.kind is side:
            w = Wager(w.seat, w.kind, w.amount + amount)
            done = True
        out.append(w)
    if not done:
        raise WagerError(f"seat {settlement.seat} has no original {side.value} wager to add the House Money payout to")
    return out


def void(wagers: Iterable[Wager]) -> list[Settlement]:
    """627a.13(e): the round is void; every wager is returned."""
    return [Settlement(w.seat, w.kind, w.amount, Result.PUSH) for w in wagers]


__all__ = [
    "Result", "Settlement", "Wager", "net_multiplier", "settle", "settle_one", "settle_house_money",
    "add_house_money", "house_money_to_add", "settlement_order", "void", "BonusRank",
]
