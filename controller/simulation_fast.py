"""The fast pure-Python simulation path for the Punto Banco games (no numpy needed).

Contract:
- ``trie_for(game) -> PuntoBancoTrie``: the decision trie *compiled by running the same
  RoundEngine* over every (Player two-card total, Banker two-card total, fifth card, sixth card),
  so it cannot drift from live play; built once per game.
- ``tableau_for(game) -> Tableau``: the trie flattened into integer lists indexed by card RANK
  (see ``Tableau``); every leaf code stands for one ``RoundFacts`` (pairs included).
- ``tally_shoe_fast(shoe, trie)``: one ``PreparedShoe`` dealt through the tableau; the same
  ``Tally`` as ``simulation.tally_shoe_reference`` on that shoe (a test checks it).
- ``deal_batch(submission, rng, shoes, on_shoe=None) -> Tally``: ``shoes`` whole shoes drawn with
  ``simulation_shoe.draw_shoe`` (the reference path's shoes for the same generator), counted per
  leaf code in one list and turned into ``RoundFacts`` once per batch, not per round or shoe.

Why it is fast: a shoe is a list of ranks (suits never matter in these games); a round is two
look-ups for the first four cards (Player total and pair, Banker total and pair), then at most
two more into one flat list; no object is created per round.
"""
from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from controller.rules.cards import RANKS, Card, Composition, card
from controller.rules.engine import RoundEngine, RoundFacts
from controller.rules.model import Game
from controller.rules.punto_banco import card_value
from controller.rules.shoe import PreparedShoe
from controller.simulation_shoe import Tally, draw_shoe

ROUND_MAX = 6  # cards a Punto Banco round can use
_VALUE_CARD = {v: card(v if v else 10, "S") for v in range(10)}  # a representative card per value


class PuntoBancoTrie:
    """Decision trie compiled from ``RoundEngine``: root index ``10 * player_total + banker_total``
    of the first four cards; an inner node is a list indexed by the next card's value; a leaf is an
    int index into ``leaves`` (a ``(facts_without_pairs, cards_used)`` pair)."""

    def __init__(self, game: Game) -> None:
        self.game = game
        self.leaves: list[tuple[RoundFacts, int]] = []
        self._leaf_ids: dict[tuple[RoundFacts, int], int] = {}
        self.root = [self._build([_VALUE_CARD[pt], _VALUE_CARD[bt], _VALUE_CARD[0], _VALUE_CARD[0]])
                     for pt in range(10) for bt in range(10)]

    def _build(self, prefix: list[Card]) -> Any:
        engine = RoundEngine(self.game)
        for c in prefix:
            engine.feed(c)
        if engine.complete:
            res = engine.result()
            f = res.facts
            key = (RoundFacts(f.outcome, dragon7=f.dragon7, panda8=f.panda8), res.cards_used)
            if key not in self._leaf_ids:
                self._leaf_ids[key] = len(self.leaves)
                self.leaves.append(key)
            return self._leaf_ids[key]
        return [self._build(prefix + [_VALUE_CARD[v]]) for v in range(10)]


class Tableau:
    """The trie flattened for dealing by rank.

    A leaf code is ``4 * leaf + 2 * player_pair + banker_pair`` (< ``codes``); ``facts[code]`` is
    its ``RoundFacts`` and ``cards_used[code]`` the cards its round took. ``flat`` holds inner nodes as blocks of 14 entries indexed by rank (entry 0
    unused); a node is its block's start, always >= ``codes``, so ``node < codes`` tells a leaf.
    The first four cards ``r1 r2 r3 r4`` (Player, Banker, Player, Banker) lead to
    ``flat[player[r1 << 4 | r3] + banker[r2 << 4 | r4]]``.
    """

    def __init__(self, trie: PuntoBancoTrie) -> None:
        self.codes = 4 * len(trie.leaves)
        self.cards_used = [used for _, used in trie.leaves for _ in range(4)]
        self.facts = [RoundFacts(f.outcome, player_pair=bool(c & 2), banker_pair=bool(c & 1),
                                 dragon7=f.dragon7, panda8=f.panda8)
                      for f, _ in trie.leaves for c in range(4)]
        self.flat: list[int] = [0] * self.codes
        value = [0] + [card_value(card(r, "S")) for r in RANKS]
        root = len(self.flat)
        self.flat.extend([0] * 400)
        for pt in range(10):
            for bt in range(10):
                for pair_bits in range(4):
                    self.flat[root + pt * 40 + bt * 4 + pair_bits] = self._node(trie.root[pt * 10 + bt], pair_bits, value)
        self.player = [0] * 224
        self.banker = [0] * 224
        for r1 in RANKS:
            for r3 in RANKS:
                total, pair = (value[r1] + value[r3]) % 10, int(r1 == r3)
                self.player[r1 << 4 | r3] = root + total * 40 + pair * 2
                self.banker[r1 << 4 | r3] = total * 4 + pair

    def _node(self, node: Any, pair_bits: int, value: list[int]) -> int:
        if node.__class__ is int:
            return 4 * node + pair_bits
        start = len(self.flat)
        self.flat.extend([0] * 14)
        for r in RANKS:
            self.flat[start + r] = self._node(node[value[r]], pair_bits, value)
        return start


