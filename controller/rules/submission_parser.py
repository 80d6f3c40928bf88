"""Checking a parsed Rules Submission: ``SubmissionParser(data, source).parse()`` -> ``Submission``.

The limits and the per-game defaults of every key, and one validation pass (a ``shoectl_config``
``DocumentParser``) that fills in the defaults and checks every section, key, type, range and the
values against each other (a wager offered by the game, House Money only where it is offered).
Every problem raises ``SubmissionError(source, key, reason)``. Every key, its default and the
clause it serves are documented in ``docs/rules-submission.md``.
"""
from __future__ import annotations

import types
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from shoectl_config.parser import DocumentParser
from shoectl_config.text import show as _show, typename as _typename

from . import twentyone as t21
from .errors import SubmissionError
from .model import BonusRank, Dealing, Game, Payout, WagerKind
from .shoe import second_cover_limits
from .submission_data import HouseMoneyOptions, Submission, TwentyOneOptions, names_of
from .submission_limits import LIMIT_KEYS, parse_limits

__all__ = ["SubmissionParser"]

# Limits -------------------------------------------------------------------------------------

MIN_DECKS, MAX_DECKS = 1, 8
REG_MIN_COVER_DEPTH = 10  # 681a.5(c)-(d): "at least ten cards"; may be raised, never lowered
MAX_BURN_CARDS = 52
MAX_SEAT_NUMBER = 99
MAX_NAME_LENGTH = 200
MAX_ODDS_TERM = 1_000_000  # a bound on each side of "W:S" odds
MAX_ODDS_TEXT = 40  # characters of "W:S" odds: digits are bounded before they are converted
RATE_PLACES = 6  # decimal places of a commission rate or a House Money portion (one in a million)

COMMISSION_ROUNDINGS = ("down", "half-up", "half-even", "up")
UNAUTHORIZED_THIRD_CARD = ("discard", "simulated-round")
SIMULATED_ROUND_WAGERS = ("return", "stay")  # 627a.13(c)(2)/(d): "wagers may not be accepted"
DRAW_RULES = ("each", "first-only")

# Wagers a game may offer, and the wagers it offers unless [wagers].offered says otherwise.
_P, _B, _T = WagerKind.PLAYER, WagerKind.BANKER, WagerKind.TIE
_PP, _BP = WagerKind.PLAYER_PAIR, WagerKind.BANKER_PAIR
ALLOWED_WAGERS: Mapping[Game, frozenset[WagerKind]] = types.MappingProxyType(
    {
        Game.PUNTO_BANCO: frozenset({_P, _B, _T, _PP, _BP, WagerKind.HOUSE_MONEY}),
        Game.EZ_BACCARAT: frozenset({_P, _B, _T, _PP, _BP, WagerKind.DRAGON7, WagerKind.PANDA8}),
        Game.TWENTYONE: frozenset({_P, _B, _T, WagerKind.PLAYER_BONUS, WagerKind.BANKER_BONUS}),
    }
)
DEFAULT_WAGERS: Mapping[Game, frozenset[WagerKind]] = types.MappingProxyType(
    {
        Game.PUNTO_BANCO: frozenset({_P, _B, _T, _PP, _BP}),
        Game.EZ_BACCARAT: frozenset({_P, _B, _T, _PP, _BP, WagerKind.DRAGON7, WagerKind.PANDA8}),
        Game.TWENTYONE: frozenset({_P, _B, _T, WagerKind.PLAYER_BONUS, WagerKind.BANKER_BONUS}),
    }
)
REQUIRED_WAGERS = frozenset({_P, _B})  # 681a.7(e): Player and Banker wagers; the rest optional

# Wagers whose payout is not a single paytable entry: House Money has its own section, the
# 21 Baccarat Bonus Wagers pay by rank from [bonus_paytable].
_NOT_IN_PAYTABLE = frozenset({WagerKind.HOUSE_MONEY, WagerKind.PLAYER_BONUS, WagerKind.BANKER_BONUS})

