"""The shuffle audit's power and speed (``run(quick=False) -> dict``).

- ``power``: for each weak shuffle model of the emulator (``firmware_bridge.emulator.
  shuffle_models``: 1, 2, 4 and 7 GSR riffles, one strip pass, a stuck slot), the fewest 8-deck
  shoes the audit needs to fail it at 99% confidence in at least 90% of independent trials
  (pre-shuffle order: fresh decks, as the emulator starts; the shuffler's order). The search
  walks a ladder of shoe counts; ``detected`` is the fraction of trials failed at that count and
  ``caught_by`` the tests rejected most often there.
- ``false_alarms``: the uniform (CSPRNG-style) shuffle, many independent audits of
  ``shoes_per_audit`` shoes at 99% and 95%: the fraction that fail (should be <= 1 - confidence).
- ``speed``: seconds to audit 1,000 shoes of 8 decks: the tests alone on complete orders
  (``audit_orders``), and the whole per-shoe path from journal shoes (card-set check, stack map,
  filling in the unread cards, tests), with the time to generate the orders reported apart; and
  ``journal``: ``shoectl audit shuffle`` end to end (SQLite read included) on a journal of
  ``journal_shoes`` dealt shoes (1,000; 200 with ``quick``), about 410 entries per shoe.
"""
from __future__ import annotations

import contextlib
import io
import math
import random
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from controller.audit.cardset import Read
from controller.audit.journal_audit import shuffle_audit
from controller.audit.journal_source import ShoeData
from controller.audit.orders import fresh_order
from controller.audit.shuffle_audit import audit_orders
from controller.cli.main import main as shoectl
from controller.journal import Journal, Record
from firmware_bridge.emulator.cards import COVER, cut_stack, insert_second_cover
from firmware_bridge.emulator.shuffle_models import parse_model

DECKS = 8
CONFIDENCE = 0.99
TARGET = 0.9
LADDER = (1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32, 48, 64)
WEAK_MODELS = ("riffle:1", "riffle:2", "riffle:4", "riffle:7", "strip:1", "stuck:17")


def _orders(model: str, shoes: int, rng: random.Random) -> list[list[int]]:
    shuffle = parse_model(model).shuffle
    pre = fresh_order(DECKS)
    return [shuffle(pre, rng) for _ in range(shoes)]


def shoes_needed(model: str, trials: int, seed: int = 1) -> dict[str, Any]:
    """The fewest shoes (on ``LADDER``) at which the audit fails ``model`` in >= TARGET of trials."""
    rng = random.Random(seed)
    pre = fresh_order(DECKS)
    for shoes in LADDER:
        failed = 0
        caught: Counter[str] = Counter()
        for t in range(trials):
            result = audit_orders(_orders(model, shoes, rng), confidence=CONFIDENCE, pre_orders=pre, seed=t)
            failed += not result.passed
            caught.update(test.name for test, rej in zip(result.tests, result.rejected) if rej)
        if failed / trials >= TARGET:
            return {"shoes": shoes, "detected": failed / trials, "trials": trials,
                    "caught_by": [name for name, _ in caught.most_common(3)]}
    return {"shoes": None, "detected": None, "trials": trials, "note": f"not detected with {LADDER[-1]} shoes"}


