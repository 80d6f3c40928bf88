"""The scoreboard inside ``shoectl run`` never takes the table's last file descriptors: a flood of
connections on its port is answered ``503`` once the process nears its limit of open files, the
table deals on, and the page is served again once the flood ends (``controller.descriptors``).
A scoreboard that runs out of descriptors all the same says so in one warning line and serves
again once they are free."""
from __future__ import annotations

import errno
import http.client
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest

from tests.control.running_table import descriptor_limit, launch_table, low_descriptor_limit
from tests.scoreboard.serving import dealt_journal, get

HANG = 60.0  # seconds before a wait is declared hung


def _url(t) -> str:
    deadline = time.monotonic() + HANG
    while True:
        for line in t.stderr().splitlines():
            if line.startswith("scoreboard: "):
                return line.split(" ", 1)[1].strip()
        assert t.alive() and time.monotonic() < deadline, f"no scoreboard URL: {t.stderr()[-3000:]}"
        time.sleep(0.05)


def _answer(sock: socket.socket) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def _healthz(page_url: str) -> int | None:
    """``/healthz``'s status at the scoreboard serving ``page_url``; None when it does not answer."""
    try:
        return get(SimpleNamespace(url=page_url), "/healthz")[0]
    except (OSError, http.client.HTTPException):
        return None


@pytest.mark.slow
def test_a_flood_on_the_scoreboard_leaves_the_table_its_reserve_of_file_descriptors() -> None:
    """A table's scoreboard is reachable by anyone on its network. With a low RLIMIT_NOFILE (90
    more than the process has at its start: the table holds about 45, and keeps 32 free), 90
    connections that send nothing: the first are held (waiting for their request), the last are
    answered ``503`` "short of file descriptors" and closed (but for one or two the table's own
    descriptors, opened and closed meanwhile, may let in: those are held until the ``408``); the
    table stays alive below its limit and deals on; once the connections close the page is served
    again; the limit too low for the scoreboard's 256 connections was said once at start."""
    d = Path(tempfile.mkdtemp(prefix="shoectl-", dir="/tmp"))  # short: the control socket's path
    try:
        t = launch_table(d, None, "--scoreboard", "127.0.0.1:0", preexec_fn=low_descriptor_limit(90))
        try:
            page = _url(t)
            url = urlsplit(page)
            limit = descriptor_limit(t.proc.pid)
            held = [socket.create_connection((url.hostname, url.port), timeout=HANG) for _ in range(90)]
            try:
                answers = [_answer(s) for s in held[-10:]]
                turned_away = [a.startswith(b"HTTP/1.1 503 ") and b"retry-after: 5" in a and
                               a.endswith(b"the scoreboard is busy: the process is short of file descriptors; "
                                          b"try again later\n") for a in answers]
                # Held connections count against the reserve, so the flood holds the process at its
                # edge: a descriptor the table closes (a file it opened a moment) lets the next
                # connection in, held until the scoreboard's head timeout answers it 408.
                let_in = [a.startswith(b"HTTP/1.1 408 ") for a in answers]
                assert all(away or held_a_while for away, held_a_while in zip(turned_away, let_in)), \
                    [(i, a) for i, a in enumerate(answers) if not (turned_away[i] or let_in[i])]
                assert sum(turned_away) >= 8, answers
                assert t.alive(), f"the table ended (exit {t.proc.returncode}): {t.stderr()[-3000:]}"
                time.sleep(1.0)  # the table deals on meanwhile, with what the reserve leaves it
                assert t.alive(), f"the table ended (exit {t.proc.returncode}): {t.stderr()[-3000:]}"
                assert len(list(Path(f"/proc/{t.proc.pid}/fd").iterdir())) < limit
            finally:
                for s in held:
                    s.close()
            deadline = time.monotonic() + HANG
            while _healthz(page) != 200:
                assert time.monotonic() < deadline, "the scoreboard never answered again"
                time.sleep(0.1)
            t.assert_dealing()
            said = [line for line in t.stderr().splitlines() if "the scoreboard can serve about" in line]
            assert len(said) == 1 and said[0].startswith(f"!! the process may open {limit} files") \
                and "not 256" in said[0], t.stderr()
            t.assert_stopped_cleanly()
        finally:
            t.stop()
    finally:
        shutil.rmtree(d, ignore_errors=True)


_OUT_OF_DESCRIPTORS_CHILD = r"""
import http.client, json, os, sys, time
from controller.logconfig import configure_logging
from controller.scoreboard.app import create_app
from controller.scoreboard.server import ScoreboardServer, bind
from controller.scoreboard.sources import JournalSource

configure_logging(level="warning")
source = JournalSource.open(sys.argv[1])
server = ScoreboardServer(create_app(source, "en"), bind("127.0.0.1", 0), source, descriptor_reserve=0).start()
host, port = server.url.rsplit("/", 1)[1].split(":")


def get(path):
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request("GET", path)
        return conn.getresponse().status
    finally:
        conn.close()


deadline = time.monotonic() + 30
while True:
    try:
        if get("/healthz") == 200:
            break
    except OSError:
        assert time.monotonic() < deadline
        time.sleep(0.05)
fillers = []
try:
    while True:  # every descriptor the process may have, taken by its other work
        fillers.append(os.open(os.devnull, os.O_RDONLY))
except OSError as exc:
    out_of = exc.errno
print(json.dumps({"port": int(port), "out_of": out_of}), flush=True)
sys.stdin.readline()  # the test's clients meanwhile
for fd in fillers:
    os.close(fd)
print(json.dumps({"page": get("/static/table.js")}), flush=True)
server.stop()
"""


def test_a_scoreboard_out_of_descriptors_turns_connections_away_and_serves_again(tmp_path: Path) -> None:
    """With no reserve, a process whose other work took every descriptor it may have: connections
    are not left waiting but answered ``503`` (accepted on a spare descriptor held for the moment)
    and closed, with a warning at most once a second, not an error with a traceback for each;
    once descriptors are free the page is served again."""
    journal = dealt_journal(tmp_path / "journal.db", rounds=3)
    with subprocess.Popen([sys.executable, "-c", _OUT_OF_DESCRIPTORS_CHILD, str(journal)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:  # pipes closed, waited for
        try:
            full = json.loads(proc.stdout.readline() or "null")
            assert full is not None and full["out_of"] == errno.EMFILE, full
            answers = []
            for _ in range(5):
                with socket.create_connection(("127.0.0.1", full["port"]), timeout=HANG) as s:
                    answers.append(_answer(s))
            assert all(a.startswith(b"HTTP/1.1 503 ") and a.endswith(b"the scoreboard is busy: the process is short of "
                                                                     b"file descriptors; try again later\n")
                       for a in answers), answers
            proc.stdin.write("go on\n")
            proc.stdin.close()
            after = json.loads(proc.stdout.readline() or "null")
            assert proc.wait(timeout=HANG) == 0
            err = proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.kill()
    assert after == {"page": 200}, err
    said = [line for line in err.splitlines() if "out of file descriptors" in line]
    assert 1 <= len(said) <= 2 and all("[warning" in line and "turning connections away" in line for line in said), err
    assert "Traceback" not in err and "[error" not in err, err
