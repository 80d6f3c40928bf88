"""627a.13(a): two cards drawn in error between rounds open the next hand and the hand after it
(test_a_second_undisclosed_card_drawn_in_error_opens_the_hand_after_the_next). `journal replay`
puts "the irregularity or deferral journaled between rounds that set aside the card a round's
held_card_used takes" with that round: the second card's with the round it opens, in a whole-shoe
listing and in a reading of that round (a review of this stop's replay change: dropping the
set-aside events at each round's result left the second one with the shoe). And from a shoe that
does not sense positions (docs/protocol.md 9.18: position 0, "unknown ... the host then checks
nothing by position"): the next card out "was" the set-aside card by position 0, and the second
card's irregularity stayed with the shoe (a review of 2026-12-08)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from bench import Bench

from controller.journal.replay import replay
from controller.roles import Role


def _entries(b: Bench, positions: bool = True) -> list:
    def as_sent(payload: dict) -> dict:  # a shoe without positions sends 0 for each
        return payload if positions or payload.get("position") is None else {**payload, "position": 0}
    return [SimpleNamespace(seq=i, kind=r.kind, payload=as_sent(r.payload), shoe_id=r.shoe, round_no=r.round,
                            operator=None) for i, r in enumerate(b.records, 1)]


@pytest.mark.parametrize("positions", [True, False], ids=["positions", "position-0"])
@pytest.mark.parametrize("reading", [{"hold": True, "open_rounds": True}, {"round": 2}])
def test_the_second_held_cards_irregularity_goes_with_the_round_it_opens(reading, positions: bool) -> None:
    b = Bench()
    b.open_and_cut()
    b.cards_drawn_in_error(2)
    b.auto_deal = True
    b.play_round([])
    b.play_round([(1, "banker", 100)])
    entries = _entries(b, positions)
    irregular = [e.seq for e in entries if e.kind == "irregularity"]
    assert len(irregular) == 2
    rounds = {d["round"]: d for d in replay(entries, **reading) if d["type"] == "round"}
    events_of_2 = [e["seq"] for e in rounds[2]["events"]]
    assert irregular[1] in events_of_2, (irregular, events_of_2)



def test_the_journal_s_unreadable_rank_is_the_wire_s() -> None:
    """The journal tells a misread's CARD_READ by the rank the protocol gives it (docs/protocol.md:
    0xFF, ``CARD_UNREADABLE``), restated on its side of the layers; the card-set audit uses the
    protocol's own. Were they to differ, replay would take a misread for a card."""
    from controller.audit.cardset import UNREADABLE
    from controller.journal.replay_fields import UNREADABLE_RANK
    from firmware_bridge.protocol import CARD_UNREADABLE

    assert UNREADABLE_RANK == UNREADABLE == CARD_UNREADABLE == 0xFF


@pytest.mark.parametrize("reading", [{"hold": True, "open_rounds": True}, {"round": 1}])
def test_a_held_card_decided_again_as_disclosed_brings_both_decisions_to_its_round(reading) -> None:
    """docs/irregularities.md, `card_disclosed`: the card held for the next hand "is decided again
    as disclosed ... Both decisions stay on record". The round that card opens (a simulated one,
    627a.13(d)) shows both, the one superseded and the one that gave it its first card; the second
    stayed with the shoe, so that `--round N` told a surveillance officer "held, undisclosed, for
    the next hand" and then a simulated round, with nothing between (a floorperson's shift review)."""
    b = Bench()
    b.open_and_cut()
    b.cards_drawn_in_error(1)
    b.auto_deal = True  # the simulated round the card opens is dealt at once
    b.op("card_disclosed", Role.FLOORPERSON)
    entries = _entries(b)
    decided = [(e.seq, e.payload["clause"]) for e in entries if e.kind == "irregularity"]
    assert [clause for _, clause in decided] == ["627a.13(a)", "627a.13(d)"], decided
    rounds = {d["round"]: d for d in replay(entries, **reading) if d["type"] == "round"}
    assert rounds[1]["kind"] == "simulated"
    events = [(e["seq"], e["kind"]) for e in rounds[1]["events"]]
    held = next(seq for seq, kind in events if kind == "held_card_used")
    assert [seq for seq, kind in events if kind == "irregularity"] == [seq for seq, _ in decided], events
    assert all(seq < held for seq, _ in decided)


@pytest.mark.parametrize("reading", [{"hold": True, "open_rounds": True}, {"round": 1}])
def test_the_round_shows_the_decisions_on_the_card_it_deals_not_on_its_twin(reading) -> None:
    """Two 7H (two decks) drawn in error at positions 2 and 3, both held (627a.13(a)); the floorperson
    says the second was disclosed: decided again, (d), it opens a simulated round 1. That round shows
    the decisions on the card at position 3, not the first 7H's: `held_card_used` names the card
    and not which of the two, and the first set aside was taken, and the round told the story of
    the other card (a review of this change); the other 7H's opens round 2, with its own."""
    from bench import stack_with

    from controller.rules.cards import parse_cards

    b = Bench(stack=stack_with(parse_cards("7H,7H,3S,2H,4D,4C,9S,AS,2S,3S,4S,5S,6S,8D")))
    b.open_and_cut()
    b.cards_drawn_in_error(2)
    b.auto_deal = True
    b.op("card_disclosed", Role.FLOORPERSON)
    b.play_round([(1, "banker", 100)])
    entries = _entries(b)
    decided = [(e.payload["position"], e.payload["clause"]) for e in entries if e.kind == "irregularity"]
    first, second = decided[0][0], decided[1][0]
    assert decided == [(first, "627a.13(a)"), (second, "627a.13(a)"), (second, "627a.13(d)")]
    rounds = {d["round"]: d for d in replay(entries, **reading) if d["type"] == "round"}
    for number, position, clauses in ((1, second, ["627a.13(a)", "627a.13(d)"]), (2, first, ["627a.13(a)"])):
        if number not in rounds:  # a reading of round 1 alone
            continue
        events = rounds[number]["events"]
        assert rounds[number]["cards"][0]["position"] == position
        shown = [(e["payload"]["position"], e["payload"]["clause"]) for e in events if e["kind"] == "irregularity"]
        assert shown == [(position, c) for c in clauses], (number, shown)
        kinds_in_order = [e["kind"] for e in events]
        assert kinds_in_order.index("held_card_used") > max(i for i, k in enumerate(kinds_in_order) if k == "irregularity")
