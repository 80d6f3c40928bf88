"""A replayed round holds what surveillance needs to read its settlements: who was handed the
cards and who turned them over (629a.8(c)), what House Money added to a wager (629a.8(c)(3)), and
every input refused while it was dealt. A surveillance review reconstructed a Midibaccarat round
whose Banker wager of 30.00 settled as 60.00 with nothing in the replay saying why: the
``house_money_added``, ``squeeze`` and ``revealed`` records were in the journal and left out."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from bench import Bench, stack_with

from controller.journal.errors import JournalContentError
from controller.journal.replay import replay
from controller.roles import Role
from controller.rules.cards import parse_cards


def _replayed_rounds(b: Bench) -> list[dict]:
    entries = [SimpleNamespace(seq=i, kind=r.kind, payload=r.payload, shoe_id=r.shoe, round_no=r.round, operator=None)
               for i, r in enumerate(b.records, 1)]
    return [d for d in replay(entries) if d["type"] == "round"]


@pytest.mark.reg("629a.8(c)(3)(i)(A)", "629a.8(c)(1)")
def test_a_house_money_addition_its_squeezes_and_a_refusal_are_events_of_the_round() -> None:
    """629a.8(c)(3)(i)(A): the House Money payout placed on a wager is "settled based on the
    outcome" of the round; (c)(1): the Player's Hand is handed "face down, to the player with the
    highest wager". The replay says both, and the void the floorperson tried and was
    refused."""
    # a pair in the Player's first two cards: House Money wins; no third card for either hand
    b = Bench("midibaccarat", stack=stack_with(parse_cards("8H 2C 8D 7S"), decks=6))
    b.open_and_cut(seats=(1, 2))
    b.op("wager", Role.DEALER, seat=2, kind="player", amount=100)
    b.op("wager", Role.DEALER, seat=2, kind="house_money", amount=10)
    b.op("no_more_bets", Role.DEALER)
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    assert b.core.state == "house_money"
    b.op("house_money_add", Role.DEALER, seat=2, side="player", amount=30)
    b.op("cut", Role.DEALER, position=100)  # not now: refused, nothing changed
    b.op("continue", Role.DEALER)
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    [played] = _replayed_rounds(b)
    kinds = [e["kind"] for e in played["events"]]
    assert kinds.count("squeeze") >= 2 and kinds.count("revealed") >= 2
    added = [e["payload"] for e in played["events"] if e["kind"] == "house_money_added"]
    assert added == [{"seat": 2, "side": "player", "amount": 30}]
    refused = [e["payload"] for e in played["events"] if e["kind"] == "refused"]
    assert [r["input"] for r in refused] == ["cut"]
    player = [s for s in played["settlements"] if s["kind"] == "player"]
    assert player[0]["amount"] == 100 + added[0]["amount"]  # the addition explains the amount settled


@pytest.mark.reg("681a.7(l)")
def test_a_round_left_unfinished_and_wagers_left_on_the_layout_are_replayed() -> None:
    """681a.7(l): the cards are placed "in a manner that permits the reconstruction of each hand in
    the event of a question or dispute", and a disputed hand is most often
    one a fault stopped with money on the layout (a surveillance review): the replay left out the
    round in progress, its wagers, the cards already dealt and its fault, said "no round 9" of it,
    and showed no wager placed for a round that never began. A reading that asks for them
    (``open_rounds``, as `journal replay` does) has the round, marked unfinished, and the shoe the
    wagers still on its layout; a live reading (the scoreboard's) is as before."""
    b = Bench("minibaccarat", seed=3)
    b.open_and_cut(seats=(1, 2))
    b.misread_at = {b.drawn + 4}  # the round's fourth card cannot be read: a fault holds the table
    b.play_round([(1, "player", 100), (2, "banker", 50)])
    assert b.core.state == "fault"
    entries = [SimpleNamespace(seq=i, kind=r.kind, payload=r.payload, shoe_id=r.shoe, round_no=r.round, operator=None)
               for i, r in enumerate(b.records, 1)]
    assert [d for d in replay(entries) if d["type"] == "round"] == []  # a live reading: nothing decided yet
    docs = list(replay(entries, open_rounds=True))
    [played] = [d for d in docs if d["type"] == "round"]
    assert played["unfinished"] and played["outcome"] is None and len(played["cards"]) == 3
    assert played["wagers"] == [{"seat": 1, "kind": "player", "amount": 100, "placed_by": None},
                                {"seat": 2, "kind": "banker", "amount": 50, "placed_by": None}]  # no inputs read
    assert [e["kind"] for e in played["events"]] == ["fault"]
    assert list(replay(entries, round=played["round"], open_rounds=True)) == [played]

    b = Bench("minibaccarat", seed=3)
    b.open_and_cut(seats=(1, 2))
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    b.op("wager", Role.DEALER, seat=2, kind="tie", amount=20)
    b.op("take_back", Role.DEALER, seat=2, kind="tie")
    entries = [SimpleNamespace(seq=i, kind=r.kind, payload=r.payload, shoe_id=r.shoe, round_no=r.round, operator=None)
               for i, r in enumerate(b.records, 1)]
    [shoe] = [d for d in replay(entries, open_rounds=True) if d["type"] == "shoe"]
    assert shoe["layout"] == [{"seat": 1, "kind": "player", "amount": 100, "placed_by": None}]  # the one taken back is not
    assert "layout" not in next(d for d in replay(entries) if d["type"] == "shoe")


def _entries(*records: tuple[str, dict, int | None]) -> list[SimpleNamespace]:
    out = [SimpleNamespace(seq=1, kind="shoe_start", payload={"shoe": "T1-S0001", "decks": 8}, shoe_id="T1-S0001",
                           round_no=None, operator=None)]
    for kind, payload, rno in records:
        out.append(SimpleNamespace(seq=len(out) + 1, kind=kind, payload=payload, shoe_id="T1-S0001", round_no=rno,
                                   operator=None))
    return out


def test_the_layout_keeps_what_a_simulated_round_leaves_on_it_and_gets_back_what_one_kept() -> None:
    """Under ``simulated_round_wagers = stay`` a simulated round takes no wager and one that became
    simulated puts its wagers back: the replay's layout emptied at every round's start and never
    took the kept ones back (a review of this session's diff: the table held them, the replay
    showed none)."""
    w1, w2 = {"seat": 1, "kind": "player", "amount": 100}, {"seat": 2, "kind": "banker", "amount": 50}
    entries = _entries(("wager", w1, None), ("round_start", {"round": 1, "kind": "simulated", "wagers": []}, 1))
    [shoe] = [d for d in replay(entries, open_rounds=True) if d["type"] == "shoe"]
    assert shoe["layout"] == [{**w1, "placed_by": None}]
    entries = _entries(("input.operator", {"command": "wager"}, None), ("wager", w1, None), ("wager", w2, None),
                       ("round_start", {"round": 1, "kind": "normal", "wagers": [w1, w2]}, 1),
                       ("round_kind", {"kind": "simulated", "clause": "627a.13(d)", "wagers_kept": [w1]}, 1))
    entries[1].operator = "d7"  # the dealer whose command came before both wagers
    docs = list(replay(entries, open_rounds=True))
    [shoe] = [d for d in docs if d["type"] == "shoe"]
    assert shoe["layout"] == [{**w1, "placed_by": "d7"}]  # kept, with who placed it
    [played] = [d for d in docs if d["type"] == "round"]
    assert played["wagers"] == [{**w1, "placed_by": "d7"}, {**w2, "placed_by": "d7"}]


@pytest.mark.parametrize("settlement", [{"seat": 1, "kind": "player", "net": 100},
                                        {"seat": 1, "kind": "player", "amount": "100", "net": 100},
                                        {"seat": 1, "kind": "player", "amount": 100, "win": "x", "net": 100}])
def test_a_settlement_whose_sums_are_not_whole_numbers_is_named_not_a_crash(settlement: dict) -> None:
    """A settlement that verifies but lacks its sum, or holds one as text, crashed the replay's
    text (a review of this session's diff): it is named as a malformed entry, as a bad ``net`` was."""
    entries = _entries(("round_start", {"round": 1, "kind": "normal", "wagers": []}, 1), ("settlement", settlement, 1))
    with pytest.raises(JournalContentError) as refused:
        list(replay(entries, open_rounds=True))
    assert "entry 3" in str(refused.value)


def test_an_unfinished_round_says_what_was_settled_or_returned_before_it_stopped() -> None:
    """A House Money wager settled, or a simulated round's wager returned, before a fault stopped
    the round: its line said "none settled" (a review of this session's diff)."""
    from controller.cli.cmd_replay import _text

    doc = {"type": "round", "shoe": "T1-S0001", "round": 4, "kind": "normal", "unfinished": True, "started": None,
           "cards": [{"card": "5S", "to": "player"}], "wagers": [{"seat": 1, "kind": "player", "amount": 100}],
           "settlements": [{"seat": 1, "kind": "house_money", "amount": 10, "net": 30}],
           "events": [{"seq": 7, "kind": "wager_returned", "operator": None, "payload": {}}]}
    assert _text(doc).endswith("1 wager (seat 1 player 1.00) on it, 1 settled, 1 returned")
    assert _text({**doc, "settlements": [], "events": []}).endswith("on it, none settled")
