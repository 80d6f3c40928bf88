"""The exact odds' brute-force oracle and small shoes, for tests/rules/test_odds*.py.

``shoe(decks, cards)``: a shoe holding only ``cards``; ``with_options(sub, **kw)``: a Rules
Submission with other 21 Baccarat options; ``assert_matches_engine(sub, comp, bonus_in_play)``:
``exact_odds`` equals, outcome by outcome and wager by wager, what ``brute_force`` gets by dealing
every ordered card sequence of ``comp`` through ``engine.RoundEngine``.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from fractions import Fraction

from controller.rules.cards import ALL_CARDS, Composition, parse_cards
from controller.rules.engine import RoundEngine
from controller.rules.model import BonusRank, Game, Outcome, WagerKind
from controller.rules.odds import exact_odds, falling
from controller.rules.wagers import net_multiplier


def shoe(decks: int, cards: str) -> Composition:
    """A ``decks``-deck shoe with everything removed except ``cards``."""
    keep = Counter(parse_cards(cards))
    removed = [c for c in ALL_CARDS for _ in range(decks - keep[c])]
    return Composition.standard(decks).remove(removed)


def with_options(sub, **kw):
    return dataclasses.replace(sub, twentyone=dataclasses.replace(sub.twentyone, **kw))


def brute_force(sub, comp: Composition, bonus_in_play: bool) -> tuple[Counter, int]:
    """Deal every ordered sequence of the shoe's cards through the rules engine.

    Sequences are grown one card at a time, each fed to one ``RoundEngine`` (the incremental form
    of ``engine.deal``) until it completes a round; each distinct card is taken with its
    multiplicity, and the cards after a completed round are free, so the weights count ordered
    six-card sequences of physical cards, like the enumeration does. A card is taken back after
    its subtree by popping it from the engine's two lists (the engine has no undo of its own):
    one feed per node instead of dealing the whole prefix again at every node.
    Returns ``(weight by RoundFacts, total)``.
    """
    game = sub.game
    opts = sub.twentyone if game is Game.TWENTYONE else None
    counts = dict(sorted(comp.counts().items()))
    dist: Counter = Counter()
    engine = RoundEngine(game, opts, bonus_in_play=bonus_in_play)
    hands, dealt = engine._hands, engine._dealt

    def grow(weight: int, left: int) -> None:
        if engine.complete:
            dist[engine.result().facts] += weight * falling(left, 6 - len(dealt))
            return
        for c, k in counts.items():
            if k:
                counts[c] = k - 1
                target = engine.feed(c)
                grow(weight * k, left - 1)
                hands[target].pop()
                dealt.pop()
                counts[c] = k

    grow(1, comp.total)
    total = falling(comp.total, 6)
    assert sum(dist.values()) == total
    return dist, total


def expected_from_engine(sub, comp: Composition, bonus_in_play: bool):
    dist, total = brute_force(sub, comp, bonus_in_play)
    events = {
        "player": lambda f: f.outcome is Outcome.PLAYER,
        "banker": lambda f: f.outcome is Outcome.BANKER,
        "tie": lambda f: f.outcome is Outcome.TIE,
    }
    if sub.game.is_punto_banco_family:
        events["player_pair"] = lambda f: f.player_pair
        events["banker_pair"] = lambda f: f.banker_pair
    if sub.game is Game.EZ_BACCARAT:
        events["dragon7"] = lambda f: f.dragon7
        events["panda8"] = lambda f: f.panda8
    if WagerKind.HOUSE_MONEY in sub.wagers:
        events["both_pairs"] = lambda f: f.player_pair and f.banker_pair
    if sub.game is Game.TWENTYONE:
        for side in ("player", "banker"):
            for r in BonusRank:
                events[f"{side}_bonus:{r.value}"] = lambda f, a=f"{side}_bonus_rank", r=r: getattr(f, a) is r
    outcomes = {name: Fraction(sum(w for f, w in dist.items() if pred(f)), total) for name, pred in events.items()}
    wagers = {}
    for kind in WagerKind:
        if kind not in sub.wagers:
            continue
        if kind in (WagerKind.PLAYER_BONUS, WagerKind.BANKER_BONUS) and not bonus_in_play:
            continue
        ms = [(net_multiplier(kind, f, sub), w) for f, w in dist.items()]
        wagers[kind.value] = {
            "house_edge": -sum(m * w for m, w in ms) / total,
            "win": Fraction(sum(w for m, w in ms if m > 0), total),
            "push": Fraction(sum(w for m, w in ms if m == 0), total),
            "lose": Fraction(sum(w for m, w in ms if m < 0), total),
        }
    return outcomes, wagers


def assert_matches_engine(sub, comp: Composition, bonus_in_play: bool | None = None) -> None:
    report = exact_odds(sub, comp, bonus_in_play=bonus_in_play)
    in_play = bool(report.bonus_in_play)
    outcomes, wagers = expected_from_engine(sub, comp, in_play)
    assert report.outcomes == outcomes
    assert set(report.wagers) == set(wagers)
    for name, w in wagers.items():
        got = report.wagers[name]
        assert {k: got[k] for k in w} == w, name
        assert got["expected"] == -got["house_edge"]
