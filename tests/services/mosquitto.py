"""A real Mosquitto broker for the floor's tests (issue 13), under the documented ACL.

``Mosquitto.start(users)`` writes a configuration into a directory of its own
(``tempfile.mkdtemp``): one listener on a free port of 127.0.0.1, ``allow_anonymous false``, a
password file made with ``mosquitto_passwd -U``, the ACL of ``packaging/mosquitto/acl`` (the one
docs/floor.md documents) and persistence in that directory; it starts ``mosquitto`` and waits
until it accepts connections. ``restart()`` stops it (SIGTERM: it saves its persistent sessions)
and starts it again on the same port with the same persistence, so a persistent session
survives (``down()`` and ``up()`` are its two halves; ``pause()`` and ``resume()`` SIGSTOP and
SIGCONT it: connected, not answering). ``start(tls=True)`` adds a second listener with TLS (``tls_url``; its throwaway CA
in ``ca_file``). ``stop()`` stops it and removes the directory (the ``mosquitto`` fixture does it at
teardown, also when the test failed).

Each user's password is ``password_of(user)``, in a file ``password_file(user)`` (mode 0600);
``login(user)`` gives the options ``shoectl feed`` and ``floor collect`` take. The users: the
tables ``T1``-``T8`` (a table's MQTT user name is its table id), ``collector@floor`` and
``display@floor``.

Without ``mosquitto`` (on PATH, or in ``/usr/sbin`` where Debian puts it: ``debian_command``) the
tests that use it are skipped, saying so; under ``CI=true`` they fail (tests/required.py).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from required import require_command
from services.postgres import free_port

ACL = Path(__file__).resolve().parents[2] / "packaging" / "mosquitto" / "acl"
TABLES = tuple(f"T{i}" for i in range(1, 9))
COLLECTOR, DISPLAY = "collector@floor", "display@floor"
DEBIAN_FOLDERS = (Path("/usr/sbin"), Path("/usr/bin"))
USERS = (*TABLES, COLLECTOR, DISPLAY)
START_TIMEOUT = 20.0  # seconds to wait for the broker to accept (never a performance limit)


def debian_command(name: str, why: str) -> str:
    """``require_command(name)``, also where Debian's package puts it (``/usr/sbin/mosquitto``,
    ``/usr/bin/mosquitto_passwd``) when that folder is not on PATH, as .ci/run finds it."""
    if shutil.which(name) is None:
        for folder in DEBIAN_FOLDERS:
            if os.access(folder / name, os.X_OK):
                return str(folder / name)
    return require_command(name, why)


def password_of(user: str) -> str:
    return f"pw-{user}-secret"


class Mosquitto:
    """One broker (see the module docstring)."""

    def __init__(self, program: str, root: Path, port: int) -> None:
        self.program = program
        self.root = root
        self.port = port
        self.url = f"mqtt://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None

    @classmethod
    def start(cls, users: tuple[str, ...] = USERS, *, tls: bool = False, settings: tuple[str, ...] = ()) -> Mosquitto:
        """A started broker (``settings``: more lines of its configuration). A free port can be taken
        by another test's process between the look and mosquitto's bind (seen in CI): then again on
        new ports, three times at most."""
        for _ in range(2):
            try:
                return cls._start_once(users, tls=tls, settings=settings)
            except RuntimeError as exc:
                if "Address already in use" not in str(exc):
                    raise
        return cls._start_once(users, tls=tls, settings=settings)

    @classmethod
    def _start_once(cls, users: tuple[str, ...], *, tls: bool, settings: tuple[str, ...]) -> Mosquitto:
        program = debian_command("mosquitto", "the floor's tests run a real MQTT broker")
        passwd = debian_command("mosquitto_passwd", "the broker's password file")
        root = Path(tempfile.mkdtemp(prefix="shoectl-mqtt-"))
        broker = cls(program, root, free_port())
        try:
            pw = root / "passwd"
            pw.touch(mode=0o600)
            # every user's password in clear, then hashed in place in one call (-U), not one call each
            pw.write_text("".join(f"{user}:{password_of(user)}\n" for user in users))
            subprocess.run([passwd, "-U", str(pw)], check=True, capture_output=True)
            for user in users:
                f = broker.password_file(user)
                f.write_text(password_of(user) + "\n")
                f.chmod(0o600)
            shutil.copy(ACL, root / "acl")
            (root / "persist").mkdir()
            (root / "mosquitto.conf").write_text("\n".join([
                f"listener {broker.port} 127.0.0.1",
                "allow_anonymous false",
                f"password_file {pw}",
                f"acl_file {root / 'acl'}",
                "persistence true",
                f"persistence_location {root / 'persist'}/",
                "max_inflight_messages 1000",  # at least the collector's batch: it acknowledges after the commit
                "max_queued_messages 0",  # none dropped for a persistent session (docs/floor.md, Security)
                f"log_dest file {root / 'mosquitto.log'}",
                "log_type error", "log_type warning", "log_type notice",
                *(["user root"] if os.geteuid() == 0 else []),  # it would drop to 'mosquitto', who cannot read root's temp dir
                *(broker._tls_listener() if tls else []),
                *settings,
            ]) + "\n")
            broker._run()
        except BaseException:
            broker.stop()
            raise
        return broker

    def _tls_listener(self) -> list[str]:
        """A second listener with TLS: a throwaway CA (``ca_file``) and a certificate for 127.0.0.1."""
        openssl = require_command("openssl", "the TLS listener's certificates")
        self.tls_port = free_port()
        self.tls_url = f"mqtts://127.0.0.1:{self.tls_port}"
        self.ca_file = self.root / "ca.pem"
        ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        (self.root / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
        for argv in (
            ["req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=shoectl test CA"],
            ["req", *ec, "-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
            ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.pem", "-days", "2", "-extfile", "san.ext"],
        ):
            subprocess.run([openssl, *argv], cwd=self.root, check=True, capture_output=True)
        return [f"listener {self.tls_port} 127.0.0.1", f"cafile {self.ca_file}", f"certfile {self.root / 'server.pem'}",
                f"keyfile {self.root / 'server.key'}"]

    def password_file(self, user: str) -> Path:
        return self.root / f"{user}.password"

    def login(self, user: str) -> list[str]:
        """``--username USER --password-file FILE``."""
        return ["--username", user, "--password-file", str(self.password_file(user))]

    def log(self) -> str:
        with contextlib.suppress(OSError):
            return (self.root / "mosquitto.log").read_text(errors="replace")
        return ""

    def _run(self) -> None:
        self.proc = subprocess.Popen([self.program, "-c", str(self.root / "mosquitto.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                raise RuntimeError(f"mosquitto exited with {self.proc.returncode}: {err} {self.log()}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"mosquitto did not accept connections within {START_TIMEOUT} s: {self.log()}")
            time.sleep(0.02)

    def _halt(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)  # a paused broker too
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr:
            proc.stderr.close()

    def restart(self, down_for: float = 0.0) -> None:
        """Stop the broker (saving its sessions), wait ``down_for`` seconds, start it again."""
        self.down()
        time.sleep(down_for)
        self.up()

    def down(self) -> None:
        """Stop the broker, saving its sessions (``up()`` starts it again on the same port)."""
        self._halt()

    def up(self) -> None:
        self._run()

    def crash(self) -> None:
        """SIGKILL, then start again on the same port: what it held since its last autosave (the
        sessions of this run) is lost, as in a crash or a power cut."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()
        if self.proc.stderr:
            self.proc.stderr.close()
        self.proc = None
        self._run()

    def pause(self) -> None:
        """SIGSTOP: the kernel still accepts connections on its port, nobody answers them."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        self._halt()
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def running(users: tuple[str, ...] = USERS, *, tls: bool = False, settings: tuple[str, ...] = ()) -> Iterator[Mosquitto]:
    """A broker (``Mosquitto.start``'s options) for the ``with`` block, stopped after it."""
    broker = Mosquitto.start(users, tls=tls, settings=settings)
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def mosquitto() -> Iterator[Mosquitto]:
    with running() as broker:
        yield broker
