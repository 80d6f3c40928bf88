"""What the scoreboard page shows, read from its DOM, and what it should show, from the journal.

- ``WATCH_JS``: injected into an open table page, it records what the page shows every time it
  draws a new state (a MutationObserver on ``body[data-version]``) into ``window.__seen``;
  ``SEEN_JS`` takes the records. Each record is ``shown()`` of the page at that moment.
- ``SHOWN_JS``: the page now: ``{"version", "rendered_at", "received_at", "shoe", "round", "roads" (as
  ``shoectl roadmap --json``, rebuilt from the cells' data-* hooks), "places" (each road's cells'
  display column and row), "ask" (each side's three marks, "" for none), "counts", "last"
  (round, outcome, each hand's total and cards), "nodes"}``.
- ``JournalTruth(path)``: the journal read back (``controller.journal``): ``at(version)`` is
  what a page at that version must show, from ``journal.replay`` and ``roadmaps.compute`` (the
  code of ``shoectl journal replay`` and ``shoectl roadmap``) and ``roadmaps.ask_indicators``.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

SHOWN_JS = r"""
var cells = function (road) { return Array.prototype.slice.call(document.querySelectorAll('[data-road="' + road + '"] .cell')); };
var columns = function (list, value) {
  var out = [];
  list.forEach(function (c) {
    var col = +c.dataset.col, row = +c.dataset.row;
    while (out.length <= col) out.push([]);
    out[col][row] = value(c);
  });
  return out;
};
var places = function (list) { return list.map(function (c) { return [+c.dataset.x, +c.dataset.y]; }); };
var num = function (id) { var n = document.getElementById(id); return n ? +n.textContent : null; };
var hand = function (side) {
  var h = document.querySelector('#last-round [data-hand="' + side + '"]');
  if (!h) return null;
  return {total: +h.querySelector('[data-total]').dataset.total,
          cards: Array.prototype.slice.call(h.querySelectorAll('.card')).map(function (c) { return c.dataset.card; })};
};
var asks = function (side) {
  return Array.prototype.slice.call(document.querySelectorAll('[data-ask-marks="' + side + '"] [data-ask-road]'))
    .map(function (m) { return m.dataset.colour; });
};
var last = document.getElementById('last-round');
var big = cells('big');
var derived = {};
['big_eye_boy', 'small_road', 'cockroach_pig'].forEach(function (name) { derived[name] = cells(name); });
return {
  version: +document.body.dataset.version, rendered_at: +document.body.dataset.renderedAt,
  received_at: +document.body.dataset.receivedAt,
  shoe: document.getElementById('shoe').dataset.shoe || null, round: +document.getElementById('shoe').dataset.round,
  roads: {
    bead_plate: cells('bead').map(function (c) { return c.dataset.result; }),
    bead_pairs: cells('bead').map(function (c) {  // the dots drawn, not the data attribute
      return (c.querySelector('.pair-P') ? 'P' : '') + (c.querySelector('.pair-B') ? 'B' : ''); }),
    big_road: columns(big, function (c) {
      return {outcome: c.dataset.result, ties: +c.dataset.ties, player_pair: c.dataset.playerPair === '1',
              banker_pair: c.dataset.bankerPair === '1'}; }),
    big_eye_boy: columns(derived.big_eye_boy, function (c) { return c.dataset.colour; }),
    small_road: columns(derived.small_road, function (c) { return c.dataset.colour; }),
    cockroach_pig: columns(derived.cockroach_pig, function (c) { return c.dataset.colour; })
  },
  places: {big_road: places(big), big_eye_boy: places(derived.big_eye_boy), small_road: places(derived.small_road),
           cockroach_pig: places(derived.cockroach_pig)},
  ask: {banker: asks('banker'), player: asks('player')},
  counts: {rounds: num('count-rounds'), banker: num('count-banker'), player: num('count-player'), tie: num('count-tie')},
  last: last.dataset.round ? {round: +last.dataset.round, outcome: last.dataset.outcome,
                              player: hand('player'), banker: hand('banker')} : null,
  nodes: document.getElementsByTagName('*').length
};
"""

WATCH_JS = ("window.__seen = []; var shown = function () {" + SHOWN_JS + "};"
            "document.addEventListener('scoreboard-rendered', function () { window.__seen.push(shown()); });"
            "if (document.body.dataset.version) window.__seen.push(shown());")

SEEN_JS = "var s = window.__seen; window.__seen = []; return s;"

LETTER = {"banker": "B", "player": "P", "tie": "T"}


def shown_last(doc: dict[str, Any] | None) -> dict[str, Any] | None:
    """A replayed round as the page's ``last`` record shows it."""
    if doc is None:
        return None
    return {"round": doc["round"], "outcome": LETTER.get(doc["outcome"], ""),
            "player": {"total": doc["player"]["total"], "cards": [c["card"] for c in doc["cards"] if c["to"] == "player"]},
            "banker": {"total": doc["banker"]["total"], "cards": [c["card"] for c in doc["cards"] if c["to"] == "banker"]}}


class JournalTruth:
    """A finished journal, and what a page at each of its versions must show."""

    def __init__(self, path: Path) -> None:
        from controller.journal.reader import JournalReader
        from controller.journal.replay import replay

        with JournalReader.open(path) as reader:
            self.entries = list(reader.entries())
        self.ts = {e.seq: datetime.fromisoformat(e.ts[:-1] + "+00:00").timestamp() for e in self.entries}
        self.shoe_starts = [(e.seq, e.payload["shoe"]) for e in self.entries if e.kind == "shoe_start"]
        self.rounds: list[tuple[int, dict[str, Any]]] = []  # (seq of the entry that completed it, round doc)
        consumed = [0]

        def tracked():
            for e in self.entries:
                consumed[0] = e.seq
                yield e
        for doc in replay(tracked()):
            if doc["type"] == "round":
                self.rounds.append((consumed[0], doc))

    def shoe_at(self, version: int) -> str | None:
        shoes = [sid for seq, sid in self.shoe_starts if seq <= version]
        return shoes[-1] if shoes else None

    def at(self, version: int) -> dict[str, Any]:
        """What the page must show at ``version``: shoe, roads, counts, last round."""
        from controller.roadmaps import ask_indicators, compute, results_from_rounds

        shoe = self.shoe_at(version)
        docs = [d for seq, d in self.rounds if seq <= version and d["shoe"] == shoe]
        results = results_from_rounds(docs)
        maps = compute(results)
        ask = ask_indicators(maps.big_road).to_json()
        counts = {name: sum(1 for r in results if r.outcome == letter) for name, letter in LETTER.items()}
        return {"shoe": shoe, "roads": maps.to_json(), "counts": {"rounds": len(results), **counts},
                "last": shown_last(docs[-1] if docs else None),
                "ask": {side: [ask[side][road] or "" for road in ("big_eye_boy", "small_road", "cockroach_pig")]
                        for side in ("banker", "player")}}
