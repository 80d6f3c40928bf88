"""``Dealer``: a scripted dealer who acts only on the shoe's DISPLAY prompts (sans-I/O).

The dealer is attached to one ``EmulatedShoe``: every DISPLAY the shoe executes is a prompt; the
dealer performs it ``delay_s`` seconds later, in order, during the shoe's ``tick()`` (so the ACK of
the DISPLAY is on the wire before the cards it makes the dealer draw). A retransmitted DISPLAY is
replayed by the protocol core and never reaches the dealer, so a retry never makes the dealer act
twice; a controller that is down sends no prompts, so the dealing stops, as at a real table.

Prompt language (case-insensitive, words separated by spaces; the full text is in
docs/emulator.md):

=================  ===============================================================================
``DRAW [HAND]``    draw one card for HAND (e.g. ``PLAYER``, ``BANKER``); a cover card that comes out
                   first is set aside and the next card is drawn. ``@N`` anywhere in a DRAW or
                   BURN prompt makes it idempotent: "the N-th card out of this shoe"; the dealer
                   acts only if fewer than N cards have left the shoe since it was loaded, so a
                   prompt shown again after a controller restart never draws a card twice
``BURN [N]``       draw N cards (default 1) to the discard rack; a cover card that comes out is set
                   aside and ends the burn (the controller ends the shoe there: 681a.7(d))
``SHUFFLE ...``    a table without a shuffler (``SHUFFLE BY HAND``): open a new preshuffled pack
                   (``open_pack``, 681a.5(a)) and take it in hand; refused without one.
                   ``SHUFFLE COLLECTED``: after a shoe is dealt, its cards (those left in the shoe
                   taken out to the discard rack first, 681a.7(d)(1)) and the layout's shuffled by
                   hand into the stack in hand (681a.7(d)(2))
``WASH ...``       a table without a shuffler, after the cards of an idle table were spread for
                   inspection (``WASH AND SHUFFLE``, 681a.5(g)(1)): the cards of the discard rack and
                   the layout washed and shuffled by hand into the stack in hand; refused beside a
                   shuffler
``CUT N``          cover card N cards from the top of the stack in hand; the cards above it and the
                   cover card go to the bottom (681a.5(c)-(d))
``COVER N``        second cover card with N cards below it (681a.5(d)); refused before the CUT. CUT
                   and COVER shown again once their card is in (a controller's resume) do nothing
``OFFER CUT ...``  the cut offered (``DEALER CUTS`` likewise): information, but for a stack in hand
                   that has its cover cards already: a recut was ordered (681a.5(e)), and the
                   dealer takes the cover cards out for the new CUT and COVER
``LOAD [NAME]``    put the stack in hand into the shoe (SHOE_LOADED); the dealer remembers NAME
                   (the controller's shoe id) as the name of what the shoe holds
``UNLOAD [NAME]``  take what is left in the shoe out, unread, to the discard rack (SHOE_EMPTY).
                   With NAME it is idempotent: the dealer leaves a shoe loaded under another name
                   alone (an UNLOAD shown again after the next stack went in never takes it out);
                   a stack loaded without a name (a shuffler's DELIVER(SHOE), a LOAD without
                   one, or before this dealer) is taken out whatever the name
``REVEAL``         press the reveal button (BUTTON REVEAL); likewise ``CONFIRM``, ``CANCEL``,
                   ``CALL FLOOR``
``CLOSE DOOR``     close the shoe's door (DOOR closed)
anything else      information for the dealer (e.g. ``PLACE YOUR BETS``): no action
=================  ===============================================================================

The stack in hand comes from the shuffler's DELIVER(DEALER) (``receive_stack``). Every prompt
leaves a ``DealerAction`` in ``log`` (the latest ``LOG_LIMIT``); what cannot be done (no stack in
hand, gate locked, shoe empty, ...) is recorded as refused, and nothing else happens, but for a
DRAW or BURN that only the locked gate refused: it is done when the gate opens, unless the shoe
shows another prompt first (a dealer at a locked gate waits for it). The layout
and the discard rack hold the cards of the shoe in play: when a new stack is loaded (LOAD, or a
shuffler's DELIVER(SHOE)) the last shoe's cards have left the table, so a table dealing for weeks
keeps no more than a shoe's cards and a bounded log.

Mistakes on request: ``draw_extra_card_next()`` (the next DRAW takes one card too many),
``expose_next_card()`` (the next card drawn leaves face up); as faults ``dealer-extra-at=N`` (the
N-th DRAW prompt), ``dealer-expose-at=N`` (the N-th card the dealer draws, burns included) and
``dealer-miss=WORD`` (the first prompt starting with WORD is missed: logged, not done).

A missed prompt is not lost: as a dealer glances at the display again, the dealer looks
``reread_s`` later (``REREAD_S`` of real time, divided by the shoe's speed, at least
``REREAD_MIN_S``) and does it then if the shoe still shows it; a newer prompt shown meanwhile is
what the dealer does instead. A LOAD while the shoe still holds the last shoe's cards (its UNLOAD
was missed, and the next prompt replaced it) takes them out first
(681a.7(d)(1)): the shoe reports SHOE_EMPTY, then SHOE_LOADED.
"""
from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from .cards import COVER, DeviceCard, Item, cut_stack, insert_second_cover
from .device import EmulatorStateError
from .faults import FaultSpec
from .prompts import BUTTONS, NEEDS_STACK, parse_prompt, prompt_number
from .shoe import EmulatedShoe

