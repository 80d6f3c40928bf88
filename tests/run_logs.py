"""What a normal ``shoectl run`` must not log (issue 12): ``loud(stderr, log_lines)`` lists the
lines above ``info`` and any traceback, on standard error (the readable lines) and in the JSON log
beside the journal (``LogFile``). The edge monitor's surveillance notice is a warning by design
(docs/edge-monitor.md: a wager turned in the player's favour is for a person to look at, not a
fault), so it is not counted."""
from __future__ import annotations

import json
import re
from pathlib import Path

from controller.table.edge_monitor import ALERT_EVENT

LOUD = ("warning", "error", "critical")
_CONSOLE_LOUD = re.compile(r"\[(warning|error|critical)\s*\]")


class LogFile:
    """The JSON log beside a journal (``<journal>.log``), read from where the last read ended."""

    def __init__(self, journal: Path) -> None:
        self.path = journal.with_suffix(".log")
        self.offset = 0

    def new_lines(self) -> list[dict]:
        text = self.path.read_text(encoding="utf-8")[self.offset:]
        self.offset += len(text)
        return [json.loads(line) for line in text.splitlines()]


def loud(stderr: str, log_lines: list[dict]) -> list[str]:
    """The lines a normal run must not write: above info, or a traceback."""
    found = [line for line in stderr.splitlines() if _CONSOLE_LOUD.search(line) and ALERT_EVENT not in line]
    found += ["a traceback on standard error"] if "Traceback" in stderr else []
    found += [json.dumps(d) for d in log_lines
              if (d["level"] in LOUD and d.get("event") != ALERT_EVENT) or "exception" in d]
    return found
