"""The scoreboard app through a real uvicorn on a free port of 127.0.0.1, read with http.client:
what it serves, that it is read-only, and its Server-Sent Events (the whole state on connect and
on every reconnect, then each new state)."""
from __future__ import annotations

import asyncio
import contextlib
import hashlib
import http.client
import json
import os
import subprocess
import time

import pytest

from controller.journal import Journal
from controller.journal.reader import JournalReader
from controller.scoreboard.sse import QUEUE_LIMIT, Channel, Snapshot
from controller.scoreboard.state import TableView
from tests.scoreboard.serving import copy_journal, SHOECTL, EventReader, connection, dealt_journal, get, get_json, serving

ROUTES = ("/", "/floor.json", "/events", "/healthz", "/tables/T1", "/tables/T1/state.json", "/tables/T1/events",
          "/static/table.js")


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    return dealt_journal(tmp_path_factory.mktemp("scoreboard") / "journal.db", rounds=12)


def _contents(journal):
    """The journal's file and its WAL, byte for byte (the -shm file holds readers' locks: not data)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in journal.parent.glob("journal.db*")
            if not p.name.endswith("-shm")}


def _view(journal, lang):
    with JournalReader.open(journal) as reader:
        return TableView.from_entries(reader.entries()).to_json(lang)


def test_state_json_is_the_table_view_of_the_journal_in_each_language(journal):
    with serving(journal, lang="zh") as server:
        assert get_json(server, "/tables/T1/state.json") == _view(journal, "zh")  # the server's --lang
        assert get_json(server, "/tables/T1/state.json?lang=en") == _view(journal, "en")
        floor = get_json(server, "/floor.json?lang=en")
        assert [t["table"] for t in floor["tables"]] == ["T1"]
        assert floor["tables"][0]["big_road"] == _view(journal, "en")["roads"]["big_road"]
        # its table ended: the board follows it, and says the table is not running
        assert get_json(server, "/healthz") == {"ok": True, "tables": ["T1"], "following": True, "not_running": ["T1"]}
        status, headers, body = get(server, "/tables/T1")
        assert status == 200 and b'<html lang="zh-Hans">' in body
        assert "default-src 'self'" in headers["content-security-policy"]
        status, _, body = get(server, "/tables/T2/state.json")
        assert status == 404 and b"no table 'T2'" in body
        assert get(server, "/")[0] == 200
        for name in ("roads.js", "table.js"):  # a file is used only as the type it is sent with
            status, headers, _ = get(server, f"/static/{name}")
            assert status == 200 and headers["x-content-type-options"] == "nosniff", headers


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_no_route_accepts_anything_but_reading(journal, method):
    with JournalReader.open(journal) as reader:  # (a first reader may leave an empty -wal: not the server's doing)
        anchor = reader.anchor()
    before = _contents(journal)
    with serving(journal) as server:
        for route in ROUTES:
            assert get(server, route, method=method)[0] == 405, route
        assert get(server, "/healthz", method="HEAD")[0] == 200
    assert _contents(journal) == before
    with JournalReader.open(journal) as reader:
        assert reader.anchor() == anchor


def test_events_give_the_whole_state_on_connect_then_each_new_state_and_again_on_reconnect(tmp_path, journal):
    journal = copy_journal(journal, tmp_path)
    with serving(journal) as server:
        with EventReader(server, "/tables/T1/events") as events:
            version, state = events.next_state()
            assert state == get_json(server, "/tables/T1/state.json") and version == state["version"]
            # the table deals on, in another process: the page is pushed each new state
            subprocess.run([*SHOECTL, "run", "--journal", str(journal), "--speed", "max", "--rounds", "2",
                            "--display", "lines"], check=True, capture_output=True, cwd=tmp_path, timeout=120)
            versions = [version]
            while state["version"] < _view(journal, "en")["version"]:
                version, state = events.next_state()
                versions.append(version)
            assert versions == sorted(set(versions)) and len(versions) > 2
            assert state == _view(journal, "en")
        # a browser that reconnects gets the whole current state at once
        with EventReader(server, "/tables/T1/events?lang=zh") as again:
            assert again.next_state(timeout=2)[1] == _view(journal, "zh")
        with EventReader(server, "/events") as floor:
            assert floor.next_state(timeout=2)[1]["tables"][0]["version"] == state["version"]


def test_a_slow_client_keeps_only_the_newest_states():
    """A client that does not read holds at most QUEUE_LIMIT states; what it reads last is the
    newest state; the others are dropped, oldest first, and counted."""
    async def scenario():
        channel = Channel(Snapshot(0, {"en": '{"version": 0}'}))
        slow, fast = channel.subscribe(), channel.subscribe()
        got = [(await fast.next(1)).version]
        for v in range(1, 1000):
            channel.publish(Snapshot(v, {"en": f'{{"version": {v}}}'}))
            got.append((await fast.next(1)).version)
        assert got == list(range(1000))
        assert len(slow) == QUEUE_LIMIT and slow.dropped == 1000 - QUEUE_LIMIT
        drained = [(await slow.next(1)).version for _ in range(QUEUE_LIMIT)]
        assert drained == list(range(1000 - QUEUE_LIMIT, 1000))
        assert await slow.next(0.01) is None
        channel.close()
        assert slow.closed and channel.subscribers == 0
    asyncio.run(scenario())


def test_a_client_that_stops_reading_does_not_hold_the_server_up(tmp_path, journal):
    """A stalled event stream: the server's queue for it stays bounded while the journal grows,
    other clients are served, and the stalled client, reading again, ends with the newest state."""
    journal = copy_journal(journal, tmp_path)
    with serving(journal) as server:
        stalled = EventReader(server, "/tables/T1/events")
        try:
            subprocess.run([*SHOECTL, "run", "--journal", str(journal), "--speed", "max", "--rounds", "15",
                            "--display", "lines"], check=True, capture_output=True, cwd=tmp_path, timeout=120)
            newest = _view(journal, "en")["version"]
            # the server follows the journal by polling it: the table's last entries reach it a
            # moment after the table has ended (a loaded machine's CI run asked before they had)
            deadline = time.monotonic() + 30
            while get_json(server, "/tables/T1/state.json")["version"] != newest and time.monotonic() < deadline:
                time.sleep(0.05)
            assert get_json(server, "/tables/T1/state.json")["version"] == newest
            channel = server.source.table("T1")
            assert channel.subscribers == 1 and all(len(sub) <= QUEUE_LIMIT for sub in channel._subscribers)
            version, state = stalled.next_state()
            while version < newest:
                version, state = stalled.next_state()
            assert state == _view(journal, "en")
        finally:
            stalled.close()


def test_a_journal_whose_chain_breaks_is_shown_up_to_its_last_good_entry_and_health_says_why(tmp_path, journal):
    from tests.tampering import tamper

    journal = copy_journal(journal, tmp_path)
    tamper(journal, "UPDATE entries SET operator = 'mallory' WHERE seq = 20")
    with serving(journal) as server:
        deadline = time.monotonic() + 10
        while (status := get(server, "/healthz"))[0] != 503:
            assert time.monotonic() < deadline, status
            time.sleep(0.05)
        health = json.loads(status[2])
        assert health["ok"] is False and health["following"] is False and "entry 20" in health["reason"]
        assert get_json(server, "/tables/T1/state.json")["version"] == 19


def test_an_entry_no_table_wrote_stops_the_page_at_the_entry_before_it(tmp_path, journal):
    """A forger's entry that keeps the chain whole (re-hashed) but lacks what its kind needs: the
    scoreboard stops following there and /healthz names the entry, as ``journal replay`` would."""
    from controller.journal.chain import canonical_json
    from tests.tampering import rechain, rewrite, rows

    journal = copy_journal(journal, tmp_path)
    entries = rows(journal)
    bad = next(r for r in entries if r[2] == "round_start")
    payload = json.loads(bad[10])
    del payload["round"]
    entries = [(*r[:10], canonical_json(payload), *r[11:]) if r[0] == bad[0] else r for r in entries]
    rewrite(journal, rechain(entries))
    with serving(journal) as server:
        deadline = time.monotonic() + 10
        while (status := get(server, "/healthz"))[0] != 503:
            assert time.monotonic() < deadline, status
            time.sleep(0.05)
        assert f"entry {bad[0]}" in json.loads(status[2])["reason"], status[2]
        assert get_json(server, "/tables/T1/state.json")["version"] == bad[0] - 1


def test_a_stopping_scoreboard_sends_the_journals_last_state_before_the_stream_ends(tmp_path, journal):
    """Stopped right after the table's last entries (``shoectl run --scoreboard`` stops with its
    table), the scoreboard reads the journal once more and every open stream gets that state
    before it ends."""
    from controller.cli.cmd_scoreboard import scoreboard_server
    from controller.scoreboard.server import bind

    journal = copy_journal(journal, tmp_path)
    server = scoreboard_server(journal, bind("127.0.0.1", 0)).start()
    try:
        with EventReader(server, "/tables/T1/events") as events:
            events.next_state()
            with Journal.open(journal, table_id="T1") as table:  # the table's last word, then at once the stop
                table.append("fault", {"fault": "shoe:jam", "reason": "the last entry before the stop"})
            server.stop()
            last = None
            with contextlib.suppress(EOFError):
                while True:
                    last = events.next_state()
    finally:
        server.stop()
    assert last is not None and last[1] == _view(journal, "en") and last[1]["state"]["name"] == "fault"


def test_a_head_request_of_an_event_stream_holds_no_queue(journal):
    with serving(journal) as server:
        for _ in range(5):
            assert get(server, "/tables/T1/events", method="HEAD")[0] == 200
            assert get(server, "/events", method="HEAD")[0] == 200
        deadline = time.monotonic() + 10  # a hang detector: a loaded machine takes its time to clean up
        while server.source.table("T1").subscribers or server.source.floor.subscribers:
            assert time.monotonic() < deadline, "a HEAD request's event stream kept its queue"
            time.sleep(0.05)


def test_each_version_is_published_once_however_late_the_event_loop_takes_it(tmp_path, journal):
    """The source's thread hands each state to the event loop's thread, which sets the channel's
    ``latest`` when it runs. Found in CI: a look at the journal before the loop had run took the
    state as never published and published it again, so a client that subscribed in between got
    one version twice. Here the loop runs only after two looks."""
    from controller.scoreboard.sources import JournalSource

    journal = copy_journal(journal, tmp_path)
    source = JournalSource.open(journal)
    loop = asyncio.new_event_loop()
    try:
        source._loop = loop  # as start() sets it, without the thread: this test makes the looks
        source.catch_up()
        assert source.catch_up() is False  # nothing new in the journal
        channel = source.table(source.table_id)
        assert channel is not None
        sub = channel.subscribe()  # before the loop ran: nothing published yet
        loop.run_until_complete(asyncio.sleep(0))  # the loop takes what it was handed
        assert len(sub) == 1
        with Journal.open(journal, table_id=source.table_id) as writer:
            writer.append("note", {"text": "one more"})
        assert source.catch_up() is True
        assert source.catch_up() is False
        loop.run_until_complete(asyncio.sleep(0))
        versions = []
        while len(sub):
            versions.append(loop.run_until_complete(sub.next(1)).version)
        assert versions == sorted(set(versions)) and len(versions) == 2
    finally:
        source.close()
        loop.close()


# -- what any client that reaches the port can do (a review, 2026-12-03) ------------------------------

def _raw(server, timeout: float = 5.0):
    import socket
    from urllib.parse import urlsplit

    url = urlsplit(server.url)
    return socket.create_connection((url.hostname, url.port), timeout=timeout)


def _read_all(sock) -> bytes:
    data = b""
    while chunk := sock.recv(65536):
        data += chunk
    return data


def test_a_connection_that_sends_no_whole_request_is_answered_408_and_closed(journal, monkeypatch):
    """One that sends nothing, or a byte now and then, was held for ever (uvicorn times only the
    wait after a response), each holding a descriptor of the process, the table's under ``run``."""
    from controller.scoreboard import guarded_http

    monkeypatch.setattr(guarded_http, "HEAD_TIMEOUT_S", 0.5)
    with serving(journal) as server:
        with _raw(server) as silent, _raw(server) as dripping:
            started = time.monotonic()
            for byte in b"GET /healthz HTTP/1.1\r\n":  # never the blank line that ends the head
                try:
                    dripping.sendall(bytes([byte]))
                except OSError:
                    break
                time.sleep(0.05)
            for sock in (silent, dripping):
                answer = _read_all(sock)
                assert answer.startswith(b"HTTP/1.1 408 ") and answer.endswith(b"no request within 0.5 s: closed\n"), answer
            assert time.monotonic() - started < 5
        # an event stream is one request that lasts: it is not cut
        stream = EventReader(server, "/tables/T1/events")
        try:
            stream.next_state()
            time.sleep(1.0)
            assert server.source.table("T1").subscribers == 1
        finally:
            stream.close()


