"""A shoe that does not sense positions sends position 0 ("unknown", docs/protocol.md 9.18: "the
host then checks nothing by position") for every card and the cover card. Its card set checks
(`audit cards`); the shuffle audit, which places each card in the stack by its position, says
that it cannot (it said "a cover card at position 0 is outside the stack": a review)."""
from __future__ import annotations

from pathlib import Path

import firmware_bridge.emulator.shoe as emulated_shoe
from cli_run import dealt_journal, run
from firmware_bridge.protocol.device_events import CardRead, CoverCard


def test_a_shoe_without_positions_is_said_to_have_none_to_place_its_cards_by(capsys, monkeypatch,
                                                                              tmp_path: Path) -> None:
    monkeypatch.setattr(emulated_shoe, "CardRead", lambda **kw: CardRead(**{**kw, "position": 0}))
    monkeypatch.setattr(emulated_shoe, "CoverCard", lambda **kw: CoverCard(**{**kw, "position": 0}))
    journal = dealt_journal(tmp_path / "j.db", "--shoes", "1", "--seed", "3", "--no-edge-monitor")
    code, out, err = run(capsys, "audit", "cards", str(journal))
    assert code == 0 and "T1-S0001: ok" in out, (out, err)
    code, out, err = run(capsys, "audit", "shuffle", "--order", "shoe", str(journal))
    assert code == 2 and "outside the stack" not in err, err
    assert "T1-S0001: positions: the shoe does not report positions (0, unknown: docs/protocol.md 9.18)" in err, err
