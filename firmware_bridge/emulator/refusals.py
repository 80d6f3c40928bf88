"""What an emulated device answers a command it will not carry out: ``nak(code, text)`` (the text
clipped to the wire's limit) and ``mechanism_refusal``, the NAK a mechanism command gets in a
given condition of the device, or ``None`` when it may run (docs/emulator.md); and
``NOT_SUPPORTED_REASONS``, the text of the NAK NOT_SUPPORTED for a command a model lacks (the faults
that refuse a command once: ``injected.py``); ``internal_error``, the NAK for a command a model
failed on (a bug: logged for the developer); ``Handled``, what a command's handler returns."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import structlog

from firmware_bridge.protocol import Deliver, DeviceMode, GateLock, GateUnlock, Nak, NakCode, Reply, Shuffle
from firmware_bridge.protocol.message_base import clip_text
from firmware_bridge.protocol.wire_values import MAX_TEXT

# A handler returns the reply and, optionally, what to do once the reply is on its way.
Handled = tuple[Reply, Callable[[], None] | None]

NOT_SUPPORTED_REASONS: dict[type, str] = {
    Shuffle: "this device does not shuffle", Deliver: "this device does not deliver stacks",
    GateLock: "this device has no card gate", GateUnlock: "this device has no card gate",
}


log = structlog.get_logger("shoectl.emulator")


def nak(code: NakCode, text: str = "") -> Nak:
    return Nak(code, clip_text(text, MAX_TEXT))


def internal_error(command: Any, exc: Exception) -> Nak:
    """NAK INTERNAL_ERROR for ``command``, which a model raised ``exc`` on: the host is told in words,
    the exception's class goes to the log, for the developer."""
    log.error("emulated device: internal error answering a command", command=command.TYPE.name,
              error=f"{type(exc).__name__}: {exc}")
    return nak(NakCode.INTERNAL_ERROR, f"internal error: {exc}")


def mechanism_refusal(*, mode: DeviceMode, jammed: bool, faulted: bool, door_open: bool,
                      busy: bool) -> Nak | None:
    """In this order: not in NORMAL mode, a jam, a device fault, the door open, the mechanism
    busy (pass ``busy=False`` for a command that may run while it is)."""
    if mode != DeviceMode.NORMAL:
        return nak(NakCode.WRONG_STATE, f"device is in {mode.name} mode")
    if jammed:
        return nak(NakCode.JAM, "clear the jam (RESET) first")
    if faulted:
        return nak(NakCode.FAULT, "device fault: RESET or service needed")
    if door_open:
        return nak(NakCode.DOOR_OPEN, "door open")
    if busy:
        return nak(NakCode.BUSY, "mechanism busy")
    return None