def test_a_kept_alive_connection_dripping_its_next_request_is_answered_408_and_closed(journal, monkeypatch):
    """A review of the scoreboard's network: the head limit covered a connection's first request
    only; after a response, uvicorn's keep-alive timer is cancelled by any byte, so one request
    served and then a byte now and then (of the next head, or of a body) held the connection for
    ever: 256 such took every slot, and every page and kiosk was answered 503."""
    from controller.scoreboard import guarded_http

    monkeypatch.setattr(guarded_http, "HEAD_TIMEOUT_S", 0.5)
    with serving(journal) as server:
        for drip in (b"GET /healthz HTTP/1.1\r\n", b"x" * 40):  # the next head; the rest of a body
            with _raw(server) as sock:
                body = b"Content-Length: 1000000\r\n" if drip.startswith(b"x") else b""
                sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + body + b"\r\n")
                first = sock.recv(65536)
                assert first.startswith(b"HTTP/1.1 200 "), first
                started = time.monotonic()
                for byte in drip:
                    try:
                        sock.sendall(bytes([byte]))
                    except OSError:
                        break
                    time.sleep(0.05)
                answer = first + _read_all(sock)
                assert answer.endswith(b"no request within 0.5 s: closed\n"), answer
                assert time.monotonic() - started < 5


