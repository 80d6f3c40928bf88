"""Operator roles, ordered: a higher role may do what a lower one may.

Its own module at the bottom of the controller, so that the operators file, the control socket
and the table core share one definition without importing each other.
"""
from __future__ import annotations

from enum import IntEnum

# The operator ids the automated dealer and floorperson act under (``controller.table.autodealer``);
# the table's rules of who deals name the automated dealer too (``controller.table.commands``).
AUTOMATED_DEALER, AUTOMATED_FLOORPERSON = "auto-dealer", "auto-floor"


class Role(IntEnum):
    """Operator roles, ordered: a higher role may do what a lower one may."""

    DEALER = 1
    FLOORPERSON = 2
    SUPERVISOR = 3

    @classmethod
    def parse(cls, text: str) -> Role:
        try:
            return cls[str(text).upper()]
        except KeyError:
            raise ValueError(f"unknown role {text!r} (dealer, floorperson, supervisor)") from None

    @property
    def label(self) -> str:
        """The role as people say it: ``dealer``, ``floorperson``, ``supervisor``."""
        return self.name.lower()
