"""Operator ids: what one may be (``ID_RULE``: ``is_operator_id``) and which ids name no person
(``reserved_id``: the automated dealer's and floorperson's)."""
from __future__ import annotations

import re

from controller.roles import AUTOMATED_DEALER, AUTOMATED_FLOORPERSON

__all__ = ["ID_RULE", "is_operator_id", "reserved_id"]

_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
ID_RULE = "1-32 characters: lowercase letters, digits, '_' and '-', starting with a letter or digit"


def is_operator_id(value: object) -> bool:
    """Whether ``value`` is a valid operator id (``ID_RULE``), known or not."""
    return isinstance(value, str) and _ID_RE.fullmatch(value) is not None


def reserved_id(value: object) -> str | None:
    """Why ``value`` may not be a person's id, or None: the automated dealer's and floorperson's
    ids name no person (a person under one was journaled as the machine, and dealt at an automated
    table where every other dealer is refused: a review of roles)."""
    if value in (AUTOMATED_DEALER, AUTOMATED_FLOORPERSON):
        return f"{value} is the id of the automated {'dealer' if value == AUTOMATED_DEALER else 'floorperson'}, no person's"
    return None
