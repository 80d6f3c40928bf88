"""A test journal as ``shoectl run`` leaves one: its head recorded in the anchors file beside it."""
from __future__ import annotations

from controller.journal import Journal
from controller.journal.anchors import AnchorFile


def witnessed(journal: Journal) -> None:
    """Record ``journal``'s head beside it (``PATH.anchors``), as ``shoectl run`` does at every shoe's
    end and at its stop: the readers check the journal against it, and say so when a journal has
    no anchor (a removed tail, or a rewrite with recomputed hashes, would not show)."""
    AnchorFile.beside(journal.path).record(journal.take_anchor())
