"""The automated dealer and floorperson for ``shoectl run`` on the embedded defaults.

It plays the table's staff and players: opens the table, puts preshuffled decks in play at a
table without a shuffler before play commences and says when a dealt shoe's cards are shuffled by
hand (681a.5(a), 681a.7(d)), declines or takes the cut, places the
cover cards, loads, seats players and places their wagers, says "no more bets", turns squeezed
cards, continues after House Money, and clears faults a floorperson would clear. It only gives
operator commands (``OperatorInput``) to the core, exactly as people at the console would; the
physical dealing (drawing cards) is the emulated dealer's, on the shoe's prompts.

A count or card-set fault holds the table until a floorperson acts. This one orders a reshuffle,
at most ``MAX_RESHUFFLES_AFTER_COUNT_FAULTS`` times in a row (no shoe counted right in between);
when the cards still count wrong it closes the table with the reason (``close reason=...``: one
notice, journaled with the command), sets ``gave_up`` to a sentence saying why, calls
``on_give_up(gave_up)`` once the close is done, and gives no command after that. A person must
then check the cards and the shuffler. So with events of a device that never came (the fault
``events:<role>``): giving them up is a person's decision, never this one's.

A command the table keeps refusing (the same one ``MAX_SAME_COMMAND`` times in a row in one state)
is given up the same way: ``gave_up`` says so, and no command follows.

``next_input(core) -> OperatorInput | None``: what to do now, or None to wait for the devices.
Deterministic for a given seed.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from controller.roles import AUTOMATED_DEALER, AUTOMATED_FLOORPERSON, Role
from controller.simulation_shoe import cover_range
from controller.rules.model import WagerKind
from controller.table.commands import COMMANDS
from controller.table.faults import floorperson_clears
from controller.table.io import OperatorInput

MAX_RESHUFFLES_AFTER_COUNT_FAULTS = 3
MAX_COMMAND_FAULT_CLEARS = 3  # a device that refuses the same again after that is a person's to look at
# The same command given this many times in a row in one state is going nowhere (each refused, the
# table unmoved): rules it cannot follow once refused every cover for ever, thousands of journal
# entries a second (a configuration review). A round's most, a seat's wagers and turns, are tens.
MAX_SAME_COMMAND = 500
SIGN_IN_STATES = COMMANDS["dealer_sign_in"].states  # where a new dealer may sign in
FLOORPERSON_STATES = ("closed", "count_fault", "fault")  # where the automated floorperson acts, not the dealer


class AutoDealer:
    def __init__(self, seed: int | None = None, *, players: int = 4,
                 on_give_up: Callable[[str], None] | None = None) -> None:
        self.on_give_up = on_give_up
        self.gave_up: str | None = None
        self._told = False
        self._count_faulted: list[str] = []  # shoes held by a count fault since one last counted right
        self._command_clears = 0  # command faults cleared since the table last reached betting
        self.rng = random.Random(seed)
        self._players = players
        # Chosen at the first turn, among the seats of the rules then in force: a table resumed
        # from its journal plays the journal's rules, whatever rules it was started with.
        self.seats: list[int] | None = None
        self._seated = False
        self._bets_placed_for: int | None = None
        self._asked: set[tuple[str, Any]] = set()
        self._repeat: tuple[str, str] | None = None  # the last command given, and the state it was given in
        self._repeats = 0

    def _op(self, command: str, role: Role = Role.DEALER, **args: Any) -> OperatorInput:
        return OperatorInput(command, args, AUTOMATED_FLOORPERSON if role >= Role.FLOORPERSON else AUTOMATED_DEALER, role)

    def next_input(self, core: Any) -> OperatorInput | None:
        state = core.state
        op = self._decide(core)
        if op is None:
            return None
        repeat = (op.command, state)
        self._repeats = self._repeats + 1 if repeat == self._repeat else 1
        self._repeat = repeat
        if self._repeats > MAX_SAME_COMMAND:
            self.gave_up = (f"the automated dealer's {op.command} was given {MAX_SAME_COMMAND} times in a row while the "
                            f"table was {state}, and the table did not move on (each refusal is in the journal): "
                            "a person must look at the table and its rules")
            return self.next_input(core)  # said once, as any other giving up
        return op

    def _decide(self, core: Any) -> OperatorInput | None:
        sub = core.sub  # the Rules Submission in force: a floorperson may have set another
        state = core.state
        if self.gave_up is not None:
            if not self._told and self.on_give_up is not None:
                self._told = True
                self.on_give_up(self.gave_up)
            return None
        held = next((k for k in core.faults if k.startswith("events:")), None)
        if held is not None:  # not this one's to give up: what those events held (a card) would be lost unseen
            self.gave_up = f"{core.faults[held]}; a person must check the {held.partition(':')[2]} first"
            return None
        if state in ("burning", "betting"):
            self._count_faulted.clear()  # this shoe's count was right when it was loaded
            self._command_clears = 0     # the devices did what they were asked
        if core.dealer_operator not in (None, AUTOMATED_DEALER):
            return self._take_over(core)
        if self.seats is None:
            seats = list(sub.seats)
            self.seats = sorted(self.rng.sample(seats, min(self._players, len(seats))))
        if not self._seated:
            seat = next((s for s in self.seats if s not in core.occupied), None)
            if seat is not None:
                return self._op("sit", seat=seat)
            self._seated = True
        if state in FLOORPERSON_STATES:
            return self._floorperson_part(core)
        if state == "shuffling" and not core.has_shuffler:
            # 681a.5(a): no shuffler; the dealer opens a pack of preshuffled decks before play
            # commences, or says the hand shuffle is done: of a shoe's collected cards
            # (681a.7(d)(1)-(2)) or after an idle table's wash (681a.5(g)(1)).
            if core.inspection.washing or core.shoe.collected_to_shuffle:
                return self._once(("shuffled", core.shoe.id), "manual_shuffle_done", Role.DEALER)
            return self._once(("preshuffled", core.shoe.id), "preshuffled_decks", Role.DEALER, decks=sub.decks)
        if state == "cutting":
            shoe = core.shoe
            if shoe.cut_position is None:
                if shoe.cut_offeree is not None:
                    if self.rng.random() < 0.5:
                        return self._op("cut_decline", seat=shoe.cut_offeree)
                    return self._op("cut", seat=shoe.cut_offeree, position=self._cut_position(shoe, sub.min_cover_depth))
                return self._op("cut", position=self._cut_position(shoe, sub.min_cover_depth))
            return self._op("cover", from_bottom=self.rng.randint(*cover_range(sub)))
        if state == "ready_to_load":
            return self._op("load")
        if state == "betting" and core.round is None and core.prompt == "PLACE BETS":
            key = (core.shoe.id, core.shoe_rounds.count)
            if self._bets_placed_for != key:
                self._bets_placed_for = key
                # After a restart the layout may already hold this round's wagers: keep them.
                self._pending = [] if core.pending_wagers else self._wagers(sub)
            if self._pending:
                seat, kind, amount = self._pending.pop()
                return self._op("wager", seat=seat, kind=kind, amount=amount)
            return self._op("no_more_bets")
        if state == "squeeze":
            return self._op("reveal", hand=core.round.squeeze_phase)
        if state == "house_money":
            return self._op("continue")
        return None

    def _floorperson_part(self, core: Any) -> OperatorInput | None:
        """What the automated floorperson does in ``FLOORPERSON_STATES``, whoever deals: open the
        table, end a count fault, clear the faults it may. A jam or device fault: the mechanism is
        reset. A missing cover card: the round is completed and the cards are reshuffled
        (681a.5(f), 681a.7(d)). A link, a door or a misread is not a floorperson's to clear
        (``faults.ending``)."""
        if core.state == "closed":
            return self._once(("open", core.next_shoe), "open", Role.FLOORPERSON)
        if core.state == "count_fault":
            return self._count_fault(core)
        clearable = [k for k in core.faults if floorperson_clears(k)]
        return self._clear(core, clearable[0]) if clearable else None

    def _take_over(self, core: Any) -> OperatorInput | None:
        """A table a person deals, resumed with the automated dealer (a review of restarts: every
        command of the automated dealer was refused, "not the dealer at this table", until the run
        gave up): it signs in as a new dealer does, then burns (681a.7(c)), between rounds; until
        then the automated floorperson completes the person's round (its squeeze and House Money,
        its wagers placed: no more bets)."""
        state = core.state
        if state in FLOORPERSON_STATES:  # a fault held the table when it started again (a review)
            return self._floorperson_part(core)
        if state in SIGN_IN_STATES and not (state == "betting" and core.pending_wagers):
            return self._once(("sign in", core.dealer_operator), "dealer_sign_in", Role.DEALER, dealer="automated dealer")
        if state == "betting" and core.pending_wagers:
            return self._once(("no more bets", core.shoe.id, core.shoe_rounds.count), "no_more_bets", Role.FLOORPERSON)
        if state == "squeeze":
            return self._op("reveal", Role.FLOORPERSON, hand=core.round.squeeze_phase)
        if state == "house_money":
            return self._op("continue", Role.FLOORPERSON)
        return None

    def _clear(self, core: Any, key: str) -> OperatorInput | None:
        """Clear a fault; a device that keeps refusing commands (``command:`` faults) is given up
        on after ``MAX_COMMAND_FAULT_CLEARS`` clears without a round dealt in between."""
        if key.startswith("command:"):
            self._command_clears += 1
            if self._command_clears > MAX_COMMAND_FAULT_CLEARS:
                self.gave_up = (f"{core.faults[key]}; it was cleared {MAX_COMMAND_FAULT_CLEARS} times and the device "
                                "still refuses: a floorperson must check it")
                return None
        return self._op("clear_fault", Role.FLOORPERSON, key=key)

    def _count_fault(self, core: Any) -> OperatorInput | None:
        """A reshuffle, or the table closed once ``MAX_RESHUFFLES_AFTER_COUNT_FAULTS`` did not help."""
        shoe = core.shoe.id
        if shoe not in self._count_faulted:
            self._count_faulted.append(shoe)
        reshuffles = len(self._count_faulted) - 1
        if reshuffles < MAX_RESHUFFLES_AFTER_COUNT_FAULTS:
            return self._once(("reshuffle", shoe), "order_reshuffle", Role.FLOORPERSON)
        self.gave_up = (f"the cards counted wrong {reshuffles + 1} times in a row, last: {core.shoe.count_problem}; "
                        f"after {reshuffles} reshuffles the automated floorperson closed the table: "
                        "a floorperson must check the cards and the shuffler")
        return self._op("close", Role.FLOORPERSON, reason=f"the cards counted wrong after {reshuffles} reshuffles")

    def _once(self, key: tuple[str, Any], command: str, role: Role, **args: Any) -> OperatorInput | None:
        if key in self._asked:
            return None
        self._asked.add(key)
        return self._op(command, role, **args)

    def _cut_position(self, shoe: Any, depth: int) -> int:
        return self.rng.randint(depth, shoe.stack_size - depth)

    def _wagers(self, sub: Any) -> list[tuple[int, str, int]]:
        """Each seated player bets on Player or Banker, sometimes on a side wager; amounts in
        cents, multiples of 5 dollars, brought inside the Rules Submission's ``[limits]`` (a side
        wager that would take the seat past ``table_max`` is not placed)."""
        offered = [k for k in sub.wagers if k not in (WagerKind.PLAYER, WagerKind.BANKER)]
        table_max = sub.limits.table_max
        out = []
        for seat in self.seats or ():
            side = self.rng.choice([WagerKind.PLAYER, WagerKind.BANKER])
            main = self._within(sub, side, 500 * self.rng.randint(1, 20), table_max)
            out.append((seat, side.value, main))
            if offered and self.rng.random() < 0.3:
                kind = self.rng.choice(sorted(offered))
                room = None if table_max is None else table_max - main
                amount = self._within(sub, kind, 500 * self.rng.randint(1, 4), room)
                if room is None or 0 < amount <= room:
                    out.append((seat, kind.value, amount))
        out.reverse()
        return out

    def _within(self, sub: Any, kind: WagerKind, amount: int, room: int | None) -> int:
        """``amount`` moved inside ``kind``'s min and max, and down to ``room`` (not below the min)."""
        lim = sub.limits.wagers.get(kind)
        if room is not None:
            amount = min(amount, room)
        return amount if lim is None else min(max(amount, lim.min), lim.max)
