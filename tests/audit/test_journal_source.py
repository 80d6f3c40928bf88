"""The journal layer: shoes collected from entries, the loaded stack rebuilt from the cut and cover
cards, the shuffler's order recovered, the previous shoe as a pre-shuffle order."""
from __future__ import annotations

from pathlib import Path

from controller.audit.cardset import Read
from controller.audit.journal_source import ShoeData, collect_shoes, partial_order, previous_orders, stack_map
from controller.journal import JournalReader

from .conftest import ShoeSpec, shuffled_specs


def shoes_of(path: Path) -> list[ShoeData]:
    with JournalReader.open(path) as reader:
        return collect_shoes(reader.entries())


def test_collect_shoes_reads_every_record(make_journal) -> None:
    specs = shuffled_specs(2, decks=2, seed=3)
    shoes = shoes_of(make_journal(specs))
    assert [s.shoe for s in shoes] == ["T1-S0001", "T1-S0002", "T1-S0003"]
    first = shoes[0]
    assert first.decks == 2 and first.loaded == 104 and first.cuts == [(specs[0].cut, 104)]
    assert first.covers_from_bottom == [14] and len(first.cover_positions) == 1
    assert first.remaining == 104 - len(first.reads) and first.reconciliation["expected"] == 104
    assert shoes[2].reads == [] and shoes[2].loaded is None  # started, never dealt


def test_the_shuffler_order_is_recovered_by_undoing_the_cut(make_journal) -> None:
    specs = shuffled_specs(3, decks=2, seed=4)
    specs[1].extra_cover_at = 20      # a misplaced cover card the shoe met (fault cover-at)
    specs[2].cut = None               # an automatic shoe: no cut, no cover
    shoes = shoes_of(make_journal(specs))
    for spec, shoe in zip(specs, shoes):
        order = partial_order(shoe, "shuffler")
        known = [i for i, c in enumerate(order) if c is not None]
        assert len(known) == len(shoe.reads) > 80
        assert all(order[i] == spec.stack[i] for i in known)
    # in shoe order the cut shows: the first card read is the card below the cut
    shoe_order = partial_order(shoes[0], "shoe")
    assert shoe_order[0] == specs[0].stack[specs[0].cut]


def test_reads_that_do_not_fit_the_cut_are_refused() -> None:
    shoe = ShoeData("S", decks=1, cuts=[(10, 52)], covers_from_bottom=[5], loaded=52,
                    reads=[Read(48, 1, 0)])  # position 48 holds the second cover card
    smap, reason = stack_map(shoe)
    assert smap is None and "position 48" in reason
    shoe = ShoeData("S", decks=1, cuts=[(60, 52)], loaded=52)
    assert stack_map(shoe)[0] is None
    assert stack_map(ShoeData("S"))[1] == "the journal does not say how many cards were loaded"


def test_misreads_are_unknown_places(make_journal) -> None:
    specs = shuffled_specs(1, decks=1, seed=2, misread={3})
    specs[0].cut = 20
    specs[0].cover_from_bottom = 5
    shoe = shoes_of(make_journal(specs))[0]
    order = partial_order(shoe)
    assert order.count(None) == 1 + shoe.remaining
    report = shoe.verify()
    assert report.unreadable == [3] and report.ok


def test_previous_shoe_order_as_the_pre_shuffle_order(make_journal) -> None:
    specs = shuffled_specs(3, decks=1, seed=6)
    for s in specs:
        s.cover_from_bottom = 6
    shoes = shoes_of(make_journal(specs))
    pres = previous_orders(shoes, 1, seed=0)
    assert pres[0] is None
    dealt = [c for c in partial_order(shoes[0], "shoe") if c is not None]
    assert pres[1][:len(dealt)] == dealt and sorted(pres[1]) == sorted(specs[0].stack)
    assert len(pres) == 4 and sorted(pres[3]) == sorted(specs[2].stack)  # the shoe being shuffled at the end


def test_entries_without_a_shoe_are_ignored() -> None:
    from types import SimpleNamespace as E
    entries = [E(kind="table_open", payload={}, shoe_id=None),
               E(kind="input.device", payload={"event": "CARD_READ", "fields": {}}, shoe_id=None),
               E(kind="shoe_start", payload={"shoe": "X", "decks": 6}, shoe_id="X")]
    shoes = collect_shoes(entries)
    assert [(s.shoe, s.decks) for s in shoes] == [("X", 6)]
    assert ShoeSpec  # the conftest's builder is what the other tests use
