"""The protocol fuzz target: the codec and both connection roles, on any input bytes.

``test_one_input(data)`` is the entry point of three runners: atheris (``pip install atheris``,
then ``python -m tests.fuzz.fuzz_codec [corpus_dir] -max_len=4096`` from the project root), the
bounded seeded fuzz in ``make test`` (``test_protocol_fuzz.py``, with ``protocol_inputs``) and the
ten-million-input soak (``python -m benchmarks.soak_protocol``, docs/hardening.md).
``tests/protocol/test_arbitrary_input.py`` also runs it on hypothesis-generated inputs.

One input drives, in turn: the frame decoder fed in pieces (the first byte chooses their size),
the message decoder on every frame, a host connection and a device connection, each driven by a
small application (``HostDriver``, ``DeviceDriver``) that reacts to its events as the link layer
and a device's firmware would. The invariants are those of docs/protocol.md: the decoder never
raises and accounts for every byte; a decoded message re-encodes to a payload that decodes to the
same message; the host raises nothing but ``RemoteProtocolError`` for received bytes; the device
raises nothing at all and writes only well-formed frames; a host that gives up its missing events
can acknowledge everything it has. Any other exception, or a failed assertion, is a defect.
"""
from __future__ import annotations

import sys
from collections import Counter

from firmware_bridge.link.sequencer import EventSequencer
from firmware_bridge.protocol import (
    EXPECTED_REPLY,
    NEED_DATA,
    Ack,
    AutoReply,
    Capability,
    Command,
    CommandReceived,
    Deliver,
    DeliverTarget,
    DeviceConnection,
    DeviceEvent,
    DeviceMode,
    DeviceState,
    Display,
    Dropped,
    EventAck,
    EventReceived,
    Frame,
    FrameDecoder,
    GateLock,
    GateUnlock,
    Heartbeat,
    HeartbeatReply,
    Hello,
    HostConnection,
    Identity,
    MalformedPayloadError,
    Nak,
    NakCode,
    RemoteProtocolError,
    Reply,
    ReplyReceived,
    ResendEvents,
    Reset,
    ResetKind,
    SetMode,
    ShoeLoaded,
    Shuffle,
    StatusReply,
    StatusRequest,
    Sync,
    UnknownMessageTypeError,
    decode_message,
    encode_frame,
    encode_message,
)

_IDENTITY = Identity(1, Capability.CARD_RECOGNITION, 8, 1, "FUZZ", "0", "0")


def _pieces(data: bytes) -> list[bytes]:
    """Split the input using its first byte as the piece size (1..256)."""
    if not data:
        return []
    size = data[0] + 1
    body = data[1:]
    return [body[i:i + size] for i in range(0, len(body), size)]


def check_decoder(data: bytes) -> list[Frame]:
    decoder = FrameDecoder()
    frames: list[Frame] = []
    consumed = 0
    for piece in _pieces(data):
        decoder.receive_data(piece)
        for item in decoder:
            if type(item) is Frame:
                frames.append(item)
                consumed += len(encode_frame(item.msg_type, item.seq, item.payload, item.flags)) - 1
            else:
                assert type(item) is Dropped and item.nbytes > 0, item
                consumed += item.nbytes
    fed = data[1:]
    assert consumed + fed[:len(fed) - decoder.buffered].count(0) + decoder.buffered == len(fed)
    return frames


def check_messages(frames: list[Frame]) -> None:
    for frame in frames:
        try:
            message = decode_message(frame)
        except (MalformedPayloadError, UnknownMessageTypeError):
            continue
        again = decode_message(Frame(frame.msg_type, frame.seq, frame.flags, message.encode_payload()))
        assert again == message, (frame, message, again)
        assert encode_message(message, frame.seq, frame.flags)


