"""The Rules Submission's terms a player reads beside the paytable, in words: the scoreboard's
``rules_terms`` (``controller.scoreboard.state``), which the page prints as they are.

``terms(rules, words) -> [{"key", "label", "text"}]``, from the board's ``rules`` (None: none):

- ``commission`` (on the Banker wager: its label says so when the Player wager has one too) and
  ``player_commission`` (21 Baccarat's ``player_rate``): the record's rate as a percentage of
  exactly its digits (``0.051234`` is ``5.1234%``, never a float's ``5.12%``), a zero rate
  "No commission";
- ``three_card_seven``: EZ Baccarat's Banker wager pushes on a winning three-card 7;
- ``house_money_either_pair`` / ``house_money_both_pairs``: Midibaccarat's House Money odds.

A money review found the page saying "Player 1:1 ... No commission" at a 21 Baccarat table that
took 3 % of every winning Player wager, nothing of EZ Baccarat's push, nor House Money's odds.
"""
from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

__all__ = ["percent_text", "terms"]


def percent_text(rate: Any) -> str | None:
    """``"0.05"`` -> ``"5%"``, ``"0.051234"`` -> ``"5.1234%"``; None for what is no rate."""
    try:
        value = Decimal(str(rate))
    except InvalidOperation:
        return None
    if not value.is_finite() or value < 0:
        return None
    return f"{(value * 100).normalize():f}%"


def terms(rules: Mapping[str, Any] | None, words: Mapping[str, str]) -> list[dict[str, str]]:
    """The terms of ``rules`` in ``words`` (module docstring), in the order the page shows them."""
    if not rules:
        return []
    out: list[dict[str, str]] = []
    banker, player = rules.get("commission"), rules.get("player_commission")
    for key, rate, label in (("commission", banker, "banker_commission" if player is not None else "commission"),
                             ("player_commission", player, "player_commission")):
        if rate is None:
            continue
        shown = percent_text(rate)
        out.append({"key": key, "label": words[label],
                    "text": words["no_commission"] if shown == "0%" else shown or str(rate)})
    if rules.get("game") == "ez-baccarat":
        out.append({"key": "three_card_seven", "label": words["banker"], "text": words["three_card_seven_push"]})
    house_money = rules.get("house_money") or {}
    for odds in ("either_pair", "both_pairs"):
        if house_money.get(odds):
            out.append({"key": f"house_money_{odds}", "label": words[f"house_money_{odds}"],
                        "text": str(house_money[odds])})
    return out
