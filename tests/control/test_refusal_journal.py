"""The control socket's refusal journal (``controller.control.refusals``) as the table stops: a
refusal it says is journaled (``refused`` returns True) is noted before ``close`` returns, so the
owner's last journaling, which follows ``close``, holds it; after ``close`` nothing is noted."""
from __future__ import annotations

import threading
import time

from controller.control.refusals import SUMMARY_KIND, RefusalJournal


def test_a_refusal_being_noted_as_the_journal_closes_is_noted_before_close_returns() -> None:
    """A review of this session's diff: ``refused`` looked at ``closed`` under its lock and noted
    after releasing it, so a ``close`` in between returned first, the owner journaled its last,
    and the refusal, told to its client, was noted into an inbox nobody read."""
    noted: list[str] = []
    noting, closed_at, noted_at = threading.Event(), [], []

    def slow_note(kind, payload, operator=None, shown=None) -> None:
        if kind != SUMMARY_KIND:
            noting.set()
            time.sleep(0.2)  # the owner's turn to close comes now
            noted_at.append(time.monotonic())
        noted.append(kind)

    journal = RefusalJournal(slow_note)
    told = []
    refusing = threading.Thread(target=lambda: told.append(journal.refused("auth_refused", {"code": "auth"})))
    refusing.start()
    assert noting.wait(5)
    journal.close()
    closed_at.append(time.monotonic())
    refusing.join(5)
    assert told == [True] and noted == ["auth_refused"]
    assert noted_at[0] <= closed_at[0]  # noted before the close returned: before the owner's last journaling
    assert journal.refused("auth_refused", {"code": "auth"}) is False and noted == ["auth_refused"]
