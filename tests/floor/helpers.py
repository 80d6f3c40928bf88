"""Helpers the floor's tests share (one copy of each): ``SHOECTL`` (the CLI as a process),
``HANG`` (seconds before a wait is declared hung: never a performance limit), ``wait_until``
(poll a condition, failing with what was awaited and, for a process, its output when it exits
first), ``query`` (rows of a SELECT on the store, none before its schema exists), ``count`` and
``stored_lines`` (a table's stored lines, each with its newline, as ``journal export`` wrote them).
"""
from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import psycopg

SHOECTL = [sys.executable, "-m", "controller.cli.main"]
HANG = 30.0


def wait_until(predicate: Callable[[], Any], what: str, *, timeout: float = HANG,
               process: subprocess.Popen[bytes] | None = None, output: Callable[[], str] = str) -> None:
    """Return once ``predicate()`` holds; AssertionError after ``timeout`` seconds, or at once when
    ``process`` has exited (with ``output()``, e.g. its standard error)."""
    end = time.monotonic() + timeout
    while not predicate():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the process exited {process.returncode} while waiting for {what}: {output()}")
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}: {output()}")
        time.sleep(0.1)


def query(db: str, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    try:
        with psycopg.connect(db) as conn:
            return conn.execute(sql, params).fetchall()
    except psycopg.errors.UndefinedTable:
        return []


def count(db: str, sql: str = "SELECT count(*) FROM entries") -> int:
    rows = query(db, sql)
    return rows[0][0] if rows else 0


def stored_lines(db: str, table: str = "T1") -> list[str]:
    return [line + "\n" for (line,) in query(db, "SELECT line FROM entries WHERE table_id = %s ORDER BY seq",
                                             (table,))]


def broker_login(broker: Any, user: str, *, tls: bool = False, **options: Any) -> Any:
    """``BrokerOptions`` for an in-process client of ``broker`` (``services.mosquitto.Mosquitto``)
    as ``user`` with its password; ``tls``: its ``mqtts://`` port."""
    from controller.floor.broker import BrokerOptions
    from services.mosquitto import password_of

    url, port = (broker.tls_url, broker.tls_port) if tls else (broker.url, broker.port)
    return BrokerOptions(url, "127.0.0.1", port, tls, username=user, password=password_of(user), **options)
