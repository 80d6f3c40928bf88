"""The edge monitor's worker side: what its worker (a process of its own, or a thread) runs.

A worker process is started with ``spawn`` and imports only this module and what it needs to
count (the rules and ``edge_figures``): not the monitor, the table or the logging it does on the
owner's side. Every ``shoectl run`` starts one, so what it imports is paid at every table start
(structlog alone, with the terminal library it pulls in, was half the worker's start).
Module-level and picklable: a process receives ``figures`` and its arguments by pickle.
"""
from __future__ import annotations

import signal
from dataclasses import dataclass
from typing import Any

from controller.rules.cards import Composition
from controller.table.edge_figures import edge_figures


@dataclass(frozen=True)
class SubmissionDocument:
    """A Rules Submission as a worker process receives it: parsed there once per token."""

    token: int
    source: str
    body: dict[str, Any]


_PARSED: dict[int, Any] = {}  # in a worker process: token -> its Submission


def worker_started() -> None:
    """A Ctrl-C at the terminal reaches the whole process group: the table stops the worker."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def figures(submission: Any, composition: Composition) -> dict:
    """``edge_figures``; ``submission`` is the object itself (a thread) or a
    ``SubmissionDocument`` (a process)."""
    if isinstance(submission, SubmissionDocument):
        parsed = _PARSED.get(submission.token)
        if parsed is None:
            from controller.rules.submission import parse_submission

            parsed = _PARSED[submission.token] = parse_submission(submission.body, submission.source)
        submission = parsed
    return edge_figures(submission, composition)
