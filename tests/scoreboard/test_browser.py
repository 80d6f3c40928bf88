"""The scoreboard in a real browser (headless Chromium through Selenium, ``tests/scoreboard/
browser.py``): an emulated table deals a whole shoe with ``shoectl run --scoreboard`` and the
page is checked against the journal at every state it draws.

Artifacts (kept, git-ignored): ``artifacts/scoreboard/`` at the project root, or ``$SCOREBOARD_ARTIFACTS``:
``table-en.png`` and ``table-zh.png`` (1920x1080, mid-shoe) and ``latency.json`` (journal entry
to page, ms)."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.scoreboard.browser import chrome, screen_size
from tests.scoreboard.page import SEEN_JS, SHOWN_JS, WATCH_JS, JournalTruth
from tests.scoreboard.serving import run_scoreboard_url

SHOECTL = [sys.executable, "-m", "controller.cli.main"]
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT_ROUND = 20
DERIVED = ("big_eye_boy", "small_road", "cockroach_pig")


def artifacts() -> Path:
    path = Path(os.environ.get("SCOREBOARD_ARTIFACTS") or ROOT / "artifacts" / "scoreboard")
    path.mkdir(parents=True, exist_ok=True)
    return path


def _screenshot(driver, name: str) -> Path:
    path = artifacts() / name
    driver.save_screenshot(str(path))
    return path


def _screenshots(driver, en: str, zh: str) -> dict[str, Path]:
    """The English page (window ``en``) and the Chinese one (window ``zh``) as they stand, kept as
    artifacts; the driver is left on ``en``."""
    shots = {"en": _screenshot(driver, "table-en.png")}
    driver.switch_to.window(zh)
    shots["zh"] = _screenshot(driver, "table-zh.png")
    driver.switch_to.window(en)
    return shots


@pytest.mark.slow
def test_a_whole_shoe_dealt_on_the_emulator_is_on_the_page_at_every_state(tmp_path):
    """Every state the page draws while a shoe is dealt (the emulated shuffle at 5 times real time
    leaves the page a few seconds to open before the first round; the dealer paced at 10 ms per
    action) shows what the journal holds at that version: the roads as ``shoectl roadmap --json``
    computes them (placed on screen as ``roadmaps.fold`` places them), the ask indicators, the
    shoe's counts, and the
    last round's hands as ``shoectl journal replay --json`` gives it; every round completed once
    the page was open is drawn (those before are in its first state); the last state of the shoe
    equals those commands' output for the finished journal; a page left open for the whole shoe
    holds no more nodes than a fresh page of the same state, and, its server gone and back,
    reconnects by itself to the whole current state; the floor page shows the table."""
    journal = tmp_path / "journal.db"
    with chrome(tmp_path) as driver:
        proc = subprocess.Popen([*SHOECTL, "run", "--journal", str(journal), "--speed", "5", "--pace", "10",
                                 "--seed", "14", "--shoes", "1", "--display", "lines", "--scoreboard", "127.0.0.1:0"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
        try:
            url = run_scoreboard_url(proc)
            en = driver.current_window_handle
            driver.get(url)
            driver.execute_script(WATCH_JS)
            driver.switch_to.new_window("window")
            screen_size(driver)
            zh = driver.current_window_handle
            driver.get(url + "?lang=zh")
            driver.switch_to.window(en)
            seen, shots = [], {}
            while proc.poll() is None:
                seen += driver.execute_script(SEEN_JS)
                if not shots and seen and seen[-1]["round"] >= SCREENSHOT_ROUND:
                    shots = _screenshots(driver, en, zh)
                time.sleep(0.05)
            assert proc.wait(timeout=10) == 0, proc.stderr.read()
            time.sleep(0.3)  # the page's last state: the next shoe, shuffling
            seen += driver.execute_script(SEEN_JS)
            if not shots:  # this process was starved for the whole rest of the shoe (a loaded machine)
                shots = _screenshots(driver, en, zh)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            proc.stderr.close()
        # the server stopped with the table; the journal gets one more entry and a scoreboard comes
        # back on the same port: the open page reconnects by itself and shows the whole new state
        end, fresh = _reconnected_and_fresh(driver, journal, url, zh)
        _check_fold_in_browser(driver)
        # (an event stream that fails while its server is stopping or away is retried: not a problem)
        problems = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"
                    and not ("/events" in e["message"] and "net::ERR_" in e["message"])]

    assert problems == []  # no script error, no resource refused or missing
    truth = JournalTruth(journal)
    shoe = truth.shoe_starts[0][1]
    rounds_drawn = set()
    for shown in seen:
        want = truth.at(shown["version"])
        assert shown["shoe"] == want["shoe"], shown["version"]
        assert shown["roads"] == want["roads"], f"roads at version {shown['version']}"
        assert shown["counts"] == want["counts"], f"counts at version {shown['version']}"
        assert shown["last"] == want["last"], f"last round at version {shown['version']}"
        assert shown["ask"] == want["ask"], f"ask at version {shown['version']}"
        _check_places(shown)
        if shown["shoe"] == shoe and shown["last"]:
            rounds_drawn.add(shown["last"]["round"])
    # every round completed once the page was open (those before are in its first state's roads)
    dealt = [d["round"] for seq, d in truth.rounds if d["shoe"] == shoe and seq > seen[0]["version"]]
    assert len(dealt) > 20 and set(dealt) <= rounds_drawn, f"rounds never drawn: {sorted(set(dealt) - rounds_drawn)}"

    # the last state of the dealt shoe equals the commands' own output for the finished journal
    final = max((s for s in seen if s["shoe"] == shoe), key=lambda s: s["version"])
    roadmap = subprocess.run([*SHOECTL, "roadmap", str(journal), "--json"], capture_output=True, text=True, check=True)
    assert final["roads"] == json.loads(roadmap.stdout)
    replayed = subprocess.run([*SHOECTL, "journal", "replay", str(journal), "--json", "--shoe", shoe],
                              capture_output=True, text=True, check=True)
    last = [d for d in map(json.loads, replayed.stdout.splitlines()) if d["type"] == "round"][-1]
    assert final["last"]["round"] == last["round"]
    assert final["last"]["player"]["cards"] == [c["card"] for c in last["cards"] if c["to"] == "player"]
    assert final["last"]["banker"]["total"] == last["banker"]["total"]

    # the page open for the whole shoe, reconnected, shows the journal's newest entry, and holds
    # what a fresh page of the same state holds
    assert end["version"] == fresh["version"] == truth.entries[-1].seq
    assert end["state"] == "fault" and end["shoe"] != shoe and end["roads"]["bead_plate"] == []
    assert end["nodes"] == fresh["nodes"]
    assert fresh["floor"] == [{"table": "T1", "state": "fault", "href": "/tables/T1", "big": 0}]
    for lang, path in shots.items():
        assert path.stat().st_size > 20_000, lang
    assert set(shots) == {"en", "zh"}
    _report_latency(seen, truth)


FLOOR_JS = """return Array.prototype.slice.call(document.querySelectorAll('.tile')).map(function (t) {
  return {table: t.dataset.table, state: t.querySelector('.state').dataset.state,
          href: t.getAttribute('href'), big: t.querySelectorAll('[data-road="big"] .cell').length}; });"""


def _wait_for(driver, script: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not driver.execute_script(script):
        assert time.monotonic() < deadline, f"timed out waiting for: {script}"
        time.sleep(0.05)


def _reconnected_and_fresh(driver, journal: Path, url: str, other_window: str) -> tuple[dict, dict]:
    """A fault journaled after the table stopped, a scoreboard of ``journal`` started on the port
    of ``url`` (the stopped one's): what the open page shows once it has reconnected, and what a
    fresh page of the same state shows (in ``other_window``), with ``floor``: the floor page's tiles."""
    from controller.cli.cmd_scoreboard import scoreboard_server
    from controller.journal import Journal
    from controller.scoreboard.server import bind

    _wait_for(driver, "return document.body.classList.contains('stale')")  # it saw the server go
    with Journal.open(journal, table_id="T1") as table:
        version = table.append("fault", {"fault": "shoe:jam", "reason": "the shoe jammed"}).seq
    server = scoreboard_server(journal, bind("127.0.0.1", urlsplit(url).port)).start()
    try:
        _wait_for(driver, f"return document.body.dataset.version === '{version}' "
                          "&& !document.body.classList.contains('stale')")
        end = driver.execute_script(SHOWN_JS)
        end["state"] = driver.execute_script("return document.getElementById('state').dataset.state")
        driver.switch_to.window(other_window)
        driver.get(url)
        _wait_for(driver, f"return document.body.dataset.version === '{version}'")
        fresh = driver.execute_script(SHOWN_JS)
        driver.get(f"{server.url}/")  # the floor page: this one table
        _wait_for(driver, "return document.body.dataset.version !== ''")
        fresh["floor"] = driver.execute_script(FLOOR_JS)
        return end, fresh
    finally:
        server.stop()


# Shoes whose roads have dragon tails: a streak longer than six turns right, a later long streak
# runs its tail above an earlier one, and a tail along the top row pushes the next column right.
TAILS = ("B " * 9 + "P " * 8 + "B " * 10 + "P " * 3 + "B " * 7 + "P",
         "P " * 12 + "B P " * 3 + "B " * 6 + "P " * 7 + "B B T B",
         "B B P B B B B B B B B P P P P P P P P P B P B " * 3)


DRAWN_JS = """var svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
var big = arguments[0] === 'big_road';
if (big) Roads.bigRoad(svg, arguments[1], arguments[2], 38, 48, {});
else Roads.derived(svg, arguments[0], arguments[1], arguments[2], 72, 17);
return Array.prototype.slice.call(svg.querySelectorAll('.cell')).map(function (c) {
  return [+c.dataset.col, +c.dataset.row, +c.dataset.x, +c.dataset.y]; });"""


def _check_fold_in_browser(driver) -> None:
    """The page's drawing of every road of ``TAILS`` puts each cell where ``roadmaps.fold`` does,
    given the state's ``roads`` and ``placed`` (the page places nothing itself)."""
    from controller.roadmaps import compute, fold, parse_results
    from controller.scoreboard.state import placed

    for letters in TAILS:
        roads = compute(parse_results(letters)).to_json()
        places = placed(roads)
        for name in ("big_road", *DERIVED):
            drawn = driver.execute_script(DRAWN_JS, name, roads[name], places[name])
            want = [[col, row] for col, column in enumerate(roads[name]) for row in range(len(column))]
            assert [d[:2] for d in drawn] == want, (letters, name)
            assert [d[2:] for d in drawn] == [[c.x, c.y] for c in fold(roads[name])], (letters, name)
            assert max(y for _, _, _, y in drawn) <= 5


def _check_places(shown: dict) -> None:
    """Each road's cells are where ``controller.roadmaps.fold`` puts them (six rows, dragon tails)."""
    from controller.roadmaps import fold

    for road in ("big_road", *DERIVED):
        assert shown["places"][road] == [[c.x, c.y] for c in fold(shown["roads"][road])], road


def _report_latency(seen: list[dict], truth: JournalTruth) -> None:
    """Journal entry (its ts) to the page showing its version, and its parts (to the event's
    arrival in the page; the page's parsing and drawing), with the machine's load average:
    printed and kept in latency.json (the page's first state is left out: it was journaled before
    the page was opened)."""
    from benchmarks.stats import percentile  # the project's one p99 (the root is on sys.path, as for tests.*)

    shown = [s for s in seen[1:] if s["version"] in truth.ts]
    if not shown:
        return

    def figures(values: list[float]) -> dict[str, float]:
        return {"median_ms": round(statistics.median(values), 1), "p99_ms": round(percentile(values, 99), 1),
                "max_ms": round(max(values), 1)}
    total = [(s["rendered_at"] / 1000 - truth.ts[s["version"]]) * 1000 for s in shown]
    arrival = [(s["received_at"] / 1000 - truth.ts[s["version"]]) * 1000 for s in shown]
    drawing = [s["rendered_at"] - s["received_at"] for s in shown]
    report = {"states": len(shown), **figures(total), "to_the_page": figures(arrival), "drawing": figures(drawing),
              "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()], "cores": os.cpu_count()}
    (artifacts() / "latency.json").write_text(json.dumps(report) + "\n")
    print(f"journal-to-page latency: {report}")


@pytest.mark.slow
def test_the_page_says_plainly_when_the_table_is_not_running_and_when_it_lost_the_board(tmp_path):
    """A review of the scoreboard: a table killed, stopped or ended left the board inviting bets
    ("Place your bets" in green, at most an ellipsis after it). The page now puts a banner over the
    last state, dimmed: "Not live: the table is not running" while the table's program does not
    hold its journal (here the test holds its writer lock as the table does), and "Not live: this
    screen lost the scoreboard" once the server has been gone for 5 s."""
    from controller.locks import exclusive_lock
    from controller.journal.files import lock_path
    from tests.scoreboard.serving import dealt_journal, serving

    journal = dealt_journal(tmp_path / "journal.db", rounds=6)
    banner = "var b = document.getElementById('not-live'); return b.hidden ? '' : b.dataset.why + '|' + b.innerText;"
    with chrome(tmp_path) as driver:
        screen_size(driver)
        fd = exclusive_lock(lock_path(journal))
        server = serving(journal)
        board = server.__enter__()
        try:
            driver.get(board.url.rstrip("/") + "/tables/T1")
            _wait_for(driver, "return document.body.dataset.version !== ''")
            assert driver.execute_script(banner) == ""  # the table runs: no banner
            os.close(fd)  # the table stops
            fd = None
            _wait_for(driver, "return !document.getElementById('not-live').hidden", timeout=10)
            why, words = driver.execute_script(banner).split("|", 1)
            assert why == "not_running" and "Not live: the table is not running" in words, words
            assert "no bets on it" in words and driver.execute_script("return document.body.classList.contains('not-live')")
            fd = exclusive_lock(lock_path(journal))  # it runs again
            _wait_for(driver, "return document.getElementById('not-live').hidden", timeout=10)
        finally:
            server.__exit__(None, None, None)  # the board goes away
            if fd is not None:
                os.close(fd)
        _wait_for(driver, "return document.getElementById('not-live').dataset.why === 'lost'", timeout=15)
        assert "Not live: this screen lost the scoreboard" in driver.execute_script(banner)


def test_a_page_whose_reconnection_is_turned_away_comes_back_when_the_board_does(tmp_path):
    """A review of the scoreboard's network: a browser gives an event stream up for good when its
    reconnection is answered with something other than a stream (a 503 from a full server, a 404
    from a floor scoreboard that has not heard of the table yet), and the page stayed dark, "Not
    live", until someone reloaded it. Here the board's port answers 503 for a while (a stand-in
    server), then the board comes back there: the page follows it again by itself."""
    import http.server
    import threading

    from controller.cli.cmd_scoreboard import scoreboard_server
    from controller.scoreboard.server import bind
    from tests.scoreboard.serving import dealt_journal, serving

    class Busy(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(503)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    journal = dealt_journal(tmp_path / "journal.db", rounds=3)
    with chrome(tmp_path) as driver:
        with serving(journal) as board:
            url = board.url.rstrip("/") + "/tables/T1"
            driver.get(url)
            _wait_for(driver, "return document.body.dataset.version !== ''")
        port = urlsplit(url).port
        busy = http.server.ThreadingHTTPServer(("127.0.0.1", port), Busy)
        thread = threading.Thread(target=busy.serve_forever, daemon=True)
        thread.start()
        try:
            _wait_for(driver, "return document.body.classList.contains('stale')")
            time.sleep(3.0)  # the browser's own reconnection answered 503: it gives the stream up
        finally:
            busy.shutdown()
            busy.server_close()
        server = scoreboard_server(journal, bind("127.0.0.1", port)).start()
        try:
            _wait_for(driver, "return !document.body.classList.contains('stale')", timeout=45)
        finally:
            server.stop()


@pytest.mark.slow
def test_the_page_fits_a_smaller_or_portrait_screen_whole(tmp_path):
    """A review of the scoreboard: the page, fixed at 1920x1080, cut off the newest big-road
    columns, the state and the limits on a 1280x720 or a portrait screen. It scales itself, whole,
    and again when the screen changes."""
    from tests.scoreboard.serving import dealt_journal, serving

    journal = dealt_journal(tmp_path / "journal.db", rounds=40)
    with chrome(tmp_path) as driver, serving(journal) as board:
        driver.get(board.url.rstrip("/") + "/tables/T1")
        _wait_for(driver, "return document.body.dataset.version !== ''")
        for width, height in ((1280, 720), (1080, 1920)):
            driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                   {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
            scale = min(width / 1920, height / 1080)
            _wait_for(driver, f"return Math.abs(+document.body.dataset.scale - {scale}) < 0.001")
            outside = driver.execute_script(
                "var w = window.innerWidth, h = window.innerHeight, out = [];"
                "['state', 'big-road', 'rules', 'ask', 'last-round'].forEach(function (id) {"
                "  var r = document.getElementById(id).getBoundingClientRect();"
                "  if (r.left < 0 || r.top < 0 || r.right > w + 0.5 || r.bottom > h + 0.5) out.push(id); });"
                "return out;")
            assert outside == [], (width, height)
