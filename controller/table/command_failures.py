"""What the table does when a command to a device did not go through (``command_failed``, the
core's ``CommandFailed`` input, journaled before it is decided): a refusal holds the table in a
fault a floorperson clears, a refusal that is no fault (a step the dealer took already, a DELIVER
that went through before) or an outcome unknown is only said; the shuffle's and the stack's
commands first (``_stack_command_failed``). Device events and link status: ``events``.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from controller.table import preparation
from controller.table.faults import held_prompts, raise_fault
from controller.table.io import CommandFailed
from controller.table.machine import LIVE_SET
from firmware_bridge.protocol import NakCode

if TYPE_CHECKING:
    from controller.table.core import TableCore


# NAK codes by the name a failed command carries (``CommandFailed.code``, journaled as such).
BUSY, JAM, SHOE_NOT_EMPTY = NakCode.BUSY.name, NakCode.JAM.name, NakCode.SHOE_NOT_EMPTY.name
# A DELIVER sent again, refused so: an earlier one went through (nothing left to deliver).
DELIVERED_ALREADY = frozenset({NakCode.WRONG_STATE.name})


def command_failed(t: TableCore, f: CommandFailed) -> None:
    """A command to a device did not go through. Refused (a NAK): the device did not do it, so
    the table holds (a fault a floorperson clears once the device is seen to; the resume sends
    again what the state needs: the shuffle, the delivery, the gate, the prompt). A prompt the
    shoe refused once the dealer's step it told is past, a command refused while a fault already
    holds the table (a door, a jam: the resume re-sends), or one whose outcome is unknown (no
    reply, the link down, or the device restarted and lost the session: the reconnect's resume
    re-sends) is only said. A refused prompt that is still the dealer's step (``_step_unseen``)
    holds the table like any refusal: without it the last shoe's cards stay in the shoe, the
    stack goes in uncut, nothing is loaded, or no card is drawn. So does an outcome unknown with
    the link still up (``answered``: a reply not the command's, or unreadable), but for a DISPLAY
    whose step is past: no reconnect comes to send it again. A refusal because the device is
    jammed is the jam fault (``jam:<role>``), whose clearing resets the mechanism. The shuffle's
    and the stack's commands first: ``_stack_command_failed``."""
    if _stack_command_failed(t, f):
        return
    text = f"the {f.device_role} did not carry out {f.command}: {_said(f)}"
    if f.refused and f.code == JAM:
        # The device says its mechanism is jammed (a RESET that clearing the jam sent was lost, say):
        # the jam fault, whose clearing resets the mechanism, not a fault of the command.
        if f"jam:{f.device_role}" not in t.faults:
            raise_fault(t, f"jam:{f.device_role}", f"{f.device_role} jammed: {text}")
        return
    if f.refused and f.command == "DISPLAY" and _step_unseen(t, f.prompt):
        raise_fault(t, f"command:{f.device_role}", f"{text}; the dealer did not see \"{f.prompt}\": check the "
                                                   "display, then clear the fault (the prompt is shown again)")
        return
    if f.answered and t.state != "fault" and (f.command != "DISPLAY" or _step_unseen(t, f.prompt)):
        # The link stayed up: no reconnect's resume sends it again, and the table would wait for
        # ever on a step nobody was told (a firmware review: a garbled reply to a DRAW prompt, or
        # to SHUFFLE, left it so, a warning in the log the only word).
        raise_fault(t, f"command:{f.device_role}", f"{text}: the {f.device_role} answered, but whether it carried "
                    f"{f.command} out is unknown: check the device, then clear the fault (it is sent again)")
        return
    if not f.refused or f.command == "DISPLAY" or t.state == "fault":
        t.notice("warning", text)
        return
    raise_fault(t, f"command:{f.device_role}", text + "; check the device, then clear the fault")


def _step_unseen(t: TableCore, prompt: str | None) -> bool:
    """Whether ``prompt``, which the shoe refused to show, still tells the dealer's step: what a
    fault holding the table needs the dealer to do (CLOSE DOOR: ``faults.held_prompts``), or, the
    table live, what a resume would show again (the current prompt, or the preparation's UNLOAD,
    CUT and COVER: ``preparation_prompts``)."""
    if prompt is None:
        return False
    if prompt in held_prompts(t.faults):
        return True
    return t.state in LIVE_SET and (prompt == t.prompt_text or prompt in t.preparation_prompts(t.state))


def _said(f: CommandFailed) -> str:
    """Why ``f`` failed, without what the sentence before it says: the link puts its device's name
    and the command first (``emulated-shoe: DISPLAY: read failed: ...``, ``SHUFFLE refused:
    BUSY``). The input's journaled reason keeps them."""
    reason = f.reason
    name, colon, rest = reason.partition(": ")
    if colon and name != f.command and re.fullmatch(r"[\w.@-]+", name):
        reason = rest
    return reason.removeprefix(f"{f.command}: ").removeprefix(f"{f.command} ")


def _stack_command_failed(t: TableCore, f: CommandFailed) -> bool:
    """What a failed SHUFFLE or DELIVER means for the stack; True when that is all it means.

    A SHUFFLE refused BUSY while the table shuffles (every resume asks for the shuffle again)
    found the shuffler still shuffling: said at info. A DELIVER that did not go through (or may
    not have) makes the shoe's delivery due: every resume until the stack is loaded sends it
    again (``TableCore._delivery_due``), whatever the cut, cover and load recorded meanwhile. A
    DELIVER so sent that is refused as WRONG_STATE (nothing left to deliver) tells that an earlier
    one went through: no longer due. So does a DELIVER a restart sent again refused so
    (``CommandFailed.resent``: the table could not know whether the one it sent before it stopped
    went through). One refused BUSY while a command of the stack sent before may keep the device
    busy (delivering one sent before, or shuffling one asked for again: ``Shoe.commands_out``)
    stays due without a fault: the shuffle's SHUFFLE_DONE or the next resume sends it again.
    Refused BUSY with none out, the device did not do it and nothing would ask again: a fault,
    as any refusal, whose clearing sends it again (a SHUFFLE likewise). One refused
    SHOE_NOT_EMPTY while the last shoe's UNLOAD is due stays due without a fault: the UNLOAD is
    shown again, and the shoe's SHOE_EMPTY sends the DELIVER (``shoe_empty``). Any other failure
    of a DELIVER is then decided as any command's."""
    shoe = t.shoe
    if f.refused and not f.resent and shoe is not None:  # a restart's commands are not counted
        shoe.settled(f.command)
    busy = f.refused and f.code == BUSY
    at_an_earlier = busy and (f.resent or (shoe is not None and shoe.commands_out(f.command)))
    if f.command == "SHUFFLE" and at_an_earlier and (t.saved_state or t.state) == "shuffling":
        t.notice("info", f"the {f.device_role} is still shuffling (BUSY)")
        return True
    if f.command != "DELIVER" or shoe is None:
        return False
    if f.refused and f.code in DELIVERED_ALREADY and (shoe.delivery_due or f.resent):
        shoe.delivery_due = False
        t.notice("info", f"the {f.device_role} had already taken a DELIVER sent before ({f.code}): not sent again")
        return True
    shoe.delivery_due = True  # the stack may still be in the shuffler
    if f.refused and f.code == SHOE_NOT_EMPTY and _full_shoe_refused(t, f.device_role):
        return True
    if at_an_earlier:  # not a fault: a floorperson could do nothing
        t.notice("info", f"the {f.device_role} is busy (BUSY): DELIVER is sent again when it is done")
        return True
    return False


def _full_shoe_refused(t: TableCore, device_role: str) -> bool:
    """A DELIVER(SHOE) refused SHOE_NOT_EMPTY: the stack is still in the shuffler. True when the
    table goes on without a fault: the shoe reported itself emptied since (its SHOE_EMPTY came
    first), so the DELIVER goes again now; or the last shoe's UNLOAD was lost, so it is shown
    again (safe: the stack is not in the shoe) and the shoe's SHOE_EMPTY sends the DELIVER
    (``shoe_empty``)."""
    shoe = t.shoe
    if shoe.emptied:
        shoe.emptied = False
        t.notice("info", f"the {device_role} found the shoe not yet emptied; DELIVER sent again")
        t.send("shuffler", preparation.stack_delivery(t))
        return True
    if t.unload_due is None:
        return False
    shoe.shoe_full = True
    t.notice("warning", f"the {device_role} could not deliver: the shoe still holds the last shoe's "
                        "cards; they are to be taken out, then the stack is delivered")
    t.show(preparation.unload_prompt(t.unload_due))
    return True
