"""``shoectl scoreboard --journal PATH [--listen 127.0.0.1:8080] [--lang en|zh] [--hmac-key FILE]``:
the table's scoreboard, a live web page, from its journal followed read-only (docs/scoreboard.md);
``shoectl scoreboard --broker URL [broker options]``: the floor's, every table from the floor
feed's retained MQTT topics (``controller.scoreboard.mqtt_source``).

The listening socket is bound and the journal opened before anything is served, so a bad
``--listen``, a port in use, or a journal that does not exist or is not a journal is one line on
standard error and exit 2. It listens on 127.0.0.1 unless told otherwise (``--listen
0.0.0.0:8080`` serves the network). The URL of the table's page is the first line on standard
output. SIGTERM and SIGINT stop it: exit 143 or 130. ``shoectl run --scoreboard HOST:PORT``
serves the same app beside a running table, on a thread of its process
(``add_run_scoreboard_option``, ``bind_run_scoreboard``, ``start_run_scoreboard``).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from controller.cli.common import given_options
from controller.errors import UsageError, journal_to_read_argument, path_argument
from controller.floor.broker import BROKER_FLAGS
from controller.scoreboard.server import listen_address
from shoectl_config.extras import install_hint

DEFAULT_LISTEN = "127.0.0.1:8080"


def register(sub: argparse._SubParsersAction) -> None:
    from controller.floor.broker import add_broker_options

    p = sub.add_parser("scoreboard", help="the table's scoreboard: a live web page from its journal (read-only)",
                       description="Serve the scoreboard of the table whose journal is PATH: the roads, the last "
                                   "round, the shoe so far and the table's state, pushed to the browser as the "
                                   "journal grows; or, with --broker, every table of the floor from the floor "
                                   "feed's retained status and roads. Read-only: it never writes the journal nor "
                                   "accepts a command.")
    p.add_argument("--journal", type=journal_to_read_argument, metavar="PATH", help="the table's journal (followed read-only)")
    p.add_argument("--listen", type=listen_address, default=DEFAULT_LISTEN, metavar="HOST:PORT",
                   help=f"where to serve (default {DEFAULT_LISTEN}; 0.0.0.0:PORT serves every network)")
    p.add_argument("--lang", choices=["en", "zh"], default="en", help="the labels' language (default en)")
    p.add_argument("--hmac-key", type=path_argument, metavar="FILE", help="the journal's HMAC key file: its hashes are checked too")
    p.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    add_broker_options(p, required=False, client_id_default="shoectl-scoreboard-HOST-PID-N", url_help="instead of --journal: the floor's MQTT broker (mqtt://HOST[:PORT] "
                       "or mqtts://HOST[:PORT]); every table from its feed's retained status and roads")
    p.set_defaults(func=run, mqtt_version=None)  # None: not given (it is refused without --broker)


#: The broker's options (``controller.floor.broker.add_broker_options``): only beside ``--broker``.


def check_source_options(args: argparse.Namespace) -> None:
    """UsageError (one line) unless exactly one source is given and every option given belongs to
    it: the broker's options need ``--broker``, ``--hmac-key`` is the journal's. An option that
    would be silently ignored would let a person believe it is in force."""
    if (args.journal is None) == (args.broker is None):
        raise UsageError("give the table's --journal PATH, or the floor's --broker URL (one of them)")
    if args.broker is not None and args.hmac_key:
        raise UsageError("--hmac-key is the journal's key: it goes with --journal, not with --broker")
    if args.broker is None:
        given = given_options(args, BROKER_FLAGS)
        if given:
            raise UsageError(f"{', '.join(given)} {'needs' if len(given) == 1 else 'need'} --broker URL "
                             "(the floor's scoreboard); the table's scoreboard reads its journal")


def add_run_scoreboard_option(parser: argparse.ArgumentParser) -> None:
    """``shoectl run --scoreboard HOST:PORT``."""
    parser.add_argument("--scoreboard", type=listen_address, metavar="HOST:PORT",
                        help="serve the table's scoreboard there too (e.g. 127.0.0.1:8080; read-only, from the journal "
                             "like shoectl scoreboard; ?lang=zh for Chinese labels)")


def bind_run_scoreboard(args: argparse.Namespace) -> Any:
    """``shoectl run``'s scoreboard socket, bound before anything is created (a port in use: one
    line, exit 2), or None without ``--scoreboard``."""
    from controller.scoreboard.server import bind

    if args.scoreboard is None:
        return None
    require_scoreboard_extra()
    return bind(*args.scoreboard, option="--scoreboard")


def require_scoreboard_extra() -> None:
    """``UsageError`` (one line) when what serves the page (the ``scoreboard`` extra: Starlette,
    uvicorn) is not installed: said before anything is bound, read or created."""
    try:
        import starlette.applications  # noqa: F401, PLC0415
        import uvicorn  # noqa: F401, PLC0415
    except ImportError as exc:
        raise UsageError(f"the scoreboard needs {exc.name or 'starlette and uvicorn'}: "
                         f"{install_hint('scoreboard')}") from None


def start_run_scoreboard(sock: Any, journal: Path, hmac_key: bytes | None) -> Any:
    """The scoreboard of the table ``shoectl run`` is running, served on a thread of the process
    from ``sock``, following the journal like an outside reader; its URL on standard error.
    None when ``sock`` is None."""
    if sock is None:
        return None
    server = scoreboard_server(journal, sock, hmac_key=hmac_key).start()
    print(f"scoreboard: {server.url}/tables/{server.table_id}", file=sys.stderr, flush=True)
    for warning in server.warnings:
        print(f"!! {warning}", file=sys.stderr, flush=True)
    return server


def scoreboard_server(journal: str | Path, sock: Any, *, lang: str = "en", hmac_key: bytes | None = None) -> Any:
    """The ``ScoreboardServer`` of the journal at ``journal`` on the bound socket ``sock``, not
    started yet (``.start()`` serves on a thread, ``.serve()`` on this one). JournalError for a
    journal that cannot be followed (``sock`` is then closed)."""
    try:
        require_scoreboard_extra()
        from controller.scoreboard.app import create_app
        from controller.scoreboard.server import ScoreboardServer
        from controller.scoreboard.sources import JournalSource

        source = JournalSource.open(journal, hmac_key=hmac_key)
    except BaseException:
        sock.close()
        raise
    return ScoreboardServer(create_app(source, lang), sock, source)


def floor_server(args: argparse.Namespace, sock: Any) -> Any:
    """The ``ScoreboardServer`` of the floor from the broker of ``args`` (``--broker`` and its
    options) on the bound socket ``sock``, not started. BrokerError (one line) for bad options and
    for an ``mqtts://`` broker whose certificate is not trusted (``check_tls_trust``)."""
    try:
        require_scoreboard_extra()
        from controller.floor.broker import broker_options
        from controller.floor.broker_probe import check_tls_trust
        from controller.scoreboard.app import create_app
        from controller.scoreboard.mqtt_source import MqttFloorSource
        from controller.scoreboard.server import ScoreboardServer

        options = broker_options(argparse.Namespace(**{**vars(args), "mqtt_version": args.mqtt_version or "5"}))
        source = MqttFloorSource(options)  # TLS files that do not load are refused first
        check_tls_trust(options)
    except BaseException:
        sock.close()
        raise
    return ScoreboardServer(create_app(source, args.lang), sock, source)


def run(args: argparse.Namespace) -> int:
    from controller.cli.stopping import run_until_signalled, signals_held
    from controller.journal.chain import load_hmac_key
    from controller.logconfig import configure_logging
    from controller.scoreboard.server import bind

    check_source_options(args)
    require_scoreboard_extra()
    configure_logging(level=args.log_level)
    with signals_held("shoectl scoreboard") as held:  # a stop sent once the address is printed is a clean stop
        if args.broker is not None:
            server = floor_server(args, bind(*args.listen))
            print(f"scoreboard of the floor: {server.url}/", flush=True)
        else:
            key = load_hmac_key(args.hmac_key) if args.hmac_key else None
            server = scoreboard_server(args.journal, bind(*args.listen), lang=args.lang, hmac_key=key)
            print(f"scoreboard of {server.table_id}: {server.url}/tables/{server.table_id}", flush=True)
        for warning in server.warnings:
            print(f"{args.prog}: warning: {warning}", file=sys.stderr, flush=True)
        stopped_by = run_until_signalled(server.serve, server.stop, name="shoectl scoreboard", held=held,
                                         kept="the scoreboard only reads: nothing is lost", what="the scoreboard")
    server.stop()
    return 0 if stopped_by is None else 128 + stopped_by
