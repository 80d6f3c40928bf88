"""State reporting of a ``DeviceLink``: state changes (logged once per outage and cause) and
errors, passed to ``on_state``.

A mixin of ``DeviceLink`` (``device_link``).
"""
from __future__ import annotations

from .state import LinkState

__all__ = ["StateReporting"]


class StateReporting:
    """State reporting of a ``DeviceLink`` (see the module docstring)."""

    def _set_state(self, state: LinkState, reason: str | None) -> None:
        with self._cond:
            if self._state is LinkState.CLOSED or (self._state is state and reason is None):
                return
            retry = self._outage is not None and (state is LinkState.CONNECTING or reason == self._outage)
            if state is LinkState.DISCONNECTED:
                self._outage = reason
            elif state is not LinkState.CONNECTING:
                self._outage = None
            self._state = state
            self._cond.notify_all()
        # Info, once per outage and cause: the link's owner tells people (shoectl run: one line).
        (self._log.debug if retry else self._log.info)("link state", state=state.value, reason=reason)
        self._notify_state(state, reason)

    def _report_error(self, reason: str) -> None:
        self._log.error("link error", state=self._state.value, reason=reason)
        self._notify_state(self._state, reason)

    def _notify_state(self, state: LinkState, reason: str | None) -> None:
        callback = self._on_state
        if callback is None:
            return
        try:
            callback(state, reason)
        except Exception as exc:  # noqa: BLE001 - a broken observer must not break the link
            self._log.exception("on_state raised", error=repr(exc))


def ranges_text(ranges: list[tuple[int, int]], most: int = 8) -> str:
    """``[(3, 5), (9, 9)]`` -> ``"3-5, 9"``; past ``most`` ranges, ``", ..."`` (one line)."""
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in ranges[:most])
    return text + (", ..." if len(ranges) > most else "")
