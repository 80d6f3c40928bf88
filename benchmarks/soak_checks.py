"""The checks every soak makes of a journal it dealt, all through the CLI (``shoectl journal
verify``, ``export`` and ``replay``), and ``Defect``, what a failed one raises:

- the journal verifies;
- the shoe's CARD_READs in the journal are the emulator's dealt log, card for card, in order:
  none lost, none twice (``check_cards``), and every card out of a shoe that ended is placed on
  record once, dealt, burned or discarded (``check_placed``);
- every wager placed is staked in exactly one round or returned before one, and every wager
  staked in a round is settled (won, lost, pushed, or returned when the round is void) exactly
  once; no round is started or decided twice (``check_wagers``, ``check_replay``);
- every record is what the table decides from the journal's inputs, across every crash and
  restart (``shoectl audit decisions``: ``check_decisions``).

``check_journal`` runs them all. Used by the crash soak and the fault soak (docs/hardening.md).
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from firmware_bridge.emulator.table import read_dealt_log

SHOECTL = [sys.executable, "-m", "controller.cli.main"]


class Defect(Exception):
    """A check failed: the message says what, in the soak's words."""


def check_journal(journal: Path, dealt_log: Path) -> dict:  # type: ignore[type-arg]
    """Every check of a soaked journal, or ``Defect``: ``shoectl journal verify`` passes, its
    CARD_READs are the dealt log (``check_cards``), its money adds up (``check_wagers``), its
    replay shows each round once, settled once (``check_replay``). Its figures."""
    verify = subprocess.run([*SHOECTL, "journal", "verify", str(journal)], capture_output=True, text=True)
    if verify.returncode != 0:
        raise Defect(f"shoectl journal verify exited {verify.returncode}: {verify.stdout}{verify.stderr}")
    entries = shoectl_lines("export", "--no-verify", str(journal))  # verified just above
    cards = check_cards(entries, dealt_log)
    check_placed(entries)
    money = check_wagers(entries)
    return {"cards": cards, "rounds": check_replay(journal), "journal_entries": len(entries),
            "wagers": dict(money), "decisions": check_decisions(journal), "verify": verify.stdout.strip()}


def check_decisions(journal: Path) -> str:
    """``shoectl audit decisions``: the journal's inputs decided again make its records, every
    one (after a crash too: the restarted table's records are the ones it decides). Its verdict."""
    done = subprocess.run([*SHOECTL, "audit", "decisions", "--no-verify", str(journal)], capture_output=True, text=True)
    if done.returncode != 0:
        raise Defect(f"shoectl audit decisions exited {done.returncode}: {done.stdout}{done.stderr}")
    return done.stdout.strip()


