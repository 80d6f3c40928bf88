"""The live display of ``shoectl run`` on a terminal (a round's one-line text: ``result_line``).

``LiveDisplay(snapshot)`` takes the table's records and notices (``record``, ``notice``: cheap,
called on the table's thread) and keeps the rounds of the current shoe, and of the last dealt one
until the next has a round. A ``rich.live.Live`` redraws the screen (``display_screen.screen``)
a few times a second from its own thread, in place, line by line, never clearing the whole
screen; it follows the terminal's size. Other output (a warning, a log line) is printed above
it (``print_above``: standard error's lines, which ``shoectl run`` hands it). ``start()`` draws the
screen before the first record. ``close()`` draws the final screen and leaves it on the terminal: the last dealt shoe with
its roads, not the empty shoe that was being shuffled when the table stopped. On a standard
output that is not a terminal only the final screen is written, at ``close()``.
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import Any, TextIO

from rich.console import RenderableType
from rich.live import Live
from rich.text import Text

from controller.journal import kinds
from controller.table.display_screen import ShownShoe, screen
from controller.terminal import console_for
from shoectl_config.text import is_utf8, writes_utf8

REFRESH_PER_SECOND = 8
SPARE_LINES = 3
RECORD_KINDS = frozenset({"shoe_start", "round_result", "card", "fault", "resumed", "count_fault", "wager",
                          "round_start", "cut", "reconciliation"})


class LiveDisplay:
    """See the module docstring. ``snapshot()`` gives the table core's latest snapshot (a dict)."""

    def __init__(self, snapshot: Callable[[], dict[str, Any]], out: TextIO | None = None) -> None:
        self.snapshot = snapshot
        self.console = console_for(out or sys.stdout, highlight=False)  # sized by its terminal
        self.shoe: str | None = None
        self.rounds: list[dict[str, Any]] = []
        self.last_dealt = ShownShoe(None)
        self.notices: list[str] = []
        self.lock = threading.RLock()  # the first record starts the Live, which draws at once
        self.live: Live | None = None
        self._stderr_above = False  # (``start``)
        # drawn with line characters or ASCII: the terminal's locale, a file's encoding (set for the run)
        self._unicode = writes_utf8(self.console.encoding) if self.console.is_terminal else is_utf8(self.console.encoding)

    def record(self, r: Any) -> None:
        if r.kind not in RECORD_KINDS:
            return
        with self.lock:
            if r.kind == kinds.SHOE_START:
                if self.rounds:
                    self.last_dealt = ShownShoe(self.shoe, self.rounds, last=True)
                self.shoe, self.rounds = r.payload.get("shoe", r.shoe), []
            elif r.kind == kinds.ROUND_RESULT:
                self.shoe = r.shoe or self.shoe
                self.rounds = [*self.rounds, dict(r.payload)]
            self._start()

    def notice(self, n: Any) -> None:
        if n.level != "info":
            with self.lock:
                self.notices = [*self.notices[-9:], n.text]
                self._start()

    def shown(self) -> ShownShoe:
        """The shoe whose roads are on screen (see the module docstring)."""
        if not self.rounds and self.last_dealt.rounds:
            return self.last_dealt
        return ShownShoe(self.shoe, self.rounds)

    def render(self) -> RenderableType:
        """The screen for the console's size now, ``SPARE_LINES`` short of its height: the cursor's
        line, and the run's last line under the final screen, which then stays whole."""
        with self.lock:
            shown, notices = self.shown(), list(self.notices)
        width, height = self.console.size
        return screen(self.snapshot(), shown, notices, width=width, height=height - SPARE_LINES, unicode=self._unicode)

    def start(self, *, stderr_above: bool = False) -> None:
        """Draw the screen now and keep it drawn: the table is there before its first record (a
        closed ``--manual`` table showed a blank terminal: a review of terminals). ``stderr_above``:
        standard error is the screen's terminal, its lines go above the screen (the caller decides,
        as it diverts its own warnings there: ``print_above``)."""
        with self.lock:
            self._stderr_above = stderr_above
            self._start()

    def print_above(self, text: str) -> bool:
        """Print ``text`` (a warning, a log line; ANSI colours kept) above the screen, where the
        next redraw leaves it: True when taken, False when no screen is drawn on a terminal."""
        with self.lock:
            drawn = self.live is not None and self.console.is_terminal
        if not drawn:
            return False
        # Not under ``self.lock``: rich's refresh thread holds its Live's lock while it asks
        # ``render`` for the screen (which takes ``self.lock``), and printing takes the Live's lock:
        # held both ways, a warning froze the table (a review of the day's changes).
        self.console.print(Text.from_ansi(text.rstrip("\n")), highlight=False, soft_wrap=True)
        return True

    def _start(self) -> None:
        if self.live is None:
            # A line on standard error goes above the screen when it is the same terminal; to
            # its own file otherwise (2>run.log, 2>/dev/pts/5).
            self.live = Live(console=self.console, get_renderable=self.render, auto_refresh=True,
                             refresh_per_second=REFRESH_PER_SECOND, vertical_overflow="crop",
                             redirect_stderr=self._stderr_above)
            self.live.start()

    def close(self) -> None:
        """Draw the final screen, leave it on the terminal, and stop redrawing."""
        with self.lock:
            live, self.live = self.live, None
        if live is None:
            self.console.print(self.render())
        else:
            live.stop()
            if not self.console.is_terminal:  # rich ends a final screen written to a file without its newline:
                self.console.line()           # the run's last line ran into it (a review of terminals)
