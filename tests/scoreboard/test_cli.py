"""``shoectl scoreboard`` and ``shoectl run --scoreboard`` on the command line: bad input is one
line and exit 2 with nothing served or created; a served scoreboard stops on SIGTERM."""
from __future__ import annotations

import signal
import sys
import socket
import sqlite3
import subprocess
import time

import pytest

from tests.cli_run import run
from tests.control.running_table import descriptor_limit, low_descriptor_limit
from tests.scoreboard.serving import SHOECTL, dealt_journal


def _one_line_error(code, out, err, *words):
    assert code == 2, err
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    for word in ("None", "Error", "Exception"):
        assert word not in err, err
    for word in words:
        assert word in err, err


@pytest.fixture
def busy_port():
    with socket.create_server(("127.0.0.1", 0)) as sock:
        yield sock.getsockname()[1]


def test_a_journal_that_does_not_exist_or_is_not_a_journal_is_refused(capsys, tmp_path, busy_port):
    _one_line_error(*run(capsys, "scoreboard", "--journal", str(tmp_path / "nope.db"), "--listen", "127.0.0.1:0"),
                    "no such journal")
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n")
    _one_line_error(*run(capsys, "scoreboard", "--journal", str(text), "--listen", "127.0.0.1:0"), "not a journal")
    empty = tmp_path / "empty.db"
    sqlite3.connect(empty).close()
    _one_line_error(*run(capsys, "scoreboard", "--journal", str(empty), "--listen", "127.0.0.1:0"), "not a journal")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.db", "notes.txt"]  # nothing created


@pytest.mark.parametrize("listen", ["8080", "localhost:8080", "127.0.0.1:", "127.0.0.1:65536", ":8080",
                                    "127.0.0.1:80a", "[::1]:x", "256.1.1.1:80", "127.0.0.1:8080:1"])
def test_a_bad_listen_address_is_refused(capsys, tmp_path, listen):
    _one_line_error(*run(capsys, "scoreboard", "--journal", str(tmp_path / "j.db"), "--listen", listen),
                    "--listen")


def test_a_port_in_use_is_refused(capsys, tmp_path, busy_port):
    journal = tmp_path / "journal.db"  # the port is tried first: nothing else is opened
    _one_line_error(*run(capsys, "scoreboard", "--journal", str(journal), "--listen", f"127.0.0.1:{busy_port}"),
                    f"--listen 127.0.0.1:{busy_port}: the port is in use")
    assert not journal.exists()


def test_run_with_a_scoreboard_port_in_use_creates_nothing(capsys, tmp_path, busy_port):
    journal = tmp_path / "var" / "journal.db"
    journal.parent.mkdir()  # a journal folder that exists: only var/ by default is made
    _one_line_error(*run(capsys, "run", "--journal", str(journal), "--rounds", "1",
                         "--scoreboard", f"127.0.0.1:{busy_port}"), "--scoreboard", "port is in use")
    assert not any(journal.parent.iterdir())


def test_an_unknown_language_is_refused(capsys, tmp_path):
    _one_line_error(*run(capsys, "scoreboard", "--journal", str(tmp_path / "j.db"), "--lang", "fr"), "--lang")


def test_the_scoreboard_serves_until_sigterm_and_says_a_limit_of_open_files_too_low(tmp_path):
    """Started with a limit of open files 60 above what it holds at its start, too few for its 256
    connections beside the 32 descriptors it keeps free, it says so once, as a warning."""
    journal = dealt_journal(tmp_path / "journal.db", rounds=1)
    proc = subprocess.Popen([*SHOECTL, "scoreboard", "--journal", str(journal), "--listen", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=low_descriptor_limit(60))
    try:
        line = proc.stdout.readline()
        assert line.startswith("scoreboard of T1: http://127.0.0.1:") and line.rstrip().endswith("/tables/T1"), line
        from urllib.request import urlopen

        url = line.split(": ", 1)[1].strip()
        deadline = time.monotonic() + 10
        while True:
            try:
                with urlopen(url + "/state.json", timeout=5) as resp:
                    assert resp.status == 200
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        limit = descriptor_limit(proc.pid)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=15) == 143
        err = proc.stderr.read()
        assert "Traceback" not in err
        said = [line for line in err.splitlines() if "can serve about" in line]
        assert len(said) == 1 and said[0].startswith(f"shoectl scoreboard: warning: the process may open "
                                                     f"{limit} files") \
            and "the scoreboard can serve about" in said[0] and "not 256" in said[0], err
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_the_floor_needs_exactly_one_source_and_usable_broker_files(capsys, tmp_path):
    _one_line_error(*run(capsys, "scoreboard", "--listen", "127.0.0.1:0"), "--journal", "--broker")
    _one_line_error(*run(capsys, "scoreboard", "--journal", str(tmp_path / "j.db"), "--broker", "mqtt://127.0.0.1:1",
                         "--listen", "127.0.0.1:0"), "one of them")
    not_a_certificate = tmp_path / "ca.pem"
    not_a_certificate.write_text("not a certificate\n")
    _one_line_error(*run(capsys, "scoreboard", "--broker", "mqtts://127.0.0.1:1", "--tls-ca", str(not_a_certificate),
                         "--listen", "127.0.0.1:0"), "--tls-ca", "not a certificate file")
    _one_line_error(*run(capsys, "scoreboard", "--broker", "http://127.0.0.1:1", "--listen", "127.0.0.1:0"))


