"""controller.cli.stopping: a stop signal is honoured however busy the worker is, and the process
exits within the grace period. Signals need a process of their own: each case runs a small
script in a subprocess."""
from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from controller.cli.stopping import run_until_signalled

HANG = 60  # seconds before a wait is declared hung (never a performance limit)

SCRIPT = """
import sys, threading, time
import structlog
from controller.cli.stopping import run_until_signalled
structlog.configure(logger_factory=structlog.ReturnLoggerFactory())  # logs out of the way of the output
stop = threading.Event()

def busy():  # pure Python work that never looks at the stop request
    print("ready", flush=True)
    while True:
        sum(range(1000))

def polite():  # returns soon after the stop request
    print("ready", flush=True)
    while not stop.wait(0.01):
        sum(range(1000))

work = {"busy": busy, "polite": polite}[sys.argv[1]]
words = {"kept": sys.argv[3], "what": sys.argv[4]} if len(sys.argv) > 3 else {}
got = run_until_signalled(work, stop.set, name="test", grace_s=float(sys.argv[2]), **words)
print("returned", got, flush=True)
sys.exit(0 if got is None else 128 + got)
"""


def spawn(mode: str, grace: float) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(SCRIPT), mode, str(grace)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_worker_that_stops_returns_the_signal(sig: signal.Signals) -> None:
    proc = spawn("polite", 30)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 128 + sig and out == f"returned {int(sig)}\n", err


def test_a_busy_worker_is_cut_off_after_the_grace_period() -> None:
    proc = spawn("busy", 0.5)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 143 and out == ""  # no clean return: the process was ended
    assert err.splitlines()[-1] == ("test: stopped by SIGTERM: the table did not stop within 0.5 s; exiting now "
                                    "(every committed input is in the journal)")


def test_a_second_signal_exits_at_once() -> None:
    proc = spawn("busy", 600)
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=HANG)  # not 600 s
    assert proc.returncode == 130 and "stopped by SIGINT: a second stop signal; exiting now" in err


def test_the_workers_own_error_is_raised_in_the_caller() -> None:
    def broken() -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        run_until_signalled(broken, lambda: None, name="test")
    assert run_until_signalled(lambda: None, lambda: None, name="test") is None
    # Signal handlers are restored afterwards.
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_off_the_main_thread_the_work_simply_runs() -> None:
    ran: list[str] = []
    t = threading.Thread(target=lambda: ran.append(str(run_until_signalled(lambda: ran.append("work"), lambda: None,
                                                                             name="test"))))
    t.start()
    t.join(HANG)
    assert ran == ["work", "None"]


STARTING = """
import sys, threading
import structlog
from controller.cli.stopping import run_until_signalled, signals_held
structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
with signals_held("test") as held:
    print("starting", flush=True)  # as a table whose control socket answers before its loop runs
    sys.stdin.readline()           # the rest of its start-up, until told to go on
    got = run_until_signalled(lambda: print("worked", flush=True), lambda: None, name="test", held=held)
print("returned", got, flush=True)
sys.exit(0 if got is None else 128 + got)
"""


def spawn_starting() -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(STARTING)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "starting\n"
    return proc


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_while_starting_up_is_a_clean_stop_without_the_work(sig: signal.Signals) -> None:
    """A stop sent while a command starts up (``shoectl run`` answers on its control socket before
    its owner loop runs) is remembered: start-up ends, the work is not started, and the exit is
    the stop's (it was a kill by the signal: no cleanup, no anchor, exit -15)."""
    proc = spawn_starting()
    proc.send_signal(sig)
    out, err = proc.communicate("go on\n", timeout=HANG)
    assert (proc.returncode, out) == (128 + sig, f"returned {int(sig)}\n"), err


def test_a_second_stop_while_starting_up_exits_at_once() -> None:
    proc = spawn_starting()
    proc.send_signal(signal.SIGTERM)
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=HANG)  # never told to go on
    assert (proc.returncode, out) == (143, "")
    assert "test: stopped by SIGTERM: a second stop signal; exiting now" in err


def test_without_a_stop_while_starting_up_the_work_runs() -> None:
    proc = spawn_starting()
    out, err = proc.communicate("go on\n", timeout=HANG)
    assert (proc.returncode, out) == (0, "worked\nreturned None\n"), err


