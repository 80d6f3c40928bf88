"""The link layer: one ``DeviceLink`` per device drives its transport with the protocol core.

- ``DeviceLink`` (``device_link``): threads, handshake, request/reply with retransmission,
  heartbeat, reconnect with backoff, in-order exactly-once event delivery with acknowledgement
  after the consumer stored the event. It composes collaborators that own their state:
  ``StateReporter`` (``reporting``), ``CommandChannel`` (``commands``: the session, the command in
  flight), ``Supervisor`` (``supervisor``), ``SessionReader`` (``reader``), ``EventDeliverer``
  (``delivery``) and ``Acknowledgements`` (``acknowledgements``).
- ``LinkState``, ``LinkEvent`` (``state``): what the link reports.
- ``EventSequencer`` (``sequencer``): the pure ordering and de-duplication logic.
- ``Backoff`` (``backoff``): exponential delays.

The rules are written down in ``docs/link.md``.
"""
from __future__ import annotations

from .backoff import Backoff
from .device_link import DeviceLink
from .sequencer import EventSequencer
from .state import LinkErrorKind, LinkEvent, LinkState

__all__ = ["Backoff", "DeviceLink", "EventSequencer", "LinkErrorKind", "LinkEvent", "LinkState"]
