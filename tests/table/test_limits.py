"""The Rules Submission's ``[limits]`` at the layout: a wager outside its kind's min and max, or
that takes a seat past ``table_max``, is refused in the operator's words (money in major units)
and changes nothing; the automated dealer of ``shoectl run`` places only wagers inside the limits,
and every one is settled."""
from __future__ import annotations

import copy
from collections import defaultdict
from pathlib import Path

import pytest
from bench import Bench, stack_with

from cli_run import run
from controller.journal import JournalReader, kinds
from controller.journal.replay import replay
from controller.roles import Role
from controller.rules.model import WagerKind
from controller.rules.cards import parse_cards
from controller.rules.submission import load_preset, load_submission, parse_submission

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "minibaccarat-limits.toml"
# player/banker 25.00-5,000.00, tie 5.00-500.00, pairs 5.00-250.00, table_max 7,500.00


def limited_bench() -> Bench:
    b = Bench(submission=load_submission(EXAMPLE))
    b.open_and_cut(seats=(1, 3))
    assert b.core.state == "betting"
    return b


@pytest.mark.parametrize("placed, wager, reason", [
    ([], ("banker", 2499), "the banker wager is at least 25.00 at this table"),
    ([], ("banker", 500001), "the banker wager is at most 5,000.00 at this table"),
    ([], ("tie", 100), "the tie wager is at least 5.00 at this table"),
    ([], ("player_pair", 30000), "the player_pair wager is at most 250.00 at this table"),
    ([("banker", 400000)], ("banker", 100001),
     "the banker wager is at most 5,000.00 at this table (seat 1 has 4,000.00 on it)"),
    ([("banker", 500000), ("tie", 50000)], ("player", 200001),
     "a seat's wagers come to at most 7,500.00 a round at this table (seat 1 would have 7,500.01)"),
], ids=["below-min", "above-max", "tie-below-min", "pair-above-max", "added-past-max", "past-table-max"])
def test_a_wager_outside_the_limits_is_refused_in_words_and_changes_nothing(placed, wager, reason) -> None:
    b = limited_bench()
    for kind, amount in placed:
        b.op("wager", Role.DEALER, seat=1, kind=kind, amount=amount)
    assert not b.of(kinds.REFUSED)
    before, layout = copy.deepcopy(b.core.snapshot()), list(b.core.pending_wagers)
    kind, amount = wager
    outs = b.op("wager", Role.DEALER, seat=1, kind=kind, amount=amount)
    assert [o.kind for o in outs if hasattr(o, "kind")] == [kinds.REFUSED]
    assert b.of(kinds.REFUSED)[-1]["reason"] == reason
    assert b.core.snapshot() == before and b.core.pending_wagers == layout


def test_wagers_at_the_limits_are_taken_and_another_seat_has_its_own_table_max() -> None:
    b = limited_bench()
    b.op("wager", Role.DEALER, seat=1, kind="banker", amount=2500)       # the min
    b.op("wager", Role.DEALER, seat=1, kind="banker", amount=497500)     # up to the max, added
    b.op("wager", Role.DEALER, seat=1, kind="tie", amount=50000)
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=200000)     # exactly table_max
    b.op("wager", Role.DEALER, seat=3, kind="player", amount=500000)     # seat 3 counts apart
    assert not b.of(kinds.REFUSED)
    assert sum(w.amount for w in b.core.pending_wagers if w.seat == 1) == 750000


@pytest.mark.reg("629a.8(c)(3)(i)(A)")
def test_a_house_money_payout_added_to_a_wager_is_not_a_wager_and_not_limited() -> None:
    """629a.8(c)(3)(i)(A): "All of the winning House Money payout ... shall be added to the area
    designated for the placement of the player's original wager on the Player's or Banker's
    Hand." The dealer moves winnings; the limits apply to wagers placed, so the Player wager may
    end above its max and the seat past table_max."""
    d = load_preset("midibaccarat").to_dict()
    source = d.pop("source")
    sub = parse_submission({**d, "limits": {"player": {"min": 100, "max": 100}, "house_money": {"min": 10, "max": 10},
                                            "table_max": 110}}, source)
    b = Bench(submission=sub, stack=stack_with(parse_cards("5S,KH,5D,2C,KD,KC"), decks=6))  # Player pair of 5s
    b.open_and_cut(seats=(1, 2, 3, 4))
    b.play_round([(2, "player", 100), (2, "house_money", 10)])
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    assert b.core.state == "house_money"
    b.op("house_money_add", Role.DEALER, seat=2, side="player", amount=30)
    assert not b.of(kinds.REFUSED) and b.of("house_money_added") == [{"seat": 2, "side": "player", "amount": 30}]
    b.op("continue", Role.DEALER)
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    assert [s["amount"] for s in b.of("settlement") if s["kind"] == "player"] == [130]


