"""``shoectl simulate --submission FILE --shoes N [--seed S] [--json] [--rounds] [--plot FILE]``.

Deals whole shoes as the table would (``controller.simulation``; ``--engine`` picks the pure-Python
paths or the numpy one, default numpy when it is installed and can serve) and prints outcome frequencies and
each wager's realised hold with a 95% confidence interval, beside the exact figure from
``controller.rules.odds`` for the same full shoe and whether the interval contains it.

On a terminal a progress bar on standard error shows the shoes dealt (not with ``--rounds``, whose
lines are the progress; nothing when standard error is not a terminal). ``--plot FILE`` (``.png``
or ``.svg``, needs matplotlib) draws each wager's running hold and interval converging on the
exact figure (``controller.cli.charts``); the file is checked before any shoe is dealt.
"""
from __future__ import annotations

import argparse
import time
from typing import Any

from controller.cli.charts import RunningHold, hold_chart, plot_target
from controller.cli.common import GAME_CHOICES, non_negative_int, percent, positive_int, print_json, submission_for
from controller.cli.progress import progress_bar
from controller.errors import UsageError, new_file_argument, path_argument
from controller.rules.engine import RoundResult
from controller.rules.model import WagerKind
from controller.simulation import (
    ENGINES, Estimate, bonus_rank_frequencies, engine_for, outcome_frequencies, simulate, wager_holds,
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="deal whole shoes through the rules core; frequencies and holds with 95%% confidence intervals")
    add_arguments(p)
    p.set_defaults(func=run)


def add_arguments(p: argparse.ArgumentParser, default_shoes: int = 100) -> None:
    p.add_argument("--submission", type=path_argument, metavar="FILE|PRESET", help="Rules Submission file or preset (default: minibaccarat)")
    p.add_argument("--game", choices=GAME_CHOICES, help="use the preset for this game instead of --submission")
    p.add_argument("--shoes", type=positive_int, default=default_shoes, metavar="N", help=f"shoes to deal (default {default_shoes})")
    p.add_argument("--seed", type=non_negative_int, default=None, metavar="S", help="seed for a reproducible run (default: OS randomness)")
    p.add_argument("--rounds", action="store_true", help="print every round as it is decided")
    p.add_argument("--engine", choices=ENGINES, default="auto", help="python: the pure-Python paths (a seed deals the "
                   "same shoes on every Python path); numpy: vectorised across shoes, Punto Banco games (needs "
                   "numpy: the fast extra; its own shoes for a seed); auto (default): numpy when it can serve")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--plot", type=new_file_argument, metavar="FILE", help="also draw each wager's running hold and 95%% interval against the "
                   "exact figure, as PNG or SVG by FILE's suffix (needs matplotlib: the plot extra)")


def _exact(sub: Any) -> Any | None:
    """Exact odds for the full shoe, or None when this game has no exact enumeration."""
    try:
        from controller.rules.odds import exact_odds
    except ImportError:  # pragma: no cover - odds ships with the rules core
        return None
    return exact_odds(sub)


# 21 Baccarat's, decided only where their cards were dealt
BONUS_WAGERS = frozenset({WagerKind.PLAYER_BONUS.value, WagerKind.BANKER_BONUS.value})


