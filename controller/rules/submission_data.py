"""The Rules Submission as data: ``Submission`` and its option groups, immutable values.

Built and checked by ``submission_parser`` (read through ``submission``); used by the engine, the
settlement and the table. Never a float: money-like values are ``Decimal``, odds are ``Payout``.
Every key, its default and the clause it serves are documented in ``docs/rules-submission.md``.
"""
from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from decimal import Decimal
from enum import Enum
from typing import Any

from .errors import WagerError
from .model import BonusRank, Dealing, Game, Payout, WagerKind
from .twentyone import DRAW_BELOW

__all__ = ["HouseMoneyOptions", "Submission", "TableLimits", "TwentyOneOptions", "WagerLimit", "names_of"]


def names_of(enum: type[Enum]) -> str:
    """The values of a ``str`` enum, for a message: ``"punto-banco, ez-baccarat, 21-baccarat"``."""
    return ", ".join(m.value for m in enum)


@dataclass(frozen=True, slots=True)
class TwentyOneOptions:
    """21 Baccarat choices where 681a.7 reads two ways. What the text fixes (naturals, which 681a.7(f)
    speaks of; the Bonus-only card of 681a.7(f)(2); the 17 of (f)(2) and (g): ``twentyone.DRAW_BELOW``)
    is not a choice: a Rules Submission may only state it as it is."""

    # A two-card 21 is a natural (681a.7(f); 681a.3's definition not found). Always True from a
    # Rules Submission; the rules engine and the odds derivation keep the parameter, whose other
    # value their own tests use to show the natural's part in each figure.
    naturals: bool = True
    draw_rule: str = "each"  # 681a.7(g): "each" | "first-only"


@dataclass(frozen=True, slots=True)
class HouseMoneyOptions:
    """House Money Wager (629a.8(c)(3)); the paytable is an assumption (629a.12(h) not found)."""

    either_pair: Payout = Payout(3, 1)  # Player's or Banker's first two cards are a pair
    both_pairs: Payout = Payout(15, 1)  # both are pairs
    portion: Decimal = Decimal(1)  # 629a.8(c)(3)(i)(A): share that may be added to the wager


@dataclass(frozen=True, slots=True)
class WagerLimit:
    """The least and the most one seat may have on one wager kind in a round, in minor units."""

    min: int
    max: int


@dataclass(frozen=True, slots=True)
class TableLimits:
    """The table limits of ``[limits]``: ``wagers`` per offered wager kind (a kind without an
    entry has no limit of its own) and ``table_max``, the most all of one seat's wagers of a
    round may come to (None: no such limit). Empty (falsy) when the submission sets none."""

    wagers: Mapping[WagerKind, WagerLimit] = field(default_factory=lambda: types.MappingProxyType({}))
    table_max: int | None = None

    def __bool__(self) -> bool:
        return bool(self.wagers) or self.table_max is not None

    def __hash__(self) -> int:
        return hash((frozenset(self.wagers.items()), self.table_max))

    def to_dict(self) -> dict[str, Any]:
        """The ``[limits]`` table as the file writes it (wagers in ``WagerKind`` order)."""
        out: dict[str, Any] = {k.value: {"min": lim.min, "max": lim.max}
                               for k, lim in sorted(self.wagers.items(), key=lambda kv: _ORDER.index(kv[0]))}
        if self.table_max is not None:
            out["table_max"] = self.table_max
        return out


_ORDER = list(WagerKind)


