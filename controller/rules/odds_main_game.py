"""Exact counts of the main game's categories, by value-class tables (pure; no I/O).

Contract:
- ``punto_banco_categories(composition)`` -> ordered six-card sequences per category of a Punto
  Banco family round, keyed by ``PUNTO_BANCO_CATEGORIES``: ``player`` (Player wins, not Panda 8),
  ``player_panda8``, ``banker`` (Banker wins, not Dragon 7), ``banker_dragon7``, ``tie``. Dragon 7
  and Panda 8 are read off an engine ``RoundResult``, so they are the engine's definitions.
- ``twentyone_categories(composition, naturals=, draw_rule=)`` -> the same for 21
  Baccarat, keyed by ``TWENTYONE_CATEGORIES`` (``player``, ``banker``, ``tie``), counting only the
  cards that decide the Player and Banker wagers (the 681a.7(f)(2) bonus-only card never does).
- The counts of one call sum to ``falling(composition.total, ROUND_CARDS)``; the composition must
  hold at least ``ROUND_CARDS`` cards (the caller checks).
- ``clear_caches()`` forgets the tables (loaded or built once per rule set, on first use).
- ``use_engine(engine) -> the previous choice`` (or ``with using_engine(engine):``) chooses how a
  table is evaluated on a shoe, one of ``ENGINES`` (``controller.rules.engines``):
  ``"auto"`` (the default: numpy when it can be imported, the optional ``fast`` extra, else pure
  Python), ``"python"`` (``odds_multisets``) or ``"numpy"`` (``odds_multisets_numpy``;
  ``RulesError`` without numpy). Both give the same exact integers; a shoe too large for numpy's
  64-bit integers is evaluated in pure Python whatever the choice. ``engine_in_use()`` says which
  one ``auto`` comes to.
- ``punto_banco_facts()`` / ``twentyone_facts(...)``: what a table is derived from, read off the
  rule functions; ``derive_punto_banco_table(facts)`` / ``derive_twentyone_table(facts)`` derive
  it now. On first use a table is the one shipped for its facts (``odds_tables``), else derived.

Method (docs/odds.md): the drawing rules are turned once per rule set into a
composition-independent table keyed by the MULTISET of card-value classes a round uses (4, 5 or 6
cards; 10 classes), holding how many ordered value sequences with that multiset end in each
category. The table is built from the rule functions of ``punto_banco`` / ``twentyone``
(unordered first-two-card pairs with multiplicity 2). A shoe is then one pass over the table: every
value sequence with multiset ``{v: k_v}`` is dealt by ``prod_v c_v (c_v - 1) ... (c_v - k_v + 1)``
ordered card sequences, times ``(N-k)...(N-5)`` for the free trailing positions.
"""
from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from operator import mul
from typing import Any

from . import odds_tables
from . import punto_banco as pb
from . import twentyone as t21
from .cards import ALL_CARDS, Card, Composition, card
from .engine import RoundResult, twentyone_outcome
from .engines import ENGINES, numpy_available
from .errors import RulesError
from .model import Game, Outcome
from .odds_multisets import MultisetPlan
from .odds_sequences import ROUND_CARDS, falling
from shoectl_config.extras import install_hint

__all__ = [
    "ENGINES", "PUNTO_BANCO_CATEGORIES", "TWENTYONE_CATEGORIES", "clear_caches", "engine_in_use",
    "punto_banco_categories", "twentyone_categories", "use_engine", "using_engine",
]

_BASE = 8  # a multiset of <= 6 values in 10 classes is a base-8 number (digit = multiplicity)
_POW = tuple(_BASE**v for v in range(10))
_SLOTS_PER_CLASS = ROUND_CARDS  # slot v*6 + j holds (count of class v) - j


@dataclass(frozen=True)
class _MainTable:
    """Categories and, per number of cards used, the multisets (as slot tuples) and one column of
    ordered-value-sequence counts per category."""

    categories: tuple[str, ...]
    groups: tuple[tuple[int, tuple[tuple[int, ...], ...], tuple[tuple[int, ...], ...]], ...]


