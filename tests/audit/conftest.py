"""Synthetic journals for the audit tests: shoes built and dealt the way the table records them
(cut, second cover, CARD_READ / COVER_CARD device events, reconciliation), without the table."""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from witness import witnessed

from controller.audit.orders import fresh_order
from controller.journal import Journal, Record
from firmware_bridge.emulator.cards import COVER, DeviceCard, cut_stack, insert_second_cover


@dataclass
class ShoeSpec:
    """One shoe: ``stack`` is the shuffler's output as card codes (top first)."""

    shoe: str
    decks: int
    stack: list[int]
    cut: int | None = 30                     # None: an automatic shoe, no cut or cover
    cover_from_bottom: int = 14
    stop_after_cover: int = 3                # cards read after the cover card
    misread: set[int] = field(default_factory=set)     # positions read as unreadable
    extra_cover_at: int | None = None        # a cover card the shoe found at this position
    read_all: bool = False
    read_only: int | None = None             # the cards read stop after this many items
    in_play: bool = False                    # the journal ends with the shoe in play: no reconciliation
    entered: dict[int, str] = field(default_factory=dict)  # misread position -> the card fp1 entered


def _device_card(code: int) -> DeviceCard:
    return DeviceCard(code // 4 + 1, code % 4)


def shoe_records(spec: ShoeSpec, epoch: int, counter: list[int]) -> list[Record]:
    recs: list[Record] = [Record("shoe_start", {"shoe": spec.shoe, "decks": spec.decks}, shoe=spec.shoe)]
    items: list[Any] = [_device_card(c) for c in spec.stack]
    stop = len(items)  # index (0-based) of the first item never read
    if spec.cut is not None:
        recs.append(Record("cut", {"position": spec.cut, "by": "dealer", "stack": len(items)}, shoe=spec.shoe))
        items = cut_stack(items, spec.cut)
        recs.append(Record("cover", {"from_bottom": spec.cover_from_bottom}, shoe=spec.shoe))
        items = insert_second_cover(items, spec.cover_from_bottom)
        second_cover = len(items) - 1 - spec.cover_from_bottom - 1  # the cut card is at the bottom
        stop = second_cover + 1 + spec.stop_after_cover
    if spec.extra_cover_at is not None:
        items.insert(spec.extra_cover_at - 1, COVER)
        if spec.extra_cover_at - 1 < stop:
            stop += 1
    if spec.read_all:
        stop = len(items)
    if spec.read_only is not None:
        stop = min(stop, spec.read_only)
    loaded = sum(1 for i in items if i is not COVER)
    recs.append(Record("shoe_loaded", {"cards": loaded}, shoe=spec.shoe))

    def device(event: str, fields: dict[str, Any]) -> Record:
        counter[0] += 1
        return Record("input.device", {"device_role": "shoe", "event": event, "fields": fields}, shoe=spec.shoe,
                      device_serial="EMU-shoe", epoch=epoch, counter=counter[0])

    read = 0
    for position, item in enumerate(items[:stop], start=1):
        if item is COVER:
            recs.append(device("COVER_CARD", {"position": position}))
            continue
        rank, suit = (0xFF, 0) if position in spec.misread else (item.rank, item.suit)
        recs.append(device("CARD_READ", {"rank": rank, "suit": suit, "face_up": False, "position": position,
                                        "timestamp_ms": position}))
        if position in spec.entered:
            recs.append(Record("card_entered", {"card": spec.entered[position], "by": "fp1"}, shoe=spec.shoe))
        read += 1
    if spec.in_play:
        return recs
    recs.append(Record("reconciliation", {"loaded": loaded, "left_shoe": read, "burned": 1,
                                          "remaining_in_shoe": loaded - read, "total": loaded,
                                          "expected": spec.decks * 52, "ok": loaded == spec.decks * 52},
                       shoe=spec.shoe))
    return recs


def write_journal(path: Path, shoes: Sequence[ShoeSpec], *, trailing_shoe: bool = True) -> Path:
    counter = [0]
    with Journal.open(path, table_id="T1") as journal:
        journal.append("table_open", {"note": "synthetic"})
        for spec in shoes:
            journal.append_batch(shoe_records(spec, 77, counter))
        if trailing_shoe:  # the shoe being shuffled when the journal ends: not dealt
            sid = f"T1-S{len(shoes) + 1:04d}"
            journal.append("shoe_start", {"shoe": sid, "decks": shoes[0].decks if shoes else 8}, shoe=sid)
        witnessed(journal)
    return path


def shuffled_specs(count: int, decks: int = 8, seed: int = 1, model: str = "uniform", **kwargs: Any) -> list[ShoeSpec]:
    from firmware_bridge.emulator.shuffle_models import parse_model

    rng = random.Random(seed)
    shuffle = parse_model(model).shuffle
    pre = fresh_order(decks)
    return [ShoeSpec(f"T1-S{i + 1:04d}", decks, shuffle(pre, rng), cut=rng.randint(10, 52 * decks - 10), **kwargs)
            for i in range(count)]


@pytest.fixture
def make_journal(tmp_path: Path):
    def make(shoes: Sequence[ShoeSpec], name: str = "j.db", **kwargs: Any) -> Path:
        return write_journal(tmp_path / name, shoes, **kwargs)
    return make
