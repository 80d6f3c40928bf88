"""systemd's service notification protocol (sd_notify), written out: no dependency.

The protocol (sd_notify(3)): a service started with ``Type=notify`` finds the path of a datagram
socket in ``$NOTIFY_SOCKET`` (a file system path, or an abstract socket when it starts with
``@``) and sends it newline-separated ``KEY=VALUE`` lines, one datagram per message. The lines
used here: ``READY=1`` (startup is done), ``STATUS=...`` (one line for ``systemctl status``),
``WATCHDOG=1`` (alive; due at least every ``$WATCHDOG_USEC`` microseconds when the unit sets
``WatchdogSec=``, for this process when ``$WATCHDOG_PID`` is unset or names it) and
``STOPPING=1`` (stopping has begun).

Contract:
- ``Notifier.from_environment()`` is a notifier for the socket in the environment, or one that
  sends nothing when the process was not started by systemd (no ``$NOTIFY_SOCKET``): callers never
  ask which. Sending never raises and never blocks for long (``SEND_TIMEOUT_S``): a service
  manager that went away or stopped reading does not stop the table (a failed send is logged
  once, at debug level).
- ``ServiceWatch`` (a thread): sends ``READY=1`` once ``progress()`` first returns more than 0
  (the owner of the work has begun its loop), then every half watchdog interval ``WATCHDOG=1`` if
  ``progress()`` has moved since the previous ping (a stuck owner stops the pings, and systemd
  restarts the service), and ``STATUS=`` lines from ``status()`` when the text changes (at most
  once a second).
  ``stopping()`` sends ``STOPPING=1`` once and ends the thread.

Nothing happens at import time.
"""
from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Mapping

import structlog

__all__ = ["Notifier", "ServiceWatch", "watchdog_interval"]

log = structlog.get_logger()

_STATUS_POLL_S = 1.0  # how often STATUS= is refreshed at most
SEND_TIMEOUT_S = 1.0  # a full notification socket (nobody reading) costs at most this per message


class Notifier:
    """Sends notification lines to ``address`` (``None``: sends nothing)."""

    def __init__(self, address: str | None) -> None:
        self.address = address or None
        self._failed = False

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> Notifier:
        return cls((os.environ if environ is None else environ).get("NOTIFY_SOCKET"))

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, *lines: str) -> bool:
        """One datagram of ``lines`` (each ``KEY=VALUE``, without a newline); True if it was sent."""
        if self.address is None:
            return False
        # An abstract socket's name starts with a NUL byte; systemd writes it with '@' instead.
        target = "\0" + self.address[1:] if self.address.startswith("@") else self.address
        data = "\n".join(line.replace("\n", " ") for line in lines).encode("utf-8", "replace")
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.settimeout(SEND_TIMEOUT_S)
                sock.sendto(data, target)
        except OSError as exc:
            if not self._failed:
                self._failed = True
                log.debug("service notification not sent", socket=self.address, error=str(exc))
            return False
        return True


def watchdog_interval(environ: Mapping[str, str] | None = None) -> float | None:
    """The watchdog interval in seconds that systemd asks of this process, or ``None`` (no
    ``WatchdogSec=``, a bad value, or ``$WATCHDOG_PID`` naming another process)."""
    env = os.environ if environ is None else environ
    pid = env.get("WATCHDOG_PID")
    if pid and pid != str(os.getpid()):
        return None
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    return usec / 1_000_000 if usec > 0 else None


class ServiceWatch:
    """READY, WATCHDOG and STATUS for a service whose owner thread counts its turns; see the
    module docstring. ``start()`` does nothing when ``notifier`` is not enabled."""

    def __init__(self, notifier: Notifier, progress: Callable[[], int], status: Callable[[], str],
                 watchdog_s: float | None) -> None:
        self.notifier = notifier
        self.progress = progress
        self.status = status
        self.ping_every = watchdog_s / 2 if watchdog_s else None
        self.ready = False
        self._stop = threading.Event()
        self._stopping_sent = False
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @classmethod
    def from_environment(cls, progress: Callable[[], int], status: Callable[[], str]) -> ServiceWatch:
        return cls(Notifier.from_environment(), progress, status, watchdog_interval())

    def start(self) -> ServiceWatch:
        if self.notifier.enabled:
            self._thread = threading.Thread(target=self._watch, name="shoectl-sdnotify", daemon=True)
            self._thread.start()
        return self

    def stopping(self) -> None:
        """``STOPPING=1`` (once, from any thread), and the pings end."""
        with self._lock:
            if self._stopping_sent:
                return
            self._stopping_sent = True
            self._stop.set()
            # Under the lock: no READY or WATCHDOG of the watching thread comes after it.
            self.notifier.send("STOPPING=1", "STATUS=stopping")

    def _watch(self) -> None:
        tick = min(self.ping_every or _STATUS_POLL_S, _STATUS_POLL_S)
        while self.progress() <= 0:  # the owner has not begun its loop yet
            if self._stop.wait(min(tick, 0.05)):
                return
        last_progress, last_status, last_ping = self.progress(), None, time.monotonic()
        last_status_at = -_STATUS_POLL_S
        while True:
            with self._lock:
                if self._stop.is_set():
                    return
                lines = [] if self.ready else ["READY=1"]
                self.ready = True
                now, turns = time.monotonic(), self.progress()
                if now - last_status_at >= _STATUS_POLL_S:
                    text = self.status()
                    if text != last_status:
                        lines.append(f"STATUS={text}")
                        last_status, last_status_at = text, now
                # Only a moving owner earns a ping: a stuck one lets the watchdog fire.
                if self.ping_every is not None and now - last_ping >= self.ping_every and turns != last_progress:
                    lines.append("WATCHDOG=1")
                    last_progress, last_ping = turns, now
                if lines:
                    self.notifier.send(*lines)
            self._stop.wait(tick)
