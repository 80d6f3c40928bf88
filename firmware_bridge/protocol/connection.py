"""Protocol state for each role, sans-I/O: ``HostConnection`` and ``DeviceConnection``.

Both objects take received bytes with ``receive_data(data)`` and hand back typed events from
``next_event()``; ``send(message)`` returns the bytes to write. They never touch a port, a clock or
a thread: timeouts, retries and reconnects are the link layer's decisions, made with the state
these objects expose. The rules (``docs/protocol.md`` is normative) in short:

- Every frame has a sequence number. The host sends one command at a time, numbering each new
  command (previous + 1) mod 256; a reply carries its command's number. On a timeout the host
  resends the *same* bytes (``retransmit_bytes()``), with the same number.
- The device remembers its last command (number and content) and its reply. The same number with
  the same content again is a retransmission: the cached reply is replayed and the command is NOT
  executed again. The same number with different content is refused (NAK SEQUENCE_REUSED).
- SYNC starts a session: the device forgets the cached command. Until its first SYNC the device
  refuses everything else (NAK NOT_SYNCED), so a stale cache can never answer a new host.
- Events carry a u32 counter (1, 2, 3, ...). The device keeps each event until the host
  acknowledges its counter (EVENT_ACK acknowledges everything up to and including it) and sends
  them again on RESEND_EVENTS. The host side here only decodes them (``EventReceived``, every
  time one arrives): which counters are new, duplicated or missing is decided once, by the
  consumer of the event stream across sessions (the link's ``EventSequencer``, docs/link.md
  section 6), because only it knows what was stored before this session.

Events returned by ``next_event()``:

- both roles: ``NeedData`` (``NEED_DATA``: feed more bytes), ``Dropped`` (from the frame layer);
- host: ``ReplyReceived``, ``StaleReply``, ``EventReceived``;
- device: ``CommandReceived`` (the application must ``send()`` exactly one reply before calling
  ``next_event()`` again) and ``AutoReply`` (the protocol core answered by itself: replays,
  SYNC, HELLO, EVENT_ACK, RESEND_EVENTS and protocol NAKs; write ``data`` to the link).

Errors: misuse of these objects raises a ``LocalProtocolError`` subclass and changes nothing. On
the host, a CRC-valid frame that breaks the protocol makes ``next_event()`` raise a
``RemoteProtocolError`` subclass after consuming that frame; the connection stays usable and the
next call continues with the following frame. The device never raises for its input: it answers
with a NAK instead (an ``AutoReply``).
"""
from __future__ import annotations

from .connection_events import (
    NEED_DATA, AutoReply, CommandReceived, EventReceived, NeedData, PendingCommand, ReplyReceived, StaleReply,
)
from .device_connection import DeviceConnection
from .host_connection import HostConnection

__all__ = [
    "NEED_DATA",
    "AutoReply",
    "CommandReceived",
    "DeviceConnection",
    "EventReceived",
    "HostConnection",
    "NeedData",
    "PendingCommand",
    "ReplyReceived",
    "StaleReply",
]
