"""The table core's state machine document (docs/state-machine.md) is generated and current."""
from __future__ import annotations


def test_state_machine_doc_is_current_and_lists_every_state() -> None:
    from pathlib import Path

    from controller.table.diagram import state_machine_doc
    from controller.table.machine import STATES

    doc = state_machine_doc()
    assert (Path(__file__).resolve().parents[2] / "docs" / "state-machine.md").read_text(encoding="utf-8") == doc
    for s in STATES:
        assert f'state "{s}"' in doc
