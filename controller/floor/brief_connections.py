"""Connections the broker accepted and closed again at once: ``BriefConnections`` (see its
docstring), for the floor's long-lived clients (the collector, the floor scoreboard)."""
from __future__ import annotations

from collections.abc import Callable

from controller.floor.broker import BrokerOptions
from controller.floor.broker_probe import nothing_listens

__all__ = ["BRIEF_S", "BRIEF_SAID_AFTER", "BriefConnections"]

BRIEF_S = 5.0  # a connection the broker closes sooner than this after accepting it is brief
BRIEF_SAID_AFTER = 3  # brief connections in a row before a client says why


class BriefConnections:
    """Connections the broker accepted and closed again within ``BRIEF_S`` (``connected(now)``,
    then ``lost(now)``). Where each client id is its account's (the documented broker), two clients
    under one account take each other's connection about four times a second, for ever, and each
    said "lost the broker" and "reachable again" as if the broker were down (a review of the
    floor's deployment). After ``BRIEF_SAID_AFTER`` in a row, ``lost`` returns the cause in words,
    once; ``flapping`` is then true, and the client keeps its per-outage lines to itself, until a
    connection lasts ``BRIEF_S`` or more, or an attempt to connect fails (``unreachable``): a
    broker that is down, which a client under the same account never makes it (a review of long
    runs: a broker restarted every few seconds was blamed on another client, its outages unsaid).
    ``down``: a probe of the broker's port made as a brief connection ends, true when nothing
    listens there: a broker restarted within paho's first retry leaves no failed attempt, but its
    port refuses as it goes (``broker_probe.nothing_listens``)."""

    def __init__(self, url: str, down: Callable[[], bool] | None = None) -> None:
        self.url = url
        self._down = down
        self._since: float | None = None
        self._brief = 0
        self.flapping = False

    @classmethod
    def of_broker(cls, options: BrokerOptions) -> BriefConnections:
        """For a client of the broker ``options``, its port probed as said."""
        return cls(options.url, down=lambda: nothing_listens(options))

    def connected(self, now: float) -> None:
        self._since = now

    def unreachable(self) -> None:
        """An attempt to connect failed (nothing listens, the broker refused it): the connections
        before it were an outage's, not another client's; the count starts again."""
        self._brief, self.flapping = 0, False

    def lost(self, now: float) -> str | None:
        since, self._since = self._since, None
        if since is None:
            return None
        if now - since >= BRIEF_S:
            self._brief, self.flapping = 0, False
            return None
        if not self.flapping and self._down is not None and self._down():
            self.unreachable()  # the broker went away: an outage, not another client
            return None
        self._brief += 1
        if self._brief < BRIEF_SAID_AFTER or self.flapping:
            return None
        self.flapping = True
        return (f"the broker {self.url} closed this connection {self._brief} times in a row within {BRIEF_S:g} s of "
                "accepting it: another client most likely logs in under the same account (where each client id is "
                "its account's name, as docs/floor.md's broker has it, every collector, scoreboard and table needs "
                "an account of its own), or the broker closes what it accepts (its log says why)")
