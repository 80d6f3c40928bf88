"""The round engine: fed one card at a time, it decides where each card goes and seals the result.

Contract:
- ``RoundEngine(game, options=None, bonus_in_play=False)``; ``options`` are the 21 Baccarat
  switches (``TwentyOneOptions``; defaults when None); ``bonus_in_play`` says whether any Bonus
  Wager was placed (681a.7(f)(2)); it is ignored by the Punto Banco games.
- ``next_target()`` returns the ``Target`` the next card goes to, or ``None`` when the round is
  complete. ``feed(card)`` places a card there and returns the target; feeding a complete round
  raises ``RoundStateError`` and changes nothing.
- ``result()`` returns the sealed, immutable ``RoundResult``; before completion it raises
  ``RoundStateError``.
- ``deal(cards, game, ...)`` is the batch form over the same engine: it uses as many cards from the
  front of ``cards`` as the round needs (``result.cards_used``) and raises
  ``InsufficientCardsError`` (void round, 627a.13(e)) when they run out.

The engine holds only the cards; every decision is recomputed from them by the game's pure rule
functions, so there is no derived state that can drift.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from . import punto_banco as pb
from . import twentyone as t21
from .cards import Card, parse_card
from .errors import InsufficientCardsError, RoundStateError
from .model import BonusRank, Game, Outcome, Target

_INITIAL = (Target.PLAYER, Target.BANKER, Target.PLAYER, Target.BANKER)  # P1 B1 P2 B2


def default_twentyone_options() -> Any:
    from .submission import TwentyOneOptions  # late import: submission depends on model only

    return TwentyOneOptions()


@dataclass(frozen=True, slots=True)
class RoundFacts:
    """What settlement needs to know about a round, and nothing else.

    Settlement (``wagers.net_multiplier``), exact odds and simulation all speak in facts, so a
    wager is paid by the same code whichever of them asks.
    """

    outcome: Outcome
    player_pair: bool = False
    banker_pair: bool = False
    dragon7: bool = False
    panda8: bool = False
    player_bonus_rank: BonusRank = BonusRank.NONE
    banker_bonus_rank: BonusRank = BonusRank.NONE


@dataclass(frozen=True, slots=True)
class RoundResult:
    """A completed round. Immutable; everything derived is a property."""

    game: Game
    dealt: tuple[tuple[Card, Target], ...]  # every card in the order it left the shoe
    player: tuple[Card, ...]                # cards that count for the Player's Hand
    banker: tuple[Card, ...]
    player_total: int
    banker_total: int
    outcome: Outcome
    player_natural: bool
    banker_natural: bool
    bonus_in_play: bool = False
    player_bonus_only: tuple[Card, ...] = ()  # 681a.7(f)(2) cards, Bonus Wager only
    banker_bonus_only: tuple[Card, ...] = ()

    @property
    def natural(self) -> bool:
        return self.player_natural or self.banker_natural

    @property
    def cards_used(self) -> int:
        return len(self.dealt)

    @property
    def player_pair(self) -> bool:
        return self.player[0].rank == self.player[1].rank

    @property
    def banker_pair(self) -> bool:
        return self.banker[0].rank == self.banker[1].rank

    @property
    def dragon7(self) -> bool:
        """A Banker's Hand of 7 on three cards that beats the Player (627a.1)."""
        return (
            self.game.is_punto_banco_family
            and len(self.banker) == 3
            and self.banker_total == 7
            and self.outcome is Outcome.BANKER
        )

    @property
    def panda8(self) -> bool:
        """A Player's Hand of 8 on three cards that beats the Banker (627a.1)."""
        return (
            self.game.is_punto_banco_family
            and len(self.player) == 3
            and self.player_total == 8
            and self.outcome is Outcome.PLAYER
        )

    @property
    def player_bonus_cards(self) -> tuple[Card, ...]:
        return self.player + self.player_bonus_only

    @property
    def banker_bonus_cards(self) -> tuple[Card, ...]:
        return self.banker + self.banker_bonus_only

    @property
    def player_bonus_rank(self) -> BonusRank:
        return t21.bonus_rank(self.player_bonus_cards)

    @property
    def banker_bonus_rank(self) -> BonusRank:
        return t21.bonus_rank(self.banker_bonus_cards)

    @property
    def facts(self) -> RoundFacts:
        is_21 = self.game is Game.TWENTYONE
        return RoundFacts(
            outcome=self.outcome,
            player_pair=self.player_pair,
            banker_pair=self.banker_pair,
            dragon7=self.dragon7,
            panda8=self.panda8,
            player_bonus_rank=self.player_bonus_rank if is_21 else BonusRank.NONE,
            banker_bonus_rank=self.banker_bonus_rank if is_21 else BonusRank.NONE,
        )

    def to_json(self) -> dict[str, Any]:
        """The stable JSON form used by ``shoectl rules deal --json`` and the journal."""
        out: dict[str, Any] = {
            "game": self.game.value,
            "player": {"cards": [str(c) for c in self.player], "total": self.player_total},
            "banker": {"cards": [str(c) for c in self.banker], "total": self.banker_total},
            "outcome": self.outcome.value,
            "natural": self.natural,
            "cards_used": self.cards_used,
            "dealt": [{"card": str(c), "to": t.value} for c, t in self.dealt],
        }
        if self.game.is_punto_banco_family:
            out["player_pair"] = self.player_pair
            out["banker_pair"] = self.banker_pair
        if self.game is Game.EZ_BACCARAT:
            out["dragon7"] = self.dragon7
            out["panda8"] = self.panda8
        if self.game is Game.TWENTYONE:
            out["bonus_in_play"] = self.bonus_in_play
            for side, cards, rank in (
                ("player", self.player_bonus_cards, self.player_bonus_rank),
                ("banker", self.banker_bonus_cards, self.banker_bonus_rank),
            ):
                out[side]["bonus_cards"] = [str(c) for c in cards]
                out[side]["bonus_rank"] = rank.value
        return out


