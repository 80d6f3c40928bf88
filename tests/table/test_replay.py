"""Reconstruction of every shoe and round from the table's records (681a.7(l))."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from bench import Bench

from controller.journal.replay import replay
from controller.rules.cards import parse_cards
from controller.rules.engine import deal
from controller.table.autodealer import AutoDealer


def played(preset: str, shoes: int = 2, seed: int = 5) -> Bench:
    b = Bench(preset, seed=seed)
    auto = AutoDealer(seed=seed)
    while len({r.shoe for r in b.records if r.kind == "round_result"}) < shoes + 1:
        op = auto.next_input(b.core)
        assert op is not None
        b.feed(op)
    return b


def entries(b: Bench) -> list:
    return [SimpleNamespace(seq=i, kind=r.kind, payload=r.payload, shoe_id=r.shoe, round_no=r.round, operator=None)
            for i, r in enumerate(b.records, start=1)]


@pytest.mark.reg("681a.7(l)")
@pytest.mark.parametrize("preset", ["minibaccarat", "midibaccarat", "21-baccarat"])
def test_every_round_is_reconstructed_and_redecided_identically(preset: str) -> None:
    """681a.7(l): the cards are placed in the discard rack "in a manner that permits the
    reconstruction of each hand in the event of a question or dispute". Every round of whole shoes
    is rebuilt from the journal alone, and its cards, dealt again by the rules, go to the same hands
    and give the same result."""
    b = played(preset)
    docs = list(replay(entries(b)))
    rounds = [d for d in docs if d["type"] == "round"]
    assert len(rounds) == len(b.of("round_result"))
    game = b.sub.game
    for r in rounds:
        if r["kind"] == "void":
            continue
        cards = parse_cards(c["card"] for c in r["cards"])
        bonus = any(w["kind"].endswith("_bonus") for w in r["wagers"])
        again = deal(cards, game, getattr(b.sub, "twentyone", None), bonus_in_play=bonus)
        assert [t.value for _, t in again.dealt] == [c["to"] for c in r["cards"]]
        assert again.outcome.value == r["outcome"]
        assert r["player"]["total"] == again.player_total
        if r["kind"] == "normal":
            staked = {(w["seat"], w["kind"]) for w in r["wagers"]}
            assert {(s["seat"], s["kind"]) for s in r["settlements"]} == staked
    shoes = [d for d in docs if d["type"] == "shoe"]
    assert len(shoes) >= 2
    for s in shoes[:-1]:
        assert s["cut"]["position"] >= 10 and s["cover_from_bottom"] >= 10 and len(s["burned"]) == 1
        assert s["reconciliation"]["ok"]


def test_filter_by_shoe_and_round() -> None:
    b = played("minibaccarat", shoes=1)
    sid = b.of("shoe_start")[0]["shoe"]
    one = list(replay(entries(b), shoe=sid, round=3))
    assert [(d["type"], d["shoe"], d["round"]) for d in one] == [("round", sid, 3)]


def test_procedures_and_irregularities_are_listed_with_who_gave_them() -> None:
    """Surveillance reconstructs who did what, not only the cards: a floorperson's review found a
    voided round, a restarted shoe and a close without their operator in the replay (the journal
    held them)."""
    from controller.roles import Role

    b = Bench()
    log: list = []

    def by(operator: str, command: str, role: Role = Role.FLOORPERSON, **args) -> None:
        log.append(SimpleNamespace(seq=None, kind="input.operator", payload={"command": command}, shoe_id=None,
                                   round_no=None, operator=operator))
        start = len(b.records)
        b.op(command, role, operator=operator, **args)
        log.extend(SimpleNamespace(seq=None, kind=r.kind, payload=r.payload, shoe_id=r.shoe, round_no=r.round,
                                   operator=None) for r in b.records[start:])

    by("fp1", "open")
    by("d1", "cut", Role.DEALER, position=100)
    by("d1", "cover", Role.DEALER, from_bottom=14)
    by("d1", "load", Role.DEALER)
    by("sup", "restart_shoe", Role.SUPERVISOR, reason="the shoe was dropped")
    for i, e in enumerate(log, start=1):
        e.seq = i
    [first] = [d for d in replay(log) if d["type"] == "shoe"][:1]
    said = {(ev["kind"], ev["operator"]) for ev in first["events"]}
    assert ("operator", "sup") in said and ("shoe_restarted", "sup") in said
    [restart] = [ev for ev in first["events"] if ev["kind"] == "operator" and ev["payload"]["command"] == "restart_shoe"]
    assert restart["payload"]["args"] == {"reason": "the shoe was dropped"}
    assert not any(ev["kind"] == "operator" and ev["payload"]["command"] in ("cut", "cover", "load")
                   for ev in first["events"])  # routine: the shoe's cut and cover say it


def test_a_restart_after_a_kill_is_no_operators_doing() -> None:
    """A table killed after a dealer's command and started again: its ``controller_started`` is
    nobody's (a surveillance review read "entry 83 by auto-dealer: controller started", the dealer's
    last wager the entry before the kill)."""
    log = [SimpleNamespace(seq=1, kind="shoe_start", payload={"shoe": "T1-S0001", "decks": 8}, shoe_id="T1-S0001",
                           round_no=None, operator=None),
           SimpleNamespace(seq=2, kind="input.operator", payload={"command": "wager"}, shoe_id="T1-S0001", round_no=None,
                           operator="d1"),
           SimpleNamespace(seq=3, kind="controller_started", payload={"version": "0.1.0"}, shoe_id="T1-S0001",
                           round_no=None, operator=None)]
    [shoe] = [d for d in replay(log) if d["type"] == "shoe"]
    assert [(ev["kind"], ev["operator"]) for ev in shoe["events"]] == [("controller_started", None)]
