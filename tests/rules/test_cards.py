"""Cards: parsing, canonical text, compositions."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.rules.cards import ALL_CARDS, Card, Composition, card, format_cards, parse_card, parse_cards
from controller.rules.errors import CardError, CompositionError


@pytest.mark.parametrize(
    "text, rank, suit",
    [("AS", 1, "S"), ("as", 1, "S"), ("10H", 10, "H"), ("TH", 10, "H"), ("th", 10, "H"), ("KD", 13, "D"),
     ("qc", 12, "C"), ("J♠", 11, "S"), (" 9h ", 9, "H"), ("2♦", 2, "D")],
)
def test_parse_card_accepts_usual_spellings(text: str, rank: int, suit: str) -> None:
    c = parse_card(text)
    assert (c.rank, c.suit) == (rank, suit)
    assert c is card(rank, suit)  # interned


@pytest.mark.parametrize("text", ["", "A", "1S", "11H", "ZS", "AX", "10", "AS,", "A S", "0D", "KK"])
def test_parse_card_rejects_garbage_with_one_line(text: str) -> None:
    with pytest.raises(CardError) as exc:
        parse_card(text)
    assert "\n" not in str(exc.value)
    assert "unknown card" in str(exc.value)


def test_canonical_text_round_trips() -> None:
    assert [str(c) for c in parse_cards("AS,10h TH,kd")] == ["AS", "10H", "10H", "KD"]
    for c in ALL_CARDS:
        assert parse_card(str(c)) is c
    assert format_cards(parse_cards("AS 2C")) == "AS,2C"


def test_card_codes_are_dense_and_unique() -> None:
    assert sorted(c.code for c in ALL_CARDS) == list(range(52))
    assert Card(1, "D").is_red and not Card(1, "S").is_red


@pytest.mark.parametrize("decks", [1, 6, 8])
def test_standard_composition(decks: int) -> None:
    comp = Composition.standard(decks)
    assert comp.total == 52 * decks == len(comp.cards())
    assert comp.rank_counts()[1:] == [4 * decks] * 13


@pytest.mark.parametrize("decks", [0, -1, 13, 2.5, True, "8"])
def test_bad_deck_counts_are_refused(decks: object) -> None:
    with pytest.raises(CompositionError):
        Composition.standard(decks)  # type: ignore[arg-type]


def test_removing_more_copies_than_the_shoe_holds_is_an_error() -> None:
    one = Composition.standard(1)
    smaller = one.remove(parse_cards("AS,KD"))
    assert smaller.total == 50 and smaller.count(card(1, "S")) == 0
    assert one.total == 52  # immutable: remove returns a new composition
    with pytest.raises(CompositionError, match="AS 2 times, but"):
        one.remove(parse_cards("AS,AS"))


@given(st.text(max_size=8))
def test_parse_card_never_raises_anything_but_card_error(text: str) -> None:
    try:
        c = parse_card(text)
    except CardError:
        return
    assert isinstance(c, Card)