def _finish_table(acc: Mapping[int, int], categories: tuple[str, ...]) -> _MainTable:
    nc = len(categories)
    by_key: dict[int, list[int]] = {}
    for code, m in acc.items():
        key, cat = divmod(code, nc)
        by_key.setdefault(key, [0] * nc)[cat] += m
    by_k: dict[int, list[tuple[tuple[int, ...], list[int]]]] = defaultdict(list)
    for key, row in sorted(by_key.items()):
        slots: list[int] = []
        rest = key
        for v in range(10):
            rest, k_v = divmod(rest, _BASE)
            slots.extend(v * _SLOTS_PER_CLASS + j for j in range(k_v))
        by_k[len(slots)].append((tuple(slots), row))
    groups = []
    for k in sorted(by_k):
        entries = by_k[k]
        slots_list = tuple(s for s, _ in entries)
        cols = tuple(tuple(row[c] for _, row in entries) for c in range(nc))
        groups.append((k, slots_list, cols))
    return _MainTable(categories, tuple(groups))


def _value_pairs() -> list[tuple[int, int, int]]:
    """Unordered pairs of value classes with their number of orders (1 or 2)."""
    return [(a, b, 1 if a == b else 2) for a in range(10) for b in range(a, 10)]


# Punto Banco family categories (Dragon 7 / Panda 8 are facts of every Punto Banco round).
PUNTO_BANCO_CATEGORIES = ("player", "player_panda8", "banker", "banker_dragon7", "tie")


def _pb_category(pf: int, bf: int, p3: bool, b3: bool) -> int:
    """Category of a finished Punto Banco round, read off a ``RoundResult`` (so Dragon 7 and
    Panda 8 are exactly the engine's definitions)."""
    outcome = Outcome.PLAYER if pf > bf else Outcome.BANKER if bf > pf else Outcome.TIE  # as RoundEngine.result
    dummy = ALL_CARDS[0]
    r = RoundResult(
        game=Game.EZ_BACCARAT,
        dealt=(),
        player=(dummy,) * (3 if p3 else 2),
        banker=(dummy,) * (3 if b3 else 2),
        player_total=pf,
        banker_total=bf,
        outcome=outcome,
        player_natural=False,
        banker_natural=False,
    )
    if outcome is Outcome.PLAYER:
        return 1 if r.panda8 else 0
    if outcome is Outcome.BANKER:
        return 3 if r.dragon7 else 2
    return 4


def _shipped_or_derived(name: str, facts: dict[str, Any], categories: tuple[str, ...],
                        derive: Callable[[dict[str, Any]], _MainTable]) -> _MainTable:
    """The table shipped for these facts (odds_tables), else derived from them now."""
    groups = odds_tables.load(odds_tables.table_key(name, facts))
    return derive(facts) if groups is None else _MainTable(categories, groups)


def punto_banco_facts() -> dict[str, Any]:
    """What the Punto Banco table is derived from, read off the rule functions: naturals, the
    Player's and the Banker's draws, and each finished round's category (by totals and thirds)."""
    return {
        "natural": [pb.is_natural(t) for t in range(10)],
        "player_draws": [pb.player_draws(t) for t in range(10)],
        "banker_draws_stood": [pb.banker_draws(t, None) for t in range(10)],
        "banker_draws": [[pb.banker_draws(t, x) for x in range(10)] for t in range(10)],
        "category": [[[[_pb_category(pf, bf, p3, b3) for b3 in (False, True)] for p3 in (False, True)]
                      for bf in range(10)] for pf in range(10)],
    }


@lru_cache(maxsize=None)
def _punto_banco_table() -> _MainTable:
    return _shipped_or_derived("punto-banco", punto_banco_facts(), PUNTO_BANCO_CATEGORIES, derive_punto_banco_table)


def derive_punto_banco_table(facts: dict[str, Any]) -> _MainTable:
    """The Punto Banco table derived from ``punto_banco_facts()`` (never the shipped one)."""
    nc = len(PUNTO_BANCO_CATEGORIES)
    nat, pdraw, cat = facts["natural"], facts["player_draws"], facts["category"]
    bdraw_stood, bdraw = facts["banker_draws_stood"], facts["banker_draws"]
    # cat_y[pf][bt][y]: both hands three cards, Banker's third card y.
    cat_y = [[[cat[pf][(bt + y) % 10][1][1] for y in range(10)] for bt in range(10)] for pf in range(10)]
    cat_by = [[[cat[pt][(bt + y) % 10][0][1] for y in range(10)] for bt in range(10)] for pt in range(10)]
    pow_nc = [p * nc for p in _POW]
    acc: dict[int, int] = defaultdict(int)
    pairs = _value_pairs()
    for a, b, mp in pairs:
        pt = (a + b) % 10
        kp = _POW[a] + _POW[b]
        for c, d, mb in pairs:
            bt = (c + d) % 10
            m = mp * mb
            k4 = (kp + _POW[c] + _POW[d]) * nc
            if nat[pt] or nat[bt]:  # 631a.11(a)
                acc[k4 + cat[pt][bt][0][0]] += m
            elif pdraw[pt]:
                row = bdraw[bt]
                for x in range(10):
                    pf = (pt + x) % 10
                    k5 = k4 + pow_nc[x]
                    if row[x]:
                        cats = cat_y[pf][bt]
                        for y in range(10):
                            acc[k5 + pow_nc[y] + cats[y]] += m
                    else:
                        acc[k5 + cat[pf][bt][1][0]] += m
            elif bdraw_stood[bt]:
                cats = cat_by[pt][bt]
                for y in range(10):
                    acc[k4 + pow_nc[y] + cats[y]] += m
            else:
                acc[k4 + cat[pt][bt][0][0]] += m
    return _finish_table(acc, PUNTO_BANCO_CATEGORIES)


