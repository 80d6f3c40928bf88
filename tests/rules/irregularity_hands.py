"""The Rules Submissions, first deals and stray card of the 627a.13 irregularity tests
(tests/rules/test_card_drawn_in_error.py, test_unauthorized_third_card.py,
test_insufficient_cards.py, test_irregularity_decisions.py, test_irregularity_properties.py).

Hands are written in deal order P1 B1 P2 B2; each one's totals are worked out in its comment.
"""
from __future__ import annotations

from controller.rules.cards import parse_card, parse_cards
from controller.rules.submission import load_preset, parse_submission

DISCARD = load_preset("minibaccarat")  # the default: unauthorized_third_card = "discard"
SIMULATED = parse_submission(
    {"submission": {"game": "punto-banco"}, "irregularities": {"unauthorized_third_card": "simulated-round"}},
    "test:simulated-round",
)
EZ_SIMULATED = parse_submission(
    {"submission": {"game": "ez-baccarat"}, "irregularities": {"unauthorized_third_card": "simulated-round"}},
    "test:ez-simulated-round",
)

# Player 4H+3S = 7 stands; Banker 2D+2C = 4: the Player stood, so the Banker draws on 0-5.
P7_B4 = parse_cards("4H 2D 3S 2C")
# Player KH+6S = 6 stands; Banker 3D+3C = 6 stays.
P6_B6 = parse_cards("KH 3D 6S 3C")
# Player 5H+3S = 8, a Natural; Banker 2D+KC = 2 would draw on 0-5 but 627a.10(a) stops all draws.
P8_NATURAL_B2 = parse_cards("5H 2D 3S KC")
# Player AH+2S = 3 would draw; Banker 9D+KC = 9, a Natural: no more cards.
P3_B9_NATURAL = parse_cards("AH 9D 2S KC")
# Player 7H+KS = 7 stands; Banker 5D+QC = 5 draws.
P7_B5 = parse_cards("7H 5D KS QC")
# Player 6H+JS = 6 stands; Banker 4D+3C = 7 stays.
P6_B7 = parse_cards("6H 4D JS 3C")
# Player 2H+3S = 5: entitled to a third card (627a.10(b)); Banker 6D+KC = 6.
P5_B6 = parse_cards("2H 6D 3S KC")

STRAY = parse_card("9S")
