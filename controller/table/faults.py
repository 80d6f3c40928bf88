"""Faults: what holds the table, who may clear it, and the resume exactly where it stopped.

A fault has a key (``jam:shoe``, ``door:shuffler``, ``link:shoe``, ``misread``, ...) and a
reason. Raising one journals it and, from any live state, moves the table to ``fault`` (the state
it left is remembered). A card that leaves the shoe while the table is held is deferred, not lost,
and applied in order when the table resumes. Who clears what (one table, ``ending``): a link clears
when its device reconnects, a misread when the floorperson enters the card, a door when the
device says it is closed; anything else (a jam, a device fault, a refused command, events that
never came) when the floorperson says so (a jam's or a device fault's mechanism is then reset;
events that never came are given up, so that those behind them come through).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from controller.journal import kinds
from controller.table import dealing, preparation
from controller.table.errors import Refused
from controller.table.machine import LIVE_SET, state_words
from firmware_bridge.protocol import messages as m

if TYPE_CHECKING:
    from controller.table.core import TableCore


def raise_fault(t: TableCore, key: str, reason: str) -> None:
    t.faults[key] = reason
    t.record(kinds.FAULT, {"fault": key, "reason": reason})
    t.notice("fault", reason)
    if t.state != "fault" and t.state in LIVE_SET:
        t.fault()


CLOSE_DOOR = "CLOSE DOOR"


def held_prompts(active: dict[str, str]) -> list[str]:
    """What the shoe's display must tell the dealer for the faults in ``active`` to clear: "CLOSE
    DOOR" for an open door. Shown once when the fault is raised (not as the current prompt, which
    the resume shows again), and again whenever the display was away while the fault held (a
    reconnect of the shoe, a restart): a prompt lost with its link would leave the door open and
    the table held for ever."""
    return [CLOSE_DOOR] if any(k.startswith("door:") for k in active) else []


# How each kind of fault ends, and whether a floorperson's ``clear_fault`` ends it: the one table
# of fault endings, read by a refusal while the table is held and by ``clear_fault``'s check. A
# door is the device's to end: its mechanism refuses commands while it believes the door open, so
# a floorperson's clearing would only hold the table again on the next command.
_ENDED_BY_DEVICE_OR_CARD = {
    "link": "{key} clears when the {device} reconnects",
    "misread": "misread: a floorperson enters the card (enter_card)",
    "door": "{key} clears when the {device}'s door is closed",
}
_ENDED_BY_FLOORPERSON = "{key}: a floorperson clears it (clear_fault key={key})"


def floorperson_clears(key: str) -> bool:
    """Whether a floorperson's ``clear_fault`` ends fault ``key`` (a jam, a device fault, a refused
    command, a failed count...), rather than its device or an entered card."""
    return key.partition(":")[0] not in _ENDED_BY_DEVICE_OR_CARD


def held_level(kind: str, payload: dict, *, automated: bool) -> tuple[str, str] | None:
    """For a record of a fault that holds the table (``fault``, ``count_fault``) but a link's (the
    run's outage lines say that one): the log level it is said at and its reason; None otherwise.
    A warning where the automated floorperson acts on it (a count it reshuffles, a fault it
    clears), else an error: a person must act (a misread, or operators drive the table). It was in
    no log line (a review of logs)."""
    fault = str(payload.get("fault", ""))
    if kind not in (kinds.FAULT, kinds.COUNT_FAULT) or fault.startswith("link:"):
        return None
    acts = automated and (kind == kinds.COUNT_FAULT or floorperson_clears(fault))
    return ("warning" if acts else "error"), str(payload.get("reason") or payload.get("problem"))


def ending(key: str) -> str:
    """How fault ``key`` ends, in the words a refusal uses."""
    kind, _, device = key.partition(":")
    return _ENDED_BY_DEVICE_OR_CARD.get(kind, _ENDED_BY_FLOORPERSON).format(key=key, device=device)


def table_words(state: str, active: dict[str, str]) -> str:
    """The table in ``state`` as it ends "the table is ..." in a refusal (``state_words``); held by
    the faults in ``active``, with what ends each: the refusal names the way out (a link or a
    misread is no floorperson's ``clear_fault``)."""
    if state != "fault":
        return state_words(state)
    return f"held by a fault ({'; '.join(ending(k) for k in active)})" if active else "held by a fault"


def check_operator_clearable(active: dict[str, str], key: str | None) -> list[str]:
    """The faults a floorperson's ``clear_fault`` (with ``key`` or without) would clear;
    ``Refused`` if any of them is not theirs to clear."""
    keys = [key] if key else [k for k in active if floorperson_clears(k)]
    if not keys:
        raise Refused(f"no fault a floorperson can clear ({'; '.join(ending(k) for k in active) or 'none is active'})")
    for k in keys:
        if k not in active:
            raise Refused(f"no fault {k!r} (active: {', '.join(active) or 'none'})")
        if not floorperson_clears(k):
            raise Refused(ending(k))
    return keys


def clear_faults(t: TableCore, keys: list[str], *, by: str) -> None:
    """A floorperson cleared ``keys``. The table resumes once no fault holds it; while one still
    does, what it needs the dealer to do is shown again (``held_prompts``: the shoe may have
    refused it, which was the fault just cleared)."""
    for k in keys:
        t.faults.pop(k, None)
        kind, _, device = k.partition(":")
        if kind in ("jam", "fault") and device:
            # The floorperson has cleared the mechanism; the device re-homes (its gate locks,
            # and opens again with the resume).
            t.send(device, m.Reset(m.ResetKind.MECHANISM))
        elif kind == "events" and device:  # the events that never came are given up (E7)
            t.give_up_missing_events(device)
    t.record(kinds.FAULT_CLEARED, {"faults": keys, "by": by})
    t.maybe_resume()
    if t.state == "fault":
        for text in held_prompts(t.faults):
            t.send("shoe", m.Display(text))


def cleared_by_device(t: TableCore, key: str, by: str) -> None:
    """The device itself ended fault ``key`` (reconnected, door closed): the table resumes."""
    if drop_fault(t, key, by):
        t.maybe_resume()


def drop_fault(t: TableCore, key: str, by: str) -> bool:
    """Fault ``key`` ended (``FAULT_CLEARED``, by ``by``), without resuming: for a caller that
    has more to decide first. False when it was not held."""
    if t.faults.pop(key, None) is None:
        return False
    t.record(kinds.FAULT_CLEARED, {"faults": [key], "by": by})
    return True


def maybe_resume(t: TableCore) -> None:
    """Resume where the table stopped once no fault holds it; a shoe lost meanwhile is given up
    instead (at once when no fault held the table)."""
    if t.shoe_lost_ordered:  # after restart_shoe: a misread card is of the shoe given up
        drop_fault(t, "misread", "shoe given up")
    if t.shoe_lost and (t.state != "fault" or not t.faults):
        reason, t.shoe_lost, t.shoe_lost_ordered = t.shoe_lost, None, False
        preparation.give_up_shoe(t, reason)
    elif t.state == "fault" and not t.faults and t.saved_state:
        t.trigger(f"resume_{t.saved_state}")  # generated per live state in machine.py
        # Once resumed, not inside the transition: a deferred card may start transitions of its
        # own (a squeeze, the end of the round), which the queued machine would otherwise hold
        # until all of them had been applied in the wrong state.
        dealing.apply_deferred(t)
        preparation.apply_held(t)