TWENTYONE_CATEGORIES = ("player", "banker", "tie")
_T21_CAT_INDEX = {Outcome.PLAYER: 0, Outcome.BANKER: 1, Outcome.TIE: 2}


def _t21_rep(v: int) -> Card:
    """A card of 21 Baccarat value class ``v`` (0 = ace, 1..8 = 2..9, 9 = ten-value)."""
    return card(v + 1, "S")


def twentyone_facts(naturals: bool, draw_rule: str) -> dict[str, Any]:
    """What a 21 Baccarat table is derived from, read off the rule functions: per unordered
    first-two-card value pair (``_value_pairs`` order) its total and whether it is a natural, per
    pair and third card the total, the outcome of each pair of totals, and the drawing options
    (the total a hand draws below is the regulation's, ``twentyone.DRAW_BELOW``)."""
    rep = [_t21_rep(v) for v in range(10)]
    pairs = _value_pairs()
    return {
        "total2": [t21.total([rep[a], rep[b]]) for a, b, _ in pairs],
        "natural2": [bool(naturals and t21.is_natural([rep[a], rep[b]])) for a, b, _ in pairs],
        "total3": [[t21.total([rep[a], rep[b], rep[x]]) for x in range(10)] for a, b, _ in pairs],
        "outcome": [[_T21_CAT_INDEX[twentyone_outcome(p, q)] for q in range(32)] for p in range(32)],
        "draw_rule": draw_rule,
        "threshold": t21.DRAW_BELOW,
    }


@lru_cache(maxsize=None)
def _twentyone_table(naturals: bool, draw_rule: str) -> _MainTable:
    return _shipped_or_derived("twentyone", twentyone_facts(naturals, draw_rule), TWENTYONE_CATEGORIES,
                               derive_twentyone_table)


def derive_twentyone_table(facts: dict[str, Any]) -> _MainTable:
    """A 21 Baccarat table derived from ``twentyone_facts(...)`` (never the shipped one): mirror of
    ``RoundEngine._next_twentyone`` for the cards that count for the Player and Banker wagers (the
    681a.7(f)(2) bonus-only cards never do)."""
    nc = len(TWENTYONE_CATEGORIES)
    tot2, nat2, tot3, out = facts["total2"], facts["natural2"], facts["total3"], facts["outcome"]
    draw_rule, threshold = facts["draw_rule"], facts["threshold"]
    pow_nc = [p * nc for p in _POW]
    acc: dict[int, int] = defaultdict(int)
    pairs = _value_pairs()
    for i, (a, b, mp) in enumerate(pairs):
        pt = tot2[i]
        kp = _POW[a] + _POW[b]
        for j, (c, d, mb) in enumerate(pairs):
            bt = tot2[j]
            m = mp * mb
            k4 = (kp + _POW[c] + _POW[d]) * nc
            if nat2[i] or nat2[j]:  # 681a.7(f): no more cards for the wagers
                acc[k4 + out[pt][bt]] += m
                continue
            # 681a.7(g): each hand below the threshold gets one card, the Player's first.
            p_draws = pt < threshold
            b_draws = bt < threshold and not (draw_rule == "first-only" and p_draws)
            if p_draws:
                for x in range(10):
                    px = tot3[i][x]
                    k5 = k4 + pow_nc[x]
                    if b_draws:
                        row = out[px]
                        for y in range(10):
                            acc[k5 + pow_nc[y] + row[tot3[j][y]]] += m
                    else:
                        acc[k5 + out[px][bt]] += m
            elif b_draws:
                row = out[pt]
                for y in range(10):
                    acc[k4 + pow_nc[y] + row[tot3[j][y]]] += m
            else:
                acc[k4 + out[pt][bt]] += m
    return _finish_table(acc, TWENTYONE_CATEGORIES)


