"""refuse-display=WORD: "the first DISPLAY whose prompt starts with WORD"; prompts "are
case-insensitive" (docs/emulator.md), and the dealer's dealer-miss=WORD matches the first word
whatever its case. refuse-display compared it as written: `unload T1-S0001` was taken."""
from __future__ import annotations

from firmware_bridge.emulator import FaultSpec, build_device
from firmware_bridge.protocol import Display, NakCode

from .host_support import connect, nak_code


def test_refuse_display_matches_the_prompts_first_word_whatever_its_case(clock) -> None:
    shoe = build_device("emulated-shoe", clock=clock, faults=FaultSpec.parse("refuse-display=UNLOAD"))
    host = connect(shoe, clock)
    assert nak_code(host.command(Display("unload T1-S0001"))) == NakCode.BUSY
    host.ok(Display("Unload T1-S0001"))  # spent: once
