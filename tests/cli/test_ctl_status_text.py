"""``shoectl ctl status`` in words: nothing shown that the table does not have."""
from __future__ import annotations

from controller.cli.cmd_ctl import status_text


def test_a_shoe_being_prepared_is_not_said_to_have_no_cards_left() -> None:
    """Between the shuffle and the load the shoe has an id but no count: the reply's
    ``cards_remaining`` is null, which the text printed as "remaining 0", as if the shoe were
    empty."""
    preparing = status_text({"table": "T1", "state": "cutting", "shoe": "T1-S0002", "round": 0,
                             "cards_dealt": 0, "cards_remaining": None})
    assert "cards dealt 0  not loaded in the shoe yet" in preparing and "remaining 0" not in preparing
    dealing = status_text({"table": "T1", "state": "betting", "shoe": "T1-S0002", "round": 4,
                           "cards_dealt": 21, "cards_remaining": 0, "cover_reached": True})
    assert "cards dealt 21  remaining 0  (cover card reached)" in dealing
    assert "no shoe in play" in status_text({"table": "T1", "state": "closed"})


def test_a_reshuffle_ordered_for_after_the_round_is_said() -> None:
    text = status_text({"table": "T1", "state": "squeeze", "shoe": "T1-S0002", "round": 4, "cards_dealt": 21,
                        "cards_remaining": 395, "reshuffle_ordered": True})
    assert "remaining 395  (a reshuffle follows this round)" in text
