"""The scoreboard's state model (``controller.scoreboard.state.TableView``) on a real journal
(``run(quick=False) -> dict``).

A journal of whole shoes dealt by ``shoectl run`` on the built-in emulator (8 decks, about 80
rounds and 2,900 entries a shoe; 2 shoes, 1 with ``quick``), then:

- ``apply_per_entry``: ``TableView.apply`` over every entry in order, per entry (one whole pass
  of the journal, repeated);
- ``apply_round_end``: the entry that completes a round (its replay, the shoe's roads
  recomputed): the dearest entry, and it grows with the shoe;
- ``to_json``: the whole state at a shoe's end (``to_json("zh")``), and with ``json.dumps`` as
  the app sends it.
"""
from __future__ import annotations

import contextlib
import io
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.stats import summary, timings
from controller.cli.main import main as shoectl
from controller.journal import JournalReader, kinds
from controller.scoreboard.state import TableView


def _journal(directory: Path, shoes: int) -> list[Any]:
    path = directory / "table.db"
    with contextlib.redirect_stdout(io.StringIO()):
        shoectl(["run", "--journal", str(path), "--shoes", str(shoes), "--speed", "max", "--seed", "4"])
    with JournalReader.open(path) as r:
        return list(r.entries())


def run(quick: bool = False) -> dict[str, Any]:
    repeats = 3 if quick else 10
    with tempfile.TemporaryDirectory() as tmp:
        entries = _journal(Path(tmp), 1 if quick else 2)
    passes = timings(lambda: TableView.from_entries(entries), repeats)
    round_ends = []
    view = TableView()
    for e in entries:
        t0 = time.perf_counter()
        view.apply(e)
        if e.kind == kinds.DISCARD_RACK:
            round_ends.append(time.perf_counter() - t0)
    last_shoe_end = max(i for i, e in enumerate(entries) if e.kind == kinds.DISCARD_RACK)
    at_shoe_end = TableView.from_entries(entries[: last_shoe_end + 1])
    return {
        "entries": len(entries),
        "rounds": len(round_ends),
        "apply_per_entry": summary([t / len(entries) for t in passes], 1e6, "us"),
        "apply_round_end": summary(round_ends, 1e3, "ms"),
        "to_json": summary(timings(lambda: at_shoe_end.to_json("zh"), repeats * 20), 1e3, "ms"),
        "to_json_dumps": summary(timings(lambda: json.dumps(at_shoe_end.to_json("zh"), ensure_ascii=False),
                                         repeats * 20), 1e3, "ms"),
    }
