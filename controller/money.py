"""Money as a person reads it: ``money_text`` and ``CURRENCY_DECIMALS``, owned by the rules core
(``controller.rules.money``, where settlements and their refusals are worded too) and imported
from here by the layers above it."""
from __future__ import annotations

from controller.rules.money import CURRENCY_DECIMALS, money_text

__all__ = ["CURRENCY_DECIMALS", "money_text"]
