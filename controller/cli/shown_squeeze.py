"""The squeeze a console last showed, so that its ``reveal`` and ``relinquish`` name it.

``ShownSqueeze``: ``see(event)`` and ``see_status(status)`` as the table's event stream gives them;
``filled(command, args)`` adds ``hand=`` (and, for ``relinquish``, ``seat=``) where the person typed
none: a command meant for a hand the table has moved past is then refused, not carried out on the
next hand (a review of races: two consoles' ``reveal`` for the Player's Hand turned the Banker's
over). docs/control.md.
"""
from __future__ import annotations

import re

from controller.journal import kinds

__all__ = ["ShownSqueeze"]

_SQUEEZE_PROMPT = re.compile(r"SQUEEZE (PLAYER|BANKER) SEAT (\d+)")  # squeeze.show_squeeze's prompt


class ShownSqueeze:
    """The squeeze the console last showed (the hand, and the seat holding it), from the table's
    events: ``reveal`` or ``relinquish`` typed without ``hand=`` (and ``seat=``) is sent for it, so
    that one meant for a hand the table has moved past (another console's command came first) is
    refused, not carried out on the next hand (a review of races)."""

    COMMANDS = ("reveal", "relinquish")

    def __init__(self) -> None:
        self.hand: str | None = None
        self.seat: int | None = None

    def see(self, ev: dict) -> None:
        """One event of the table's stream. A fault does not end the squeeze: the table resumes it
        as it was (a review: forgetting it there sent the next commands without their hand)."""
        kind = ev.get("type")
        if kind == kinds.SQUEEZE:
            self.hand, self.seat = ev.get("hand"), ev.get("seat")
        elif kind == kinds.RELINQUISHED and ev.get("hand") == self.hand:
            self.seat = ev.get("to")
        elif kind in (kinds.REVEALED, kinds.ROUND_RESULT, kinds.SHOE_START):
            self.hand = self.seat = None

    def see_status(self, status: dict) -> None:
        """The table's status, which a stream (re)started begins with: a console that joins during a
        squeeze learns it from the prompt (a review: it sent `reveal` without its hand)."""
        prompt = status.get("prompt")
        shown = _SQUEEZE_PROMPT.fullmatch(prompt) if isinstance(prompt, str) else None  # (a fault may hold it)
        self.hand, self.seat = (shown[1].lower(), int(shown[2])) if shown else (None, None)

    def filled(self, command: str, args: dict) -> dict:
        """``args`` with the shown hand (and holder, for a relinquishment) where not typed."""
        if command not in self.COMMANDS or self.hand is None or "hand" in args:
            return args
        shown = {"hand": self.hand}
        if command == "relinquish" and self.seat is not None and "seat" not in args:
            shown["seat"] = self.seat
        return {**args, **shown}
