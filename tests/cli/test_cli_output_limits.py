"""Files a command writes that must not be the ones it reads (``--plot``), and option values the
table's own parts cannot take (a control socket's backlog, an MQTT string): refused in the
user's words (exit 2), with nothing written."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.journal import Journal, Record
from controller.journal.anchors import AnchorFile, anchors_path, record_anchor
from cli_run import run


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    """A journal of one shoe started, anchored beside it."""
    path = tmp_path / "table.db"
    with Journal.open(path, table_id="T1") as j:
        j.append_batch([Record("shoe_start", {"decks": 8, "shoe": "S1"}, shoe="S1")])
        record_anchor(AnchorFile.beside(path), j)
    return path


@pytest.mark.parametrize("target", ["journal", "anchors"])
def test_an_audit_plot_over_the_journal_audited_is_refused(capsys, journal: Path, target: str) -> None:
    """`audit shuffle J --plot J` drew the chart over the journal it had just audited: lost."""
    output = journal if target == "journal" else anchors_path(journal)
    before = {p: p.read_bytes() for p in (journal, anchors_path(journal))}
    code, out, err = run(capsys, "audit", "shuffle", str(journal), "--plot", str(output))
    assert (code, out) == (2, "") and err.count("\n") == 1 and "--plot" in err and "give another file" in err, err
    assert {p: p.read_bytes() for p in before} == before


@pytest.mark.parametrize("kind", ["journal", "fifo", "folder"])
def test_a_simulation_plot_onto_what_is_no_chart_file_is_refused_before_simulating(
        capsys, journal: Path, tmp_path: Path, kind: str) -> None:
    """A journal named like a chart was drawn over; a FIFO was refused after the whole simulation
    in a library's words ("File or stream is not seekable."), without the file's name."""
    target = tmp_path / "chart.png"
    if kind == "journal":
        target = journal.rename(target)
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    code, out, err = run(capsys, "simulate", "--shoes", "2", "--plot", str(target))
    said = {"journal": "is an SQLite database (a journal?)", "fifo": "is a FIFO", "folder": "is a directory"}[kind]
    assert (code, out) == (2, "") and err == (f"shoectl simulate: error: argument --plot: {target} {said}, "
                                              f"not {'a file to write over' if kind == 'journal' else 'a regular file'}; "
                                              "give another file\n")


def test_a_control_socket_backlog_past_what_the_system_takes_is_a_usage_error(capsys, tmp_path: Path) -> None:
    """`--control-connections 2147483648` failed inside the socket's listen() with a traceback."""
    code, out, err = run(capsys, "run", "--journal", str(tmp_path / "t.db"), "--control-connections", "2147483648")
    assert (code, out) == (2, "")
    assert err.endswith("argument --control-connections: must be at most 65535, not 2147483648\n")
    assert not (tmp_path / "t.db").exists()


@pytest.mark.parametrize("option, value, said", [
    ("--client-id", "c" * 70_000, "--client-id is 70,000 bytes long; MQTT carries at most 65,535"),
    ("--username", "é" * 40_000, "--username is 80,000 bytes long; MQTT carries at most 65,535"),
    ("--username", "", "--username must not be empty"),
])
def test_an_mqtt_string_mqtt_cannot_carry_is_refused_before_connecting(capsys, journal: Path, option, value, said) -> None:
    """A client id or user name over 65,535 bytes of UTF-8 failed inside the MQTT client's thread
    (a traceback), and the command then waited for ever."""
    code, out, err = run(capsys, "feed", "--journal", str(journal), "--broker", "mqtt://127.0.0.1:1", option, value)
    assert (code, out, err) == (2, "", f"shoectl feed: error: {said}\n")


def test_a_password_mqtt_cannot_carry_is_refused(capsys, journal: Path, tmp_path: Path) -> None:
    secret = tmp_path / "password"
    secret.write_bytes(b"\0" * 100)
    code, out, err = run(capsys, "feed", "--journal", str(journal), "--broker", "mqtt://127.0.0.1:1",
                         "--username", "T1", "--password-file", str(secret))
    assert (code, out) == (2, "")
    assert err == f"shoectl feed: error: the password in {secret} holds a NUL character, which MQTT does not carry\n"
