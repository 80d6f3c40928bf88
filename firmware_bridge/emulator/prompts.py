"""The words of the shoe's display the emulated dealer acts on (``dealer.py`` has the language).

``parse_prompt(text)``: the prompt's verb and its arguments; ``prompt_number(args, default)``: a
count or a place from them (a ``ValueError`` in words for one that is missing, not a number or
below 1); ``NEEDS_STACK``: the verbs that need the stack in hand; ``BUTTONS``: the verbs that
press a button of the shoe.
"""
from __future__ import annotations

from firmware_bridge.protocol import ButtonId

__all__ = ["BUTTONS", "NEEDS_STACK", "parse_prompt", "prompt_number"]

NEEDS_STACK = frozenset({"CUT", "COVER", "LOAD"})
BUTTONS = {"REVEAL": ButtonId.REVEAL, "CONFIRM": ButtonId.CONFIRM, "CANCEL": ButtonId.CANCEL,
           "CALL FLOOR": ButtonId.CALL_FLOOR}


def parse_prompt(text: str) -> tuple[str, list[str]]:
    """``"draw player"`` -> ``("DRAW", ["PLAYER"])``; ``"call floor"`` -> ``("CALL FLOOR", [])``;
    an empty text -> ``("", [])``."""
    words = text.upper().split()
    if not words:
        return "", []
    if words[:2] in (["CALL", "FLOOR"], ["CLOSE", "DOOR"]):
        return " ".join(words[:2]), words[2:]
    return words[0], words[1:]


def prompt_number(args: list[str], default: int | None = None) -> int:
    """The first argument as a whole number of at least 1 (``default`` when there is none)."""
    if not args:
        if default is None:
            raise ValueError("a number is missing")
        return default
    try:
        value = int(args[0])
    except ValueError:
        raise ValueError(f"not a number: {args[0]!r}") from None
    if value < 1:
        raise ValueError(f"must be at least 1: {value}")
    return value