@pytest.mark.parametrize("pace", ["-1", "fast", "10001", "2.5"])
def test_run_refuses_a_bad_pace_before_creating_anything(capsys, tmp_path, pace):
    journal = tmp_path / "var" / "journal.db"
    journal.parent.mkdir()  # a journal folder that exists: only var/ by default is made
    _one_line_error(*run(capsys, "run", "--journal", str(journal), "--rounds", "1", "--pace", pace), "--pace")
    assert not any(journal.parent.iterdir())


@pytest.mark.parametrize("listen", ["127.0.0.1", "localhost:80", "127.0.0.1:70000"])
def test_run_refuses_a_bad_scoreboard_address_before_creating_anything(capsys, tmp_path, listen):
    journal = tmp_path / "var" / "journal.db"
    journal.parent.mkdir()  # a journal folder that exists: only var/ by default is made
    _one_line_error(*run(capsys, "run", "--journal", str(journal), "--rounds", "1", "--scoreboard", listen),
                    "--scoreboard")
    assert not any(journal.parent.iterdir())


@pytest.mark.parametrize("options", [["--username", "u"], ["--tls-ca", "nope"], ["--mqtt-version", "3.1.1"],
                                     ["--mqtt-version", "5"], ["--client-id", "x"], ["--tls-cert", "c", "--tls-key", "k"],
                                     ["--username", "u", "--tls-ca", "nope", "--mqtt-version", "3.1.1"]])
def test_broker_options_without_a_broker_are_refused(capsys, tmp_path, options):
    """The broker's options beside --journal would be silently ignored: refused before anything is
    opened or bound (the journal is not even looked at)."""
    code, out, err = run(capsys, "scoreboard", "--journal", str(tmp_path / "j.db"), *options, "--listen", "127.0.0.1:0")
    _one_line_error(code, out, err, "--broker", options[0])


def test_an_hmac_key_with_a_broker_is_refused(capsys, tmp_path):
    _one_line_error(*run(capsys, "scoreboard", "--broker", "mqtt://127.0.0.1:1", "--hmac-key", str(tmp_path / "nope"),
                         "--listen", "127.0.0.1:0"), "--hmac-key", "--journal")


@pytest.mark.parametrize("argv", [["scoreboard", "--broker", "mqtt://127.0.0.1", "--listen", "127.0.0.1:0"],
                                  ["scoreboard", "--journal", "t.db", "--listen", "127.0.0.1:0"],
                                  ["run", "--scoreboard", "127.0.0.1:0", "--rounds", "1"]])
def test_without_the_scoreboard_extra_one_line_and_nothing_created(capsys, tmp_path, monkeypatch, argv):
    """An integrator review, on a table computer installed without extras: ``scoreboard --broker``
    printed a traceback (ModuleNotFoundError: starlette), and ``run --scoreboard`` said the right
    line only after creating the journal and the files beside it. The package is made missing
    here as Python finds it missing (None in ``sys.modules``)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, "starlette.applications", None)
    if argv[1] == "--journal":
        (tmp_path / "t.db").write_bytes(b"")
    before = sorted(p.name for p in tmp_path.iterdir())
    code, out, err = run(capsys, *argv)
    _one_line_error(code, out, err, "the scoreboard needs starlette", "pip install 'starlette<2,>=0.37' 'uvicorn<1,>=0.29' (shoectl's scoreboard extra)")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