_TRIES: dict[Game, PuntoBancoTrie] = {}
_TABLEAUX: dict[Game, Tableau] = {}


def trie_for(game: Game) -> PuntoBancoTrie:
    if game not in _TRIES:
        _TRIES[game] = PuntoBancoTrie(game)
    return _TRIES[game]


def tableau_for(game: Game) -> Tableau:
    if game not in _TABLEAUX:
        _TABLEAUX[game] = Tableau(trie_for(game))
    return _TABLEAUX[game]


def deal_ranks(s: list[int], pos: int, cover: int, tableau: Tableau, counts: list[int]) -> tuple[int, int, int]:
    """Deal the rounds of one shoe of ranks ``s`` from ``pos`` until the cover card (index
    ``cover``) has come out, adding one to ``counts[code]`` per round. Returns ``(rounds, cards
    dealt, void rounds)``; a round the shoe cannot complete is void (627a.13(e)) and ends it."""
    flat, player, banker, codes = tableau.flat, tableau.player, tableau.banker, tableau.codes
    start = pos
    safe = min(cover, len(s) - ROUND_MAX)  # rounds starting up to here cannot run out
    rounds = 0
    while pos <= safe:
        node = flat[player[s[pos] << 4 | s[pos + 2]] + banker[s[pos + 1] << 4 | s[pos + 3]]]
        if node < codes:
            pos += 4
        else:
            node = flat[node + s[pos + 4]]
            if node < codes:
                pos += 5
            else:
                node = flat[node + s[pos + 5]]
                pos += 6
        counts[node] += 1
        rounds += 1
    while pos <= cover:  # only for a cover card placed within a round of the end
        used = _cards_needed(s, pos, tableau)
        if used is None:
            return rounds, pos - start, 1
        counts[used[1]] += 1
        pos += used[0]
        rounds += 1
    return rounds, pos - start, 0


def _cards_needed(s: list[int], pos: int, tableau: Tableau) -> tuple[int, int] | None:
    """``(cards used, leaf code)`` of the round starting at ``pos``, or None if the shoe runs out."""
    if pos + 4 > len(s):
        return None
    node = tableau.flat[tableau.player[s[pos] << 4 | s[pos + 2]] + tableau.banker[s[pos + 1] << 4 | s[pos + 3]]]
    k = 4
    while node >= tableau.codes:
        if pos + k >= len(s):
            return None
        node = tableau.flat[node + s[pos + k]]
        k += 1
    return k, node


def counts_to_facts(tableau: Tableau, counts: list[int]) -> Counter:
    """Round counts by leaf code as counts by ``RoundFacts`` (leaves differing only in the
    cards they used share their facts)."""
    out: Counter = Counter()
    for code, n in enumerate(counts):
        if n:
            out[tableau.facts[code]] += n
    return out


def tally_shoe_fast(shoe: PreparedShoe, trie: PuntoBancoTrie) -> Tally:
    """Deal one prepared shoe through the compiled tableau. Same result as the reference path."""
    tableau = tableau_for(trie.game)
    counts = [0] * tableau.codes
    rounds, dealt, void = deal_ranks([c.rank for c in shoe.stack], shoe.first_live, shoe.cover_index, tableau, counts)
    return Tally(shoes=1, rounds=rounds, void_rounds=void, cards_dealt=dealt, facts=counts_to_facts(tableau, counts))


@lru_cache(maxsize=None)
def base_ranks(decks: int) -> list[int]:
    """The ranks of a fresh shoe in the order of ``Composition.cards()`` (the reference path's)."""
    return [c.rank for c in Composition.standard(decks).cards()]


def deal_batch(submission: Any, rng: random.Random, shoes: int,
               on_shoe: Callable[[Tally], None] | None = None) -> Tally:
    """Deal ``shoes`` whole shoes (module docstring); ``on_shoe`` gets each shoe's own tally."""
    tableau = tableau_for(submission.game)
    base = base_ranks(submission.decks)
    burn, n = submission.burn_cards, len(base)
    counts = [0] * tableau.codes
    total = Tally()
    for _ in range(shoes):
        s = base[:]
        cut, cover_from_bottom = draw_shoe(submission, rng, s)
        s = s[cut:] + s[:cut]
        mine = counts if on_shoe is None else [0] * tableau.codes
        rounds, dealt, void = deal_ranks(s, burn, n - cover_from_bottom, tableau, mine)
        total.shoes += 1
        total.rounds += rounds
        total.cards_dealt += dealt
        total.void_rounds += void
        if on_shoe is not None:
            one = Tally(shoes=1, rounds=rounds, void_rounds=void, cards_dealt=dealt, facts=counts_to_facts(tableau, mine))
            on_shoe(one)
            counts = [a + b for a, b in zip(counts, mine)]
    total.facts = counts_to_facts(tableau, counts)
    return total