def test_the_autodealer_stays_inside_the_limits_over_a_whole_shoe(capsys, tmp_path) -> None:
    """Limits that most of the automated players' amounts fall outside of (their main wagers are
    5.00-100.00, side wagers 5.00-20.00): each journaled wager is inside its kind's limits, each
    seat's round inside ``table_max``, and each is settled."""
    rules = tmp_path / "strict.toml"
    rules.write_text('[submission]\ngame = "punto-banco"\ndecks = 4\n[limits]\n'
                     "player = { min = 4000, max = 6000 }\nbanker = { min = 4000, max = 6000 }\n"
                     "tie = { min = 1000, max = 1500 }\nplayer_pair = { min = 1500, max = 2000 }\n"
                     "table_max = 7000\n")
    limits = load_submission(rules).limits
    journal = tmp_path / "journal.db"
    code, _, err = run(capsys, "run", "--journal", str(journal), "--submission", str(rules), "--shoes", "1",
                       "--speed", "max", "--seed", "5")
    assert code == 0, err
    with JournalReader.open(journal) as reader:
        entries = list(reader.entries())
    assert not [e.payload for e in entries if e.kind == kinds.REFUSED]
    rounds = [d for d in replay(entries) if d["type"] == "round"]
    assert len(rounds) > 20
    placed = settled = 0
    for doc in rounds:
        per_seat: dict[int, int] = defaultdict(int)
        for w in doc["wagers"]:
            lim = limits.wagers.get(WagerKind(w["kind"]))
            assert lim is None or lim.min <= w["amount"] <= lim.max, w
            per_seat[w["seat"]] += w["amount"]
        assert max(per_seat.values()) <= limits.table_max
        assert sorted((w["seat"], w["kind"], w["amount"]) for w in doc["wagers"]) == sorted(
            (s["seat"], s["kind"], s["amount"]) for s in doc["settlements"])
        placed += len(doc["wagers"])
        settled += len(doc["settlements"])
    kinds_placed = {w["kind"] for d in rounds for w in d["wagers"]}
    assert {"player", "banker"} <= kinds_placed and placed == settled > len(rounds)


def test_the_autodealer_wagers_by_the_submission_in_force_not_the_one_it_started_with() -> None:
    """A floorperson may set another Rules Submission at opening (``set_submission``): the
    automated players then wager inside the limits of the one in force."""
    from controller.table.autodealer import AutoDealer

    b = limited_bench()  # the core decides by the example's limits
    b.op("dealer_sign_in", Role.DEALER, operator="auto-dealer", dealer="auto")  # takes over from fp1 (681a.7(c))
    dealer = AutoDealer(seed=3, players=4)
    limits = load_submission(EXAMPLE).limits
    placed = 0
    for _ in range(120):  # a few rounds
        op = dealer.next_input(b.core)
        if op is None:
            break
        outs = b.feed(op)
        assert not [o for o in outs if getattr(o, "kind", None) == kinds.REFUSED], op
        if op.command == "wager":
            placed += 1
            lim = limits.wagers.get(WagerKind(op.args["kind"]))
            assert lim is None or lim.min <= op.args["amount"] <= lim.max, op.args
    assert placed >= 20


def test_the_autodealer_seats_its_players_at_seats_of_the_rules_in_force() -> None:
    """Its seats were drawn from the rules it was made with: a table resumed from its journal
    plays the journal's rules, and at a table whose seats are 2 and 12 it sat a player at seat 4
    again and again, each refused."""
    import dataclasses

    from controller.table.autodealer import AutoDealer

    b = Bench()
    b.core.sub = dataclasses.replace(b.core.sub, seats=(2, 12))
    dealer = AutoDealer(seed=3, players=4)
    for _ in range(3):
        op = dealer.next_input(b.core)
        if op is None or op.command != "sit":
            break
        b.feed(op)
    assert b.core.snapshot()["seats_taken"] == [2, 12] and b.of("refused") == []