class HostDriver:
    """The controller's end of a device link in miniature: a ``HostConnection`` for the session
    and the link's ``EventSequencer`` for the events (the one place that decides which event
    counters are new, missing or duplicated: docs/link.md), driven as ``DeviceLink`` drives them.

    SYNC first; after every reply (or a reply that broke the protocol) the next command of a fixed
    rotation, or SYNC again when the session was lost; an EVENT_ACK for what was delivered when an
    event arrives and nothing is pending; a retransmission after every fourth piece that left a
    command pending. IDENTITY sets the sequencer's epoch, HEARTBEAT_REPLY tells it what exists;
    every event it queues is delivered at once. What the host writes is kept in ``output``
    (``take_output``). Gaps are never accepted: only a person decides that events are lost
    (docs/protocol.md E7), so a peer can keep counters open for as long as it likes.

    ``feed`` raises only for a fault of our own, never for received bytes: ``RemoteProtocolError``
    is the documented answer to a bad frame and is caught.
    """

    def __init__(self) -> None:
        self.connection = HostConnection()
        self.events = EventSequencer(profile_name="fuzz")
        self._turn = 0
        self._feeds = 0
        self.seen: Counter[str] = Counter()  # events, RemoteProtocolErrors, sequencer outcomes
        self.output = bytearray(self.connection.send(Sync()))

    def feed(self, data: bytes) -> None:
        host = self.connection
        self._next_command()  # a link always has a command in flight (at worst a heartbeat)
        host.receive_data(data)
        while True:
            try:
                event = host.next_event()
            except RemoteProtocolError as exc:
                self.seen[type(exc).__name__] += 1
                if exc.command is not None:  # the pending command is finished: it failed
                    self._next_command()
                continue
            if event is NEED_DATA:
                break
            kind = type(event)
            self.seen[kind.__name__] += 1
            if kind is ReplyReceived:
                self._on_reply(event.reply)  # type: ignore[union-attr]
                self._next_command()
            elif kind is EventReceived:
                self._file(event.event)  # type: ignore[union-attr]
                self._next_command()
        events = self.events
        while (ready := events.peek()) is not None:
            events.commit(ready)
        assert events.queued <= events.known_highest
        self._feeds += 1
        if host.pending is not None and self._feeds % 4 == 0:  # as if the reply timed out
            self.output += host.retransmit_bytes()

    def _on_reply(self, reply: Reply) -> None:
        if type(reply) is Identity:
            self.events.set_epoch(reply.event_epoch)
        elif type(reply) is HeartbeatReply and self.events.epoch is not None:
            self.events.note_highest(reply.last_event_counter)

    def _file(self, event: DeviceEvent) -> None:
        if self.events.epoch is None:  # before the first IDENTITY: a resend brings it back
            self.seen["event before the epoch"] += 1
        else:
            self.seen[f"sequencer {self.events.offer(event)}"] += 1

    def _next_command(self) -> None:
        host = self.connection
        if host.pending is not None:
            return
        if not host.synced:
            self.output += host.send(Sync())
            return
        self._turn += 1
        command = _HOST_COMMANDS[self._turn % len(_HOST_COMMANDS)]
        self.output += host.send(EventAck(self._ack_counter()) if command is None else command)

    def _ack_counter(self) -> int:
        """What ``DeviceLink`` acknowledges: the last event delivered in the current epoch, and
        never more than a protocol core that still tracks counters itself has seen (that core
        refuses to acknowledge more; an epoch that comes back resets its count, not the link's)."""
        delivered = self.events.delivered_in_epoch()
        return min(delivered, getattr(self.connection, "contiguous_event_counter", delivered))

    def take_output(self) -> bytes:
        data = bytes(self.output)
        self.output.clear()
        return data

    def reconnect(self) -> None:
        """The cable was pulled and plugged back: the pending command is lost, SYNC again."""
        host = self.connection
        host.connection_lost()
        self.output.clear()
        while host.next_event() is not NEED_DATA:
            pass
        assert host.pending is None and not host.synced
        self._next_command()

    def lose_and_give_up_gaps(self) -> None:
        """The end of a session: the host gives up missing events, then loses the link."""
        events = self.events
        missing = events.missing()
        lost = events.accept_gap()
        assert lost == sum(last - first + 1 for first, last in missing), (missing, lost)
        assert not events.gap
        while (ready := events.peek()) is not None:
            events.commit(ready)
        self.reconnect()


# EVENT_ACK (None) is built with the counter of the moment.
_HOST_COMMANDS = (Hello(), Heartbeat(0), StatusRequest(), None, ResendEvents(), GateUnlock(),
                  Display("DRAW PLAYER"), Shuffle(8), Deliver(DeliverTarget.SHOE),
                  SetMode(DeviceMode.NORMAL), Reset(ResetKind.MECHANISM), GateLock())


