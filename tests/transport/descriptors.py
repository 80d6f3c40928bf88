"""This process's open file descriptors, for the tests that check a transport leaves none behind."""
from __future__ import annotations

import os


def open_descriptors(on: str | None = None) -> set[tuple[str, str]]:
    """Each open descriptor with what it is open on (``readlink`` of ``/proc/self/fd/N``); with
    ``on``, only those open on that path. Compare
    what is open, not how many: a test that left something behind may see it closed meanwhile
    (a CI run did), which a count would take for the code under test closing one of its own."""
    target = os.path.realpath(on) if on is not None else None
    found = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            opened = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # the listing's own descriptor, closed by now
            continue
        if target is None or opened == target:
            found.add((fd, opened))
    return found
