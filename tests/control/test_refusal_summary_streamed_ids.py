"""RefusalJournal (controller/control/refusals.py): the streamed form of a `refusals_summary` does
not tell an operator's id of a PIN's shape from an unknown one, neither by showing it nor by how
many hidden entries it lists (a review of the fix that hid it: an operator's id, journaled in
clear, made one more hidden entry where two unknown ids made one). The journal keeps the ids."""
from __future__ import annotations

from controller.control.refusals import RefusalJournal

HIDDEN = "<an id of 4 digits, not shown: it may be a PIN>"


def _summary(tried: list[tuple[str, bool]]) -> tuple[list[str], list[str]]:
    """(journaled, streamed) ``operators`` of the one summary of refusals of ``tried`` ids, each
    (id, an operator's?), as the server notes them (``ControlServer._auth_refused``: an unknown
    id of a PIN's shape journaled hidden, an operator's in clear with a hidden streamed form)."""
    notes = []
    journal = RefusalJournal(lambda kind, payload, op, shown: notes.append((payload, shown)), burst=0)
    for op_id, known in tried:
        payload = {"command": "sit", "operator": op_id if known else HIDDEN, "code": "auth", "reason": "x"}
        journal.refused("auth_refused", payload, op_id if known else None, {**payload, "operator": HIDDEN})
    journal.close()
    [(payload, shown)] = notes
    return payload["operators"], (shown or payload)["operators"]


def test_an_operators_pin_shaped_id_streams_as_an_unknown_one_does() -> None:
    assert _summary([("4712", False), ("4713", False)]) == ([HIDDEN], [HIDDEN])
    assert _summary([("4711", True), ("4712", False)]) == (["4711", HIDDEN], [HIDDEN])
    assert _summary([("4712", False), ("4711", True)]) == ([HIDDEN, "4711"], [HIDDEN])


def test_ids_not_of_a_pins_shape_are_streamed_as_journaled() -> None:
    notes = []
    journal = RefusalJournal(lambda kind, payload, op, shown: notes.append((payload, shown)), burst=0)
    for op_id in ("fp1", "fp2", "fp1"):
        journal.refused("auth_refused", {"command": "sit", "operator": op_id, "code": "auth", "reason": "x"}, op_id)
    journal.close()
    [(payload, shown)] = notes
    assert payload["operators"] == ["fp1", "fp2"] and shown is None
