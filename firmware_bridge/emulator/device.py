"""``EmulatedDevice``: the device side of the protocol for one emulated shuffler or shoe (sans-I/O).

The model is driven by three calls and touches no port, thread or real clock:

- ``receive_data(data)``: bytes from the host; every complete command is answered at once;
- ``tick(now=None)``: let time pass (shuffle progress, delayed dealer actions, host-loss timeout);
  ``next_due(now)`` says when a tick next has something to do, so that a pump can sleep till then;
- ``outgoing()``: the frames to write, oldest first, one frame per item (so a line fault such as
  ``dup`` acts on whole frames). Events emitted before a reply come before it (D8).

Time comes from the injected ``clock`` (``time.monotonic`` by default; ``ManualClock`` in tests).
Callers that drive a model from several threads hold ``device.lock`` around each call (a table
gives all its devices the same lock, since the shuffler hands stacks to the shoe).

The protocol core (``DeviceConnection``) answers SYNC, HELLO, EVENT_ACK, RESEND_EVENTS and replays
by itself; this class answers the rest: HEARTBEAT, STATUS, RESET, SET_MODE, DISPLAY, and NAKs
NOT_SUPPORTED for what the model lacks (SHUFFLE/DELIVER on a shoe, GATE_* on a shuffler) and
WRONG_STATE / DOOR_OPEN / JAM / BUSY / FAULT for what its state forbids. Subclasses add the
mechanisms (``EmulatedShuffler``, ``EmulatedShoe``, ``EmulatedShufflerShoe``).

Power loss (``power_cycle()``, RESET(REBOOT), fault ``reset-at=N``): the session is lost (the new
core answers NOT_SYNCED until SYNC), the device clock restarts, the mode returns to NORMAL, the
display clears and the gate locks; the event counter, the event epoch and the unacknowledged events
survive (non-volatile storage), so after SYNC/HELLO/RESEND_EVENTS nothing is lost or duplicated.
Physical things (cards in the shoe, an open door, a jam) stay as they are.
"""
from __future__ import annotations

import random
import threading
from typing import Any

from firmware_bridge.protocol import (
    HOST_LOSS_TIMEOUT_S,
    NEED_DATA,
    Ack,
    AutoReply,
    CommandReceived,
    Deliver,
    DeviceConnection,
    DeviceEvent,
    DeviceMode,
    DeviceState,
    Display,
    Door,
    Dropped,
    Fault,
    GateLock,
    GateUnlock,
    Heartbeat,
    HeartbeatReply,
    Jam,
    JamLocation,
    MAX_TEXT,
    Nak,
    NakCode,
    Reset,
    ResetKind,
    SetMode,
    Shuffle,
    StatusReply,
    StatusRequest,
)
from firmware_bridge.protocol.message_base import clip_text

from .clock import Clock, monotonic
from .faults import FaultSpec
from .hooks import DeviceHooks
from .identity import EMULATOR_FIRMWARE, capabilities_of, identity_for
from .outbox import Outbox
from .injected import InjectedFaults
from .refusals import NOT_SUPPORTED_REASONS, Handled, internal_error, mechanism_refusal, nak

# EMULATOR_FIRMWARE, capabilities_of and identity_for live in .identity; importable from here too.
__all__ = ["EMULATOR_FIRMWARE", "EmulatedDevice", "EmulatorStateError", "capabilities_of", "identity_for"]

_U32 = 0xFFFF_FFFF

class EmulatorStateError(RuntimeError):
    """A physical action the device's state does not allow (e.g. loading a shoe that holds cards)."""


