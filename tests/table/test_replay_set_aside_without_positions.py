"""docs/protocol.md 9.18: a CARD_READ's position 0 is "unknown (a shoe that does not sense
positions: the host then checks nothing by position)". `journal replay` matched the cards set aside
between rounds (627a.13(a)) with the card that leaves the shoe by position: with every position 0,
the next card out "was" the set-aside card, and the irregularity that set the second card aside
stayed with the shoe instead of the round it opens (a review;
tests/table/test_replay_set_aside_cards.py holds the same with positions)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from bench import Bench

from controller.journal.replay import replay


def _entries_without_positions(b: Bench) -> list:
    def unknown(payload: dict) -> dict:
        return {**payload, "position": 0} if payload.get("position") is not None else payload
    return [SimpleNamespace(seq=i, kind=r.kind, payload=unknown(r.payload), shoe_id=r.shoe, round_no=r.round,
                            operator=None) for i, r in enumerate(b.records, 1)]


@pytest.mark.parametrize("reading", [{"hold": True, "open_rounds": True}, {"round": 2}])
def test_the_second_held_cards_irregularity_goes_with_its_round_from_a_shoe_without_positions(reading) -> None:
    b = Bench()
    b.open_and_cut()
    b.cards_drawn_in_error(2)
    b.auto_deal = True
    b.play_round([])
    b.play_round([(1, "banker", 100)])
    entries = _entries_without_positions(b)
    irregular = [e.seq for e in entries if e.kind == "irregularity"]
    assert len(irregular) == 2
    rounds = {d["round"]: d for d in replay(entries, **reading) if d["type"] == "round"}
    events_of_2 = [e["seq"] for e in rounds[2]["events"]]
    assert irregular[1] in events_of_2, (irregular, events_of_2)
