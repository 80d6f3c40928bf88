"""``InjectedFaults``: the device faults of a ``FaultSpec`` that act once on the protocol side of
an emulated device, each spent when it acts (docs/emulator.md):

- ``refuse-command=NAME``: the first command of wire name NAME is refused NAK BUSY;
- ``refuse-display=WORD``: the first DISPLAY whose prompt starts with WORD is refused NAK BUSY,
  as by a device that cannot do it just now;
- ``reset-at=N``: the power is cut once event N has been sent (``power_loss_due``).

The mechanisms' faults (jams, doors, cards) are the models' own (``shoe.py``, ``shuffler.py``)."""
from __future__ import annotations

from typing import Any

from firmware_bridge.protocol import Display, Nak, NakCode

from .refusals import nak


class InjectedFaults:
    """The once-only faults of ``faults`` (a ``FaultSpec``) for one device."""

    def __init__(self, faults: Any) -> None:
        self._command: str = faults.refuse_command
        self._word: str = faults.refuse_display
        self._reset_at: int = faults.reset_at

    def refusal(self, command: Any) -> Nak | None:
        """The NAK for ``command`` if a fault refuses it (and that fault is then spent), else None."""
        if self._command and command.TYPE.name == self._command:
            self._command = ""
            return nak(NakCode.BUSY, "busy (emulator fault refuse-command)")
        if self._word and type(command) is Display and command.text.split(" ", 1)[0].upper() == self._word:
            self._word = ""
            return nak(NakCode.BUSY, "display busy")
        return None

    def power_loss_due(self, last_event_sent: int) -> bool:
        """Whether ``reset-at=N`` cuts the power now that event ``last_event_sent`` went out (once)."""
        if self._reset_at and last_event_sent >= self._reset_at:
            self._reset_at = 0
            return True
        return False
