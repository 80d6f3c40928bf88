"""What a table sends its devices to bring them back in step after a restart (this process
started on the journal) or a fault's resume: ``resume_outputs(t, restart=...)``, with the prompts
of a stack's preparation the dealer may have missed (``preparation_prompts``). Functions of the
core's state (``TableCore``); safe to repeat."""
from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from controller.table import faults, preparation
from controller.table.io import SendCommand
from controller.table.machine import AWAITING_STACK, GATE_OPEN_STATES
from firmware_bridge.protocol import messages as m

if TYPE_CHECKING:
    from controller.table.core import TableCore

__all__ = ["preparation_prompts", "resume_outputs"]

# Before the next stack is loaded: the states in which the last shoe's UNLOAD is shown again.
UNLOAD_STATES = frozenset({"shuffling", "count_fault", "cutting", "ready_to_load", "loading", "inspection", "closed"})


def resume_outputs(t: TableCore, *, restart: bool = True) -> list[SendCommand]:
    """Commands that bring the devices back in step after a restart (``restart``: this
    process started on the journal; the commands are marked ``resent``) or a resume from a
    fault (``restart=False``), safe to repeat:

    - a shuffle not yet reported done is asked for again (nothing has been dealt from it; its
      count is checked when it reports; a shuffler that restarted meanwhile dropped it, one
      still shuffling refuses it BUSY: ``command_failures.command_failed``), but not while its
      SHUFFLE_DONE waits for the resume (``Shoe.shuffle_held``);
    - after a restart, a stack not yet cut is delivered to the dealer again (the DELIVER may
      have been lost with the process; a restart's commands are ``resent``, so a refusal that
      says the dealer has the stack is no fault: ``command_failures.command_failed``); after a restart
      or a fault, so is a stack whose DELIVER failed or got no reply, until it is loaded
      (``_delivery_due``). A fault's resume does not send a DELIVER that went through again:
      the shuffler, with nothing left to deliver, would refuse it, and the refusal would hold
      the table again at every clearing;
    - before the next stack is loaded, its preparation's prompts the dealer may have missed
      (``preparation_prompts``), what the faults holding the table need the dealer to do
      (``faults.held_prompts``) and the current prompt are shown again (each is safe to
      repeat)."""
    out: list[SendCommand] = []
    shoe_id, round_no = t.in_play()
    send = partial(SendCommand, resent=restart, shoe=shoe_id, round=round_no)  # a restart cannot know what the devices had
    st = t.saved_state or t.state
    if st in GATE_OPEN_STATES:
        out.append(send("shoe", m.GateUnlock()))  # a shoe locks its gate when it loses the host
    shoe, stack_command = t.shoe, None
    if st == "shuffling" and t.has_shuffler and not (shoe is not None and shoe.shuffle_held):
        stack_command = m.Shuffle(t.sub.decks)
    elif _delivery_due(t, st, restart):
        stack_command = preparation.stack_delivery(t)
    if stack_command is not None:
        out.append(send(t.device_for("shuffler"), stack_command))
    prompts = [text for text in preparation_prompts(t, st) if text != t.prompt_text]
    prompts += faults.held_prompts(t.faults)
    if t.prompt_text:
        prompts.append(t.prompt_text)
    return out + [send("shoe", m.Display(text)) for text in prompts]

def preparation_prompts(t: TableCore, st: str) -> list[str]:
    """Before the next stack is in the shoe, the prompts of its preparation the dealer may
    not have had (lost with the shoe's link, or in a crash), in order:

    - the last shoe's UNLOAD while its cards may still be in the shoe: without it the dealer
      cannot load the next stack (unloading an empty shoe does nothing; the prompt names the
      shoe, so it never takes out a stack loaded after it). At an automatic shoe that is
      loading, only once the shoe refused the stack (NAK SHOE_NOT_EMPTY: the stack is still
      in the shuffler): the stack its shuffler delivers bears no name (docs/hardening.md);
    - the cut's CUT and COVER (``preparation.cut_prompts``): without them the stack would go
      in uncut, without its cover cards (the dealer does nothing for a card already placed)."""
    prompts: list[str] = []
    stack_may_be_in = (st == "loading" and t.automatic_shoe
                       and not (t.shoe is not None and t.shoe.shoe_full))
    if t.unload_due and st in UNLOAD_STATES and not stack_may_be_in:
        prompts.append(preparation.unload_prompt(t.unload_due))
    if st in AWAITING_STACK:
        prompts += preparation.cut_prompts(t)
    return prompts

def _delivery_due(t: TableCore, st: str, restart: bool) -> bool:
    """Whether a resume sends DELIVER again: after a restart, a stack not yet cut (before the
    restart the dealer may not have had it); or a DELIVER that failed or got no reply while
    the stack is still to be loaded (``command_failures.command_failed``)."""
    shoe = t.shoe
    if shoe is None or not t.has_shuffler:
        return False
    if restart and st == "cutting" and shoe.cut_position is None:
        return True
    return shoe.delivery_due and st in AWAITING_STACK