def test_a_request_whose_body_breaks_http_is_answered_400_and_logs_no_error(journal, caplog):
    """A GET whose chunked body is not chunks: uvicorn answered 400 while the app was answering
    the request, and the app's answer raised inside h11: "Exception in ASGI application" and its
    traceback on the table's standard error."""
    with serving(journal) as server, caplog.at_level("WARNING"):
        for _ in range(3):
            with _raw(server) as sock:
                sock.sendall(b"GET /tables/T1/state.json HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
                assert _read_all(sock).startswith(b"HTTP/1.1 400 ")
        time.sleep(0.3)  # the app's own answer comes after the 400
        assert get(server, "/tables/T1/state.json")[0] == 200
    assert [r.getMessage() for r in caplog.records if r.levelname in ("ERROR", "CRITICAL")] == []


def test_connections_beyond_the_cap_are_answered_503_and_the_rest_served(journal, monkeypatch):
    from controller.scoreboard import guarded_http

    monkeypatch.setattr(guarded_http, "MAX_CONNECTIONS", 4)
    with serving(journal) as server:
        time.sleep(0.2)  # the readiness probe's connection is closed and forgotten
        held = [_raw(server) for _ in range(4)]
        try:
            time.sleep(0.2)  # accepted by the server's loop
            with _raw(server) as fifth:
                answer = _read_all(fifth)
            assert answer.startswith(b"HTTP/1.1 503 ") and b"retry-after: 5" in answer
            assert answer.endswith(b"the scoreboard is busy: 4 connections are open; try again later\n")
        finally:
            held.pop().close()
        deadline = time.monotonic() + 5
        while True:  # the freed slot serves again
            try:
                if get(server, "/healthz")[0] == 200:
                    break
            except (OSError, http.client.HTTPException):
                pass
            assert time.monotonic() < deadline, "a freed connection slot was never reused"
            time.sleep(0.05)
        for sock in held:
            sock.close()


def test_one_address_gets_a_share_of_the_connections_and_others_are_still_served(journal, monkeypatch):
    """A runaway client (a page reloading in a loop, a script) took every connection and every
    screen of the floor went dark. One address holds at most ``MAX_PER_ADDRESS``; loopback (a
    proxy or the kiosk on the table's host) is not counted unless the test says so."""
    from controller.scoreboard import guarded_http

    monkeypatch.setattr(guarded_http, "MAX_PER_ADDRESS", 2)
    with serving(journal) as server:
        time.sleep(0.2)  # the readiness probe's connection is closed and forgotten
        held = [_raw(server) for _ in range(3)]  # loopback: not counted
        try:
            time.sleep(0.2)
            assert get(server, "/healthz")[0] == 200
        finally:
            for sock in held:
                sock.close()
        monkeypatch.setattr(guarded_http, "LOOPBACK_COUNTED", True)
        time.sleep(0.2)  # the closed ones forgotten
        held = [_raw(server) for _ in range(2)]
        try:
            time.sleep(0.2)
            with _raw(server) as third:
                answer = _read_all(third)
            assert answer.startswith(b"HTTP/1.1 503 ") and b"retry-after: 5" in answer
            assert answer.endswith(b"the scoreboard is busy: 2 connections from your address are open; "
                                   b"try again later\n")
        finally:
            for sock in held:
                sock.close()


def test_a_head_request_of_an_event_stream_ends_and_the_connection_serves_on(journal):
    """HEAD on an event stream sent the stream's headers and never ended: the next request on the
    same connection waited for ever."""
    with serving(journal) as server:
        conn = connection(server, timeout=5)
        try:
            conn.request("HEAD", "/tables/T1/events")
            head = conn.getresponse()
            head.read()
            assert head.status == 200 and head.getheader("content-type").startswith("text/event-stream")
            conn.request("GET", "/healthz")
            assert conn.getresponse().status == 200
        finally:
            conn.close()


def test_the_board_says_whether_the_tables_program_runs_and_health_lists_the_tables_that_do_not(tmp_path, journal):
    """A review of the scoreboard: a board following the journal of a table killed minutes before
    still invited bets, and /healthz said all was well; a journal cannot tell a stopped table from
    a quiet one. The table's program holds its journal's writer lock: held here as it holds it."""
    from controller.locks import exclusive_lock
    from controller.journal.files import lock_path

    journal = copy_journal(journal, tmp_path)
    with serving(journal) as server, EventReader(server, "/tables/T1/events") as events:
        assert events.next_table_word() is False  # nobody writes this journal
        assert json.loads(get(server, "/healthz")[2])["not_running"] == ["T1"]
        fd = exclusive_lock(lock_path(journal))  # the table starts
        try:
            assert events.next_table_word() is True
            health = json.loads(get(server, "/healthz")[2])
            assert health["not_running"] == [] and health["ok"] is True
        finally:
            os.close(fd)  # the table is killed: its lock goes with it
        assert events.next_table_word() is False
        assert json.loads(get(server, "/healthz")[2])["not_running"] == ["T1"]
        with EventReader(server, "/tables/T1/events") as late:  # a page that connects now is told at once
            assert late.next_state()[0] == events_version(server) and late.next_table_word() is False


def events_version(server) -> int:
    return get_json(server, "/tables/T1/state.json")["version"]


def test_a_path_with_a_trailing_slash_is_not_redirected_to_the_hosts_the_client_names(journal):
    """Starlette's redirect to the path without its slash was built from the request's Host
    header: `Host: evil.example` got `location: http://evil.example/tables/T1` (a review of the
    scoreboard). No redirect: 404, as any other path the board does not serve."""
    with serving(journal) as server:
        conn = connection(server)
        try:
            conn.request("GET", "/tables/T1/", headers={"Host": "evil.example"})
            resp = conn.getresponse()
            resp.read()
        finally:
            conn.close()
        assert resp.status == 404 and resp.getheader("location") is None
        assert get(server, "/tables/T1")[0] == 200


def test_a_void_round_its_transaction_follows_with_a_new_shoe_is_not_shown_open_for_bets(tmp_path) -> None:
    """A review of the scoreboard: a voided round's result and the next shoe's start, written in one
    transaction, were published apart: for one look the board said "Place your bets" with the void
    as its last round, while the table shuffled. A round on no road (void, simulated) is shown only
    in the state its batch ends in."""
    from controller.journal import Record
    from controller.scoreboard.sources import JournalSource
    from tests.round_records import round_records

    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as writer:
        writer.append_batch([Record("shoe_start", {"decks": 8, "shoe": "S1"}, shoe="S1"), *round_records("S1", 1)])
    source = JournalSource.open(path)
    shown: list[tuple[str, str | None]] = []
    publish = source._publish_state

    def recorded() -> None:
        shown.append((source._view.state, (source._view.last_round or {}).get("kind")))
        publish()

    source._publish_state = recorded  # type: ignore[method-assign]
    try:
        source.catch_up()
        with Journal.open(path, table_id="T1") as writer:
            writer.append_batch([*round_records("S1", 2, "void"), Record("shoe_start", {"decks": 8, "shoe": "S2"}, shoe="S2")])
        source.catch_up()
    finally:
        source.close()
    assert ("betting", "void") not in shown, shown
    assert shown[-1] == ("shuffling", None)  # the new shoe's state, no round of it yet
