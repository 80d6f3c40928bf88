"""``LineQuality``: whether a device's line has turned noisy, from the link's own counters.

The link mends a noisy line by itself (retransmissions, RESEND_EVENTS), so nothing fails and
nobody is told, while the table slows down and a cable or a connector wears out. Once per
``WINDOW_S`` the supervisor hands the counters to ``observe``; a window is noisy when at least
``NOISY_SHARE`` of its commands (``MIN_COMMANDS`` of them or more) had to be sent again, or when
``NOISY_FRAMES`` frames or more arrived damaged. The first noisy window is said once, as a warning
with its figures ("may want a look": controller/logconfig.py): a noisy line when frames arrived
damaged, replies late or lost when none did (a slow device or a busy computer is likelier then than
a cable: a long-run review saw the cable blamed while an export loaded the computer); the first
clean window after it is said at info. Sans-I/O: the caller gives the time and logs what is
returned.

``unanswered_sync``: what to check when a connect's first command got no reply, in an installer's
words: a silent line (the device off, another port, the cable) or one that brings only bytes that
make no frame (line settings that differ from the device's, a device that speaks another protocol).
"""
from __future__ import annotations

from typing import Any

__all__ = ["LineQuality", "MIN_COMMANDS", "NOISY_FRAMES", "NOISY_SHARE", "WINDOW_S", "unanswered_sync"]

WINDOW_S = 30.0
MIN_COMMANDS = 20
NOISY_SHARE = 0.05
NOISY_FRAMES = 20


def unanswered_sync(attempts: int, bytes_heard: int, line_settings: str | None) -> str:
    """Why a connect's SYNC, sent ``attempts`` times, got no reply, and what to check, given the
    bytes the line brought meanwhile and its settings (``38400 8E1``, or ``None``: not a serial line)."""
    tries = f"SYNC, sent {attempts} time(s)"
    if not bytes_heard:
        port = "this port" if line_settings else "this connection"
        return f"no answer ({tries}): check that the device is on and cabled to {port}, and that {port} is the device's"
    line = f"the device's line settings match the profile's ({line_settings}) and " if line_settings else ""
    return (f"{bytes_heard:,} byte(s) came but no frame of the shoectl protocol ({tries}): check that "
            f"{line}the device on this port speaks the shoectl protocol")


class LineQuality:
    """The line's windows (see the module docstring). ``noisy``: the last window said was noisy."""

    def __init__(self, now: float) -> None:
        self._start = now
        self._counts = (0, 0, 0)
        self.noisy = False

    def due(self, now: float) -> bool:
        """Whether the window is over at ``now``: ``observe`` then judges it (the supervisor asks
        this at every turn of its loop, so it takes no lock and reads no counter)."""
        return now - self._start >= WINDOW_S

    def check(self, now: float, stats: dict[str, int], lock: Any, log: Any) -> None:
        """Say on ``log`` when the line turns noisy, and when it is clean again, from the link's
        counters ``stats`` (read under ``lock``, and only once a window is over: the common case
        takes no lock on the acknowledgements' path)."""
        if not self.due(now):
            return
        with lock:
            # a command sent again although its reply came within the protocol's 100 ms is not the line's doing
            said = self.observe(now, stats["commands"], stats["retransmissions"] - stats["resent_in_time"],
                                stats["frames_dropped"])
        if said is not None:
            level, event, figures = said
            getattr(log, level)(event, **figures)

    def observe(self, now: float, commands: int, sent_again: int, damaged_frames: int
                ) -> tuple[str, str, dict[str, Any]] | None:
        """The link's counters since it was made, at ``now``. Returns what to log when a window
        ends and the line changed: ``(level, event, figures)``, else None."""
        if not self.due(now):
            return None
        before = self._counts
        window = (commands - before[0], sent_again - before[1], damaged_frames - before[2])
        # not "sent_again", which `ctl status` gives with those whose reply came in time (a lab's review)
        figures = {"seconds": round(now - self._start), "commands": window[0], "sent_again_for_the_line": window[1],
                   "damaged_frames": window[2]}
        self._start, self._counts = now, (commands, sent_again, damaged_frames)
        noisy = ((window[0] >= MIN_COMMANDS and window[1] >= NOISY_SHARE * window[0])
                 or window[2] >= NOISY_FRAMES)
        if noisy == self.noisy:
            return None
        self.noisy = noisy
        if noisy and window[2] == 0:
            return "warning", ("replies late or lost: commands sent again after no reply, no frame damaged (a device "
                               "slow to answer, this computer too busy, or a line that loses whole frames)"), figures
        if noisy:
            return "warning", "line noisy: check the device's cable and connectors", figures
        return "info", "line clean again", figures
