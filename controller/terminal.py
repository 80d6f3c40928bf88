"""A rich ``Console`` for a person's terminal: ``console_for(file, **options)``.

On a terminal the terminal's own size rules: COLUMNS or LINES left in the environment (a shell
profile's, a wider window's) drew every line of the live screen and the progress bar wider than
the terminal, and each redraw left the wrapped halves behind (a review of environments).
Elsewhere (a file, a pipe) they choose the width, as rich reads them. Nothing is imported from
rich until a console is made: most commands never draw one.
"""
from __future__ import annotations

import os
from typing import Any, TextIO

__all__ = ["console_for"]

_SIZE_VARIABLES = ("COLUMNS", "LINES")


def console_for(file: TextIO, **options: Any) -> Any:
    """A ``rich.console.Console`` writing to ``file`` (see the module docstring)."""
    from rich.console import Console  # noqa: PLC0415 - rich's import costs the commands that draw nothing

    environ = {k: v for k, v in os.environ.items() if k not in _SIZE_VARIABLES} if file.isatty() else None
    return Console(file=file, _environ=environ, **options)
