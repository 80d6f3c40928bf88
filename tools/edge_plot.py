"""Draw one shoe's edge figures round by round from a journal's ``edge`` records (docs/edge-monitor.md).

    python tools/edge_plot.py JOURNAL OUT.png [--shoe ID] [--wager dragon7] [--also panda8 ...]

The journal is read checked, as every reader reads it (``controller.journal.verification.checked_read``);
a journal that does not verify is refused. The chart: the wager's player edge after each round
(percent of the stake; above zero the player has the advantage), the rounds after which an
``edge_alert`` was journaled marked, and the cards left in the shoe on a second axis. docs/img/
edge-dragon7.png is drawn from a real emulated EZ Baccarat shoe:

    shoectl run --submission ez-baccarat --shoes 1 --seed 7 --speed max --display lines --journal /tmp/edge/j.db
    python tools/edge_plot.py /tmp/edge/j.db docs/img/edge-dragon7.png --also panda8
"""
from __future__ import annotations

import argparse
import sys
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.journal import kinds  # noqa: E402
from controller.journal.verification import checked_read  # noqa: E402


def read_edges(journal: Path, shoe: str | None) -> tuple[str, list[dict], set[int]]:
    """The shoe (the first with edge records unless given), its edge payloads in round order, and
    the rounds after which an alert was journaled."""
    edges: dict[str, list[dict]] = {}
    alerts: dict[str, set[int]] = {}
    with checked_read(journal) as read:
        for e in read.entries(kinds=[kinds.EDGE, kinds.EDGE_ALERT]):
            if e.kind == kinds.EDGE:
                edges.setdefault(e.shoe_id, []).append(e.payload)
            else:
                alerts.setdefault(e.shoe_id, set()).add(e.payload["round"])
        report = read.report()
    if not report.ok:
        raise SystemExit(f"edge_plot: {journal}: the journal does not verify: {report.reason}")
    if not edges:
        raise SystemExit(f"edge_plot: {journal}: no edge records (was the edge monitor on?)")
    shoe = shoe or next(iter(edges))
    if shoe not in edges:
        raise SystemExit(f"edge_plot: {journal}: no edge records for shoe {shoe}")
    return shoe, sorted(edges[shoe], key=lambda p: p["round"]), alerts.get(shoe, set())


def draw(out: Path, shoe: str, edges: list[dict], alerted: set[int], wager: str, also: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rounds = [p["round"] for p in edges]
    fig, ax = plt.subplots(figsize=(10, 4.8))
    for name, style in [(w, {"color": "#9aa5b1", "linewidth": 1.0}) for w in also] + \
            [(wager, {"color": "#c0392b", "linewidth": 1.8, "marker": "o", "markersize": 2.5})]:
        values = [float(Decimal(p["wagers"][name]["edge"]) * 100) for p in edges]
        ax.plot(rounds, values, label=f"{name.replace('_', ' ')} player edge", **style)
        if name == wager:
            ax.fill_between(rounds, values, 0, where=[v > 0 for v in values], color="#c0392b", alpha=0.2,
                            interpolate=True, label="player advantage")
            hot = [(r, v) for r, v in zip(rounds, values) if r in alerted]
            if hot:
                ax.scatter(*zip(*hot), color="#7b0000", s=14, zorder=3, label="edge_alert journaled")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel("round of the shoe")
    ax.set_ylabel("player edge, % of the stake")
    ax.grid(True, alpha=0.25)
    left = ax.twinx()
    left.plot(rounds, [p["remaining"] for p in edges], color="#1a53c4", linewidth=0.8, linestyle=":",
              label="cards left (right axis)")
    left.set_ylabel("cards left in the shoe")
    lines, labels = ax.get_legend_handles_labels()
    more, more_labels = left.get_legend_handles_labels()
    ax.legend(lines + more, labels + more_labels, fontsize=8, loc="lower left")
    ax.set_title(f"{shoe}: exact {wager.replace('_', ' ')} edge on the cards left, after each round "
                 f"({edges[0]['submission']})", fontsize=11)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="tools/edge_plot.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("journal", type=Path)
    ap.add_argument("out", type=Path, help="the PNG (or SVG) to write")
    ap.add_argument("--shoe", help="the shoe (default: the first with edge records)")
    ap.add_argument("--wager", default="dragon7", help="the wager drawn (default dragon7)")
    ap.add_argument("--also", action="append", default=[], help="another wager drawn lightly (repeatable)")
    args = ap.parse_args(argv)
    shoe, edges, alerted = read_edges(args.journal, args.shoe)
    for name in [args.wager, *args.also]:
        if name not in edges[0]["wagers"]:
            raise SystemExit(f"edge_plot: {name} is not a wager of {edges[0]['submission']}: "
                             f"{', '.join(edges[0]['wagers'])}")
    draw(args.out, shoe, edges, alerted, args.wager, args.also)
    print(f"{args.out}: {len(edges)} rounds of {shoe}, {len(alerted)} alerts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
