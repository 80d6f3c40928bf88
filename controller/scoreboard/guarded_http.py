"""uvicorn's HTTP/1.1 protocol (h11) with the limits it lacks, for a server any client can reach.

- **At most ``MAX_CONNECTIONS`` open at once.** One more is answered ``503`` at once and closed
  (``retry-after``): idle sockets used to pile up until the process ran out of descriptors, and
  when the scoreboard runs inside ``shoectl run`` that process is the table's (its journal's
  checkpoints and anchors need descriptors too).
- **At most ``MAX_PER_ADDRESS`` of them from one address**, the same ``503`` past that: one
  runaway client (a script, a page reloading in a loop) took every slot and every screen of the
  floor went dark. A browser opens at most six per page, so a host's own screens fit. Loopback
  is not counted: a reverse proxy on the table's host, or its kiosk browser, speaks for many.
- **Never the table's last descriptors**: kept by the listening socket, at accept
  (``controller.scoreboard.listening``), answered with the same ``503`` (``busy_response``).
- **A request head within ``HEAD_TIMEOUT_S`` of connecting.** A connection that sends nothing, or
  a byte now and then, is answered ``408`` and closed: uvicorn arms its own timer only after a
  response (``timeout_keep_alive``), so such a connection was held for ever. So is the next
  request on a kept-alive connection (or the rest of a body): uvicorn's keep-alive timer is
  cancelled by any byte.

- **A request that breaks HTTP after its head** (a body of bad chunks): uvicorn answers ``400``
  while the app, already given the request, is still answering it; the app's answer then raised
  inside h11 and was logged as an error with its traceback. It is dropped as a departed client's
  is (``send_400_response``).

An event stream is one request whose response lasts: neither limit ends it (it counts towards the
first, as every open connection does). Used as ``uvicorn.Config(http=GuardedH11Protocol)``
(``controller.scoreboard.server``).
"""
from __future__ import annotations

import asyncio
import ipaddress

from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["HEAD_TIMEOUT_S", "MAX_CONNECTIONS", "MAX_PER_ADDRESS", "GuardedH11Protocol", "busy_response"]

MAX_CONNECTIONS = 256  # browsers of a table and of the floor, each with its event stream
MAX_PER_ADDRESS = 64   # a quarter of them
LOOPBACK_COUNTED = False  # (a test's switch: its clients are all on loopback)
HEAD_TIMEOUT_S = 10.0


def _plain(status: str, text: str, *extra: str) -> bytes:
    """A whole response with a text body, written before any request was read (h11 has none to answer)."""
    body = text.encode()
    head = [f"HTTP/1.1 {status}", "content-type: text/plain; charset=utf-8", f"content-length: {len(body)}",
            "connection: close", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def busy_response(why: str) -> bytes:
    """The ``503`` that turns a connection away before any request: ``why`` says what is short."""
    return _plain("503 Service Unavailable", f"the scoreboard is busy: {why}; try again later\n", "retry-after: 5")


class GuardedH11Protocol(H11Protocol):
    """See the module docstring."""

    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)  # counted in the server's connections from here on
        if len(self.connections) > MAX_CONNECTIONS:
            transport.write(busy_response(f"{MAX_CONNECTIONS} connections are open"))
            transport.close()
            return
        host = self.client[0] if self.client else None
        if host is not None and _counted(host) and sum(
                1 for other in self.connections if other.client and other.client[0] == host) > MAX_PER_ADDRESS:
            transport.write(busy_response(f"{MAX_PER_ADDRESS} connections from your address are open"))
            transport.close()
            return
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT_S, self._no_request_in_time)

    def _no_request_in_time(self) -> None:
        self._head_timer = None
        if self.cycle is None and not self.transport.is_closing():  # no request begun: h11 has no head yet
            self.transport.write(_plain("408 Request Timeout", f"no request within {HEAD_TIMEOUT_S:g} s: closed\n"))
            self.transport.close()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if self.transport.is_closing():
            return
        if self._head_timer is not None:
            self._head_timer.cancel()
        # The next request (or the rest of this one's body) within the same limit: uvicorn's
        # keep-alive timer is cancelled by any byte, and a byte now and then held a connection
        # for ever after its first request (a review of the scoreboard's network).
        self._head_timer = self.loop.call_later(HEAD_TIMEOUT_S, self._no_next_request_in_time, self.cycle)

    def _no_next_request_in_time(self, cycle: object) -> None:
        self._head_timer = None
        if self.cycle is cycle and cycle is not None and cycle.response_complete and not self.transport.is_closing():
            self.transport.write(_plain("408 Request Timeout", f"no request within {HEAD_TIMEOUT_S:g} s: closed\n"))
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:  # the app has the request: it answers no one
            cycle.disconnected = True
            cycle.message_event.set()  # a body it waits for: the client is gone
            if cycle.response_started:  # h11 takes no second response: close, as a client gone would be
                self.transport.close()
                return
        super().send_400_response(msg)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        super().connection_lost(exc)


def _counted(host: str) -> bool:
    """Whether connections from ``host`` count towards ``MAX_PER_ADDRESS`` (not loopback's)."""
    try:
        return LOOPBACK_COUNTED or not ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:  # not an IP address (a transport's own name for its peer): counted as one
        return True
