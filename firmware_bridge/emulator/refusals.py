"""What an emulated device answers a command it will not carry out: ``nak(code, text)`` (the text
clipped to the wire's limit) and ``mechanism_refusal``, the NAK a mechanism command gets in a
given condition of the device, or ``None`` when it may run (docs/emulator.md);
``NOT_SUPPORTED_REASONS``, the text of the NAK NOT_SUPPORTED for a command a model lacks; and
``InjectedRefusals``, the faults that refuse a command once."""
from __future__ import annotations

from typing import Any

from firmware_bridge.protocol import Deliver, DeviceMode, Display, GateLock, GateUnlock, Nak, NakCode, Shuffle
from firmware_bridge.protocol.message_base import clip_text
from firmware_bridge.protocol.wire_values import MAX_TEXT

NOT_SUPPORTED_REASONS: dict[type, str] = {
    Shuffle: "this device does not shuffle", Deliver: "this device does not deliver stacks",
    GateLock: "this device has no card gate", GateUnlock: "this device has no card gate",
}


def nak(code: NakCode, text: str = "") -> Nak:
    return Nak(code, clip_text(text, MAX_TEXT))


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


class InjectedRefusals:
    """The faults ``refuse-command=NAME`` and ``refuse-display=WORD`` of ``faults``: the first
    command of wire name NAME, and the first DISPLAY whose prompt starts with WORD, are refused NAK
    BUSY, once each, as by a device that cannot do it just now."""

    def __init__(self, faults: Any) -> None:
        self._command: str = faults.refuse_command
        self._word: str = faults.refuse_display

    def refusal(self, command: Any) -> Nak | None:
        """The NAK for ``command`` if a fault refuses it (and that fault is then spent), else None."""
        if self._command and command.TYPE.name == self._command:
            self._command = ""
            return nak(NakCode.BUSY, "busy (emulator fault refuse-command)")
        if self._word and type(command) is Display and command.text.split(" ", 1)[0] == self._word:
            self._word = ""
            return nak(NakCode.BUSY, "display busy")
        return None
