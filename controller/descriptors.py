"""The process's file descriptors, for servers that must leave the table some of them.

A table (``shoectl run``) needs descriptors for its own work while it runs: a device's line
reopened takes 7 (the port, pyserial's two pipes, the link's wake-up pipe), the journal's
checkpoints and anchors a few, a module imported late one, the edge monitor's worker its pipes.
The servers in the same process (the control socket, the scoreboard) accept connections from
anyone who can reach them; each refuses a connection that would leave fewer than
``TABLE_RESERVE`` free, instead of letting a flood take the table's last descriptors.

- ``descriptors() -> (in_use, limit)``: the count now and the soft ``RLIMIT_NOFILE``;
- ``short_of_descriptors(reserve)``: whether fewer than ``reserve`` are left;
- ``out_of_descriptors()``: whether the process cannot open one more file now (what a library's
  "unable to open" meant, when it does not say);
- ``capacity_warning(server, wanted, reserve)``: the start-up sentence when the limit leaves
  room for fewer than ``wanted`` connections, or None.
"""
from __future__ import annotations

import errno
import os
import resource

__all__ = ["OUT_OF_DESCRIPTORS", "TABLE_RESERVE", "capacity_warning", "descriptors", "out_of_descriptors",
           "short_of_descriptors"]

TABLE_RESERVE = 32  # a running table holds about 45; some 16 of them open after its servers first answer
OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


def descriptors() -> tuple[int, int]:
    """(descriptors open, the process's soft limit); open is 0 where /proc cannot say. Raises
    OSError when the process has no descriptor left to list them with."""
    try:
        in_use = len(os.listdir("/proc/self/fd")) - 1  # less the listing's own
    except FileNotFoundError:
        in_use = 0
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    return in_use, (2**31 if limit == resource.RLIM_INFINITY else limit)


def short_of_descriptors(reserve: int) -> bool:
    """Whether fewer than ``reserve`` descriptors are left to the process (a connection just
    accepted counts as held). A process with none left to count with is short; ``reserve`` 0 or
    less is never short."""
    if reserve <= 0:
        return False
    try:
        in_use, limit = descriptors()
    except OSError as exc:
        return exc.errno in OUT_OF_DESCRIPTORS
    return in_use > limit - reserve


def out_of_descriptors() -> bool:
    """Whether the process (or the system) has no file descriptor to open one more file with."""
    try:
        os.close(os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC))
    except OSError as exc:
        return exc.errno in OUT_OF_DESCRIPTORS
    return False


def capacity_warning(server: str, wanted: int, reserve: int) -> str | None:
    """What to say at start when the process's limit leaves ``server`` (e.g. "the control
    socket") room for fewer than ``wanted`` connections beside ``reserve``; None when it has
    room, or when /proc cannot say."""
    try:
        in_use, limit = descriptors()
    except OSError:
        return None
    room = limit - in_use - reserve
    if not in_use or room >= wanted:
        return None
    return (f"the process may open {limit} files and holds {in_use}: {server} can serve about {max(room, 0)} "
            f"connections at once, not {wanted} (raise the limit: LimitNOFILE= in the service's unit, "
            "ulimit -n in a shell)")
