"""``RetransmitTimer``: how long a command waits for its reply before it is sent again.

A command or its reply damaged on the line is not answered (docs/protocol.md 3.4 rule 5): only
the host's timeout recovers it. A fixed timeout sized for the slowest device the protocol
allows (250 ms against a 100 ms answer) costs every damaged frame a quarter of a second, while
these devices answer in about a millisecond: at 1 % of the bytes damaged both ways, a table
dealt at a fifth of its pace. The timer learns the device's answer time instead, as TCP does
(RFC 6298, the smoothed round trip and its variation):

- ``first()``: the first attempt waits ``srtt + 4 * rttvar``, at least ``floor`` and at most
  ``ceiling`` (the profile's reply timeout). Before any answer was timed it waits ``ceiling``.
- ``after(waited)``: each further attempt waits twice the last, up to ``ceiling``. The next
  command starts from ``first()`` again, not from the backed-off wait as RFC 6298 (5.5) would:
  on a noisy line that was 40 % slower (`benchmarks/bench_noise.py`, 2026-12-04). The price: a
  device whose answers slow past the estimate (still within the protocol's 100 ms) has its
  commands sent twice, and, its replies never timed (Karn's rule), the estimate stays where it
  was; the retransmission is harmless (the device replays its reply) and the reply is not
  delayed (it answers the first transmission). Not measured on a real device yet.
- ``sample(rtt)``: a reply to a command sent once (Karn's rule: a reply to a command sent again
  could answer either transmission, so it times nothing).

The patience stays the profile's: the link gives up on a command only once it has made its
attempts *and* waited ``attempts * ceiling`` in all (``CommandChannel._exchange``), so a
shorter wait means earlier retransmissions, never an earlier "link lost". Asking again early is
safe: the device replays its cached reply to a retransmission (D3) and the host ignores the
second answer (H3).
"""
from __future__ import annotations

__all__ = ["DEVICE_REPLY_DEADLINE", "MIN_RTO", "RetransmitTimer"]

MIN_RTO = 0.02  # seconds; below it a busy host's own scheduling delays would cause retransmissions
# The protocol's rule: a device MUST answer a command within 100 ms (docs/protocol.md section 8). A
# command answered within it was sent again early by the estimate, not because the device was late.
DEVICE_REPLY_DEADLINE = 0.1


class RetransmitTimer:
    """The round-trip estimate of one link (not thread-safe: the link's command lock holds it)."""

    def __init__(self, ceiling: float, floor: float = MIN_RTO) -> None:
        if not (ceiling > 0 and floor > 0):
            raise ValueError(f"bad retransmit timer: floor {floor}, ceiling {ceiling}")
        self.ceiling = ceiling
        self.floor = min(floor, ceiling)  # a reply timeout below the floor is kept as it is
        self.srtt: float | None = None
        self.rttvar = 0.0

    def sample(self, rtt: float) -> None:
        """A reply came ``rtt`` seconds after a command sent once."""
        if self.srtt is None:
            self.srtt, self.rttvar = rtt, rtt / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - rtt)
            self.srtt = 0.875 * self.srtt + 0.125 * rtt

    def first(self) -> float:
        """The first attempt's wait, in seconds."""
        if self.srtt is None:
            return self.ceiling
        return min(self.ceiling, max(self.floor, self.srtt + 4 * self.rttvar))

    def after(self, waited: float) -> float:
        """The next attempt's wait after one that waited ``waited`` in vain."""
        return min(self.ceiling, 2 * waited)
