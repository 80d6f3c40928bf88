"""Progress of long work, for a person at a terminal.

``progress_bar(description, total)`` is a context manager that yields ``update(done)``: while the
work runs, a bar on standard error (what, how far, how long is left), gone when the work ends;
nothing at all when standard error is not a terminal (piped, redirected, CI), so output and logs
stay clean, or when ``description`` is None. ``update`` is cheap enough to call for every step: the bar is told only about every
five-hundredth of ``total`` (and at the end), and redraws itself a few times a second.
``total`` None: a spinner without a bar.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from controller.terminal import console_for
from shoectl_config.text import writes_utf8

STEPS = 500  # the bar moves at most this many times


def on_terminal() -> bool:
    """Whether standard error is a terminal where a bar may be drawn: one that redraws (not
    TERM=dumb) and takes UTF-8 (the bar's spinner and blocks: on a Latin-1 terminal each redraw
    was left on screen as a new line, a review of terminals)."""
    return sys.stderr.isatty() and os.environ.get("TERM") != "dumb" and writes_utf8(getattr(sys.stderr, "encoding", None))


@contextmanager
def progress_bar(description: str | None, total: int | None) -> Iterator[Callable[[int], None]]:
    """See the module docstring."""
    if description is None or not on_terminal():
        yield lambda done: None
        return
    # Imported only to draw: rich costs every command that may show a bar about 20 ms to import,
    # and most never draw one (their standard error is not a terminal).
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeRemainingColumn

    columns = [SpinnerColumn(), TextColumn("{task.description}")]
    if total:
        columns += [BarColumn(), MofNCompleteColumn(), TextColumn("eta"), TimeRemainingColumn()]
    # Prints to standard output go above the bar when it is the same terminal; into a pipe, untouched.
    with Progress(*columns, console=console_for(sys.stderr), transient=True, refresh_per_second=8,
                  redirect_stdout=sys.stdout.isatty()) as bar:
        task = bar.add_task(description, total=total or None)
        bar.refresh()  # shown at once, not at the first tick
        step = max(1, (total or 0) // STEPS)
        shown = 0

        def update(done: int) -> None:
            nonlocal shown
            if done - shown >= step or (total and done >= total):
                shown = done
                bar.update(task, completed=done)

        yield update
