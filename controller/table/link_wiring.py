"""What a device link hands the table's owner: the ``DeviceLink`` keyword arguments that put its
events and its state changes on the owner's inbox (``controller/table/runner.py``).

- ``link_options(put, identity_of, role)``: hand-off delivery (``auto_ack=False``: the owner
  acknowledges each event after its commit) and the three callbacks below.
- ``on_event`` queues each event for the owner and returns at once; one never committed (an
  error, a stop) is never acknowledged, so the device keeps it and resends it.
- ``state_callback(put, identity_of, role)``: a connect is reported with the identity of the device
  now answering (``identity_of(role)``, read on the link's thread when the link has just set it;
  a function, because the links are made after their options), so the core can tell a
  reconnect from another device or one that lost its memory; a disconnect with its reason, once
  per outage.
- ``on_error``: of the link's errors (each logged by the link) only the one the
  table must act on reaches it: events held behind some that never came (``stalled``: a fault
  until a floorperson gives them up). Before, every error came as a state report and the table
  journaled each as a reconnect (a device refusing every HEARTBEAT: one a second).
- The first event the link delivers after such a report (the missing events came after all, or a
  new event epoch replaced them) comes after a ``DeviceStatus`` with ``stall_ended``, put in the
  same order: the fault ends as an input of its own, journaled, so that a journal written before
  2026-12-06 (no such input: the fault stayed until a floorperson cleared it) replays the same.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from controller.table.inbox import DeviceItem
from controller.table.io import DeviceStatus
from firmware_bridge.errors import LinkErrorKind

__all__ = ["acknowledge_stored", "link_options", "state_callback"]

Put = Callable[[Any], None]
IdentityOf = Callable[[str], Any]


def acknowledge_stored(stored: list[tuple[Any, Any]], log: Any) -> None:
    """Acknowledge each event the owner has committed (``(link, LinkEvent)``, in order), naming its
    epoch and unit. A link that no longer counts one as handed over (its unit went and came back
    meanwhile, docs/link.md section 6) refuses it: a warning, not a stop; the unit resends it and
    it is found stored then. Any other exception stops the table (the device resends)."""
    for link, event in stored:
        try:
            link.acknowledge(event.counter, event.epoch, event.serial)
        except ValueError as exc:
            log.warning("a stored event was not acknowledged", serial=event.serial, epoch=event.epoch,
                        counter=event.counter, reason=str(exc))


def link_options(put: Put, identity_of: IdentityOf, role: str) -> dict[str, Any]:
    stall = _StallReports(put, role)
    return {"on_event": stall.on_event, "on_state": state_callback(put, identity_of, role),
            "on_error": stall.on_error, "auto_ack": False}


class _StallReports:
    """A link's events and its stalled reports, for one role (see the module docstring). The link
    calls ``on_error`` from its supervisor's thread and ``on_event`` from its reader's: one lock
    keeps a report and the events around it in the order they happened."""

    def __init__(self, put: Put, role: str) -> None:
        self._put = put
        self._role = role
        self._lock = threading.Lock()
        self._stalled = False  # a stall reported, and no event delivered since

    def on_error(self, kind: LinkErrorKind, reason: str) -> None:
        if kind is LinkErrorKind.EVENTS_STALLED:
            with self._lock:
                self._stalled = True
                self._put(DeviceStatus(self._role, True, reason, stalled=True))

    def on_event(self, link_event: Any) -> None:
        with self._lock:
            if self._stalled:
                self._stalled = False
                self._put(DeviceStatus(self._role, True, "the link delivers the events again", stall_ended=True))
            self._put(DeviceItem(self._role, link_event))


def state_callback(put: Put, identity_of: IdentityOf, role: str) -> Callable[[Any, str | None], None]:
    """The link's ``on_state``. A link that cannot reach its device reports every failed reconnect
    attempt as a disconnect (each cause in the link's own log); to the table they are one outage,
    so only its first disconnect is put on the inbox, until the next connect. Each used to be
    journaled with a fault record and told to the floor as a fault: every 5 s for as long as a
    device was away, ten times a second on a line dropping and noisy at once."""
    lock = threading.Lock()
    down = False  # an outage reported to the table, not yet ended by a connect

    def on_state(state: Any, reason: str | None) -> None:
        nonlocal down
        value = getattr(state, "value", str(state))
        if value == "connected":
            with lock:
                down = False
            identity = identity_of(role)
            put(DeviceStatus(role, True, reason or "", getattr(identity, "serial", ""),
                             getattr(identity, "event_epoch", None)))
        elif value == "disconnected" and reason:
            with lock:
                if down:
                    return
                down = True
            put(DeviceStatus(role, False, reason))
    return on_state