def test_a_command_that_is_not_the_table_says_what_did_not_stop_and_what_it_keeps() -> None:
    """A floor operator's review: ``shoectl feed`` and ``floor collect`` cut off after their grace
    said "the table did not stop" and "every committed input is in the journal", the table's."""
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, "busy", "0.5", "the cursor is saved", "the feed"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 143 and err.splitlines()[-1] == (
        "test: stopped by SIGTERM: the feed did not stop within 0.5 s; exiting now (the cursor is saved)")


CLEANUP_SCRIPT = """
import sys, threading, time
import structlog
from controller.cli.stopping import run_until_signalled, signals_held
structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
stop = threading.Event()

def polite():
    print("ready", flush=True)
    stop.wait()

with signals_held("test") as held:
    got = run_until_signalled(polite, stop.set, name="test", grace_s=600, held=held)
    print("returned", got, flush=True)
    time.sleep(600)  # a cleanup that hangs (a broker that never acknowledges, say)
"""


def test_a_stop_signal_during_the_cleanup_after_a_stop_exits_at_once() -> None:
    """The table stopped on SIGTERM; its cleanup hangs. Another SIGTERM is the second stop signal
    and ends the process at once: it was taken for the first (a concurrency review), and only a
    third did."""
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(CLEANUP_SCRIPT)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    assert proc.stdout.readline() == "returned 15\n"
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=HANG)  # not 600 s
    finally:
        proc.kill()
    assert proc.returncode == 143 and "stopped by SIGTERM: a second stop signal; exiting now" in err, err


def _ignores_hangup(pid: int) -> bool:
    """Whether the process ``pid`` ignores SIGHUP now (its SigIgn mask in /proc)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            mask = next(int(line.split()[1], 16) for line in f if line.startswith("SigIgn:"))
    except (OSError, StopIteration):
        return False
    return bool(mask & 1 << (signal.SIGHUP - 1))


def test_a_hangup_while_run_starts_is_ignored(tmp_path) -> None:  # noqa: ANN001
    """SIGHUP opens a running table's log again and stops nothing (docs/deployment.md). While the
    program still loaded, before that handler was installed, its default ended the process at once
    (-1), which systemd counts as clean: the unit was not restarted (a review of signals). Through
    the entry point the installed ``shoectl`` script calls."""
    journal = tmp_path / "j.db"
    entry = "import sys; from controller.cli.entry import main; sys.exit(main())"  # as the installed script does
    proc = subprocess.Popen([sys.executable, "-c", entry, "run", "--journal", str(journal), "--speed", "max",
                             "--display", "lines", "--no-edge-monitor"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not _ignores_hangup(proc.pid):  # the program's first step: its modules not yet loaded
            assert proc.poll() is None and time.monotonic() < deadline, "SIGHUP never ignored while loading"
            time.sleep(0.001)
        proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 60
        while not journal.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""  # still dealing
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()


HELD = """
import sys, time
from controller.cli.stopping import signals_held
with signals_held("test", float(sys.argv[1])) as held:
    print("starting", flush=True)
    time.sleep(30)  # a start-up that reads a long journal
print("started", held, flush=True)
"""


def test_a_stop_while_starting_up_takes_no_longer_than_the_grace() -> None:
    """A review of signals: `shoectl run` holds a stop until its start-up (verifying and replaying
    the journal: minutes for a long one) ends, and the grace did not count there: a `systemctl
    stop` waited for all of it, past systemd's timeout. The grace now counts from the signal."""
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(HELD), "0.5"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline() == "starting\n"
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=HANG)
    assert proc.returncode == 128 + signal.SIGTERM and out == "", (out, err)
    assert err == ("test: stopped by SIGTERM: it did not stop within 0.5 s; exiting now (every committed input is in "
                   "the journal)\n"), err
    assert time.monotonic() - started < 10


def test_stop_handler_puts_the_handlers_back_or_with_ignore_after_ignores_further_stops() -> None:
    """``stop_handler`` puts the handlers before back after its block; with ``ignore_after`` (a
    process that only exits then, ``shoectl emulate``) SIGTERM and SIGINT are ignored instead, so a
    second stop cannot kill it there, and SIGHUP's handler is still put back."""
    script = textwrap.dedent("""
        import signal
        from controller.cli.stopping import stop_handler
        before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)}
        with stop_handler(lambda n, f: None):
            pass
        print(all(signal.getsignal(s) == h for s, h in before.items()))
        with stop_handler(lambda n, f: None, ignore_after=True):
            pass
        print(signal.getsignal(signal.SIGTERM) == signal.SIG_IGN, signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
              signal.getsignal(signal.SIGHUP) == before[signal.SIGHUP])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=HANG)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True", "True", "True"]
