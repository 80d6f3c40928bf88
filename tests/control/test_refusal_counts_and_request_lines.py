"""The control socket's refusal journal (refusals.py: every refusal journaled once, one by one or
counted in a summary) and its request lines (request_lines.py: the line limit, blank lines), at
their edges. A mutation review found each of these changes of the code surviving the tests before."""
from __future__ import annotations

import contextlib
import socket
import threading
from typing import Any

from controller.control.refusals import SUMMARY_KIND, RefusalJournal
from controller.control.request_lines import MAX_LINE, TOO_LONG, request_lines
from firmware_bridge.emulator import ManualClock


class _Notes:
    """``note`` for a RefusalJournal: what it journaled, in order."""

    def __init__(self) -> None:
        self.records: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, kind: str, payload: dict[str, Any], operator: str | None = None,
                 shown: dict[str, Any] | None = None) -> None:
        self.records.append((kind, payload))

    def one_by_one(self) -> list[dict[str, Any]]:
        return [p for k, p in self.records if k != SUMMARY_KIND]

    def summaries(self) -> list[dict[str, Any]]:
        return [p for k, p in self.records if k == SUMMARY_KIND]


def _refuse(journal: RefusalJournal, n: int, code: str = "auth", operator: str = "x") -> None:
    for _ in range(n):
        assert journal.refused("auth_refused", {"code": code, "operator": operator})


def test_each_window_journals_its_first_burst_one_by_one_and_counts_the_rest_once() -> None:
    """refusals.py: "In each window of ``window_s`` seconds (from the first refusal after the
    previous window ended) the first ``burst`` refusals are journaled one by one; the rest are only
    counted, and a ``refusals_summary`` record says how many were not journaled one by one since
    the previous summary": every refusal is in the journal exactly once, one by one or counted."""
    clock, notes = ManualClock(), _Notes()
    journal = RefusalJournal(notes, burst=3, window_s=10.0, summary_every_s=1.0, clock=clock)
    _refuse(journal, 5)  # window 1 (t=0..10): 3 one by one, 2 counted
    assert len(notes.one_by_one()) == 3
    clock.advance(2)
    journal.tick()
    assert [s["not_journaled"] for s in notes.summaries()] == [2]
    _refuse(journal, 1)  # t=2: still window 1, counted
    clock.advance(8)  # t=10: window 1 has ended exactly now
    _refuse(journal, 4)  # window 2 begins: 3 one by one, 1 counted
    journal.close()
    assert len(notes.one_by_one()) == 6
    assert [s["not_journaled"] for s in notes.summaries()] == [2, 2]  # each counted refusal once
    assert len(notes.one_by_one()) + sum(s["not_journaled"] for s in notes.summaries()) == 10


def test_summaries_are_written_at_most_every_summary_every_s() -> None:
    """refusals.py: "Summaries are written by ``tick()`` (the server calls it several times a
    second) at most every ``summary_every_s`` seconds while a flood lasts": a steady flood costs the
    journal at most one summary a second."""
    clock, notes = ManualClock(), _Notes()
    journal = RefusalJournal(notes, burst=1, window_s=100.0, summary_every_s=1.0, clock=clock)
    clock.advance(5)
    for _ in range(10):  # 2 s of flood, ticked 5 times a second
        _refuse(journal, 3)
        journal.tick()
        clock.advance(0.2)
    assert 1 <= len(notes.summaries()) <= 3
    journal.close()
    assert sum(s["not_journaled"] for s in notes.summaries()) == 29


def test_a_summary_counts_by_code_and_names_at_most_five_operators() -> None:
    """refusals.py: the summary says how many "by code (``by_code``: auth, forbidden, bad_request,
    busy, ...), with up to five of the operator ids tried (``operators``)"."""
    clock, notes = ManualClock(), _Notes()
    journal = RefusalJournal(notes, burst=0, clock=clock)
    for n in range(7):
        assert journal.refused("auth_refused", {"code": "auth", "operator": f"ghost{n}"})
    assert journal.refused("auth_refused", {"code": "forbidden", "operator": "d1"})
    assert journal.refused("bad_request", {"code": "bad_request", "reason": "..."})
    journal.close()
    [summary] = notes.summaries()
    assert summary["by_code"] == {"auth": 7, "bad_request": 1, "forbidden": 1}
    assert summary["operators"] == [f"ghost{n}" for n in range(5)]


# -- request lines --------------------------------------------------------------------------------

def _lines(payload: bytes) -> list[Any]:
    """The items ``request_lines`` yields for ``payload``, sent by a client that then closes."""
    server, client = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    server.settimeout(0.2)

    def send() -> None:
        with contextlib.suppress(OSError):  # the reader may have ended first
            client.sendall(payload)
            client.shutdown(socket.SHUT_WR)

    sender = threading.Thread(target=send)
    sender.start()
    try:
        return list(request_lines(server, threading.Event(), 30.0))
    finally:
        client.close()
        sender.join(5)
        server.close()


def test_a_line_of_exactly_max_line_bytes_is_a_request() -> None:
    """request_lines.py: ``TOO_LONG`` is "for a whole line longer than ``MAX_LINE``"; docs/control.md:
    a request line is "at most 64 KiB": a line of exactly ``MAX_LINE`` bytes is served."""
    line = b"x" * MAX_LINE
    assert _lines(line + b"\n") == [line]


def test_a_line_with_no_end_in_sight_is_refused_as_soon_as_it_passes_the_limit() -> None:
    """request_lines.py: "a line with no end in sight (``TOO_LONG`` as its last item)" ends the
    connection once what is buffered passes ``MAX_LINE``: a client cannot make the table buffer
    several times the limit (nor hold the connection until the line's time runs out), and what
    follows on that connection is not read."""
    assert _lines(b"x" * (3 * MAX_LINE)) == [TOO_LONG]
    assert _lines(b"x" * (3 * MAX_LINE) + b"\n" + b'{"op": "status"}\n') == [TOO_LONG]


def test_blank_lines_do_not_keep_a_connection_that_sends_no_request() -> None:
    """request_lines.py: "blank lines skipped"; "The idle time runs from the last request ...
    bytes that never make a request do not keep a connection". A client that sends only blank
    lines is closed with the idle reply while it is still sending them."""
    server, client = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    server.settimeout(0.2)
    done = threading.Event()
    sending = [True]

    def keep_alive() -> None:
        for _ in range(100):  # at most 10 s of a blank line every 0.1 s
            if done.wait(0.1):
                break
            try:
                client.sendall(b"\n")
            except OSError:
                break
        sending[0] = False
        with contextlib.suppress(OSError):
            client.shutdown(socket.SHUT_WR)

    sender = threading.Thread(target=keep_alive)
    sender.start()
    try:
        items = list(request_lines(server, threading.Event(), 0.5))
        still_sending = sending[0]
    finally:
        done.set()
        sender.join(15)
        client.close()
        server.close()
    assert items == [{"ok": False, "code": "idle", "error": "no request for 0.5 s: closed"}]
    assert still_sending  # closed for its silence, not because it stopped