def shoectl_lines(*args: str) -> list[dict]:  # type: ignore[type-arg]
    """Run a ``shoectl journal`` reader and parse its JSON lines (a failure is a defect)."""
    done = subprocess.run([*SHOECTL, "journal", *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise Defect(f"shoectl journal {' '.join(args)} exited {done.returncode}: {done.stderr.strip()}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def check_cards(entries: list[dict], dealt_log: Path) -> int:  # type: ignore[type-arg]
    """The journal's CARD_READs are the dealt log, in order; return the number of cards."""
    journaled = [(f["position"], "?" if f["rank"] == 0xFF else (f["rank"], f["suit"]))
                 for e in entries if e["kind"] == "input.device" and e["payload"]["event"] == "CARD_READ"
                 for f in [e["payload"]["fields"]]]
    dealt = [(d.position, "?" if d.misread else (d.card.rank, d.card.suit))
             for d in read_dealt_log(dealt_log)]
    if journaled != dealt:
        first = next((i for i, (a, b) in enumerate(zip(journaled, dealt)) if a != b),
                     min(len(journaled), len(dealt)))
        raise Defect(f"journal and dealt log differ: {len(journaled)} cards journaled, "
                     f"{len(dealt)} dealt, first difference at card {first + 1}: journal "
                     f"{journaled[first:first + 3]} dealt {dealt[first:first + 3]}")
    return len(dealt)


def check_placed(entries: list[dict]) -> int:  # type: ignore[type-arg]
    """Each shoe that ended (``reconciliation``): every card that left it (``left_shoe``) has been
    put somewhere on record by then, once: dealt to a hand (``card``), burned or discarded. Takes
    entries as ``shoectl journal export`` writes them; returns the number of shoes checked."""
    placed: dict[str, list[int]] = {}
    ended = 0
    for e in entries:
        if e["kind"] in ("card", "burn", "discard") and e["shoe_id"] is not None:
            placed.setdefault(e["shoe_id"], []).append(e["payload"]["position"])
        elif e["kind"] == "reconciliation":
            positions, left = placed.pop(e["shoe_id"], []), e["payload"]["left_shoe"]
            if len(set(positions)) != len(positions):
                raise Defect(f"shoe {e['shoe_id']}: a card placed twice on record")
            if len(positions) != left:
                raise Defect(f"shoe {e['shoe_id']}: {left} cards left it, {len(positions)} placed on record")
            ended += 1
    return ended


def _wager(p: dict) -> tuple[int, str, int]:  # type: ignore[type-arg]
    return (p["seat"], p["kind"], p["amount"])


def check_wagers(entries: list[dict]) -> Counter[str]:  # type: ignore[type-arg]
    """Walk the journal's money records in order: every wager placed is staked once or returned;
    every staked wager is settled once. Returns counts by outcome."""
    pending: Counter[tuple[int, str, int]] = Counter()
    staked: dict[tuple[str, int], Counter[tuple[int, str, int]]] = {}
    settled: dict[tuple[str, int], Counter[tuple[int, str, int]]] = {}
    decided: set[tuple[str, int]] = set()
    counts: Counter[str] = Counter()
    for e in entries:
        kind, p, key = e["kind"], e["payload"], (e["shoe_id"], e["round_no"])
        if kind == "wager":
            pending[_wager(p)] += 1
            counts["placed"] += 1
        elif kind == "wager_returned":
            if pending[_wager(p)] < 1:
                raise Defect(f"entry {e['seq']}: a wager returned that was not pending: {p}")
            pending[_wager(p)] -= 1
            counts["returned before a round"] += 1
        elif kind == "round_start":
            key = (e["shoe_id"], p["round"])
            wagers = Counter(_wager(w) for w in p["wagers"])
            if key in staked:
                raise Defect(f"entry {e['seq']}: round {key} started twice")
            if wagers != +pending:
                raise Defect(f"entry {e['seq']}: round {key} staked {sorted(wagers.elements())} "
                             f"but the wagers placed were {sorted(pending.elements())}")
            staked[key], pending = wagers, Counter()
        elif kind == "settlement":
            settled.setdefault(key, Counter())[_wager(p)] += 1
            counts[p["result"]] += 1
        elif kind == "round_result":
            if key in decided:
                raise Defect(f"entry {e['seq']}: round {key} decided twice")
            decided.add(key)
            counts[f"rounds {p.get('kind', 'normal')}"] += 1
    for key, wagers in staked.items():
        if key in decided and settled.get(key, Counter()) != wagers:
            raise Defect(f"round {key}: staked {sorted(wagers.elements())}, settled "
                         f"{sorted(settled.get(key, Counter()).elements())}")
    open_rounds = [k for k in staked if k not in decided]
    if open_rounds:
        raise Defect(f"rounds started and never decided: {open_rounds}")
    counts["open at the end"] = sum(pending.values())
    return counts


def check_replay(journal: Path) -> int:
    """``shoectl journal replay``: no round twice, every round's wagers settled exactly once. Run
    after ``shoectl journal verify`` passed: the replay does not check the chain a second time."""
    rounds = [d for d in shoectl_lines("replay", "--json", "--no-verify", str(journal)) if d["type"] == "round"]
    keys = [(d["shoe"], d["round"]) for d in rounds]
    if len(keys) != len(set(keys)):
        raise Defect("replay shows a round twice")
    for d in rounds:
        staked = sorted(_wager(w) for w in d["wagers"])
        if sorted(_wager(s) for s in d["settlements"]) != staked:
            raise Defect(f"replay: round {d['shoe']} {d['round']}: settlements {d['settlements']} "
                         f"for wagers {d['wagers']}")
    return len(rounds)