def figures(sub: Any, tally: Any, bonus_tally: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Each outcome's frequency and each wager's hold per unit staked over ``tally``'s rounds, with
    95 % intervals, beside the exact figures for a full shoe (``agrees``: the interval holds them).
    ``bonus_tally``: the rounds the Bonus Wagers' figures are over (a journal's: those whose Bonus
    cards were dealt), when not ``tally``'s; their ranks' frequencies are given then too."""
    exact = _exact(sub)
    outcomes: dict[str, Any] = {}
    frequencies = outcome_frequencies(tally, sub.game)
    if bonus_tally is not None and bonus_tally.rounds:  # 21 Baccarat: each Bonus rank (681a.7(k)), where dealt
        frequencies.update(bonus_rank_frequencies(bonus_tally))
    for name, est in frequencies.items():
        outcomes[name] = _with_exact(est, None if exact is None else exact.outcomes.get(name))
    wagers: dict[str, Any] = {}
    holds = wager_holds(tally, sub)
    if bonus_tally is not None:
        holds.update((name, est) for name, est in wager_holds(bonus_tally, sub).items() if name in BONUS_WAGERS)
    for name, est in holds.items():
        ref = None if exact is None or name not in exact.wagers else exact.wagers[name]["house_edge"]
        wagers[name] = _with_exact(est, ref)
    return outcomes, wagers


def report(sub: Any, tally: Any, seed: int | None, elapsed: float, engine: str = "python") -> dict[str, Any]:
    outcomes, wagers = figures(sub, tally)
    return {
        "submission": sub.source,
        "game": sub.game.value,
        "decks": sub.decks,
        "shoes": tally.shoes,
        "rounds": tally.rounds,
        "void_rounds": tally.void_rounds,
        "cards_dealt": tally.cards_dealt,
        "seed": seed,
        "engine": engine,
        "seconds": round(elapsed, 3),
        "outcomes": outcomes,
        "wagers": wagers,
    }


def _with_exact(est: Estimate, exact: Any) -> dict[str, Any]:
    """``est`` as JSON beside the exact figure. An interval of no width (every round the same, as
    a few rounds or a wager never won give) is no interval: ``ci95`` and ``agrees`` are null (a
    review read "NO" for every wager of a two-round journal)."""
    d = est.to_json()
    degenerate = not est.high > est.low
    if degenerate:
        d["ci95"] = None
    if exact is not None:
        d["exact"] = float(exact)
        d["agrees"] = None if degenerate else est.contains(float(exact))
    return d


def print_round(shoe: int, n: int, r: RoundResult, as_json: bool) -> None:
    if as_json:
        print_json({"type": "round", "shoe": shoe, "round": n, **r.to_json()}, )
    else:
        from controller.cli.cmd_rules import round_text

        print(f"shoe {shoe} round {n:3d}: {round_text(r)}", flush=True)


def run(args: argparse.Namespace) -> int:
    sub = submission_for(args.game, args.submission)
    target = plot_target(args.plot) if args.plot else None
    if target is not None and args.shoes < 2:
        raise UsageError("--plot needs at least 2 shoes: the chart's intervals come from batches of whole shoes")
    on_round = (lambda s, n, r: print_round(s, n, r, args.json)) if args.rounds else None
    engine = engine_for(sub, args.engine, per_round=args.rounds)
    running = RunningHold(sub, args.shoes) if target else None
    t0 = time.perf_counter()
    with progress_bar(None if args.rounds else f"dealing {args.shoes} shoes", args.shoes) as update:
        tally = simulate(sub, args.shoes, args.seed, on_round=on_round, on_progress=update, engine=engine,
                         on_shoe=None if running is None else running.add)
    rep = report(sub, tally, args.seed, time.perf_counter() - t0, engine)
    if target is not None and running is not None:
        seed = f"seed {args.seed}" if args.seed is not None else "OS random"
        hold_chart(target, f"{sub.name}: realised hold over {tally.shoes} shoes ({seed}), 95% intervals",
                   running, {name: d.get("exact") for name, d in rep["wagers"].items()})
    if args.json:
        print_json({"type": "summary", **rep} if args.rounds else rep)
        return 0
    void = f", {rep['void_rounds']} void" if rep["void_rounds"] else ""
    seed = args.seed if args.seed is not None else "OS random"
    print(f"{sub.name} ({sub.game.value}, {sub.decks} decks): {rep['shoes']} shoes, "
          f"{rep['rounds']} rounds{void}, seed {seed}, {engine} engine, {rep['seconds']:.2f} s")
    print_figures("outcome", "frequency", rep["outcomes"])
    print_figures("wager", "hold", rep["wagers"])
    print_agreement(rep["outcomes"], rep["wagers"])
    return 0


def print_figures(title: str, what: str, rows: dict[str, Any]) -> None:
    """``figures``' rows as a table: name, value, 95 % interval, exact figure, whether it agrees."""
    width = max(14, *(len(name) + 2 for name in rows))  # 21 Baccarat's Bonus ranks are long names
    print(f"\n{title:<{width}}{what:>11}   {'95% CI':<23}{'exact':>10}  agrees")
    for name, d in rows.items():
        interval = f"[{percent(d['ci95'][0])}, {percent(d['ci95'][1])}]" if d["ci95"] is not None else "- (no spread)"
        exact = percent(d["exact"]) if "exact" in d else "-"
        agrees = ("yes" if d["agrees"] else "NO") if d.get("agrees") is not None else "-"
        print(f"{name:<{width}}{percent(d['value']):>11}   {interval}".ljust(width + 36) + f"{exact:>10}  {agrees}")


def print_agreement(*tables: dict[str, Any]) -> None:
    """How many of the figures' 95 % intervals miss their exact figure, beside how many would by
    chance alone: each misses one time in twenty where the cards follow the exact odds, so a run
    of a dozen figures shows a "NO" about every other time (a gaming lab's review: an operator
    could take one for a failure). Nothing when no figure has an exact one to agree with."""
    judged = [d["agrees"] for rows in tables for d in rows.values() if d.get("agrees") is not None]
    if judged:
        outside = judged.count(False)
        print(f"\n{outside} of {len(judged)} figures outside their 95% interval, where chance alone puts 1 in 20 "
              f"({len(judged) / 20:.1f} of {len(judged)} on average) when the cards follow the exact odds")
