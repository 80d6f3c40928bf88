"""The feed over TLS (``mqtts://``) to a real Mosquitto with a throwaway CA: it publishes when told
the CA (``--tls-ca``); a broker whose certificate it cannot trust is one line, exit 2 (retrying
cannot help)."""
from __future__ import annotations

from pathlib import Path

from cli_run import run
from floor.feeds import start_feed, stopped
from floor.helpers import broker_login
from floor.mqtt_clients import Subscriber
from services.mosquitto import COLLECTOR, Mosquitto


def test_the_feed_publishes_over_tls_with_the_brokers_ca(tls_broker: Mosquitto, five_entry_journal: Path) -> None:
    _every_entry_over_tls(tls_broker, five_entry_journal, "tls-sub")


def _every_entry_over_tls(tls_broker: Mosquitto, journal: Path, subscriber_id: str) -> None:
    """A ``shoectl feed`` told the broker's CA publishes the five entries of ``journal``: a
    subscriber sees each."""
    sub = Subscriber(tls_broker, COLLECTOR, "shoectl/v1/tables/+/journal", client_id=subscriber_id)
    feed = start_feed(tls_broker, journal, "--tls-ca", str(tls_broker.ca_file), broker_url=tls_broker.tls_url)
    try:
        sub.wait_for(lambda: len(sub.payloads("shoectl/v1/tables/T1/journal")) == 5, "every entry over TLS")
    finally:
        stopped(feed)
        sub.close()


def test_a_broker_it_cannot_trust_is_one_line(capsys, tls_broker: Mosquitto, five_entry_journal: Path) -> None:
    code, out, err = run(capsys, "feed", "--journal", str(five_entry_journal), "--broker", tls_broker.tls_url,
                         *tls_broker.login("T1"))
    assert code == 2, err
    assert err.strip().count("\n") == 0, err
    # in words (a floor operator's review: "its certificate self-signed certificate in certificate chain")
    assert f"the broker {tls_broker.tls_url} is not trusted: its certificate is signed by a CA this machine does " \
           "not trust (give its CA with --tls-ca FILE)" in err, err
    assert not Path(f"{five_entry_journal}.feed-cursor").exists()


def test_tls_files_that_cannot_be_used_are_said_in_words(capsys, tls_broker: Mosquitto, five_entry_journal: Path,
                                                         tmp_path: Path) -> None:
    """Before: ``cannot use the TLS files: [SSL] PEM lib (_ssl.c:3905)``. Now which file, and why."""
    root, url = tls_broker.root, tls_broker.tls_url
    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not PEM at all\n")
    cases = [
        (["--tls-ca", str(garbage)], f"--tls-ca {garbage}: not a certificate file (PEM)"),
        (["--tls-cert", str(garbage), "--tls-key", str(root / "server.key")],
         f"--tls-cert {garbage}: not a certificate file (PEM)"),
        (["--tls-cert", str(root / "server.pem"), "--tls-key", str(garbage)],
         f"--tls-key {garbage}: not a private key file"),
        (["--tls-cert", str(root / "server.pem"), "--tls-key", str(root / "ca.key")],
         "the TLS key does not match the certificate"),
        (["--tls-cert", str(root / "server.pem")], "holds no private key; give it with --tls-key FILE"),
    ]
    for options, says in cases:
        ca = [] if "--tls-ca" in options else ["--tls-ca", str(tls_broker.ca_file)]  # given once
        code, out, err = run(capsys, "feed", "--journal", str(five_entry_journal), "--broker", url, *ca, *options)
        assert code == 2 and err.strip().count("\n") == 0, err
        assert says in err, err
        assert "_ssl.c" not in err and "[SSL" not in err and "PEM lib" not in err, err
    assert not Path(f"{five_entry_journal}.feed-cursor").exists()


def test_a_broker_certificate_for_another_name_is_said_in_words(capsys, tls_broker: Mosquitto,
                                                                five_entry_journal: Path) -> None:
    """The broker's certificate names 127.0.0.1; asked for as localhost it does not name it (the
    line pasted OpenSSL's "Hostname mismatch, certificate is not valid for 'localhost'.")."""
    url = tls_broker.tls_url.replace("127.0.0.1", "localhost")
    code, out, err = run(capsys, "feed", "--journal", str(five_entry_journal), "--broker", url,
                         "--tls-ca", str(tls_broker.ca_file), *tls_broker.login("T1"))
    assert code == 2 and err.strip().count("\n") == 0, err
    assert err.strip().endswith(f"the broker {url} is not trusted: its certificate does not name localhost"), err


def test_a_table_fed_to_a_broker_it_cannot_trust_is_refused_before_it_starts(capsys, tls_broker: Mosquitto,
                                                                             tmp_path: Path) -> None:
    """``run --feed`` to a broker whose certificate is not trusted: said when the feed's thread
    ended, with the table dealing on and the feed's cursor locks held by it, so that a ``shoectl
    feed`` started with the right CA was refused as a second feed (a review of the floor's
    threads). It is now refused as any bad option is: one line, exit 2, nothing created."""
    journal = tmp_path / "t1.db"
    code, out, err = run(capsys, "run", "--journal", str(journal), "--rounds", "1", "--speed", "max", "--display",
                         "lines", "--feed", tls_broker.tls_url, *tls_broker.login("T1"))
    assert code == 2 and err.strip().count("\n") == 0, err
    assert f"the broker {tls_broker.tls_url} is not trusted" in err, err
    assert not journal.exists() and not Path(f"{journal}.feed-cursor").exists()


def test_a_feed_thread_that_ends_at_once_lets_another_feed_of_the_journal_start(
        capsys, tls_broker: Mosquitto, five_entry_journal: Path, monkeypatch) -> None:
    """The feed's thread of ``run --feed`` ended before its loop (the broker refused there) and
    kept the cursor's locks for the table's life. Its end now releases them: the feed the floor
    operator starts next is taken."""
    import controller.floor.feed as feed_module
    from controller.cli.cmd_feed import FeedThread
    from controller.floor.broker import BrokerError

    def untrusted(options, timeout=5.0):
        raise BrokerError(f"the broker {options.url} is not trusted")

    monkeypatch.setattr(feed_module, "check_tls_trust", untrusted)  # as a certificate changed after the start
    options = broker_login(tls_broker, "T1", tls=True)
    thread = FeedThread(five_entry_journal, options, None).start()
    thread.stop()
    assert isinstance(thread.error, BrokerError)
    monkeypatch.undo()
    _every_entry_over_tls(tls_broker, five_entry_journal, "tls-sub-2")