def main_counts_reference(table: _MainTable, class_counts: Sequence[int], n_cards: int) -> list[int]:
    """Ordered six-card sequences per category for a shoe with these value-class counts: the
    straightforward product per multiset (the reference the fast plan is tested against)."""
    f = _factors(class_counts)
    fget = f.__getitem__
    prod = math.prod
    totals = [0] * len(table.categories)
    for k, slots_list, cols in table.groups:
        tail = falling(n_cards - k, ROUND_CARDS - k)
        if not tail:
            continue
        weights = [prod(map(fget, s)) for s in slots_list]
        for i, col in enumerate(cols):
            totals[i] += tail * sum(map(mul, weights, col))
    return totals


def _factors(class_counts: Sequence[int]) -> list[int]:
    """``f[v * ROUND_CARDS + j] = class_counts[v] - j``: the factors of a multiset's weight."""
    return [c - j for c in class_counts for j in range(_SLOTS_PER_CLASS)]


_PLANS: dict[tuple[int, str], Any] = {}
_choice = {"engine": "auto"}  # the engine asked for (use_engine)


def use_engine(engine: str) -> str:
    """Evaluate the tables with ``engine`` from now on (see the module docstring); the engine
    chosen before, to give back to it."""
    if engine not in ENGINES:
        raise RulesError(f"unknown odds engine {engine!r}: choose one of {', '.join(ENGINES)}")
    if engine == "numpy" and not numpy_available():
        raise RulesError(f"the numpy odds engine needs numpy: {install_hint('fast')}")
    previous, _choice["engine"] = _choice["engine"], engine
    return previous


@contextmanager
def using_engine(engine: str) -> Iterator[None]:
    """``use_engine(engine)`` for the ``with`` block, the choice before it given back after."""
    previous = use_engine(engine)
    try:
        yield
    finally:
        use_engine(previous)


def engine_in_use() -> str:
    """``"numpy"`` or ``"python"``: how a shoe of an ordinary size is evaluated now."""
    engine = _choice["engine"]
    if engine == "auto":
        return "numpy" if numpy_available() else "python"
    return engine


def _plan(table: _MainTable, engine: str) -> Any:
    """The table's plan for ``engine``, compiled on first use."""
    key = (id(table), engine)
    plan = _PLANS.get(key)
    if plan is None:
        if engine == "numpy":
            from .odds_multisets_numpy import NumpyMultisetPlan

            plan = NumpyMultisetPlan(table.groups, len(table.categories))
        else:
            plan = MultisetPlan(table.groups, len(table.categories))
        _PLANS[key] = plan
    return plan


def _main_counts(table: _MainTable, class_counts: Sequence[int], n_cards: int) -> list[int]:
    """The same counts as ``main_counts_reference``, through the table's compiled plan."""
    f = _factors(class_counts)
    if engine_in_use() == "numpy":
        plan = _plan(table, "numpy")
        if plan.fits(f):
            return plan.counts(f, n_cards)
    return _plan(table, "python").counts(f, n_cards)


def punto_banco_categories(composition: Composition) -> dict[str, int]:
    """Ordered six-card sequences per ``PUNTO_BANCO_CATEGORIES`` entry for this shoe."""
    classes = [0] * 10
    for c, k in composition.counts().items():
        classes[pb.card_value(c)] += k
    counts = _main_counts(_punto_banco_table(), classes, composition.total)
    return dict(zip(PUNTO_BANCO_CATEGORIES, counts))


def twentyone_categories(
    composition: Composition, *, naturals: bool, draw_rule: str
) -> dict[str, int]:
    """Ordered six-card sequences per ``TWENTYONE_CATEGORIES`` entry for this shoe and rule set."""
    classes = [0] * 10
    for c, k in composition.counts().items():
        classes[t21.card_value(c) - 1] += k
    counts = _main_counts(_twentyone_table(naturals, draw_rule), classes, composition.total)
    return dict(zip(TWENTYONE_CATEGORIES, counts))


def clear_caches() -> None:
    """Forget the value-class tables (for measuring a cold call)."""
    _punto_banco_table.cache_clear()
    _twentyone_table.cache_clear()
    _PLANS.clear()
