"""Floor scoreboards (``shoectl scoreboard --broker``, subprocesses) on a real Mosquitto: two of
them side by side both stay connected (a client id each: the broker closes the older of two
connections with one id); a broker that goes away is one warning and its return one warning too,
and ``/healthz`` answers 503 while it is away; an ``mqtts://`` broker whose certificate is not
trusted, or one that refuses the credentials, is one line, exit 2."""
from __future__ import annotations

import json
import subprocess
import time

import pytest
from cli_run import run
from services.mosquitto import DISPLAY, Mosquitto
from tests.scoreboard.serving import SHOECTL, dealt_journal, stop_process


def _scoreboard(broker: Mosquitto, *log_level: str, url: str | None = None) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([*SHOECTL, "scoreboard", "--broker", url or broker.url, *broker.login(DISPLAY),
                             "--listen", "127.0.0.1:0", *(log_level or ("--log-level", "info"))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    assert line.startswith("scoreboard of the floor: http://"), line
    return proc, line.split(": ", 1)[1].strip()


def _floor(url: str) -> dict:
    from urllib.request import urlopen

    with urlopen(url + "floor.json", timeout=5) as resp:
        return json.loads(resp.read())


def _health(url: str) -> tuple[int, dict]:
    from urllib.error import HTTPError
    from urllib.request import urlopen

    try:
        with urlopen(url + "healthz", timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except HTTPError as exc:
        return exc.code, json.loads(exc.read())


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


@pytest.mark.slow
def test_healthz_is_503_while_the_broker_is_away_and_its_return_is_said_at_the_default_level(mosquitto) -> None:
    """/healthz said ok while the broker was down, and the broker's return was an info line, not
    shown at the default level: the loss was the last word an operator saw (a floor operator's
    review)."""
    proc, url = _scoreboard(mosquitto, "--log-level", "warning")
    try:
        _wait("healthy once connected", lambda: _health(url)[0] == 200)
        assert _health(url)[1] == {"ok": True, "tables": [], "following": True, "not_running": []}
        mosquitto.down()
        _wait("503 while the broker is away", lambda: _health(url)[0] == 503)
        body = _health(url)[1]
        assert body["ok"] is False and body["following"] is False
        assert body["reason"] == f"lost the connection to the broker {mosquitto.url}", body
        mosquitto.up()
        _wait("healthy again", lambda: _health(url)[0] == 200)
        time.sleep(0.5)
    finally:
        err = _stopped(proc)
    assert "Traceback" not in err, err
    lost = [line for line in err.splitlines() if "lost the connection to the broker" in line]
    back = [line for line in err.splitlines() if "connected to the broker again" in line]
    assert len(lost) == 1 and len(back) == 1, err
    assert "warning" in lost[0] and "warning" in back[0], err


def test_a_plain_url_at_a_tls_port_is_said_in_words(tls_broker: Mosquitto) -> None:
    """Before: "cannot reach the broker" and nothing more, retried for ever; now the warning says
    what a probe of the port found (the scoreboard still waits: a listener may be reconfigured)."""
    plain_at_tls = f"mqtt://127.0.0.1:{tls_broker.tls_port}"
    proc, url = _scoreboard(tls_broker, "--log-level", "warning", url=plain_at_tls)
    try:
        _wait("503 while no broker answers", lambda: _health(url)[0] == 503)
        time.sleep(0.5)  # the warning is written just after the state /healthz reads
    finally:
        err = _stopped(proc)
    said = [line for line in err.splitlines() if "cannot reach the broker" in line]
    assert len(said) == 1, err
    assert (f"port {tls_broker.tls_port} of 127.0.0.1 closed the connection without an MQTT answer: a TLS "
            "listener? then mqtts://") in said[0], err


def test_credentials_the_broker_refuses_are_one_line_exit_2(capsys, mosquitto: Mosquitto, tmp_path) -> None:
    """The floor scoreboard served an empty floor for ever, /healthz ok, when the broker refused
    its credentials; the feed and the collector stop with one line (a floor operator's review)."""
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-password\n")
    code, out, err = run(capsys, "scoreboard", "--broker", mosquitto.url, "--username", DISPLAY,
                         "--password-file", str(wrong), "--listen", "127.0.0.1:0")
    lines = [line for line in err.strip().splitlines() if "cannot reach the broker" not in line]
    assert code == 2 and len(lines) == 1, err
    assert lines[0] == (f"shoectl scoreboard: error: the broker {mosquitto.url} refused the connection as "
                        f"{DISPLAY}: not authorised (a wrong user name or password, or a user it does not admit)")
