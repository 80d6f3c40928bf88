"""Stopping a long-running command on SIGTERM or SIGINT, within a bounded time; SIGHUP opens its
log file again (logrotate) and stops nothing.

``run_until_signalled(work, stop, name=...)`` runs ``work`` (the table's owner loop) on a thread of
its own while the main thread only waits for it. Python runs signal handlers on the main thread,
so a main thread that does nothing else runs them at once, however busy ``work`` is (blocked
writing to a full pipe, waiting on a disk, computing). On the first SIGTERM or SIGINT, ``stop()``
is called and ``work`` has ``grace_s`` seconds to return:

- it returns: ``run_until_signalled`` returns the signal number; the caller closes what it holds
  and exits ``128 + N`` (143 for SIGTERM, 130 for SIGINT);
- it does not: one line on standard error and ``os._exit(128 + N)`` at once, without cleanup.
  Nothing is lost: every input the journal committed is durable, and an input not yet committed
  was not acknowledged (its device sends it again) or not acted on (an operator command). That
  line ends with what is safe (``kept``): by default ``shoectl run``'s, the journal's; a command
  that keeps something else (the feed's cursor, the collector's broker session) says its own.

A second signal during the grace period exits at once the same way. Before the work runs,
``signals_held`` catches the signals of a command's start-up (``shoectl run`` answers on its
control socket before its owner loop turns): a stop sent then is remembered, start-up ends, the
work is not started and the exit is the stop's, with the same cleanup. Called from any thread but
the main one (signals cannot be caught there), it simply runs ``work``.

A single call into C that holds the interpreter lock (such as ``Fraction`` of a decimal with a
billion-digit exponent) cannot be interrupted by any Python code; that is why numbers from
outside are bounded when they are read (docs/configuration.md).
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

__all__ = ["JOURNAL_KEPT", "STOP_GRACE_S", "exit_now", "run_until_signalled", "signals_held", "stop_handler"]

STOP_GRACE_S = 5  # seconds a stopping table may take to finish its input and close its links
_POLL_S = 0.1       # how often the waiting main thread looks at the clock
_SIGNALS = (signal.SIGTERM, signal.SIGINT)
JOURNAL_KEPT = "every committed input is in the journal"  # what a forced exit of shoectl run keeps


@contextlib.contextmanager
def stop_handler(on_signal: Callable[[int, Any], None], *, ignore_after: bool = False) -> Iterator[None]:
    """``on_signal`` handles SIGTERM and SIGINT for the block, and SIGHUP opens the log file again
    (``_on_hangup``); the handlers before are put back after it (main thread only). With
    ``ignore_after``, SIGTERM and SIGINT are ignored after it instead, for a process that only
    exits then: a second stop (``timeout`` signals the whole group) does not kill it there."""
    previous = {sig: signal.signal(sig, on_signal) for sig in _SIGNALS}
    previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, _on_hangup)
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, signal.SIG_IGN if ignore_after and sig in _SIGNALS else handler)


@contextlib.contextmanager
def signals_held(name: str, grace_s: float | None = None) -> Iterator[list[int]]:
    """While a command starts up: a SIGTERM or SIGINT is remembered in the yielded list, not
    fatal, so a stop sent as soon as the command answers (its control socket, its ready line) is
    a clean stop; hand the list to ``run_until_signalled``, which then returns at once without
    running its work. A second signal exits at once (``name`` starts that line). With
    ``grace_s``, the block has that long from the first signal to end (start-up, then the
    cleanup), else the same exit: a start-up that reads a long journal held a stop for minutes,
    past systemd's stop timeout (a review of signals). Outside the main thread, nothing is
    installed."""
    held: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    deadline: list[threading.Timer] = []

    def on_signal(signum: int, frame: Any) -> None:
        if held:
            exit_now(name, signum, "a second stop signal")
        held.append(signum)
        if grace_s is not None:
            timer = threading.Timer(grace_s, exit_now, (name, signum, f"it did not stop within {grace_s:g} s"))
            timer.daemon = True
            timer.start()
            deadline.append(timer)

    try:
        with stop_handler(on_signal):
            yield held
    finally:
        for timer in deadline:
            timer.cancel()


def run_until_signalled(work: Callable[[], None], stop: Callable[[], None], *, name: str,
                        grace_s: float = STOP_GRACE_S, held: list[int] | None = None,
                        kept: str = JOURNAL_KEPT, what: str = "the table") -> int | None:
    """Run ``work`` until it returns; returns the number of the signal that stopped it, or
    ``None`` if it returned by itself. An exception from ``work`` is raised here. ``name``
    starts the line written on a forced exit (``shoectl run``), ``kept`` ends it in parentheses:
    what the forced exit does not lose, in the user's words; ``what`` is what did not stop in time
    (``the table``, ``the feed``). ``held``: the signals
    ``signals_held`` caught while starting up; if there is one, ``work`` is not run and its
    number is returned. A signal that stopped ``work`` is added to ``held``: during the cleanup
    that follows, under ``signals_held`` again, another stop signal is the second and exits at
    once (it was taken for the first, and only a third ended a cleanup that hung)."""
    # Imported here, not at the top: ``shoectl emulate`` takes this module's ``stop_handler`` and
    # logs nothing, and importing structlog (which loads rich) costs it 0.1 s of CPU a process.
    import structlog

    log = structlog.get_logger()
    if held:
        return held[0]
    if threading.current_thread() is not threading.main_thread():
        work()
        return None
    failure: list[BaseException] = []

    def owner() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, raised there
            failure.append(exc)

    received: list[int] = []
    deadline = [float("inf")]

    def on_signal(signum: int, frame: Any) -> None:
        if received:
            exit_now(name, signum, "a second stop signal", kept)
        received.append(signum)
        deadline[0] = time.monotonic() + grace_s
        # Logged from a thread of its own: a stuck owner may hold the log handler's lock. Info: a
        # stop asked for is expected (the forced exit below is the line a person must read).
        threading.Thread(target=log.info, args=("stopping",), daemon=True,
                         kwargs={"signal": signal.Signals(signum).name, "grace_s": grace_s}).start()
        stop()

    thread = threading.Thread(target=owner, name="shoectl-owner", daemon=True)
    with stop_handler(on_signal):
        thread.start()
        while thread.is_alive():
            thread.join(_POLL_S)
            if received and time.monotonic() > deadline[0] and thread.is_alive():
                exit_now(name, received[0], f"{what} did not stop within {grace_s:g} s", kept)
    if received and held is not None and not held:
        held.append(received[0])
    if failure:
        raise failure[0]
    return received[0] if received else None


def _on_hangup(signum: int, frame: Any) -> None:
    """SIGHUP: the log file is opened again (logrotate's ``postrotate kill -HUP``); nothing stops.
    Its default action ended the process at once, uncleanly, and systemd counts an end by SIGHUP
    as clean, so the unit did not restart the table (a review of operations). On a thread of its
    own: the thread that logs may hold the log handler's lock. Under a terminal that hung up, the
    table deals on (as with ``nohup``): its output's failure is said once in the log, and a stop
    (SIGTERM, ``ctl``) ends it."""
    from controller.logconfig import reopen_log_files

    threading.Thread(target=reopen_log_files, name="shoectl-log-reopen", daemon=True).start()


def exit_now(name: str, signum: int, why: str, kept: str = JOURNAL_KEPT) -> None:
    """Leave without cleanup: the stuck thread may hold the journal, the log or standard output."""
    line = f"{name}: stopped by {signal.Signals(signum).name}: {why}; exiting now ({kept})\n".encode()
    # Even standard error may be a full pipe: the last words get one second, then the exit.
    writer = threading.Thread(target=os.write, args=(2, line), daemon=True)
    writer.start()
    writer.join(1.0)
    os._exit(128 + signum)