__all__ = ["DealerAction", "Dealer", "parse_prompt"]

_BURN_ENDS = "cover card set aside: the burn ends"

_GATE_LOCKED = "refused: gate locked"  # a DRAW or BURN that drew nothing: done once the gate opens
_GATE_LOCKED_REFUSALS = frozenset({_GATE_LOCKED, _GATE_LOCKED + " (event store full)"})  # (E8: it opens when acknowledged)
STACK_WAIT_S = 30.0  # how long a prompt that needs the stack waits for the shuffler's delivery

REREAD_S = 5.0  # real seconds before a dealer who missed a prompt glances at the display again
REREAD_MIN_S = 0.5  # ... at any speed: a miss the controller can see, not one undone at once
LOG_LIMIT = 2000  # the dealer's latest actions kept (an eight-deck shoe at the automated table takes about 500)


@dataclass(frozen=True, slots=True)
class DealerAction:
    """One prompt and what the dealer did about it. ``ok`` is False when it could not be done."""

    at: float
    prompt: str
    verb: str
    ok: bool
    detail: str = ""


class Dealer:
    """The dealer at ``shoe``. ``faults`` defaults to the shoe's; ``delay_s`` is the reaction
    time (0: the next tick)."""

    def __init__(self, shoe: EmulatedShoe, *, delay_s: float = 0.0,
                 faults: FaultSpec | None = None) -> None:
        self.shoe = shoe
        self.delay_s = delay_s
        self.faults = faults if faults is not None else shoe.faults
        self.hand: list[Item] | None = None        # the stack being prepared
        self.layout: list[tuple[str, DeviceCard]] = []  # cards drawn for hands, in order
        self.discards: list[Item] = []
        self.covers_set_aside = 0
        self.log: deque[DealerAction] = deque(maxlen=LOG_LIMIT)
        self.draw_prompts = 0
        self.cards_drawn = 0
        self.drawn_this_shoe = 0  # since the shoe was last loaded, by this dealer or by a shuffler
        self._loads_seen = shoe.loads
        self.loaded_as: str | None = None  # the name the LOAD prompt gave what the shoe holds
        self._extra_next = False
        self._expose_next = False
        self._miss_word = self.faults.dealer_miss  # the fault ``dealer-miss``: spent once it acts
        self.reread_s = max(REREAD_S / shoe.speed, REREAD_MIN_S)
        self._reread: tuple[float, str] | None = None  # a missed prompt: when to look at the display again
        self._pending: deque[tuple[float, str]] = deque()
        self._at_locked_gate: str | None = None  # a DRAW or BURN the locked gate refused: done once it opens
        self.stack_coming: Callable[[], bool] = lambda: False  # the table: is a stack on its way?
        self.stack_shuffling: Callable[[], bool] = lambda: False  # the table: is the shuffler shuffling one?
        self.open_pack: Callable[[], list[Item]] | None = None  # the table without a shuffler: a new pack
        shoe.hooks.add_prompt_listener(self.on_prompt)
        shoe.hooks.add_tick_hook(self.tick, due=self.next_due)

    # --- inputs --------------------------------------------------------------------------------

    def receive_stack(self, stack: list[Item]) -> None:
        """The shuffler presents a stack for the cut (DELIVER(DEALER))."""
        self.hand = list(stack)

    def on_prompt(self, text: str) -> None:
        """The shoe displayed ``text``: act on it ``delay_s`` from now."""
        self._at_locked_gate = None  # the shoe shows something newer: that is what the dealer does
        self._reread = None
        self._pending.append((self.shoe.clock() + self.delay_s, text))

    def tick(self, now: float) -> None:
        """Perform the prompts that are due, oldest first. A prompt that needs the stack in hand
        (CUT, COVER, LOAD) while a stack is on its way (``stack_coming``: the shuffler holds one
        or delivers it; its DELIVER may arrive after the prompts, on another link) waits for it, as
        a dealer would, up to ``STACK_WAIT_S``; the prompts after it wait in order. While the
        shuffler shuffles (``stack_shuffling``: a controller restarted during a shuffle asks for it
        again, and shows the cut's prompts once the first shuffle's end reaches it) the wait starts
        again at every tick: the stack comes when the shuffle is done, however long it takes.
        Without a stack on its way the prompt is refused at once. A DRAW or BURN that the locked gate
        refused is done when the gate opens, unless the shoe has shown another prompt since, as
        a dealer would (a controller restarted after the shoe's host-loss timeout shows its
        prompt before it unlocks the gate)."""
        pending = self._pending
        if self._gate_opened_for_a_refused_draw():
            pending.append((now, self._at_locked_gate))
            self._at_locked_gate = None
        if self._reread is not None and self._reread[0] <= now:
            missed, self._reread = self._reread[1], None
            if self.shoe.display_text == missed:
                pending.append((now, missed))
        while pending and pending[0][0] <= now:
            due, text = pending[0]
            verb, _ = parse_prompt(text)
            if verb in NEEDS_STACK and self.hand is None:
                if self.stack_shuffling():
                    pending[0] = (now, text)
                    return
                if self.stack_coming() and now - due < STACK_WAIT_S:
                    return
            pending.popleft()
            self.perform(text, now)

    def next_due(self) -> float | None:
        """When the oldest prompt is due (it may be past: a prompt waiting for the stack), or
        None with no prompt pending."""
        if self._gate_opened_for_a_refused_draw():
            return self.shoe.clock()
        due = [self._pending[0][0]] if self._pending else []
        if self._reread is not None:
            due.append(self._reread[0])
        return min(due, default=None)

    def _gate_opened_for_a_refused_draw(self) -> bool:
        return self._at_locked_gate is not None and not self.shoe.gate_closed

    @property
    def pending_prompts(self) -> int:
        return len(self._pending)

    # --- mistakes ------------------------------------------------------------------------------

    def draw_extra_card_next(self) -> None:
        """The next DRAW prompt draws one card too many."""
        self._extra_next = True

    def expose_next_card(self) -> None:
        """The next card the dealer draws leaves the shoe face up."""
        self._expose_next = True

    # --- actions -------------------------------------------------------------------------------

    def perform(self, text: str, now: float | None = None) -> DealerAction:
        """Do what the prompt says, now; return (and log) what happened."""
        at = self.shoe.clock() if now is None else now
        verb, args = parse_prompt(text)
        if self._miss_word and text.split(" ", 1)[0].upper() == self._miss_word:
            self._miss_word = ""
            self._reread = (at + self.reread_s, text)
            action = DealerAction(at, text, verb, False, "missed the prompt (fault dealer-miss)")
            self.log.append(action)
            return action
        try:
            ok, detail = self._do(verb, args)
        except (ValueError, EmulatorStateError) as exc:
            ok, detail = False, str(exc)
        action = DealerAction(at, text, verb, ok, detail)
        if not ok and detail in _GATE_LOCKED_REFUSALS:
            self._at_locked_gate = text
        self.log.append(action)
        return action

    def _do(self, verb: str, args: list[str]) -> tuple[bool, str]:
        if self.shoe.loads != self._loads_seen:  # loaded since: by LOAD, or by a shuffler's DELIVER(SHOE)
            self._new_shoe()
        if verb in ("DRAW", "BURN"):
            marks = [a for a in args if a.startswith("@")]
            args = [a for a in args if not a.startswith("@")]
            if marks:
                wanted = prompt_number([marks[-1][1:]])
                if self.drawn_this_shoe >= wanted:
                    return True, f"card {wanted} already drawn: no action"
        if verb == "DRAW":
            self.draw_prompts += 1
            hand = args[0] if args else ""
            extra = self._extra_next or self.draw_prompts == self.faults.dealer_extra_at
            self._extra_next = False
            return self._draw(1 + extra, hand)
        if verb == "BURN":
            return self._draw(prompt_number(args, default=1), None)
        if verb == "SHUFFLE":
            collected = args[:1] == ["COLLECTED"]
            if self.open_pack is None:
                raise ValueError("no hand shuffle at this table: its shuffler shuffles" if collected else
                                 "no preshuffled pack at this table")
            if collected and self.hand:  # shown again (a controller's restart): they are shuffled already
                return True, f"the {len(self.hand)} cards collected are in hand already: no action"
            if collected:
                self.discards.extend(self.shoe.unload())  # 681a.7(d)(1): the cards left in the shoe first
                return True, f"shuffled by hand the {self._gather_and_shuffle()} cards collected"
            self.hand = self.open_pack()
            return True, f"opened a preshuffled pack of {len(self.hand)} cards"
        if verb == "WASH":
            if self.open_pack is None:
                raise ValueError("no hand shuffle at this table: its shuffler shuffles")
            return True, self._wash()
        if verb in ("CUT", "COVER"):
            return self._place_cover(verb, args)
        if (verb, args[:1]) in (("OFFER", ["CUT"]), ("DEALER", ["CUTS"])):
            return self._offer_cut()
        if verb == "LOAD":
            stack = self._in_hand()
            left = self.shoe.unload()  # the last shoe's cards, if its UNLOAD was missed
            count = self.shoe.load(stack)
            self.hand = None
            self._new_shoe()
            self.loaded_as = args[0] if args else None
            first = f"took {len(left)} items left in the shoe out, then " if left else ""
            return True, first + f"loaded {count} cards" + (f" as {self.loaded_as}" if args else "")
        if verb == "UNLOAD":
            if args and self.loaded_as not in (None, args[0]) and self.shoe.stack:
                return True, f"the shoe holds {self.loaded_as}, not {args[0]}: no action"
            items = self.shoe.unload()
            self.discards.extend(items)
            return True, f"unloaded {len(items)} items"
        if verb in BUTTONS:
            self.shoe.press(BUTTONS[verb])
            return True, verb.lower()
        if verb == "CLOSE DOOR":
            self.shoe.close_door()
            return True, "door closed"
        return True, "no action"

    def _new_shoe(self) -> None:
        """A new stack is in the shoe: count its cards afresh; the last shoe's layout and rack are
        gone (to the shuffler, or out of use)."""
        self._loads_seen, self.drawn_this_shoe = self.shoe.loads, 0
        self.layout, self.discards = [], []
        self.loaded_as = None

    def _wash(self) -> str:
        """681a.5(g)(1): the cards taken from the discard rack and the layout (the shoe was emptied
        by UNLOAD into the rack) are washed and shuffled by hand into the stack in hand."""
        return f"washed and shuffled by hand the {self._gather_and_shuffle()} inspected cards"

    def _gather_and_shuffle(self) -> int:
        """The cards of the discard rack and the layout shuffled by hand into the stack in hand
        (cover cards set aside); how many. The order is random but repeatable for the same cards
        (seeded by them)."""
        gathered = [i for i in self.discards if isinstance(i, DeviceCard)] + [c for _, c in self.layout]
        self.discards, self.layout = [], []
        random.Random(" ".join(map(str, gathered))).shuffle(gathered)
        self.hand = gathered
        return len(gathered)

    def _place_cover(self, verb: str, args: list[str]) -> tuple[bool, str]:
        """CUT puts the stack's first cover card in, COVER its second, after the cut (a COVER
        whose CUT was lost waits for it: the controller's resume shows both again, in order). A
        prompt shown again finds its card already placed and does nothing, as a dealer would: a
        second cut would put a third cover card in the shoe."""
        hand = self._in_hand()
        placed = sum(item is COVER for item in hand)
        if verb == "COVER" and not placed:
            raise ValueError("the stack is not cut yet")
        if placed >= (1 if verb == "CUT" else 2):
            return True, f"{verb.lower()} already made: no action"
        if verb == "CUT":
            self.hand = cut_stack(hand, prompt_number(args))
            return True, f"cut at {args[0]}"
        self.hand = insert_second_cover(hand, prompt_number(args))
        return True, f"cover card {args[0]} above the bottom"

    def _offer_cut(self) -> tuple[bool, str]:
        """The cut is offered (681a.5(b)) while the stack in hand already has its cover cards: a
        recut was ordered (681a.5(e)), and the dealer takes the cover cards out for the new cut.
        Before the first cut (or with no stack in hand) the offer is information."""
        if self.hand is None or COVER not in self.hand:
            return True, "no action"
        self.hand = [item for item in self.hand if item is not COVER]
        return True, "a recut: took the cover cards out of the stack"

    def _in_hand(self) -> list[Item]:
        if self.hand is None:
            raise ValueError("no stack in hand")
        return self.hand

    def _draw(self, count: int, hand: str | None) -> tuple[bool, str]:
        drawn: list[str] = []
        for _ in range(count):
            card, why = self._draw_card(burning=hand is None)
            if card is None and why == _BURN_ENDS:
                return True, " ".join([*drawn, why])
            if card is None:
                return False, f"refused: {why}" + (f" after {' '.join(drawn)}" if drawn else "")
            if hand is None:
                self.discards.append(card)
            else:
                self.layout.append((hand, card))
            drawn.append(str(card))
        return True, " ".join(drawn)

    def _draw_card(self, burning: bool = False) -> tuple[DeviceCard | None, str]:
        """Draw until a card comes out (cover cards are set aside); ``burning``: a cover card ends
        the draw (``_BURN_ENDS``): a burn does not go on past it, as the controller ends the shoe
        there (a card drawn after it was one of an ended shoe)."""
        while True:
            number = self.cards_drawn + 1
            expose = self._expose_next or number == self.faults.dealer_expose_at
            result = self.shoe.draw(face_up=expose)
            if result.refused is not None:
                return None, result.refused
            if result.is_cover:
                self.covers_set_aside += 1
                if burning:
                    return None, _BURN_ENDS
                continue
            self.cards_drawn = number
            self.drawn_this_shoe += 1
            self._expose_next = False
            assert result.card is not None
            return result.card, ""

