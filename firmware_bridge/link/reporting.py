"""``StateReporter``: where a ``DeviceLink`` is, and telling its owner (``on_state``, structlog).

It owns the link's state, the outage in progress (so an outage is logged at ``info`` once per
cause, its retries at ``debug``) and the logger bound to the link's name. State changes happen
under the link's condition (``wait_connected`` and the supervisor wait on it); ``on_state`` is
called without it, from whichever link thread reported.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import structlog

from .state import LinkErrorKind, LinkState

__all__ = ["StateReporter", "ranges_text"]

StateCallback = Callable[[LinkState, "str | None"], None]
ErrorCallback = Callable[[LinkErrorKind, str], None]


class StateReporter:
    """The link's state and its reports.

    Args:
        cond: the link's condition (its lock): ``set`` changes the state under it and wakes
            its waiters.
        on_state: ``on_state(state, reason)`` for every change, and for every error when there is
            no ``on_error`` (then ``state`` is the unchanged current one); its exceptions are
            logged, never raised.
        name: the link's name, bound to the logger (``rename`` once the serial is known).
        on_error: ``on_error(kind, reason)`` for every error (``LinkErrorKind``), instead of
            ``on_state``: an owner then never takes an error for a state change.
    """

    def __init__(self, cond: threading.Condition, on_state: StateCallback | None, name: str,
                 on_error: ErrorCallback | None = None) -> None:
        self._cond = cond
        self.on_state = on_state
        self.on_error = on_error
        self.state = LinkState.DISCONNECTED
        self._outage: str | None = None  # the reason of the outage in progress (logged once, not per retry)
        self._last_error: str | None = None  # reported once while it repeats (each HEARTBEAT refused alike)
        self.log: Any = structlog.get_logger().bind(device=name)

    def rename(self, name: str) -> None:
        """Bind the logger to ``name`` (the serial, for a link made without a profile name)."""
        self.log = structlog.get_logger().bind(device=name)

    def set(self, state: LinkState, reason: str | None) -> None:
        """Change the state (nothing after ``CLOSED``; the same state again only with a reason),
        log it and report it."""
        with self._cond:
            if self.state is LinkState.CLOSED or (self.state is state and reason is None):
                return
            retry = self._outage is not None and (state is LinkState.CONNECTING or reason == self._outage)
            self._last_error = None
            if state is LinkState.DISCONNECTED:
                self._outage = reason
            elif state is not LinkState.CONNECTING:
                self._outage = None
            self.state = state
            self._cond.notify_all()
        # Info, once per outage and cause: the link's owner tells people (shoectl run: one line, and
        # the fault that holds the table). A reason not given is left out, not "None" (a review of logs).
        (self.log.debug if retry else self.log.info)("link state", state=state.value,
                                                      **({"reason": reason} if reason is not None else {}))
        self._notify(state, reason)

    def error(self, kind: LinkErrorKind, reason: str) -> None:
        """Report an error that does not change the state (logged at ``error``; the same reason
        again, before the state changes, at ``debug`` and not reported again)."""
        if reason == self._last_error:
            self.log.debug("link error again", state=self.state.value, reason=reason)
            return
        self._last_error = reason
        self.log.error("link error", state=self.state.value, reason=reason, kind=kind.value)
        callback = self.on_error
        if callback is None:
            self._notify(self.state, reason)
            return
        try:
            callback(kind, reason)
        except Exception as exc:  # noqa: BLE001 - a broken observer must not break the link
            self.log.exception("on_error raised", error=repr(exc))

    def epoch_changed(self, change: tuple[int, int] | None, unit_change: tuple[str, str] | None,
                      lost: list[tuple[int, int]]) -> list[str]:
        """The connect's report, in words, of an event epoch changed (``change``: old, new), by
        another unit answering (``unit_change``: old serial, new) or not, and of the old epoch's
        events that never arrived (``lost``: counter ranges; logged at ``error``: they are not
        in the journal). ``[]`` when the epoch did not change."""
        if change is None:
            return []
        old_epoch, new_epoch = change
        if unit_change is not None:
            said = [f"another unit answers (serial {unit_change[1]}; the events stored last came from "
                    f"{unit_change[0]}): its events are taken from its first (event epoch {new_epoch})"]
        else:
            said = [f"event epoch changed from {old_epoch} to {new_epoch}: the device restarted its event "
                    "counter (a reset that lost its memory, or another unit)"]
        if lost and unit_change is not None:  # that unit still holds them, should it answer again
            said.append(f"events {ranges_text(lost)} of event epoch {old_epoch} never arrived from {unit_change[0]}, "
                        "which still holds them: lost to this table unless it answers again")
        elif lost:
            said.append(f"events {ranges_text(lost)} of event epoch {old_epoch} never arrived and are lost with it")
            self.log.error("link error", state=self.state.value, reason=said[-1])
        return said

    def acknowledged_elsewhere(self, epoch: int, delivered: int, acknowledged: int) -> str:
        """Log that the device acknowledged events of ``epoch`` this host never delivered (it gives
        them up), and return it in words for the connect's report. Before this host had any event
        of the epoch (a new journal, a device that served another table) that is the device's
        past: a warning. After, those events were lost to this host (a journal restored from an
        older copy, another host on the device): an error."""
        which = ranges_text([(delivered + 1, acknowledged)])
        if delivered == 0:
            reason = (f"events {which} of event epoch {epoch} were acknowledged before this host had any (another "
                      f"journal or host): its events are taken from {acknowledged + 1}")
            self.log.warning("link warning", state=self.state.value, reason=reason)
        else:
            reason = (f"events {which} of event epoch {epoch} were acknowledged to another host or journal: they are "
                      "not in this one, and lost to it")
            self.log.error("link error", state=self.state.value, reason=reason)
        return reason

    def _notify(self, state: LinkState, reason: str | None) -> None:
        callback = self.on_state
        if callback is None:
            return
        try:
            callback(state, reason)
        except Exception as exc:  # noqa: BLE001 - a broken observer must not break the link
            self.log.exception("on_state raised", error=repr(exc))


def ranges_text(ranges: list[tuple[int, int]], most: int = 8) -> str:
    """``[(3, 5), (9, 9)]`` -> ``"3-5, 9"``; past ``most`` ranges, ``", ..."`` (one line)."""
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges[:most])
    return text + (", ..." if len(ranges) > most else "")
