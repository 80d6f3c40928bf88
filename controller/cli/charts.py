"""Charts for ``simulate --plot FILE`` and ``audit shuffle --plot FILE``, PNG or SVG by the file's
suffix, drawn with matplotlib (the optional ``plot`` extra: ``shoectl_config.extras``).

- ``plot_target(path) -> Path``: the file checked before any work is done: a ``.png`` or
  ``.svg`` name (its folder was checked with the option: ``controller.errors.new_file_argument``),
  and matplotlib importable; otherwise ``UsageError`` with one line that says what to do (exit 2).
- ``RunningHold(submission, shoes)``: ``add(shoe_no, shoe_tally)`` at every shoe records, at about
  150 shoes spread evenly on a log scale (and the last), each offered wager's realised hold and its
  95% interval as the report of a run of that many shoes would give them.
- ``hold_chart(path, title, running, exact)``: one panel per wager: the running hold, its
  interval (a band), and the exact house edge (``controller.rules.odds``; a dashed line).
- ``position_residuals(orders, decks)``: where each rank landed, by position in the stack, as
  standardized residuals against the uniform shuffle (13 ranks x 52 groups of ``decks``
  positions; under the null each is about standard normal).
- ``shuffle_chart(path, title, residuals, audit_result)``: the position heat-map beside each
  test's p-value on a log scale against alpha (pass, low p not rejected after Holm, rejected).

matplotlib is imported only inside these functions, with its file-only ``Agg`` backend.
"""
from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.errors import UsageError
from controller.rules.cards import RANK_TEXT, RANKS as CARD_RANKS
from controller.rules.engine import RoundFacts
from controller.simulation import BATCHES, Tally, batch_means_estimate, house_gains
from shoectl_config.extras import install_hint

SUFFIXES = (".png", ".svg")
POINTS = 150
RANKS = tuple(RANK_TEXT[rank] for rank in CARD_RANKS)  # the rows of the card heat map, as cards are named


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise UsageError(f"--plot needs matplotlib: {install_hint('plot')}") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_target(path: str) -> Path:
    """See the module docstring."""
    target = Path(path)
    if target.suffix.lower() not in SUFFIXES:
        raise UsageError(f"--plot {path}: the chart is a PNG or an SVG file: name it .png or .svg")
    _pyplot()
    return target