class EmulatedDevice:
    """Base of the emulated devices. See the module docstring for the driving contract.

    Args:
        profile: the device profile (``firmware_bridge.profiles.Profile``).
        clock: seconds, monotonic (``time.monotonic`` by default).
        faults: device faults to act on (``FaultSpec``); line faults are the servers' business.
        seed: makes every random choice of the model reproducible (``random.Random(seed)``);
            ``None`` uses the OS CSPRNG (``random.SystemRandom``).
        speed: how much faster than real time mechanisms run; ``math.inf`` (``"max"``) finishes
            them at the next tick.
        serial, firmware, event_epoch: identity overrides (see ``identity_for``).
        host_loss_timeout: seconds without any command after which the device considers the host
            gone (section 7: the shoe locks its gate); ``None`` disables it.
        max_unacknowledged: events held before the device stops producing new ones (E8).
    """

    def __init__(self, profile: Any, *, clock: Clock = monotonic, faults: FaultSpec | None = None,
                 seed: int | None = None, speed: float = 1.0, serial: str | None = None,
                 firmware: str = EMULATOR_FIRMWARE, event_epoch: int | None = None,
                 host_loss_timeout: float | None = HOST_LOSS_TIMEOUT_S,
                 max_unacknowledged: int = 4096) -> None:
        if not speed > 0:
            raise ValueError(f"speed must be positive, got {speed}")
        self.profile = profile
        self.clock = clock
        self.faults = faults or FaultSpec()
        self.seed = seed
        self.rng: random.Random = random.SystemRandom() if seed is None else random.Random(seed)
        self.speed = float(speed)
        self.lock = threading.RLock()
        self.host_loss_timeout = host_loss_timeout
        self.max_unacknowledged = max_unacknowledged
        self.identity = identity_for(profile, serial=serial, firmware=firmware,
                                     event_epoch=event_epoch)
        self.connection = DeviceConnection(self.identity, max_unacknowledged=max_unacknowledged)
        self.mode = DeviceMode.NORMAL
        self.display_text = ""
        self._injected = InjectedFaults(self.faults)  # refuse-command, refuse-display, reset-at
        self.door_open = False
        self.jammed = False
        self.jam_location: JamLocation | None = None
        self.faulted = False  # a FAULT condition that RESET(MECHANISM) clears
        self.gate_locked = True
        self.host_lost = False
        self.boots = 1
        self.frames_dropped = 0
        self._boot_at = clock()
        self._last_command_at: float | None = None
        self._outbox = Outbox(max_unacknowledged)
        self._power_loss_pending = False
        self.hooks = DeviceHooks()  # what the dealer and the servers attach (hooks.py)

    # --- driving -------------------------------------------------------------------------------

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Feed bytes from the host; answer every complete command (replies go to ``outgoing()``)."""
        conn = self.connection
        conn.receive_data(data)
        while True:
            event = conn.next_event()
            if event is NEED_DATA:
                break
            if isinstance(event, Dropped):
                self.frames_dropped += 1
                continue
            self._last_command_at = self.clock()
            self.host_lost = False
            if isinstance(event, AutoReply):
                self._outbox.put(event.data)
                self._flush_backlog()
                continue
            assert isinstance(event, CommandReceived)
            try:
                reply, after = self._command(event.command)
            except Exception as exc:  # a bug in a model must not leave the command unanswered
                reply, after = internal_error(event.command, exc), None
            self._outbox.put(conn.send(reply))
            if after is not None:
                after()
            if conn is not self.connection:  # rebooted: the rest of the old buffer is gone
                break
        self._after_step()

    def tick(self, now: float | None = None) -> None:
        """Let time pass up to ``now`` (default: the clock): mechanisms, dealer, host loss."""
        now = self.clock() if now is None else now
        self._flush_backlog()
        self._tick(now)
        self.hooks.tick(now)
        host_loss = self._host_loss_at()
        if host_loss is not None and now >= host_loss:
            self.host_lost = True
            self._on_host_lost()
        self._after_step()

    def next_due(self, now: float) -> float | None:
        """When ``tick`` next has something to do without an input (a mechanism's next step, a tick
        hook's, the host-loss timeout; ``now`` or earlier: something waits on a condition, tick
        at every poll); None: nothing until an input or an event (``hooks``' wake listeners)."""
        dues = (self._mechanism_due(now), self._host_loss_at(), *self.hooks.dues(now))
        return min((due for due in dues if due is not None), default=None)

    def _host_loss_at(self) -> float | None:
        """When the host counts as lost if no command comes first (None: not counting)."""
        last, timeout = self._last_command_at, self.host_loss_timeout
        return None if last is None or timeout is None or self.host_lost else last + timeout

    def outgoing(self) -> list[bytes]:
        """Take the frames to write, oldest first (one complete frame per item)."""
        return self._outbox.take()

    def exchange(self, received: bytes) -> list[bytes]:
        """One step of a channel's pump, under ``self.lock``: take ``received`` (maybe none),
        let time pass, and return the frames to write (``receive_data``, ``tick``, ``outgoing``)."""
        with self.lock:
            if received:
                self.receive_data(received)
            self.tick()
            return self.outgoing()

    # --- state ---------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return self.profile.name

    @property
    def state(self) -> DeviceState:
        if self.mode == DeviceMode.MAINTENANCE:
            return DeviceState.MAINTENANCE
        if self.jammed or self.faulted:
            return DeviceState.FAULT
        return self._activity_state()

    def uptime_ms(self, now: float | None = None) -> int:
        """The device clock (ms since the last power-up, wrapping at 2**32)."""
        now = self.clock() if now is None else now
        return int((now - self._boot_at) * 1000) & _U32

    @property
    def events_blocked(self) -> bool:
        """True when the event store is full (E8): the device must not produce new events."""
        return self._outbox.blocked(self.connection)

    @property
    def gate_closed(self) -> bool:
        """The gate as STATUS reports it: a device without a card gate (a shuffler) says unlocked,
        never locked (a review: a shuffler that NAKs GATE_LOCK "no card gate" said its gate was
        locked); a shoe's is its own (``EmulatedShoe.gate_closed``)."""
        return False

    @property
    def events_emitted(self) -> int:
        """Events sent so far (not counting those still held back)."""
        return self._outbox.sent

    def cards_in_shoe(self) -> int:
        return 0

    # --- physical events (also usable directly by tests and the dealer) ------------------------

    def emit(self, event: DeviceEvent) -> None:
        """Send a new event (built with ``counter=0``). If the event store is full it waits in a
        backlog, in order, until the host acknowledges (never dropped)."""
        if self._outbox.emit(self.connection, event):
            self._check_reset_fault()
        self.hooks.wake()

    def open_door(self) -> None:
        if not self.door_open:
            self.door_open = True
            self.emit(Door(open=True))

    def close_door(self) -> None:
        if self.door_open:
            self.door_open = False
            self.emit(Door(open=False))

    def jam(self, location: JamLocation = JamLocation.UNKNOWN) -> None:
        """A card jam: the device refuses mechanism commands (NAK JAM) until RESET(MECHANISM)."""
        if not self.jammed:
            self.jammed = True
            self.jam_location = JamLocation(location)
            self.emit(Jam(location=location))

    def fault(self, code: int, text: str = "") -> None:
        """A device fault (FAULT event, state FAULT) until RESET(MECHANISM)."""
        self.faulted = True
        self.emit(Fault(code=code, text=clip_text(text, MAX_TEXT)))

    def power_cycle(self) -> None:
        """Power loss and restart (see the module docstring)."""
        old = self.connection
        self.connection = DeviceConnection(
            self.identity,
            next_event_counter=old.last_event_counter + 1,
            unacknowledged=old.unacknowledged_events(),
            last_acknowledged_event=old.last_acknowledged_event,
            max_unacknowledged=self.max_unacknowledged,
        )
        self.boots += 1
        self._boot_at = self.clock()
        self._last_command_at = None
        self.host_lost = False
        self.mode = DeviceMode.NORMAL
        self.display_text = ""
        self.gate_locked = True
        self._power_loss_pending = False
        self._on_power_loss()

    # --- hooks for subclasses ------------------------------------------------------------------

    def _activity_state(self) -> DeviceState:
        return DeviceState.IDLE

    def _busy(self) -> bool:
        """True while a mechanism runs (SET_MODE and other mechanism commands get BUSY)."""
        return False

    def _tick(self, now: float) -> None:
        """Advance the mechanisms to ``now``."""

    def _mechanism_due(self, now: float) -> float | None:
        """When ``_tick`` next has something to do (None: no mechanism runs)."""
        return None

    def _reset_mechanism(self) -> None:
        """RESET(MECHANISM): clear jam and fault, re-home (the gate locks)."""
        self.jammed = False
        self.jam_location = None
        self.faulted = False
        self.gate_locked = True

    def _on_power_loss(self) -> None:
        """What a power loss does to the mechanisms (called after the session was replaced)."""

    def _on_host_lost(self) -> None:
        """No command for ``host_loss_timeout`` seconds."""

    # A mechanism adds _cmd_shuffle / _cmd_deliver / _cmd_gate_lock / _cmd_gate_unlock; without
    # one, the command is NAKed NOT_SUPPORTED with the reason in NOT_SUPPORTED_REASONS.

    # --- helpers for subclasses ----------------------------------------------------------------

    _nak = staticmethod(nak)

    def _refusal(self, *, busy_ok: bool = False) -> Nak | None:
        """The NAK a mechanism command gets in the current state, or ``None`` if it may run."""
        return mechanism_refusal(mode=self.mode, jammed=self.jammed, faulted=self.faulted,
                                 door_open=self.door_open, busy=not busy_ok and self._busy())

    # --- internals -----------------------------------------------------------------------------

    def _check_reset_fault(self) -> None:
        """After events went out: ``reset-at=N`` cuts the power at the end of the step (queued frames go out)."""
        if self._injected.power_loss_due(self.connection.last_event_counter):
            self._power_loss_pending = True

    def _flush_backlog(self) -> None:
        if self._outbox.flush(self.connection):
            self._check_reset_fault()

    def _after_step(self) -> None:
        if self._power_loss_pending:
            self.power_cycle()

    def _command(self, command: Any) -> Handled:
        refused = self._injected.refusal(command)
        if refused is not None:
            return refused, None
        handler = getattr(self, _HANDLERS.get(type(command), ""), None)  # by name: a subclass's own _cmd_*
        if handler is None:
            reason = NOT_SUPPORTED_REASONS.get(type(command), f"{command.TYPE.name} not supported")
            return self._nak(NakCode.NOT_SUPPORTED, reason), None
        return handler(command)

    def _cmd_heartbeat(self, command: Heartbeat) -> Handled:
        return HeartbeatReply(command.token, self.uptime_ms(),
                              self.connection.last_event_counter), None

    def _cmd_status(self, command: StatusRequest) -> Handled:
        conn = self.connection
        return StatusReply(
            state=self.state, mode=self.mode, door_open=self.door_open, jam=self.jammed,
            gate_locked=self.gate_closed, cards_in_shoe=min(self.cards_in_shoe(), 0xFFFF),
            pending_events=min(conn.unacknowledged_count + self._outbox.waiting, 0xFFFF),
            last_acked_event=conn.last_acknowledged_event,
        ), None

    def _cmd_reset(self, command: Reset) -> Handled:
        if command.kind == ResetKind.REBOOT:
            return Ack(), self.power_cycle
        self._reset_mechanism()
        return Ack(), None

    def _cmd_set_mode(self, command: SetMode) -> Handled:
        if command.mode != self.mode and self._busy():
            return self._nak(NakCode.BUSY, "mechanism busy"), None
        self.mode = DeviceMode(command.mode)
        return Ack(), None

    def _cmd_display(self, command: Display) -> Handled:
        self.display_text = command.text
        listeners = self.hooks.prompt_listeners()

        def notify() -> None:
            for listener in listeners:
                listener(command.text)

        return Ack(), notify if listeners else None


_HANDLERS: dict[type, str] = {
    Heartbeat: "_cmd_heartbeat", StatusRequest: "_cmd_status", Reset: "_cmd_reset", SetMode: "_cmd_set_mode",
    Display: "_cmd_display", Shuffle: "_cmd_shuffle", Deliver: "_cmd_deliver", GateLock: "_cmd_gate_lock",
    GateUnlock: "_cmd_gate_unlock",
}