class RoundEngine:
    """Incremental round of one game (see the module docstring for the contract)."""

    __slots__ = ("game", "options", "bonus_in_play", "_hands", "_dealt")

    def __init__(self, game: Game, options: Any = None, *, bonus_in_play: bool = False) -> None:
        self.game = Game(game)
        if self.game is Game.TWENTYONE and options is None:
            options = default_twentyone_options()
        self.options = options
        self.bonus_in_play = bool(bonus_in_play)
        self._hands: dict[Target, list[Card]] = {t: [] for t in Target}
        self._dealt: list[tuple[Card, Target]] = []

    # -- queries -----------------------------------------------------------------------------
    @property
    def cards_dealt(self) -> int:
        return len(self._dealt)

    @property
    def complete(self) -> bool:
        return self.next_target() is None

    def hand(self, target: Target) -> tuple[Card, ...]:
        return tuple(self._hands[target])

    def next_target(self) -> Target | None:
        n = len(self._dealt)
        if n < 4:
            return _INITIAL[n]
        if self.game is Game.TWENTYONE:
            return self._next_twentyone()
        return self._next_punto_banco()

    def _next_punto_banco(self) -> Target | None:
        p, b = self._hands[Target.PLAYER], self._hands[Target.BANKER]
        pt, bt = pb.point_count(p[:2]), pb.point_count(b[:2])
        if pb.is_natural(pt) or pb.is_natural(bt):
            return None  # 631a.11(a)
        if len(p) == 2 and len(b) == 2:
            if pb.player_draws(pt):
                return Target.PLAYER
            return Target.BANKER if pb.banker_draws(bt, None) else None
        if len(p) == 3 and len(b) == 2:
            return Target.BANKER if pb.banker_draws(bt, pb.card_value(p[2])) else None
        return None

    def _next_twentyone(self) -> Target | None:
        o = self.options
        h = self._hands
        p, b = h[Target.PLAYER], h[Target.BANKER]
        threshold = t21.DRAW_BELOW  # "less than a soft or hard 17"
        natural = o.naturals and (t21.is_natural(p) or t21.is_natural(b))
        if natural:
            if not self.bonus_in_play:
                return None  # 681a.7(f)(1)
            # 681a.7(f)(2): one card, for the Bonus Wager only, to a hand below 17.
            if not h[Target.PLAYER_BONUS] and t21.total(p) < threshold:
                return Target.PLAYER_BONUS
            if not h[Target.BANKER_BONUS] and t21.total(b) < threshold:
                return Target.BANKER_BONUS
            return None
        # 681a.7(g): one additional card to a hand below 17, the Player's first.
        player_below = len(p) == 2 and t21.total(p) < threshold
        if player_below:
            return Target.PLAYER
        if len(b) == 2 and t21.total(b) < threshold:
            if o.draw_rule == "first-only" and len(p) == 3:
                return None
            return Target.BANKER
        return None

    # -- commands ----------------------------------------------------------------------------
    def feed(self, c: Card | str) -> Target:
        """Place the next card; returns where it went. Raises ``RoundStateError`` if complete."""
        c = parse_card(c) if not isinstance(c, Card) else c
        target = self.next_target()
        if target is None:
            raise RoundStateError(f"the round is complete; card {c} cannot be added to it")
        self._hands[target].append(c)
        self._dealt.append((c, target))
        return target

    def result(self) -> RoundResult:
        if not self.complete:
            raise RoundStateError(
                f"the round is not complete: the next card goes to the {self.next_target().value}"
            )
        h = self._hands
        p, b = tuple(h[Target.PLAYER]), tuple(h[Target.BANKER])
        if self.game is Game.TWENTYONE:
            pt, bt = t21.total(p), t21.total(b)
            outcome = twentyone_outcome(pt, bt)
            pn = bool(self.options.naturals and t21.is_natural(p[:2]))
            bn = bool(self.options.naturals and t21.is_natural(b[:2]))
        else:
            pt, bt = pb.point_count(p), pb.point_count(b)
            outcome = Outcome.PLAYER if pt > bt else Outcome.BANKER if bt > pt else Outcome.TIE
            pn, bn = pb.is_natural(pb.point_count(p[:2])), pb.is_natural(pb.point_count(b[:2]))
        return RoundResult(
            game=self.game,
            dealt=tuple(self._dealt),
            player=p,
            banker=b,
            player_total=pt,
            banker_total=bt,
            outcome=outcome,
            player_natural=pn,
            banker_natural=bn,
            bonus_in_play=self.bonus_in_play,
            player_bonus_only=tuple(h[Target.PLAYER_BONUS]),
            banker_bonus_only=tuple(h[Target.BANKER_BONUS]),
        )


