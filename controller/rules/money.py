"""Money as a person reads it. Amounts are kept, journaled and typed by operators in integer minor
units (cents); every screen and report shows them in major units with the currency's decimals:
``money_text(2500) == "25.00"``, ``money_text(-125050, signed=True) == "-1,250.50"``."""
from __future__ import annotations

from decimal import Decimal

CURRENCY_DECIMALS = 2  # minor units per major unit: 10**2 (cents); no Rules Submission names another


def money_text(minor: int, *, signed: bool = False, decimals: int = CURRENCY_DECIMALS) -> str:
    """``minor`` units in major units with ``decimals`` places and thousands separators; with
    ``signed``, a ``+`` before gains too."""
    value = Decimal(int(minor)).scaleb(-decimals)
    return f"{value:{'+' if signed else ''},.{decimals}f}"
