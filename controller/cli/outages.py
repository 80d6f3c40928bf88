"""Device outages in the words of the people at ``shoectl run``: one line when an outage begins,
one when its cause changes, one when the device answers again; never one per retry.

A link that cannot reach its device retries for ever (backing off up to the profile's
``reconnect_max_ms``) and reports every attempt through ``on_state``; ``OutageLines.wrap`` sits
in front of the runner's ``on_state`` (which still sees every report) and writes::

    !! waiting for the shoe at /dev/missing: no such device; retrying every 5 s
       the shoe at /dev/missing answers again

The cause is the link's reason without what the line already says (``connect failed:``, the
transport's own description of the port). ``write`` is called from the links' threads, one
complete line at a time.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from firmware_bridge.link.state import LinkState

__all__ = ["OutageLines"]

StateCallback = Callable[[Any, "str | None"], None]


class OutageLines:
    """The outage lines of one link; see the module docstring."""

    def __init__(self, role: str, where: str, retry_s: float, write: Callable[[str], None]) -> None:
        self.role = role
        self.where = where
        self.retry_s = retry_s
        self.write = write
        self.prefixes: tuple[str, ...] = ()  # what the transport puts before the cause (see ``for_link``)
        self.cause: str | None = None        # the outage in progress, or None
        self._lock = threading.Lock()

    @classmethod
    def for_device(cls, role: str, profile: Any, port: str | None, write: Callable[[str], None]) -> OutageLines:
        """For the device of ``profile`` in ``role``, at ``port`` (serial) or on USB (``None``)."""
        ident = profile.usb_identity
        where = port if port else f"USB {ident.id_str}" if ident is not None else profile.name
        return cls(role, where, profile.timing.reconnect_max_s, write)

    def for_link(self, link: Any) -> None:
        """Learn how ``link``'s transport introduces a cause (``cannot open serial port X: ...``)."""
        describe = link.transport.describe()
        self.prefixes = (f"cannot open serial port {self.where}: ", f"cannot open {describe}: ", f"{describe}: ")

    def wrap(self, on_state: StateCallback) -> StateCallback:
        def report(state: Any, reason: str | None) -> None:
            self.observe(state, reason)
            on_state(state, reason)
        return report

    def observe(self, state: LinkState | str, reason: str | None) -> None:
        """One line where an outage's cause changes, one where it ends (``state``: a LinkState, or
        its value)."""
        from firmware_bridge.link.state import LinkState  # here: the link package costs every start 23 ms

        line = None
        with self._lock:
            if state == LinkState.DISCONNECTED and reason:
                cause = self.plain_cause(reason)
                if cause != self.cause:
                    self.cause = cause
                    line = f"!! waiting for the {self.role} at {self.where}: {cause}; retrying every {self.retry_s:g} s"
            elif state == LinkState.CONNECTED and self.cause is not None:
                self.cause = None
                line = f"   the {self.role} at {self.where} answers again"
        if line is not None:
            self.write(line)

    def plain_cause(self, reason: str) -> str:
        cause = reason.removeprefix("connect failed: ")
        for prefix in self.prefixes:
            if cause.startswith(prefix):
                return cause[len(prefix):]
        return cause