def false_alarm_rate(audits: int, shoes_per_audit: int, confidence: float, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    pre = fresh_order(DECKS)
    failed = 0
    for t in range(audits):
        failed += not audit_orders(_orders("uniform", shoes_per_audit, rng), confidence=confidence,
                                   pre_orders=pre, seed=t).passed
    alpha = 1 - confidence
    return {"confidence": confidence, "audits": audits, "shoes_per_audit": shoes_per_audit,
            "rate": failed / audits, "alpha": round(alpha, 4), "standard_error": math.sqrt(alpha * (1 - alpha) / audits)}


def _journal_shoe(sid: str, stack: list[int], rng: random.Random) -> ShoeData:
    """A dealt shoe as the journal would give it: cut, second cover 14 from the bottom, cards read
    to three past the cover card."""
    cut = rng.randint(10, len(stack) - 10)
    items = insert_second_cover(cut_stack(stack, cut), 14)
    second = len(items) - 1 - 14 - 1
    reads = [Read(pos, c // 4 + 1, c % 4) for pos, c in enumerate(items[:second + 4], start=1) if c is not COVER]
    return ShoeData(sid, DECKS, cuts=[(cut, len(stack))], covers_from_bottom=[14], loaded=len(stack), reads=reads,
                    cover_positions=[second + 1],
                    reconciliation={"remaining_in_shoe": len(stack) - len(reads)})


def speed(shoes: int) -> dict[str, Any]:
    rng = random.Random(3)
    t0 = time.perf_counter()
    orders = _orders("uniform", shoes, rng)
    generate = time.perf_counter() - t0
    t0 = time.perf_counter()
    audit_orders(orders, confidence=CONFIDENCE, pre_orders=fresh_order(DECKS))
    tests = time.perf_counter() - t0
    journal_shoes = [_journal_shoe(f"T1-S{i:04d}", o, rng) for i, o in enumerate(orders)]
    t0 = time.perf_counter()
    audit = shuffle_audit(journal_shoes, confidence=CONFIDENCE)
    whole = time.perf_counter() - t0
    assert len(audit.shoes) == shoes
    return {"shoes": shoes, "decks": DECKS, "generate_orders_s": round(generate, 3),
            "audit_tests_s": round(tests, 3), "audit_from_journal_shoes_s": round(whole, 3)}


def _records(shoe: ShoeData, counter: list[int]) -> list[Record]:
    sid = shoe.shoe
    recs = [Record("shoe_start", {"shoe": sid, "decks": DECKS}, shoe=sid)]
    recs += [Record("cut", {"position": p, "by": "dealer", "stack": n}, shoe=sid) for p, n in shoe.cuts]
    recs += [Record("cover", {"from_bottom": n}, shoe=sid) for n in shoe.covers_from_bottom]
    recs.append(Record("shoe_loaded", {"cards": shoe.loaded}, shoe=sid))
    events = [(r.position, "CARD_READ", {"rank": r.rank, "suit": r.suit, "face_up": False, "position": r.position})
              for r in shoe.reads] + [(p, "COVER_CARD", {"position": p}) for p in shoe.cover_positions]
    for _, event, fields in sorted(events, key=lambda e: e[0]):
        counter[0] += 1
        recs.append(Record("input.device", {"device_role": "shoe", "event": event, "fields": fields}, shoe=sid,
                           device_serial="EMU-shoe", epoch=1, counter=counter[0]))
    recs.append(Record("reconciliation", dict(shoe.reconciliation or {}), shoe=sid))
    return recs


def journal_speed(shoes: int) -> dict[str, Any]:
    rng = random.Random(4)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "journal.db"
        counter = [0]
        t0 = time.perf_counter()
        with Journal.open(path, table_id="T1") as journal:
            for i, order in enumerate(_orders("uniform", shoes, rng)):
                journal.append_batch(_records(_journal_shoe(f"T1-S{i + 1:04d}", order, rng), counter))
        write = time.perf_counter() - t0
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            code = shoectl(["audit", "shuffle", str(path), "--json"])
        audit = time.perf_counter() - t0
    return {"shoes": shoes, "entries": counter[0] + shoes * 6, "write_journal_s": round(write, 2),
            "audit_shuffle_command_s": round(audit, 2), "exit_code": code}


def run(quick: bool = False) -> dict[str, Any]:
    trials = 10 if quick else 30
    out: dict[str, Any] = {"confidence": CONFIDENCE, "decks": DECKS, "target_detection": TARGET}
    out["power"] = {model: shoes_needed(model, trials) for model in WEAK_MODELS}
    audits = 200 if quick else 1000
    out["false_alarms"] = [false_alarm_rate(audits, 10, 0.99), false_alarm_rate(audits, 10, 0.95, seed=8)]
    out["speed"] = speed(1000)
    out["journal"] = journal_speed(200 if quick else 1000)
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