class RunningHold:
    """See the module docstring. ``series[wager]`` is a list of ``(shoes, hold, low, high)``: at
    each point, the interval the report of a run of that many shoes would give (the same batches
    of whole shoes, ``simulation.batch_means_estimate``), so the last point is the report's."""

    def __init__(self, submission: Any, shoes: int) -> None:
        self.gains = house_gains(submission)
        self.at = {max(2, round(shoes ** (i / POINTS))) for i in range(POINTS + 1)} | {shoes}
        self.rounds = array("q", [0])  # prefix sums over the shoes: rounds, and each wager's gain
        self.sums = {name: array("d", [0.0]) for name in self.gains}
        self._values: dict[RoundFacts, list[tuple[str, float]]] = {}
        self.series: dict[str, list[tuple[int, float, float, float]]] = {name: [] for name in self.gains}

    def add(self, shoe_no: int, shoe: Tally) -> None:
        """Count one more shoe (``shoe``: its own tally), and a point if ``shoe_no`` is one."""
        gained = dict.fromkeys(self.gains, 0.0)
        for facts, count in shoe.facts.items():
            values = self._values.get(facts)
            if values is None:
                values = self._values[facts] = [(name, float(gain(facts))) for name, gain in self.gains.items()]
            for name, value in values:
                gained[name] += value * count
        self.rounds.append(self.rounds[-1] + shoe.rounds)
        for name, total in self.sums.items():
            total.append(total[-1] + gained[name])
        if shoe_no in self.at:
            self._point(shoe_no)

    def _point(self, n: int) -> None:
        size = max(1, n // BATCHES)
        edges = [*range(0, n, size), n]
        for name, total in self.sums.items():
            batches = [(self.rounds[b] - self.rounds[a], total[b] - total[a]) for a, b in zip(edges, edges[1:])
                       if self.rounds[b] > self.rounds[a]]
            if len(batches) >= 2:
                est = batch_means_estimate(batches)
                self.series[name].append((n, est.mean, est.low, est.high))


def hold_chart(path: Path, title: str, running: RunningHold, exact: dict[str, float | None]) -> None:
    """See the module docstring."""
    plt = _pyplot()
    names = [name for name, points in running.series.items() if points]
    cols = 3 if len(names) > 4 else 2 if len(names) > 1 else 1
    rows = math.ceil(len(names) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.6 * cols, 3.3 * rows + 0.6), squeeze=False)
    for ax, name in zip(axes.flat, names):
        shoes, hold, low, high = zip(*running.series[name])
        ax.fill_between(shoes, [x * 100 for x in low], [x * 100 for x in high], color="#1a53c4", alpha=0.18,
                        linewidth=0, label="95% interval")
        ax.plot(shoes, [x * 100 for x in hold], color="#1a53c4", linewidth=1.4, label="realised hold")
        ref = exact.get(name)
        if ref is not None:
            ax.axhline(ref * 100, color="#d0021b", linestyle="--", linewidth=1.2, label=f"exact {ref * 100:.4f}%")
            spread = max(abs(high[-1] - low[-1]) * 100 * 4, abs(ref) * 100 * 0.5, 0.5)
            ax.set_ylim(ref * 100 - spread, ref * 100 + spread)  # the start's wide interval would flatten the rest
        ax.set_xscale("log")
        ax.set_title(name.replace("_", " "), fontsize=11)
        ax.set_xlabel("shoes dealt")
        ax.set_ylabel("hold (% of stake)")
        ax.grid(True, which="both", alpha=0.25)
        ax.legend(fontsize=8, loc="upper right")
    for ax in list(axes.flat)[len(names):]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def position_residuals(orders: Sequence[Sequence[int]], decks: int) -> list[list[float]]:
    """See the module docstring: ``[rank][group]`` residuals, rank 0 the ace."""
    from controller.audit.orders import rank_of

    groups = 52
    counts = [[0] * groups for _ in RANKS]
    for order in orders:
        for position, code in enumerate(order):
            counts[rank_of(code) - 1][position * groups // len(order)] += 1
    expected = len(orders) * decks / 13  # each place holds a given rank with probability 1/13
    sd = math.sqrt(expected * 12 / 13)
    return [[(c - expected) / sd for c in row] for row in counts]


def shuffle_chart(path: Path, title: str, residuals: list[list[float]], result: Any) -> None:
    """See the module docstring. ``result``: the audit's ``AuditResult``."""
    plt = _pyplot()
    fig, (heat, tests) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [2.3, 1]})
    image = heat.imshow(residuals, aspect="auto", cmap="RdBu_r", vmin=-4, vmax=4, interpolation="nearest",
                        extent=(0, 52 * result.decks, 12.5, -0.5))
    heat.set_yticks(range(13), RANKS)
    heat.set_xlabel(f"position in the stack (top first), in groups of {result.decks}")
    heat.set_ylabel("rank")
    heat.set_title(f"where each rank landed: {result.shoes} shoes against a uniform shuffle", fontsize=11)
    bar = fig.colorbar(image, ax=heat, fraction=0.04, pad=0.02)
    bar.set_label("standardized residual (observed - expected) / sd")
    alpha = result.alpha
    names = [t.name.replace("_", " ") for t in result.tests]
    height = [-math.log10(max(t.p_value, 1e-300)) for t in result.tests]
    colours = ["#d0021b" if rejected else "#e0a000" if t.p_value < alpha else "#1b8a3a"
               for t, rejected in zip(result.tests, result.rejected)]
    tests.barh(names, height, color=colours)
    tests.invert_yaxis()
    tests.axvline(-math.log10(alpha), color="black", linestyle="--", linewidth=1, label=f"alpha {alpha:g}")
    for y, t in enumerate(result.tests):
        null_mean = f" vs {t.expected:.6g}" if t.expected is not None else ""  # position_max has none
        tests.text(0.02, y, f"{t.statistic:.6g}{null_mean}", va="center", fontsize=8,
                   bbox={"facecolor": "white", "alpha": 0.7, "linewidth": 0, "pad": 1},
                   transform=tests.get_yaxis_transform())
    tests.set_xscale("symlog", linthresh=1)  # a p-value of 1e-300 beside one just under alpha
    tests.set_xlim(0, max(max(height), -math.log10(alpha)) * 1.6)
    tests.set_xlabel("-log10 p-value (longer: further from the null)")
    tests.set_title("each test: statistic vs its null mean", fontsize=11)
    tests.legend(fontsize=8, loc="lower right")
    fig.suptitle(title, fontsize=12)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