class DeviceDriver:
    """A shoe's firmware in miniature, driving one ``DeviceConnection``.

    Every application command gets its proper reply (every other one a NAK instead), followed by
    an event while the event store has room. Everything the device writes is kept in ``output``
    until ``check_output`` proves it well-formed. ``feed`` raises nothing: the device answers bad
    input with NAKs, by contract.
    """

    def __init__(self, max_unacknowledged: int = 16) -> None:
        self.connection = DeviceConnection(_IDENTITY, max_unacknowledged=max_unacknowledged)
        self._max = max_unacknowledged
        self.output = bytearray()
        self._answered = 0
        self.seen: Counter[str] = Counter()  # events by type name; NAKs the core sent by code

    def feed(self, data: bytes) -> None:
        device = self.connection
        device.receive_data(data)
        while (event := device.next_event()) is not NEED_DATA:
            kind = type(event)
            self.seen[kind.__name__] += 1
            written = b""
            if kind is AutoReply:
                written = event.data  # type: ignore[union-attr]
                if type(event.reply) is Nak:  # type: ignore[union-attr]
                    self.seen[f"NAK {event.reply.code.name}"] += 1  # type: ignore[union-attr]
            elif kind is CommandReceived:
                written = device.send(self._reply(event.command))  # type: ignore[union-attr]
                if device.unacknowledged_count < self._max:
                    written += device.send(ShoeLoaded(52))
            self.output += written
        assert device.last_acknowledged_event <= device.last_event_counter
        assert device.unacknowledged_count <= self._max

    def _reply(self, command: Command) -> Reply:
        self._answered += 1
        if self._answered % 2:
            return Nak(NakCode.BUSY, "busy")
        expected = EXPECTED_REPLY[type(command)]
        if expected is HeartbeatReply:
            return HeartbeatReply(command.token, 1000, self.connection.last_event_counter)  # type: ignore[attr-defined]
        if expected is StatusReply:
            return StatusReply(DeviceState.LOADED, DeviceMode.NORMAL, False, False, True, 100,
                               self.connection.unacknowledged_count, self.connection.last_acknowledged_event)
        return Ack()

    def take_output(self) -> bytes:
        """What the device wrote since the last call, checked: whole frames that decode (no
        damage, no bad text)."""
        data = bytes(self.output)
        self.output.clear()
        decoder = FrameDecoder()
        decoder.receive_data(data)
        for item in decoder:
            assert type(item) is Frame, item
            decode_message(item)
        assert decoder.buffered == 0
        return data


class Stream:
    """A host and a device linked to each other for days, with every input injected into both.

    After each input the two exchange what they wrote (one round trip), so commands get
    their real replies and events their acknowledgements, while the injected bytes damage, split,
    duplicate and impersonate frames in both directions. State accumulates across inputs
    (sessions, cached commands, event counters, missing counters): this is what shows whether
    what a connection holds stays bounded. Every ``reconnect_every`` inputs the host loses the
    link and syncs again, as when a cable is pulled.

    ``lonely`` is a second host at the end of a cable to a hostile device: after one honest
    handshake (so it knows the event epoch) it hears only the injected bytes. Nothing answers its
    commands any more, so nothing (a new session, a new event epoch) resets what it tracks: every
    event counter the inputs leave open stays open, which is what makes unbounded tracking show.
    """

    def __init__(self, reconnect_every: int = 1000) -> None:
        self.host = HostDriver()
        self.device = DeviceDriver()
        self.lonely = HostDriver()
        _handshake(self.lonely, DeviceDriver())
        self.inputs = 0
        self._reconnect_every = reconnect_every

    def feed(self, data: bytes) -> None:
        host, device = self.host, self.device
        for piece in _pieces(data):
            host.feed(piece)
            device.feed(piece)
        self.lonely.feed(data[1:])
        self.lonely.take_output()
        device.feed(host.take_output())
        host.feed(device.take_output())
        self.inputs += 1
        if self.inputs % self._reconnect_every == 0:
            self.host.reconnect()


def _handshake(host: HostDriver, device: DeviceDriver, round_trips: int = 60) -> None:
    """Let ``host`` and ``device`` talk until the host knows the device's event epoch."""
    for _ in range(round_trips):
        if host.events.epoch is not None:
            return
        device.feed(host.take_output())
        host.feed(device.take_output())
    raise AssertionError(f"no IDENTITY after {round_trips} round trips")


def check_host(data: bytes) -> None:
    driver = HostDriver()
    for piece in _pieces(data):
        driver.feed(piece)
    driver.lose_and_give_up_gaps()


def check_device(data: bytes) -> None:
    driver = DeviceDriver()
    for piece in _pieces(data):
        driver.feed(piece)
    driver.take_output()


def test_one_input(data: bytes) -> int:
    """The fuzzing entry point (also called by the ordinary tests); returns the frame count."""
    frames = check_decoder(data)
    check_messages(frames)
    check_host(data)
    check_device(data)
    return len(frames)


def main() -> None:
    import atheris  # imported here so that this module imports without atheris installed

    atheris.instrument_all()  # coverage feedback for the already-imported protocol modules
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
