"""``EmulatedShufflerShoe``: a dealing shoe with a built-in batch shuffler (profile kind
``shuffler-shoe``, e.g. an automatic reshuffling shoe, 681a.5(h)).

It is an ``EmulatedShuffler`` whose attached shoe is itself: SHUFFLE shuffles and counts,
DELIVER(SHOE) loads its own shoe (SHOE_LOADED follows), and the shoe part deals as an
``EmulatedShoe``. While it shuffles or delivers it reports SHUFFLING / DELIVERING; with a shuffled
stack waiting, SHUFFLED; otherwise LOADED or IDLE.

An automatic reshuffling shoe with a cover card sensor (capabilities AUTO_RESHUFFLE and
COVER_CARD_SENSOR) ends each shoe itself: a stack it loads without a cover card gets one
``AUTO_COVER_FROM_BOTTOM`` cards above the bottom, so COVER_CARD tells the host to complete the
round and reshuffle (681a.7(d)) before the shoe runs empty. Without the sensor the cover card
would leave unseen, so none is placed: that shoe is dealt until SHOE_EMPTY.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from firmware_bridge.protocol import Capability

from .cards import COVER, Item
from .shoe import EmulatedShoe
from .shuffler import EmulatedShuffler

__all__ = ["AUTO_COVER_FROM_BOTTOM", "EmulatedShufflerShoe"]

AUTO_COVER_FROM_BOTTOM = 16  # cards left below the device's own cover card (681a.5(d) asks at least 10)


class EmulatedShufflerShoe(EmulatedShuffler, EmulatedShoe):
    """Shuffler and shoe in one device (one protocol session, one event counter)."""

    def __init__(self, profile: Any, **kwargs: Any) -> None:
        super().__init__(profile, **kwargs)
        self.attached_shoe = self

    def load(self, items: Iterable[Item]) -> int:
        stack = list(items)
        ends_itself = Capability.AUTO_RESHUFFLE | Capability.COVER_CARD_SENSOR
        if (self.identity.capabilities & ends_itself == ends_itself and COVER not in stack
                and len(stack) > AUTO_COVER_FROM_BOTTOM):
            stack.insert(len(stack) - AUTO_COVER_FROM_BOTTOM, COVER)
        return super().load(stack)
