"""Write the shipped value-class tables (controller/rules/tables/) from the rule functions.

Usage: ``python tools/shipped_odds_tables.py --write`` derives the Punto Banco table and the 21 Baccarat
table of each preset's drawing options with the same builders ``exact_odds`` falls back on, writes
each under its key (``odds_tables.table_key``) and removes the files of any other key. Without
``--write`` it only says which files are missing, different or stale (exit 1 if any). The check
is a test (tests/rules/test_odds_tables.py). Run it after changing a drawing rule or a builder.
"""
from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.fsutil import atomic_writer  # noqa: E402
from controller.rules import odds_main_game as omg, odds_tables  # noqa: E402
from controller.rules.model import Game  # noqa: E402
from controller.rules.submission import load_preset, preset_names  # noqa: E402


def write(key: str, groups: Sequence[odds_tables.Group], folder: Path = odds_tables.TABLES) -> Path:
    """Store ``groups`` under ``key`` in ``folder`` (the file ``odds_tables.load`` reads), whole or
    not at all; returns the file written."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{key}{odds_tables.SUFFIX}"
    text = json.dumps([[k, slots, cols] for k, slots, cols in groups], separators=(",", ":"))
    with atomic_writer(path, binary=True) as fh:
        # mtime 0: the same table gives the same bytes, so writing it again changes no file
        fh.write(gzip.compress(text.encode(), compresslevel=9, mtime=0))
    return path


def shipped_tables() -> dict[str, omg._MainTable]:
    """Key -> table, for every table the package ships: derived now."""
    facts = omg.punto_banco_facts()
    out = {odds_tables.table_key("punto-banco", facts): omg.derive_punto_banco_table(facts)}
    for name in preset_names():
        sub = load_preset(name)
        if Game(sub.game).is_punto_banco_family:
            continue
        opts = sub.twentyone
        facts = omg.twentyone_facts(bool(opts.naturals), str(opts.draw_rule))
        out[odds_tables.table_key("twentyone", facts)] = omg.derive_twentyone_table(facts)
    return out


def main(argv: list[str]) -> int:
    tables = shipped_tables()
    stale = sorted(p for p in odds_tables.TABLES.glob(f"*{odds_tables.SUFFIX}")
                   if p.name.removesuffix(odds_tables.SUFFIX) not in tables)
    if "--write" in argv:
        for key, table in tables.items():
            print(write(key, table.groups).relative_to(ROOT))
        for path in stale:
            path.unlink()
            print(f"removed {path.relative_to(ROOT)}")
        return 0
    wrong = [key for key, table in tables.items() if odds_tables.load(key) != table.groups]
    for key in wrong:
        print(f"missing or different: {key}{odds_tables.SUFFIX}")
    for path in stale:
        print(f"stale: {path.relative_to(ROOT)}")
    return 1 if wrong or stale else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
