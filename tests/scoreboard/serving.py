"""The scoreboard served for a test, and plain HTTP to it (http.client: no extra client library).

- ``run_scoreboard_url(proc)``: the URL ``shoectl run --scoreboard`` writes on standard error.
- ``dealt_journal(path, rounds)``: a journal of an emulated table that dealt ``rounds`` rounds
  (``shoectl run`` in this process, tests/cli_run.py).
- ``serving(journal)``: a started ``ScoreboardServer`` on a free port of 127.0.0.1, stopped on
  the way out whatever happened; ``get(server, path, method=)``: (status, headers, body bytes).
- ``floor_fed(tmp_path, broker, rounds)``: tables (``{"T1": rounds, ...}``) dealt into journals of
  their own and fed by ``shoectl feed`` to ``broker`` (tests/services/mosquitto.py), and a started
  floor scoreboard of that broker (``--broker``, as the floor's display user): yields
  ``(server, journals, feeds)``, every process stopped on the way out; ``journal_view(journal)``:
  ``TableView.to_json`` of a whole journal.
- ``EventReader(server, path)``: a Server-Sent Events connection; ``next_state(timeout)`` is the
  next ``event: state`` message as ``(id, object)``.
"""
from __future__ import annotations

import contextlib
import http.client
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests import cli_run  # as a package: the benchmarks import this module too, without tests/ on their path

SHOECTL = [sys.executable, "-m", "controller.cli.main"]


def run_scoreboard_url(proc: subprocess.Popen, timeout: float = 20) -> str:
    """The page's URL from ``shoectl run --scoreboard``'s standard error (``scoreboard: URL``),
    read from the running ``proc`` (stderr a text pipe); RuntimeError if it ends without one."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if line.startswith("scoreboard: "):
            return line.split(" ", 1)[1].strip()
        if not line and proc.poll() is not None:
            break
    raise RuntimeError(f"shoectl run printed no scoreboard URL (exit {proc.poll()})")


def dealt_journal(path: Path, rounds: int, seed: int = 3, *extra: str) -> Path:
    return cli_run.dealt_journal(path, "--seed", str(seed), "--rounds", str(rounds), *extra)


def journal_view(journal: Path, lang: str = "en") -> dict[str, Any]:
    from controller.journal.reader import JournalReader
    from controller.scoreboard.state import TableView

    with JournalReader.open(journal) as reader:
        return TableView.from_entries(reader.entries()).to_json(lang)


def stop_process(proc: subprocess.Popen, timeout: float = 30) -> None:
    """SIGTERM ``proc`` (unless it ended), wait up to ``timeout`` s, then kill it: never left behind."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def floor_fed(tmp_path: Path, broker: Any, rounds: dict[str, int]) -> Iterator[tuple[Any, dict[str, Path], list[Any]]]:
    from controller.cli.cmd_scoreboard import floor_server
    from controller.cli.main import build_parser
    from controller.scoreboard.server import bind
    from services.mosquitto import DISPLAY

    journals = {}
    for table, n in rounds.items():
        (tmp_path / table).mkdir()
        journals[table] = dealt_journal(tmp_path / table / "journal.db", n, 5, "--table-id", table)
    feeds = [subprocess.Popen([*SHOECTL, "feed", "--journal", str(j), "--broker", broker.url, *broker.login(t)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for t, j in journals.items()]
    server = None
    try:
        args = build_parser().parse_args(["scoreboard", "--broker", broker.url, *broker.login(DISPLAY),
                                          "--listen", "127.0.0.1:0"])
        server = floor_server(args, bind(*args.listen)).start()
        yield server, journals, feeds
    finally:
        if server is not None:
            server.stop()
        for feed in feeds:
            stop_process(feed)


@contextlib.contextmanager
def serving(journal: Path, lang: str = "en") -> Iterator[Any]:
    from controller.cli.cmd_scoreboard import scoreboard_server
    from controller.scoreboard.server import bind

    server = scoreboard_server(journal, bind("127.0.0.1", 0), lang=lang).start()
    try:
        deadline = time.monotonic() + 30  # a loaded machine (make test beside other work) reads slowly
        while time.monotonic() < deadline:
            try:  # the floor's view is published after the table's: both read once
                if all(get(server, path)[0] == 200 for path in (f"/tables/{server.table_id}/state.json", "/floor.json")):
                    break
            except OSError:
                pass
            time.sleep(0.05)
        yield server
    finally:
        server.stop()


def connection(server: Any, timeout: float = 10) -> http.client.HTTPConnection:
    """A connection to ``server`` (kept alive between its requests until closed)."""
    url = urlsplit(server.url)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)


def get(server: Any, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    conn = connection(server)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def get_json(server: Any, path: str) -> Any:
    status, _, body = get(server, path)
    assert status == 200, (path, status, body[:200])
    return json.loads(body)


class EventReader:
    """One SSE connection (see the module docstring)."""

    def __init__(self, server: Any, path: str) -> None:
        self.conn = connection(server)
        self.conn.request("GET", path, headers={"Accept": "text/event-stream"})
        self.response = self.conn.getresponse()
        assert self.response.status == 200
        assert self.response.getheader("content-type", "").startswith("text/event-stream")

    def next_state(self, timeout: float = 10) -> tuple[int, Any]:
        """The next ``state`` message: (its id, the state); other messages are passed over."""
        while True:
            event, fields = self.next_event(timeout)
            if event == "state":
                return int(fields["id"]), json.loads(fields["data"])

    def next_table_word(self, timeout: float = 10) -> bool | None:
        """The next ``table`` message's ``running``; the states before it are passed over."""
        while True:
            event, fields = self.next_event(timeout)
            if event == "table":
                return json.loads(fields["data"])["running"]

    def next_event(self, timeout: float = 10) -> tuple[str, dict[str, str]]:
        self.conn.sock.settimeout(timeout)
        fields: dict[str, str] = {}
        while True:
            line = self.response.fp.readline()
            if not line:
                raise EOFError("the event stream ended")
            line = line.decode("utf-8").rstrip("\n")
            if line == "":
                if "event" in fields:
                    return fields["event"], fields
                fields = {}
            elif not line.startswith(":"):
                key, _, value = line.partition(":")
                fields[key] = value[1:] if value.startswith(" ") else value

    def close(self) -> None:
        # The response holds the socket too: a stream answered "connection: close" hands it over
        # to the response alone, and closing the connection would leave it to the collector.
        self.response.close()
        self.conn.close()

    def __enter__(self) -> EventReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def copy_journal(journal: Path, folder: Path) -> Path:
    """A copy of ``journal`` (its file and its WAL, if any) in ``folder``, to change or to extend."""
    for path in journal.parent.glob(journal.name + "*"):
        if not path.name.endswith("-shm"):
            shutil.copy(path, folder / path.name)
    return folder / journal.name
