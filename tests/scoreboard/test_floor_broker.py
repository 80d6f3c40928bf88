"""Floor scoreboards (``shoectl scoreboard --broker``, subprocesses) on a real Mosquitto: two of
them side by side both stay connected (a client id each: the broker closes the older of two
connections with one id); a broker that goes away is one warning and its return one info line; an
``mqtts://`` broker whose certificate is not trusted is one line, exit 2."""
from __future__ import annotations

import json
import subprocess
import time

import pytest
from cli_run import run
from services.mosquitto import DISPLAY, Mosquitto
from tests.scoreboard.serving import SHOECTL, dealt_journal, stop_process


def _scoreboard(broker: Mosquitto) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([*SHOECTL, "scoreboard", "--broker", broker.url, *broker.login(DISPLAY),
                             "--listen", "127.0.0.1:0", "--log-level", "info"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("scoreboard of the floor: http://"), line
    return proc, line.split(": ", 1)[1].strip()


def _floor(url: str) -> dict:
    from urllib.request import urlopen

    with urlopen(url + "floor.json", timeout=5) as resp:
        return json.loads(resp.read())


def _wait(what: str, check, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out: {what}"
        time.sleep(0.1)


def _stopped(proc: subprocess.Popen) -> str:
    stop_process(proc, timeout=15)
    err = proc.stderr.read()
    if proc.stdout:
        proc.stdout.close()
    proc.stderr.close()
    return err


@pytest.mark.slow
def test_two_floor_scoreboards_on_one_broker_both_stay_and_say_an_outage_once(tmp_path, mosquitto) -> None:
    journal = dealt_journal(tmp_path / "journal.db", 2, 5)
    boards = [_scoreboard(mosquitto) for _ in range(2)]
    feed = subprocess.Popen([*SHOECTL, "feed", "--journal", str(journal), "--broker", mosquitto.url,
                             *mosquitto.login("T1")], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    errs = []
    try:
        for _, url in boards:
            _wait("each scoreboard shows the table", lambda: [t["table"] for t in _floor(url)["tables"]] == ["T1"])
        time.sleep(2)  # long enough for the broker to knock one off, had they the same id
        assert "already connected" not in mosquitto.log()
        mosquitto.restart(down_for=3)  # paho retries in 1-2 s: several failed attempts in the outage
        for proc, url in boards:
            _wait("each scoreboard back with the table", lambda: [t["table"] for t in _floor(url)["tables"]] == ["T1"])
        time.sleep(1.5)
    finally:
        errs = [_stopped(proc) for proc, _ in boards]
        _stopped(feed)
    for err in errs:
        assert "Traceback" not in err, err
        assert err.count("lost the connection to the broker") == 1, err
        assert err.count("cannot reach the broker") + err.count("refused the connection") == 0, err
        assert err.count("connected to the broker again") == 1, err
    assert "already connected" not in mosquitto.log()


def test_a_broker_whose_certificate_is_not_trusted_is_one_line(capsys, tls_broker: Mosquitto) -> None:
    code, out, err = run(capsys, "scoreboard", "--broker", tls_broker.tls_url, *tls_broker.login(DISPLAY),
                         "--listen", "127.0.0.1:0")
    assert code == 2 and out == "" and err.strip().count("\n") == 0, err
    assert f"the broker {tls_broker.tls_url} is not trusted: its certificate" in err
    assert "--tls-ca" in err