def twentyone_outcome(player_total: int, banker_total: int) -> Outcome:
    """681a.7(i)-(j): compare totals. Equal totals tie (push, (i)(4)/(j)(4)); one hand over 21
    loses to a hand of 21 or less ((i)(1)/(j)(1)); both 21 or less, the higher wins ((i)(2)/(j)(2));
    both over 21, the LOWER total wins ((i)(3)/(j)(3))."""
    if player_total == banker_total:
        return Outcome.TIE
    p_over, b_over = player_total > 21, banker_total > 21
    if p_over != b_over:
        return Outcome.BANKER if p_over else Outcome.PLAYER
    player_higher = player_total > banker_total
    if p_over:  # both over 21
        return Outcome.BANKER if player_higher else Outcome.PLAYER
    return Outcome.PLAYER if player_higher else Outcome.BANKER


def deal(
    cards: Iterable[Card | str],
    game: Game | str = Game.PUNTO_BANCO,
    options: Any = None,
    *,
    bonus_in_play: bool = False,
) -> RoundResult:
    """Deal one round from the front of ``cards`` (batch form of ``RoundEngine``)."""
    engine = RoundEngine(Game(game), options, bonus_in_play=bonus_in_play)
    it = iter(cards)
    while (target := engine.next_target()) is not None:
        try:
            c = next(it)
        except StopIteration:
            raise InsufficientCardsError(
                f"round void: insufficient cards ({engine.cards_dealt} dealt, the next goes to the "
                f"{target.value}); all wagers are returned (627a.13(e))"
            ) from None
        engine.feed(c)
    return engine.result()


__all__: Sequence[str] = (
    "RoundEngine",
    "RoundFacts",
    "RoundResult",
    "deal",
    "twentyone_outcome",
)
