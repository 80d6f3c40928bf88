"""``shoectl run``'s lines on standard error are whole lines, whichever threads write them: the
two links report their outages from their own threads at the same moments (a missing shoe and a
missing shuffler are found together), and each line must reach the person at the table as one
line, never two run together."""
from __future__ import annotations

import threading

from controller.cli.run_output import stderr_line

WRITERS = 4
LINES_EACH = 400


def test_lines_written_by_several_threads_at_once_stay_whole(capsys) -> None:
    start = threading.Barrier(WRITERS)

    def write(writer: int) -> None:
        start.wait()
        for n in range(LINES_EACH):
            stderr_line(f"!! writer {writer} line {n}: no such device; retrying every 5 s")

    threads = [threading.Thread(target=write, args=(w,)) for w in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    err = capsys.readouterr().err
    expected = {f"!! writer {w} line {n}: no such device; retrying every 5 s"
                for w in range(WRITERS) for n in range(LINES_EACH)}
    lines = err.splitlines()
    assert len(lines) == WRITERS * LINES_EACH
    assert set(lines) == expected
    assert err.endswith("\n")
