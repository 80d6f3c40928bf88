"""``EmulatedShufflerShoe``: a dealing shoe with a built-in batch shuffler (profile kind
``shuffler-shoe``, e.g. an automatic reshuffling shoe, 681a.5(h)).

It is an ``EmulatedShuffler`` whose attached shoe is itself: SHUFFLE shuffles and counts,
DELIVER(SHOE) loads its own shoe (SHOE_LOADED follows), and the shoe part deals as an
``EmulatedShoe``. While it shuffles or delivers it reports SHUFFLING / DELIVERING; with a shuffled
stack waiting, SHUFFLED; otherwise LOADED or IDLE.
"""
from __future__ import annotations

from typing import Any

from .shoe import EmulatedShoe
from .shuffler import EmulatedShuffler

__all__ = ["EmulatedShufflerShoe"]


class EmulatedShufflerShoe(EmulatedShuffler, EmulatedShoe):
    """Shuffler and shoe in one device (one protocol session, one event counter)."""

    def __init__(self, profile: Any, **kwargs: Any) -> None:
        super().__init__(profile, **kwargs)
        self.attached_shoe = self
