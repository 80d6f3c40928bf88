"""Helpers shared by the command modules: submission resolution, JSON output, game names."""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from controller.errors import UsageError
from controller.rules.model import Game
from controller.rules.submission import resolve_submission

GAME_PRESET = {Game.PUNTO_BANCO: "minibaccarat", Game.EZ_BACCARAT: "ez-baccarat", Game.TWENTYONE: "21-baccarat"}
GAME_CHOICES = [g.value for g in Game]


def submission_for(game: str | None, spec: str | None) -> Any:
    """The Rules Submission from ``--submission`` (a file or preset name), else the preset for
    ``--game``, else the default. ``--game`` and ``--submission`` together must agree."""
    if spec is None and game is not None:
        spec = GAME_PRESET[Game(game)]
    sub = resolve_submission(spec)
    if game is not None and sub.game is not Game(game):
        raise UsageError(f"--game {game} does not match the submission {sub.source}, which plays {sub.game.value}")
    return sub


def whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum``."""
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if n < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {n}")
        return n
    return parse


positive_int = whole_number(1)
non_negative_int = whole_number(0)


def print_json(obj: Any, *, stream=None) -> None:
    out = stream or sys.stdout
    out.write(json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n")


def percent(x: float, places: int = 4) -> str:
    return f"{x * 100:.{places}f}%"