@dataclass(frozen=True, slots=True)
class Submission:
    """A validated Rules Submission. Immutable; build it with ``parse_submission`` and friends."""

    source: str
    name: str
    game: Game
    decks: int
    dealing: Dealing
    burn_cards: int
    min_cover_depth: int
    seats: tuple[int, ...]
    wagers: frozenset[WagerKind]
    paytable: Mapping[WagerKind, Payout]
    commission: Decimal
    commission_rounding: str
    unauthorized_third_card: str
    house_money: HouseMoneyOptions
    twentyone: TwentyOneOptions
    bonus_paytable: Mapping[BonusRank, Payout]
    player_commission: Decimal = Decimal(0)  # 21 Baccarat: on a winning Player wager (681a.8(a) not found)
    # 627a.13(c)(2)/(d): the wagers on the layout when a simulated round begins: "return" | "stay"
    simulated_round_wagers: str = "return"
    limits: TableLimits = TableLimits()  # [limits]: none unless the file sets them

    def __hash__(self) -> int:
        return hash(
            (
                self.source, self.name, self.game, self.decks, self.dealing, self.burn_cards,
                self.min_cover_depth, self.seats, self.wagers, frozenset(self.paytable.items()),
                self.commission, self.commission_rounding, self.unauthorized_third_card,
                self.house_money, self.twentyone, frozenset(self.bonus_paytable.items()),
                self.player_commission, self.simulated_round_wagers, self.limits,
            )
        )

    def same_rules(self, other: Submission) -> bool:
        """Whether ``other`` holds the same rules, wherever each was read from (``source`` is where,
        not what: a file named by another path, a copy of it, or the preset it was printed from)."""
        return replace(self, source=other.source) == other

    def offers(self, kind: WagerKind | str) -> bool:
        """True if this table offers the wager ``kind`` (unknown kinds are not offered)."""
        try:
            return WagerKind(kind) in self.wagers
        except ValueError:
            return False

    def payout(self, kind: WagerKind | str) -> Payout:
        """The payout odds of an offered wager.

        Raises ``WagerError`` if the wager is unknown or not offered, and for the wagers whose
        payout is not one figure: ``house_money`` (see ``house_money``) and the 21 Baccarat Bonus
        Wagers (see ``bonus_payout``).
        """
        try:
            wk = WagerKind(kind)
        except ValueError:
            raise WagerError(f"unknown wager {kind!r}; known: {names_of(WagerKind)}") from None
        if wk not in self.wagers:
            offered = ", ".join(k.value for k in WagerKind if k in self.wagers)
            raise WagerError(
                f"wager {wk.value!r} is not offered at this table ({self.source}); offered: {offered}"
            )
        if wk is WagerKind.HOUSE_MONEY:
            raise WagerError("the house_money wager has two payouts: use Submission.house_money")
        if wk in (WagerKind.PLAYER_BONUS, WagerKind.BANKER_BONUS):
            raise WagerError(f"the {wk.value} wager pays by rank: use Submission.bonus_payout(rank)")
        return self.paytable[wk]

    def commission_on(self, kind: WagerKind | str) -> Decimal:
        """The share withheld from the payout of a winning ``kind`` wager: ``commission`` on the
        Banker wager, ``player_commission`` on the Player wager, nothing on the others."""
        if kind == WagerKind.BANKER:
            return self.commission
        if kind == WagerKind.PLAYER:
            return self.player_commission
        return Decimal(0)

    def bonus_payout(self, rank: BonusRank | str) -> Payout:
        """The 21 Baccarat Bonus Wager odds for a winning ``rank`` (681a.7(k)(2)-(3)).

        Raises ``WagerError`` if no Bonus Wager is offered or the rank does not win.
        """
        if not self.wagers & {WagerKind.PLAYER_BONUS, WagerKind.BANKER_BONUS}:
            raise WagerError(f"no Bonus Wager is offered at this table ({self.source})")
        try:
            br = BonusRank(rank)
        except ValueError:
            raise WagerError(f"unknown bonus rank {rank!r}; known: {names_of(BonusRank)}") from None
        try:
            return self.bonus_paytable[br]
        except KeyError:
            raise WagerError(f"bonus rank {br.value!r} does not win") from None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict in the TOML file's layout, plus ``"source"``.

        Sections that do not apply (``house_money`` when not offered, ``irregularities`` for
        21 Baccarat, ``twentyone`` / ``bonus_paytable`` for other games, ``limits`` when none
        are set) are left out, so that
        ``parse_submission(d without "source", source)`` gives back an equal ``Submission``.
        """
        out: dict[str, Any] = {
            "source": self.source,
            "submission": {
                "name": self.name,
                "game": self.game.value,
                "decks": self.decks,
                "dealing": self.dealing.value,
                "burn_cards": self.burn_cards,
                "min_cover_depth": self.min_cover_depth,
                "seats": list(self.seats),
            },
            "wagers": {"offered": [k.value for k in WagerKind if k in self.wagers]},
            "paytable": {k.value: str(p) for k, p in self.paytable.items()},
            "commission": {"rate": str(self.commission), "rounding": self.commission_rounding},
        }
        if WagerKind.HOUSE_MONEY in self.wagers:
            hm = self.house_money
            out["house_money"] = {
                "either_pair": str(hm.either_pair),
                "both_pairs": str(hm.both_pairs),
                "portion": str(hm.portion),
            }
        if self.game is Game.TWENTYONE:
            t = self.twentyone
            out["commission"] = {"rate": str(self.commission), "player_rate": str(self.player_commission),
                                 "rounding": self.commission_rounding}
            out["twentyone"] = {
                "naturals": t.naturals,
                "bonus_only_card": True,  # 681a.7(f)(2), fixed: stated so the record says it
                "draw_rule": t.draw_rule,
                "draw_threshold": DRAW_BELOW,  # 681a.7(f)(2), (g), fixed
            }
            out["bonus_paytable"] = {r.value: str(p) for r, p in self.bonus_paytable.items()}
        else:
            out["irregularities"] = {"unauthorized_third_card": self.unauthorized_third_card,
                                     "simulated_round_wagers": self.simulated_round_wagers}
        if self.limits:
            out["limits"] = self.limits.to_dict()
        return out
