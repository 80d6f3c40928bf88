"""``shoectl feed``'s refusals: one line on standard error in the user's words, exit 2, nothing
written (no cursor); and an unreachable broker at start, which is waited for, not an error."""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_run import run
from floor.feeds import stopped
from floor.helpers import SHOECTL
from services.mosquitto import Mosquitto, free_port


OUTAGE_LINES = ("cannot reach the broker", "lost the broker", "broker reachable again",  # an outage, its end
                "closed it each time before it took entry")  # and a broker that closes each connection (a loaded one)


def refused(capsys, *argv: str, outage_lines: bool = False) -> str:
    """Run ``shoectl feed ARGV``: exit 2 and one line on standard error, which is returned. With
    ``outage_lines``, the log's outage warnings before it are allowed (a loaded machine's broker
    may be slow to answer the first connection)."""
    code, out, err = run(capsys, "feed", *argv)
    assert code == 2, err
    lines = [line for line in err.strip().splitlines()
             if not (outage_lines and "[warning  ]" in line and any(w in line for w in OUTAGE_LINES))]
    err = "\n".join(lines)
    assert len(lines) == 1 and lines[0].startswith("shoectl feed: error: "), err
    assert "Traceback" not in err and "None" not in err and "Error" not in err, err
    return lines[0]


@pytest.mark.parametrize(("url", "says"), [
    ("http://127.0.0.1", "expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT]"),
    ("mqtt://127.0.0.1:99999", "the port must be a number from 1 to 65535"),
    ("mqtt://h:abc", "the port must be a number from 1 to 65535"),
    ("mqtt://127.0.0.1:0", "the port must be a number from 1 to 65535"),
    ("mqtt://T1:secret@127.0.0.1", "bad broker URL 'mqtt://***@127.0.0.1': no user name or password in the URL"),
    ("mqtt://T1@127.0.0.1:1883", "bad broker URL 'mqtt://***@127.0.0.1:1883': no user name or password in the URL"),
    ("mqtt://T1:se/cret@127.0.0.1", "bad broker URL 'mqtt://***@127.0.0.1': no user name or password in the URL"),
    ("mqtt://T1:se:cret@127.0.0.1", "bad broker URL 'mqtt://***@127.0.0.1': no user name or password in the URL"),
    ("mqtt:/T1:secret@127.0.0.1", "bad broker URL '***@127.0.0.1': no user name or password in the URL"),
    ("T1:secret@127.0.0.1", "bad broker URL '***@127.0.0.1': no user name or password in the URL"),
    ("mqtt://", "no host"),
    ("mqtt://127.0.0.1/shoectl", "only a host and a port"),
    # Names no resolver takes failed inside paho's thread, a traceback (the scoreboard went on without a broker)
    ("mqtt://a..b", "'a..b' is not a host name or an address"),
    ("mqtt://" + "a" * 64 + ".example", "is not a host name or an address"),
    ("mqtt://\udcff", "'\\xff' is not a host name or an address"),
])
def test_a_bad_broker_url_is_one_line(capsys, five_entry_journal: Path, url: str, says: str) -> None:
    line = refused(capsys, "--journal", str(five_entry_journal), "--broker", url)
    assert says in line and "cast to integer" not in line and "Port" not in line
    assert "cret" not in line  # a password given in the URL is not copied to the system's journal (security reviews)
    assert not Path(f"{five_entry_journal}.feed-cursor").exists()


def test_without_the_floor_extra_the_feed_says_so_and_leaves_nothing_beside_the_journal(
        capsys, monkeypatch: pytest.MonkeyPatch, five_entry_journal: Path) -> None:
    """Said before the journal and the cursor are opened: a packaging review found the lock, -shm
    and -wal files left beside a journal by a feed that could never have run."""
    monkeypatch.setitem(sys.modules, "paho", None)  # as if the floor extra were not installed
    monkeypatch.setitem(sys.modules, "paho.mqtt", None)
    monkeypatch.setitem(sys.modules, "paho.mqtt.client", None)
    before = sorted(p.name for p in five_entry_journal.parent.iterdir())
    line = refused(capsys, "--journal", str(five_entry_journal), "--broker", "mqtt://127.0.0.1:1")
    assert line.endswith("the floor needs paho-mqtt, which is not installed: pip install 'paho-mqtt<3,>=2.1' "
                         "'psycopg[binary]<4,>=3.1' (shoectl's floor extra)")
    assert sorted(p.name for p in five_entry_journal.parent.iterdir()) == before