# The usual paytables (627a.12 / 629a.12 / 627c.2 / 681a.8 not found: docs/assumptions.md).
DEFAULT_PAYTABLE: Mapping[WagerKind, Payout] = types.MappingProxyType(
    {
        WagerKind.PLAYER: Payout(1, 1),
        WagerKind.BANKER: Payout(1, 1),
        WagerKind.TIE: Payout(8, 1),
        WagerKind.PLAYER_PAIR: Payout(11, 1),
        WagerKind.BANKER_PAIR: Payout(11, 1),
        WagerKind.DRAGON7: Payout(40, 1),
        WagerKind.PANDA8: Payout(25, 1),
    }
)

# 21 Baccarat: the Tie pays 10:1 by default (681a.8(b) not found). At 8:1 the Tie would hold 22%
# under the assumed draw rules, far from the 5.4-5.9% the rulemaking preamble (46 Pa.B. 7323)
# gives; 10:1 holds 4.8% (6 decks). See docs/odds.md.
TWENTYONE_PAYTABLE_OVERRIDES: Mapping[WagerKind, Payout] = types.MappingProxyType({WagerKind.TIE: Payout(10, 1)})

# 21 Baccarat Bonus Wager (681a.8(c) not found: assumption). Chosen so that the Bonus holds about
# 7% (6 decks) under the assumed rules, inside the 5.8-8.0% the rulemaking preamble gives.
DEFAULT_BONUS_PAYTABLE: Mapping[BonusRank, Payout] = types.MappingProxyType(
    {
        BonusRank.PAIR: Payout(2, 1),
        BonusRank.FLUSH: Payout(4, 1),
        BonusRank.STRAIGHT: Payout(7, 1),
        BonusRank.THREE_OF_A_KIND: Payout(25, 1),
        BonusRank.STRAIGHT_FLUSH: Payout(40, 1),
        BonusRank.SUITED_THREE_OF_A_KIND: Payout(100, 1),
    }
)

_DEFAULT_DECKS = {Game.PUNTO_BANCO: 8, Game.EZ_BACCARAT: 8, Game.TWENTYONE: 6}
_DEFAULT_COMMISSION = {
    Game.PUNTO_BANCO: Decimal("0.05"),
    Game.EZ_BACCARAT: Decimal("0"),
    Game.TWENTYONE: Decimal("0"),
}
_GAME_TITLES = {
    Game.PUNTO_BANCO: "Punto Banco",
    Game.EZ_BACCARAT: "EZ Baccarat",
    Game.TWENTYONE: "21 Baccarat",
}
DEFAULT_SEATS: tuple[int, ...] = tuple(range(1, 8))


# Validation ---------------------------------------------------------------------------------

_SECTIONS: dict[str, tuple[str, ...]] = {
    "submission": ("name", "game", "decks", "dealing", "burn_cards", "min_cover_depth", "seats"),
    "wagers": ("offered",),
    "paytable": tuple(k.value for k in WagerKind if k not in _NOT_IN_PAYTABLE),
    "commission": ("rate", "player_rate", "rounding"),
    "house_money": ("either_pair", "both_pairs", "portion"),
    "irregularities": ("unauthorized_third_card", "simulated_round_wagers"),
    "twentyone": ("naturals", "bonus_only_card", "draw_rule", "draw_threshold"),
    "bonus_paytable": tuple(r.value for r in BonusRank if r is not BonusRank.NONE),
    "limits": LIMIT_KEYS,
}

_ELSEWHERE: dict[str, dict[str, str]] = {  # a word for a key written in the wrong section
    "paytable": {
        "house_money": " (House Money odds go in [house_money])",
        "player_bonus": " (Bonus Wager odds go in [bonus_paytable])",
        "banker_bonus": " (Bonus Wager odds go in [bonus_paytable])",
    },
    "bonus_paytable": {"none": " (a hand without a pair or better loses the Bonus Wager)"},
}


