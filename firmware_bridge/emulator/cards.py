"""Cards as the devices see them, and the dealer's stack handling, on plain lists.

The emulator does not import the controller (``controller.rules`` is the host's); it has its own
tiny card type in the protocol's terms: ``DeviceCard(rank, suit)`` with rank 1 (ace)..13 (king)
and suit 0 clubs, 1 diamonds, 2 hearts, 3 spades (``Suit``). ``str(card)`` is the controller's
card text (``"9H"``, ``"10S"``, ``"AC"``).

A *stack* is a list of items, index 0 the top (the next item out of the shoe). An item is a
``DeviceCard`` or ``COVER`` (a cover/cut card, which is not a playing card).

Contracts:
- ``standard_stack(decks)``: ``decks`` fresh decks in a fixed order (no randomness).
- ``cut_stack(stack, n)``: 681a.5(c)-(d): the cover card goes in ``n`` items from the top, then the
  items above it and the cover card go to the bottom: ``stack[n:] + stack[:n] + [COVER]``.
  ``1 <= n < len(stack)`` (a physical cut; the regulation's 10-card minimum is the host's rule).
- ``insert_second_cover(stack, n)``: 681a.5(d): a cover card with exactly ``n`` playing cards below
  it (``1 <= n <=`` the playing cards in the stack).
- ``card_count(stack)``: playing cards in a stack (cover cards excluded).
Bad arguments raise ``ValueError``; inputs are never modified.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Final, NamedTuple

__all__ = ["COVER", "CoverMarker", "DeviceCard", "Item", "card_count", "cut_stack",
           "insert_second_cover", "parse_device_card", "standard_stack"]

_RANK_TEXT = {1: "A", 11: "J", 12: "Q", 13: "K"}
_SUIT_TEXT = "CDHS"


class DeviceCard(NamedTuple):
    """A playing card in protocol terms: ``rank`` 1..13, ``suit`` 0..3 (clubs, diamonds, hearts,
    spades)."""

    rank: int
    suit: int

    def __str__(self) -> str:
        return _RANK_TEXT.get(self.rank, str(self.rank)) + _SUIT_TEXT[self.suit]


class CoverMarker:
    """The cover (cut) card. One shared instance, ``COVER``."""

    _instance: CoverMarker | None = None

    def __new__(cls) -> CoverMarker:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "COVER"

    __str__ = __repr__


COVER: Final = CoverMarker()
Item = DeviceCard | CoverMarker


def parse_device_card(text: str) -> DeviceCard:
    """``"9H"`` / ``"10s"`` / ``"AC"`` -> ``DeviceCard`` (for tests and scripted stacks)."""
    raw = text.strip().upper()
    ranks = {"A": 1, "J": 11, "Q": 12, "K": 13, "T": 10, **{str(n): n for n in range(2, 11)}}
    if len(raw) < 2 or raw[:-1] not in ranks or raw[-1] not in _SUIT_TEXT:
        raise ValueError(f"not a card: {text!r}")
    return DeviceCard(ranks[raw[:-1]], _SUIT_TEXT.index(raw[-1]))


def standard_stack(decks: int) -> list[DeviceCard]:
    """``decks`` new decks, each ace to king of clubs, diamonds, hearts, spades."""
    if decks < 1:
        raise ValueError(f"decks must be at least 1, got {decks}")
    deck = [DeviceCard(rank, suit) for suit in range(4) for rank in range(1, 14)]
    return deck * decks


def card_count(stack: Sequence[Item]) -> int:
    return sum(1 for item in stack if item is not COVER)


def cut_stack(stack: Sequence[Item], n: int) -> list[Item]:
    if not 1 <= n < len(stack):
        raise ValueError(f"cannot cut a {len(stack)}-card stack {n} cards from the top")
    return [*stack[n:], *stack[:n], COVER]


def insert_second_cover(stack: Sequence[Item], n: int) -> list[Item]:
    total = card_count(stack)
    if not 1 <= n <= total:
        raise ValueError(f"cannot place a cover card {n} cards above the bottom of {total} cards")
    below = 0
    for index in range(len(stack) - 1, -1, -1):
        if stack[index] is not COVER:
            below += 1
            if below == n:
                return [*stack[:index], COVER, *stack[index:]]
    raise AssertionError("unreachable")  # pragma: no cover
