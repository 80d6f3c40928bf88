"""Reading an entry in the words of the current schema, whichever schema it was written under.

Schema version 1 spelled three things differently (docs/journal.md, "Schema versions"):

- ``input.device`` named the event by its Python class (``"event": "CardRead"``); version 2 by its
  wire name (``"CARD_READ"``), which a rename in the code cannot change;
- ``input.device`` and ``input.status`` said ``role`` for the device's role, and ``input.operator``
  ``role`` for the operator's; version 2 says ``device_role`` and ``operator_role``;
- the column ``device_id`` (the device's serial) is ``device_serial``.

One meaning changed without a word changing: until 2026-12-02 an ``input.command_failed`` whose
command the device answered NAK NOT_SYNCED was written as refused (``"refused": true, "code":
"NOT_SYNCED"``). It is not a refusal: the device had restarted and lost its session without
looking at the command (an earlier transmission may have run). The link now reports it as an
outcome unknown (``"refused": false``, no code), and such an entry, of either version, reads so.

An entry keeps the words it was written in (its hash covers them): ``Entry.schema_version`` says
which, and ``current_payload(entry)`` gives its payload in the current words and meaning (the same
dict for a version-2 entry that none of this concerns). The readers that interpret inputs
(recovery, the audit) read through it; the export writes what is stored. ``V1_EVENT_NAMES`` is frozen: version 1's class names, as they
were when version 2 replaced them.
"""
from __future__ import annotations

from typing import Any

from controller.journal import kinds

V1_EVENT_NAMES: dict[str, str] = {
    "CardRead": "CARD_READ",
    "CoverCard": "COVER_CARD",
    "ButtonPress": "BUTTON",
    "ShuffleProgress": "SHUFFLE_PROGRESS",
    "ShuffleDone": "SHUFFLE_DONE",
    "ShoeLoaded": "SHOE_LOADED",
    "ShoeEmpty": "SHOE_EMPTY",
    "Door": "DOOR",
    "Jam": "JAM",
    "Fault": "FAULT",
}

_SESSION_LOST = "NOT_SYNCED"  # a NAK code as written, frozen as the words above are

_V1_ROLE = {kinds.INPUT_DEVICE: "device_role", kinds.INPUT_STATUS: "device_role",
            kinds.INPUT_OPERATOR: "operator_role", kinds.OPERATOR: "operator_role",
            kinds.DEVICE_REPLACED: "device_role"}


def current_payload(entry: Any) -> dict[str, Any]:
    """``entry``'s payload in the current words and meaning (module docstring). A version-1 input without ``role`` or with
    an event name version 1 never wrote raises KeyError (the readers report it as a malformed
    entry)."""
    payload = entry.payload
    if entry.kind == kinds.INPUT_COMMAND_FAILED and payload.get("refused") and payload.get("code") == _SESSION_LOST:
        return {**{k: v for k, v in payload.items() if k != "code"}, "refused": False}
    if getattr(entry, "schema_version", 2) != 1 or entry.kind not in _V1_ROLE:
        return payload
    out = {k: v for k, v in payload.items() if k != "role"}
    out[_V1_ROLE[entry.kind]] = payload["role"]
    if entry.kind == kinds.INPUT_DEVICE:
        out["event"] = V1_EVENT_NAMES[payload["event"]]
    return out
