"""Lines that several threads write at the same moments stay whole lines (``write_line``):
``shoectl run``'s two links report their outages from their own threads (a missing shoe and a
missing shuffler are found together), and the console prints the table's events from its watch
thread beside the answers to the commands typed. ``print`` writes a text and its newline apart,
so that two lines could run into one."""
from __future__ import annotations

import threading

import pytest

from controller.cli.common import write_line

WRITERS = 4
LINES_EACH = 400


@pytest.mark.parametrize("error", [False, True], ids=["stdout", "stderr"])
def test_lines_written_by_several_threads_at_once_stay_whole(capsys, error: bool) -> None:
    start = threading.Barrier(WRITERS)

    def write(writer: int) -> None:
        start.wait()
        for n in range(LINES_EACH):
            write_line(f"!! writer {writer} line {n}: no such device; retrying every 5 s", error=error)

    threads = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    captured = capsys.readouterr()
    out, other = (captured.err, captured.out) if error else (captured.out, captured.err)
    expected = {f"!! writer {w} line {n}: no such device; retrying every 5 s"
                for w in range(WRITERS) for n in range(LINES_EACH)}
    lines = out.splitlines()
    assert len(lines) == WRITERS * LINES_EACH
    assert set(lines) == expected
    assert out.endswith("\n") and other == ""