def test_bad_login_options_are_one_line(capsys, five_entry_journal: Path, tmp_path: Path) -> None:
    base = ["--journal", str(five_entry_journal), "--broker", "mqtt://127.0.0.1:1"]
    assert "cannot read the password file" in refused(capsys, *base, "--username", "T1", "--password-file",
                                                      str(tmp_path / "nope"))
    empty = tmp_path / "empty"
    empty.write_text("\n")
    assert "first line is empty" in refused(capsys, *base, "--username", "T1", "--password-file", str(empty))
    assert refused(capsys, *base, "--username", "\udcff").endswith("--username is not UTF-8 text")  # was a traceback
    assert refused(capsys, *base, "--client-id", "\udcff").endswith("--client-id is not UTF-8 text")
    assert "--password-file needs --username" in refused(capsys, *base, "--password-file", str(empty))
    assert "need an mqtts:// broker URL" in refused(capsys, *base, "--tls-ca", str(empty))
    assert "cannot read the CA file: no such file" in refused(
        capsys, "--journal", str(five_entry_journal), "--broker", "mqtts://127.0.0.1:1", "--tls-ca",
        str(tmp_path / "ca.pem"))


def test_not_a_journal_and_a_cursor_of_another_journal_are_one_line(capsys, five_entry_journal: Path,
                                                                     tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.db"
    bogus.write_text("not a database at all, " * 100)
    assert "not a journal" in refused(capsys, "--journal", str(bogus), "--broker", "mqtt://127.0.0.1:1")
    assert "no such journal" in refused(capsys, "--journal", str(tmp_path / "none.db"), "--broker", "mqtt://127.0.0.1:1")
    other = tmp_path / "other.cursor"
    other.write_text(json.dumps({"format": "shoectl-feed-cursor/1", "table_id": "T1",
                                 "journal_created": "2020-01-01T00:00:00.000000Z", "seq": 3}))
    line = refused(capsys, "--journal", str(five_entry_journal), "--broker", "mqtt://127.0.0.1:1", "--cursor",
                   str(other))
    assert "the cursor of another journal" in line
    other.write_text("garbage")
    assert "not a feed cursor" in refused(capsys, "--journal", str(five_entry_journal), "--broker",
                                          "mqtt://127.0.0.1:1", "--cursor", str(other))


def test_a_wrong_password_is_one_clear_line(capsys, five_entry_journal: Path, mosquitto: Mosquitto,
                                            tmp_path: Path) -> None:
    wrong = tmp_path / "wrong"
    wrong.write_text("not-the-password\n")
    line = refused(capsys, "--journal", str(five_entry_journal), "--broker", mosquitto.url, "--username", "T1",
                   "--password-file", str(wrong), outage_lines=True)
    assert f"the broker {mosquitto.url} refused the connection as T1: not authorised" in line
    assert not Path(f"{five_entry_journal}.feed-cursor").exists()


@pytest.mark.parametrize(("setting", "says"), [
    ("max_qos 0", "it takes no QoS 1 messages (max_qos 0), which the floor needs to know that each entry arrived"),
    ("retain_available false", "it keeps no retained messages (retain_available false), which the table's status "
                               "and the connections' last wills need")])
def test_a_broker_set_up_without_what_the_feed_needs_is_one_clear_line(capsys, five_entry_journal: Path,
                                                                       setting: str, says: str) -> None:
    """A broker that takes no QoS 1 (or keeps no retained messages) refuses the feed's connection
    for good: the feed said "cannot reach the broker" and retried for ever, the person reading it
    looking for a network fault. Now it says what the broker lacks, exit 2, no cursor written."""
    broker = Mosquitto.start(settings=(setting,))
    try:
        line = refused(capsys, "--journal", str(five_entry_journal), "--broker", broker.url, *broker.login("T1"),
                       outage_lines=True)
    finally:
        broker.stop()
    assert line == f"shoectl feed: error: the broker {broker.url} refused the connection: {says}"
    assert not Path(f"{five_entry_journal}.feed-cursor").exists()


def test_a_table_cannot_feed_under_another_tables_name(capsys, five_entry_journal: Path,
                                                       mosquitto: Mosquitto) -> None:
    """A table's MQTT user name is its table id (docs/floor.md, Security): T1's journal fed as T2 is
    refused at the start, one line, exit 2, before the broker is reached and the cursor made. It
    was the ACL's refusal of its first entries, and under a broker that ties each client id to its
    account (as documented) the feed first took T2's own feed's connection (a review)."""
    line = refused(capsys, "--journal", str(five_entry_journal), "--broker", mosquitto.url, *mosquitto.login("T2"))
    assert line == ("shoectl feed: error: --username 'T2': this feed publishes table T1's journal, and a table's "
                    "MQTT user name is its table id (log in as T1)")
    assert not [p for p in five_entry_journal.parent.iterdir() if ".feed" in p.name], list(five_entry_journal.parent.iterdir())


def test_run_refuses_a_feed_under_another_tables_name_before_creating_anything(capsys, tmp_path: Path) -> None:
    password = tmp_path / "T2.password"
    password.write_text("secret\n")
    code, out, err = run(capsys, "run", "--journal", str(tmp_path / "j.db"), "--table-id", "T1", "--feed",
                         "mqtt://127.0.0.1:1", "--username", "T2", "--password-file", str(password))
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert "--username 'T2': this feed publishes table T1's journal" in err
    assert list(tmp_path.iterdir()) == [password]


def feed_waiting_for(journal: Path, url: str, log: Path) -> subprocess.Popen[str]:
    """``shoectl feed`` started towards the unreachable broker ``url``, once it says it waits."""
    with log.open("w") as err_file:
        feed = subprocess.Popen([*SHOECTL, "feed", "--journal", str(journal), "--broker", url],
                                stdout=subprocess.DEVNULL, stderr=err_file, text=True)
    deadline = time.monotonic() + 60
    while "cannot reach the broker" not in log.read_text():
        if feed.poll() is not None or time.monotonic() > deadline:
            stopped(feed, signal.SIGTERM)
            pytest.fail(log.read_text())
        time.sleep(0.05)
    return feed


def waiting_feed(journal: Path, url: str, log: Path, *, wait_more: float = 0.0) -> tuple[int, str]:
    """Start ``shoectl feed`` to the unreachable broker ``url``; once it says so (and ``wait_more``
    seconds later, still running), SIGTERM it: its exit code and standard error."""
    feed = feed_waiting_for(journal, url, log)
    try:
        time.sleep(wait_more)
        assert feed.poll() is None  # still waiting
    finally:
        code, _ = stopped(feed, signal.SIGTERM)
    return code, log.read_text()


@pytest.mark.slow
def test_an_unreachable_broker_at_start_is_waited_for_and_said_once(five_entry_journal: Path,
                                                                   tmp_path: Path) -> None:
    # nothing listens on a free port; two seconds: several more retries
    code, err = waiting_feed(five_entry_journal, f"mqtt://127.0.0.1:{free_port()}", tmp_path / "feed.err",
                             wait_more=2.0)
    assert code == 128 + signal.SIGTERM, err
    assert err.count("cannot reach the broker") == 1, err
    assert "retrying, the entries wait in the journal" in err
    assert "=None" not in err and "table=T1" in err, err  # no id without a value (issue 13)


def test_a_host_that_does_not_resolve_is_said_in_words(five_entry_journal: Path, tmp_path: Path) -> None:
    """Before: the outage line did not say why; now it names the host that does not resolve, in
    the user's words (no ``[Errno -8] Servname not supported``)."""
    code, err = waiting_feed(five_entry_journal, "mqtt://no-such-host.invalid", tmp_path / "feed.err")
    assert "cannot reach the broker mqtt://no-such-host.invalid (cannot resolve host no-such-host.invalid)" in err
    assert "Errno" not in err and "None" not in err, err


def test_a_tls_url_at_a_plain_port_and_a_plain_url_at_a_tls_port_are_said_in_words(
        five_entry_journal: Path, tls_broker: Mosquitto, tmp_path: Path) -> None:
    """Before: either mix-up was only "cannot reach the broker", retried for ever; now the outage
    line says the port answers but not in the URL's way (the feed still waits: a listener may be
    reconfigured)."""
    tls_at_plain = f"mqtts://127.0.0.1:{tls_broker.port}"
    _, err = waiting_feed(five_entry_journal, tls_at_plain, tmp_path / "tls.err")
    assert (f"cannot reach the broker {tls_at_plain} (port {tls_broker.port} of 127.0.0.1 answers, but not "
            "with TLS: a plain mqtt:// listener?)") in err, err
    plain_at_tls = f"mqtt://127.0.0.1:{tls_broker.tls_port}"
    _, err = waiting_feed(five_entry_journal, plain_at_tls, tmp_path / "plain.err")
    assert (f"cannot reach the broker {plain_at_tls} (port {tls_broker.tls_port} of 127.0.0.1 closed the "
            "connection without an MQTT answer: a TLS listener? then mqtts://)") in err, err


def test_nothing_listening_on_the_port_is_said_in_words(five_entry_journal: Path, tmp_path: Path) -> None:
    port = free_port()
    _, err = waiting_feed(five_entry_journal, f"mqtt://127.0.0.1:{port}", tmp_path / "feed.err")
    assert f"(nothing listens on port {port} of 127.0.0.1)" in err, err


def test_mqtt_3_1_1_is_refused_for_the_feed(capsys, five_entry_journal: Path) -> None:
    """Under 3.1.1 a PUBACK cannot refuse: Mosquitto acknowledges a publish its ACL denies and drops
    it, so the feed's cursor would pass entries the floor never got (docs/floor.md)."""
    line = refused(capsys, "--journal", str(five_entry_journal), "--broker", "mqtt://127.0.0.1:1", "--mqtt-version",
                   "3.1.1")
    assert "--mqtt-version 3.1.1: the feed needs MQTT 5" in line
    assert not Path(f"{five_entry_journal}.feed-cursor").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_root_does_not_feed_a_journal_another_user_owns(capsys, five_entry_journal: Path) -> None:
    """Root's feed of the service's journal made root's cursor and lock beside it, and the service's
    own `run --feed`, started again, could not write them: refused as `run` is, nothing made."""
    os.chown(five_entry_journal, 65534, 65534)
    before = sorted(p.name for p in five_entry_journal.parent.iterdir())
    line = refused(capsys, "--journal", str(five_entry_journal), "--broker", "mqtt://127.0.0.1:1")
    assert line.endswith("belongs to nobody; run its feed as that user (e.g. runuser -u nobody -- shoectl feed ...), "
                         "not as root: files root made beside it would keep the feed out"), line
    assert sorted(p.name for p in five_entry_journal.parent.iterdir()) == before


def test_run_refuses_a_bad_feed_option_before_creating_anything(capsys, tmp_path: Path) -> None:
    journal = tmp_path / "var" / "t.db"
    journal.parent.mkdir()  # a journal folder that exists: only var/ by default is made
    code, out, err = run(capsys, "run", "--journal", str(journal), "--rounds", "1", "--feed", "mqtts://127.0.0.1",
                         "--username", "T1", "--password-file", str(tmp_path / "missing"))
    assert code == 2 and err.strip().count("\n") == 0, err
    assert "cannot read the password file" in err
    assert not any(journal.parent.iterdir())  # nothing created


def test_run_refuses_a_cursor_that_is_not_one_before_creating_anything(capsys, tmp_path: Path) -> None:
    """Before: the journal, its anchors and its log were created, then ``not a feed cursor``."""
    journal = tmp_path / "j.db"
    Path(f"{journal}.feed-cursor").write_text("garbage\n")
    code, out, err = run(capsys, "run", "--journal", str(journal), "--rounds", "1", "--feed", "mqtt://127.0.0.1:1")
    assert code == 2 and err.strip().count("\n") == 0, err
    assert "j.db.feed-cursor: not a feed cursor" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["j.db.feed-cursor"]  # nothing created


def test_run_refuses_the_cursor_of_another_journal_before_creating_anything(capsys, five_entry_journal: Path,
                                                                            tmp_path: Path) -> None:
    new = tmp_path / "new.db"  # a journal still to be created: no cursor is its
    Path(f"{new}.feed-cursor").write_text(json.dumps({"format": "shoectl-feed-cursor/1", "table_id": "T1",
                                                      "journal_created": "2020-01-01T00:00:00.000000Z", "seq": 3}))
    code, out, err = run(capsys, "run", "--journal", str(new), "--rounds", "1", "--feed", "mqtt://127.0.0.1:1")
    assert code == 2 and "the cursor of another journal" in err and err.strip().count("\n") == 0, err
    assert not new.exists() and not Path(f"{new}.anchors").exists() and not new.with_suffix(".log").exists()


@pytest.mark.parametrize("option", [["--tls-ca", "ca.pem"], ["--username", "T1"], ["--password-file", "pw"],
                                    ["--mqtt-version", "5"], ["--client-id", "t1"], ["--tls-cert", "c.pem"]])
def test_run_refuses_broker_options_without_feed(capsys, tmp_path: Path, option: list[str]) -> None:
    """Before: ``shoectl run --tls-ca x`` dealt as if the option were not there."""
    journal = tmp_path / "var" / "t.db"
    journal.parent.mkdir()  # a journal folder that exists: only var/ by default is made
    code, out, err = run(capsys, "run", "--journal", str(journal), "--rounds", "1", *option)
    assert code == 2 and err.strip().count("\n") == 0, err
    assert f"{option[0]}: only with --feed URL" in err
    assert not any(journal.parent.iterdir())


@pytest.mark.parametrize("empty", ["", "  "])
def test_run_refuses_an_empty_feed_instead_of_running_unfed(capsys, tmp_path: Path, empty: str) -> None:
    """A review of bad inputs: `run --feed ''` (an unset variable in a unit) dealt with no feed and
    no word, and with `--client-id` it said --feed "is not given"."""
    journal = tmp_path / "var" / "t.db"
    journal.parent.mkdir()
    code, out, err = run(capsys, "run", "--journal", str(journal), "--rounds", "1", "--feed", empty)
    assert (code, err) == (2, "shoectl run: error: --feed: empty; give the floor's broker, mqtt://HOST[:PORT] or "
                              "mqtts://HOST[:PORT]\n")
    assert not any(journal.parent.iterdir())


def test_run_refuses_mqtt_3_1_1_for_its_feed(capsys, tmp_path: Path) -> None:
    journal = tmp_path / "var" / "t.db"
    journal.parent.mkdir()  # a journal folder that exists: only var/ by default is made
    code, out, err = run(capsys, "run", "--journal", str(journal), "--rounds", "1", "--feed", "mqtt://127.0.0.1:1",
                         "--mqtt-version", "3.1.1")
    assert code == 2 and "the feed needs MQTT 5" in err and err.strip().count("\n") == 0, err
    assert not any(journal.parent.iterdir())


def test_run_with_an_unreachable_broker_deals_on_and_says_so_once(tmp_path: Path) -> None:
    journal = tmp_path / "t.db"
    done = subprocess.run([*SHOECTL, "run", "--speed", "max", "--rounds", "3", "--journal", str(journal), "--display",
                           "lines", "--no-edge-monitor", "--feed", f"mqtt://127.0.0.1:{free_port()}"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("cannot reach the broker") == 1, done.stderr
    assert not Path(f"{journal}.feed-cursor").exists()  # nothing acknowledged; the journal keeps every entry


def test_a_second_feed_of_one_journal_is_refused_while_the_first_runs(capsys, five_entry_journal: Path,
                                                                     tmp_path: Path) -> None:
    """Two feeds of one journal would race on its cursor and, under the table's one MQTT client id,
    take the broker's session from each other without end (each reconnection drops the other).
    The second, a ``shoectl feed`` or a ``shoectl run --feed``, is refused in words while the first
    runs, before anything is created; once the first stops, a feed may start."""
    url = f"mqtt://127.0.0.1:{free_port()}"  # the first feed waits for it: it runs, holding the cursor
    first = feed_waiting_for(five_entry_journal, url, tmp_path / "first.err")
    try:
        second = subprocess.run([*SHOECTL, "feed", "--journal", str(five_entry_journal), "--broker", url],
                                capture_output=True, text=True, timeout=60)  # not refused: it would wait on
        assert (second.returncode, second.stdout) == (2, "")
        assert second.stderr == (f"shoectl feed: error: {five_entry_journal}: another feed of this journal is "
                                 f"running (it holds {five_entry_journal.name}.feed.lock, whatever its cursor); one "
                                 "feed per journal: stop that one first\n")
        before = sorted(p.name for p in five_entry_journal.parent.iterdir())
        journal_bytes = five_entry_journal.read_bytes()
        code, out, err = run(capsys, "run", "--journal", str(five_entry_journal), "--rounds", "1", "--feed", url)
        assert code == 2 and err.strip().count("\n") == 0 and "another feed of this journal is running" in err, err
        assert sorted(p.name for p in five_entry_journal.parent.iterdir()) == before
        assert five_entry_journal.read_bytes() == journal_bytes
        assert first.poll() is None  # the first goes on
        # With a cursor of its own it is refused the same way, and its cursor's lock file is not
        # made either (a review of the docs: it was, before the journal's lock refused it).
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        own = subprocess.run([*SHOECTL, "feed", "--journal", str(five_entry_journal), "--broker", url, "--cursor",
                              str(elsewhere / "mine.cursor")], capture_output=True, text=True, timeout=60)
        assert own.returncode == 2 and "another feed of this journal is running" in own.stderr, own.stderr
        assert list(elsewhere.iterdir()) == []
    finally:
        code, _ = stopped(first, signal.SIGTERM)
    assert code == 128 + signal.SIGTERM


@pytest.mark.parametrize(("value", "says"), [("64512", "must be at most 64511, not 64512"),
                                             ("65535", "must be at most 64511, not 65535"),
                                             ("0", "must be at least 1, not 0")])
def test_a_window_wider_than_mqtts_packet_ids_is_refused(capsys, five_entry_journal: Path, value: str,
                                                         says: str) -> None:
    """Each QoS 1 message in flight holds one of MQTT's 65,535 packet ids: a wider window was
    taken, and ids would have been reused while their messages were still unacknowledged; 1,024
    are left for the status and roads published beside the entries."""
    line = refused(capsys, "--journal", str(five_entry_journal), "--broker", "mqtt://127.0.0.1:1",
                   "--max-inflight", value)
    assert line == f"shoectl feed: error: argument --max-inflight: {says}"
    assert not Path(f"{five_entry_journal}.feed-cursor").exists()


def test_a_cursor_named_as_a_file_the_journal_keeps_is_refused(capsys, five_entry_journal: Path) -> None:
    """The feed writes its cursor over, whole: ``--cursor J-wal`` would have replaced the journal's
    write-ahead log (once its first acknowledgement came)."""
    wal = f"{five_entry_journal}-wal"
    line = refused(capsys, "--journal", str(five_entry_journal), "--broker", "mqtt://127.0.0.1:1", "--cursor", wal)
    assert line == (f"shoectl feed: error: {wal}: a file the journal {five_entry_journal} keeps beside it; give the "
                    "feed its own cursor file")
    assert b"shoectl-feed-cursor" not in Path(wal).read_bytes()  # (the feed's reader made it: SQLite's own)


def test_a_feed_refused_under_another_name_leaves_the_tables_own_feed_connected(
        five_entry_journal: Path, mosquitto: Mosquitto, tmp_path: Path) -> None:
    """A floor operator's review: a feed of T1's journal logged in as T2 (a typo, a copied journal)
    connected under T1's client id, which made the broker close T1's own feed's connection, and
    only then was refused. A refused input must not change the floor: it is now refused at its
    start, before it reaches the broker."""
    from floor.feeds import start_feed

    own = start_feed(mosquitto, five_entry_journal)
    try:
        time.sleep(1.5)  # connected and caught up
        copy = tmp_path / "copy.db"
        shutil.copyfile(five_entry_journal, copy)
        wrong = subprocess.run([*SHOECTL, "feed", "--journal", str(copy), "--broker", mosquitto.url,
                                *mosquitto.login("T2")], capture_output=True, text=True, timeout=60)
        assert wrong.returncode == 2 and "a table's MQTT user name is its table id" in wrong.stderr, wrong.stderr
        time.sleep(1.0)
    finally:
        code, said = stopped(own)
    assert "lost the broker" not in said, said


def test_a_cursor_in_a_missing_folder_is_named_as_the_cursor(capsys, five_entry_journal: Path) -> None:
    """A review of bad inputs: `feed --cursor /proc/x/c` blamed `/proc/x/c.lock`, a lock file the
    user never named."""
    line = refused(capsys, "--journal", str(five_entry_journal), "--broker", "mqtt://127.0.0.1:1", "--cursor",
                   "/proc/x/c")
    assert line == "shoectl feed: error: /proc/x/c: no such folder /proc/x"