class SubmissionParser(DocumentParser):
    """One validation pass over a parsed Rules Submission; raises on the first problem."""

    error = SubmissionError

    def payout(self, key: str, value: object) -> Payout:
        text = self.string(key, value)
        try:
            p = Payout.parse(text) if len(text) <= MAX_ODDS_TEXT else None
        except ValueError:  # RulesError
            p = None
        if p is None:
            raise self.fail(key, f"payout odds must look like '8:1' or '8 to 1', not {_show(text)}")
        if not 1 <= p.win <= MAX_ODDS_TERM or not 1 <= p.stake <= MAX_ODDS_TERM:
            raise self.fail(
                key, f"out of range: {_show(text)} (win and stake must each be 1..{MAX_ODDS_TERM})"
            )
        return p

    # -- the pass ---------------------------------------------------------------------------

    def parse(self) -> Submission:
        """The checked ``Submission``; raises ``SubmissionError`` on the first problem. Every
        section's keys are checked first, then [submission] (its game sets the defaults and what
        the other sections may hold), then the other sections in ``_SECTIONS`` order."""
        present = self.document(_SECTIONS)  # the sections actually written in the file
        sections = {name: self.section(name, known, _ELSEWHERE.get(name)) for name, known in _SECTIONS.items()}

        sub = sections["submission"]
        game = self.game(sub)
        decks = (self.integer("submission.decks", sub["decks"], MIN_DECKS, MAX_DECKS) if "decks" in sub
                 else _DEFAULT_DECKS[game])
        name = (self.text("submission.name", sub["name"], MAX_NAME_LENGTH) if "name" in sub
                else f"{_GAME_TITLES[game]}, {decks} decks")
        dealing = self.dealing(sub, game)
        burn_cards = self.burn_cards(sub, game)
        min_cover_depth = self.cover_depth(sub, decks, burn_cards)
        seats = self.seats(sub["seats"]) if "seats" in sub else DEFAULT_SEATS

        offered = sections["wagers"]
        wagers = self.wagers(offered["offered"], game) if "offered" in offered else DEFAULT_WAGERS[game]
        paytable = self.paytable(sections["paytable"], game, wagers)
        commission, player_commission, rounding = self.commission(sections["commission"], game)
        house_money = (self.house_money(sections["house_money"], game, wagers) if "house_money" in present
                       else HouseMoneyOptions())
        unauthorized, simulated_wagers = self.irregularities(sections["irregularities"], game,
                                                              "irregularities" in present)
        for sec in ("twentyone", "bonus_paytable"):
            if sec in present and game is not Game.TWENTYONE:
                raise self.fail(sec, f"applies to 21-baccarat only, not {game.value}")
        twentyone = self.twentyone(sections["twentyone"]) if "twentyone" in present else TwentyOneOptions()
        bonus_paytable = self.bonus_paytable(sections["bonus_paytable"], wagers, "bonus_paytable" in present)
        limits = parse_limits(self, sections["limits"], wagers)

        return Submission(
            source=self.source, name=name, game=game, decks=decks, dealing=dealing, burn_cards=burn_cards,
            min_cover_depth=min_cover_depth, seats=seats, wagers=wagers, paytable=paytable,
            commission=commission, commission_rounding=rounding, unauthorized_third_card=unauthorized,
            house_money=house_money, twentyone=twentyone, bonus_paytable=bonus_paytable,
            player_commission=player_commission, simulated_round_wagers=simulated_wagers, limits=limits,
        )

    # -- [submission] -----------------------------------------------------------------------

    def game(self, sub: dict[str, Any]) -> Game:
        """``submission.game``: required, since every other key's default and check follow it."""
        if "game" not in sub:
            raise self.missing("submission.game", f"; allowed: {names_of(Game)}")
        return self.enum("submission.game", sub["game"], Game)

    def dealing(self, sub: dict[str, Any], game: Game) -> Dealing:
        """``submission.dealing`` (face up unless given); 21 Baccarat allows face up only."""
        dealing = self.enum("submission.dealing", sub["dealing"], Dealing) if "dealing" in sub else Dealing.FACE_UP
        if game is Game.TWENTYONE and dealing is not Dealing.FACE_UP:
            raise self.fail(
                "submission.dealing", "21 Baccarat cards are dealt face up (681a.7(e)); allowed: face-up"
            )
        return dealing

    def burn_cards(self, sub: dict[str, Any], game: Game) -> int:
        """``submission.burn_cards``: 1..``MAX_BURN_CARDS`` (1 unless given); 21 Baccarat burns one."""
        if "burn_cards" not in sub:
            return 1
        burn_cards = self.integer("submission.burn_cards", sub["burn_cards"], 1, MAX_BURN_CARDS)
        if game is Game.TWENTYONE and burn_cards != 1:
            raise self.fail("submission.burn_cards", f"21 Baccarat burns one card (681a.7(c): \"remove the "
                            f"first card\", a new dealer \"one card\"), not {burn_cards}; allowed: 1")
        return burn_cards

    def cover_depth(self, sub: dict[str, Any], decks: int, burn_cards: int) -> int:
        """``submission.min_cover_depth``: ``REG_MIN_COVER_DEPTH`` up to half the shoe (the
        regulation's ten unless given), leaving the second cover card a place below the
        ``burn_cards`` burned (else ``submission.burn_cards`` is refused)."""
        min_cover_depth = REG_MIN_COVER_DEPTH
        if "min_cover_depth" in sub:
            value = self.whole("submission.min_cover_depth", sub["min_cover_depth"])
            if value < REG_MIN_COVER_DEPTH:
                raise self.fail(
                    "submission.min_cover_depth",
                    f"out of range: {value}; the cover card goes at least {REG_MIN_COVER_DEPTH} cards in "
                    "(681a.5(c)-(d)): the minimum may be raised, never lowered",
                )
            min_cover_depth = self.integer(
                "submission.min_cover_depth", value, REG_MIN_COVER_DEPTH, decks * 52 // 2,
                hint=f" for {decks} decks",
            )
        lowest, highest = second_cover_limits(decks * 52, min_cover_depth, burn_cards)
        if lowest > highest:  # every place refused: a table would refuse every cover (a configuration review)
            raise self.fail(
                "submission.burn_cards",
                f"{burn_cards} cards burned leave no place for the second cover card, which goes below them and at "
                f"least {min_cover_depth} cards above the bottom (681a.5(d), 681a.7(c)); at most "
                f"{decks * 52 - min_cover_depth} for {decks} deck{'' if decks == 1 else 's'}",
            )
        return min_cover_depth

    # -- the other sections -----------------------------------------------------------------

    def paytable(self, sec: dict[str, Any], game: Game, wagers: frozenset[WagerKind]) -> Mapping[WagerKind, Payout]:
        """The game's default odds of every offered wager paid from the paytable, overridden by
        ``[paytable]``, whose every key must be an offered wager; in ``WagerKind`` order."""
        defaults = dict(DEFAULT_PAYTABLE)
        if game is Game.TWENTYONE:
            defaults.update(TWENTYONE_PAYTABLE_OVERRIDES)
        table = {k: defaults[k] for k in WagerKind if k in wagers and k not in _NOT_IN_PAYTABLE}
        for key, value in sec.items():
            kind = WagerKind(key)
            if kind not in wagers:
                raise self.fail(
                    f"paytable.{key}",
                    f"wager not offered at this table (add it to wagers.offered); offered: {_offered(wagers)}",
                )
            table[kind] = self.payout(f"paytable.{key}", value)
        return types.MappingProxyType({k: table[k] for k in WagerKind if k in table})

    def commission(self, com: dict[str, Any], game: Game) -> tuple[Decimal, Decimal, str]:
        """``[commission]``: the Banker's rate (0 for EZ Baccarat), the Player's (21 Baccarat
        only) and the rounding, each the game's default unless given."""
        commission = _DEFAULT_COMMISSION[game]
        if "rate" in com:
            commission = self.decimal("commission.rate", com["rate"], 0, 1, hi_open=True, places=RATE_PLACES,
                                      name="rate")
            if game is Game.EZ_BACCARAT and commission != 0:
                raise self.fail(
                    "commission.rate", f"must be 0 for ez-baccarat (commission-free, 627c.2), not {commission}"
                )
        player_commission = Decimal(0)
        if "player_rate" in com:
            if game is not Game.TWENTYONE:
                raise self.fail("commission.player_rate", "applies to 21-baccarat only (the Player wager of "
                                f"{game.value} pays without commission; the Banker's is commission.rate)")
            player_commission = self.decimal("commission.player_rate", com["player_rate"], 0, 1, hi_open=True,
                                             places=RATE_PLACES, name="rate")
        rounding = "down"
        if "rounding" in com:
            rounding = self.choice("commission.rounding", com["rounding"], COMMISSION_ROUNDINGS)
        return commission, player_commission, rounding

    def house_money(self, hm: dict[str, Any], game: Game, wagers: frozenset[WagerKind]) -> HouseMoneyOptions:
        """A written ``[house_money]`` section: allowed only with the wager offered; each key
        overrides ``HouseMoneyOptions``' default."""
        if WagerKind.HOUSE_MONEY not in wagers:
            raise self.fail(
                "house_money",
                "section given but 'house_money' is not in wagers.offered"
                + ("" if game is Game.PUNTO_BANCO else f" (not offered in {game.value})"),
            )
        d = HouseMoneyOptions()
        either = self.payout("house_money.either_pair", hm["either_pair"]) if "either_pair" in hm else d.either_pair
        both = self.payout("house_money.both_pairs", hm["both_pairs"]) if "both_pairs" in hm else d.both_pairs
        portion = d.portion
        if "portion" in hm:
            portion = self.decimal("house_money.portion", hm["portion"], 0, 1, lo_open=True,
                                   places=RATE_PLACES, name="portion")
        return HouseMoneyOptions(either, both, portion)

    def irregularities(self, irr: dict[str, Any], game: Game, written: bool) -> tuple[str, str]:
        """What an unauthorized third card and a simulated round's wagers come to,
        ``("discard", "return")`` unless a ``written`` ``[irregularities]`` (refused for 21
        Baccarat) says otherwise."""
        unauthorized, simulated_wagers = "discard", "return"
        if not written:
            return unauthorized, simulated_wagers
        if game is Game.TWENTYONE:
            raise self.fail("irregularities", "applies to punto-banco and ez-baccarat only (627a.13(c))")
        if "unauthorized_third_card" in irr:
            unauthorized = self.choice(
                "irregularities.unauthorized_third_card", irr["unauthorized_third_card"], UNAUTHORIZED_THIRD_CARD
            )
        if "simulated_round_wagers" in irr:
            simulated_wagers = self.choice(
                "irregularities.simulated_round_wagers", irr["simulated_round_wagers"], SIMULATED_ROUND_WAGERS
            )
        return unauthorized, simulated_wagers

    def bonus_paytable(self, sec: dict[str, Any], wagers: frozenset[WagerKind],
                       written: bool) -> Mapping[BonusRank, Payout]:
        """``DEFAULT_BONUS_PAYTABLE`` overridden by a ``written`` ``[bonus_paytable]`` (allowed only
        with a Bonus Wager offered); in ``BonusRank`` order."""
        bonus = dict(DEFAULT_BONUS_PAYTABLE)
        if written:
            if not wagers & {WagerKind.PLAYER_BONUS, WagerKind.BANKER_BONUS}:
                raise self.fail("bonus_paytable", "section given but no Bonus Wager is in wagers.offered")
            for key, value in sec.items():
                bonus[BonusRank(key)] = self.payout(f"bonus_paytable.{key}", value)
        return types.MappingProxyType({r: bonus[r] for r in BonusRank if r in bonus})

    def seats(self, value: object) -> tuple[int, ...]:
        key = "submission.seats"
        if not isinstance(value, (list, tuple)):
            raise self.fail(key, f"expected an array of seat numbers, got {_typename(value)}")
        if not value:
            raise self.fail(key, "must list at least one seat")
        seen: set[int] = set()
        for i, seat in enumerate(value):
            self.integer(f"{key}[{i}]", seat, 1, MAX_SEAT_NUMBER)
            if seat in seen:
                raise self.fail(key, f"duplicate seat {seat}")
            seen.add(seat)
        return tuple(value)

    def wagers(self, value: object, game: Game) -> frozenset[WagerKind]:
        key = "wagers.offered"
        if not isinstance(value, (list, tuple)):
            raise self.fail(key, f"expected an array of wager names, got {_typename(value)}")
        allowed = ALLOWED_WAGERS[game]
        allowed_text = ", ".join(k.value for k in WagerKind if k in allowed)
        out: set[WagerKind] = set()
        for i, item in enumerate(value):
            kind = self.enum(f"{key}[{i}]", item, WagerKind)
            if kind not in allowed:
                raise self.fail(f"{key}[{i}]", f"{kind.value} is not a {game.value} wager; allowed: {allowed_text}")
            if kind in out:
                raise self.fail(f"{key}[{i}]", f"duplicate wager {kind.value}")
            out.add(kind)
        missing = [k.value for k in WagerKind if k in REQUIRED_WAGERS and k not in out]
        if missing:
            raise self.fail(
                key, f"must include {', '.join(missing)} (every table offers the Player and Banker wagers)"
            )
        return frozenset(out)

    def twentyone(self, sec: dict[str, Any]) -> TwentyOneOptions:
        """The choice 681a leaves open (``draw_rule``), and the three keys whose value the text fixes
        (``naturals``, ``bonus_only_card``, ``draw_threshold``): accepted with that value only (a
        file that states it reads as before), refused otherwise."""
        d = TwentyOneOptions()
        if "naturals" in sec and not self.boolean("twentyone.naturals", sec["naturals"]):
            raise self.fail("twentyone.naturals", "681a.7(f) applies \"if either the Player's Hand or Banker's "
                            "Hand is a natural\"; a two-card 21 is one; allowed: true")
        draw_rule = (self.choice("twentyone.draw_rule", sec["draw_rule"], DRAW_RULES)
                     if "draw_rule" in sec else d.draw_rule)
        if "bonus_only_card" in sec and not self.boolean("twentyone.bonus_only_card", sec["bonus_only_card"]):
            raise self.fail("twentyone.bonus_only_card", "681a.7(f)(2) requires it: with a natural and a Bonus "
                            "Wager placed, \"one additional card shall be drawn\" for the Bonus Wager; allowed: true")
        if "draw_threshold" in sec:
            threshold = self.whole("twentyone.draw_threshold", sec["draw_threshold"])
            if threshold != t21.DRAW_BELOW:
                raise self.fail("twentyone.draw_threshold", f"a hand draws when it is \"less than a soft or hard "
                                f"17\" (681a.7(f)(2), (g)), not {_show(threshold)}; allowed: {t21.DRAW_BELOW}")
        return TwentyOneOptions(naturals=d.naturals, draw_rule=draw_rule)


def _offered(wagers: frozenset[WagerKind]) -> str:
    return ", ".join(k.value for k in WagerKind if k in wagers)
