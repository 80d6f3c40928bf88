"""The table core: the regulated life of a shoe, sans-I/O.

Contract: ``TableCore(submission, ...)``; ``handle(input) -> list[Output]`` is the entry point
while the table runs (at start: ``recover``, then ``restarted`` and ``resume_outputs``). Inputs are ``DeviceInput``, ``DeviceStatus``, ``CommandFailed`` and ``OperatorInput``
(controller.table.io); outputs are ``SendCommand`` (to a device role), ``TableRecord`` (to journal)
and ``Notice``. The core is deterministic: the same inputs in the same order give the same state
and outputs, so a restarted controller rebuilds its state by feeding the journaled inputs again
(``recover``).

An input that is not allowed now is refused: the output is a ``refused`` record and a notice
with the reason, and nothing changes. Operator commands are admitted by the one table of who may
do what and when (``controller.table.commands``); device events are dispatched by message type
(``controller.table.events``).

Where things live (one job each): the shoe in play and its cut, cover, count and
reconciliation (``shoe.Shoe``); the round in progress with its cards, wagers and squeeze
(``round.RoundInProgress``); preparing and ending a shoe (``preparation``); cards into rounds,
irregularities, squeeze and House Money (``dealing``); starting, settling and voiding rounds
(``rounds``); faults (``faults``). The states and transitions are data in
``controller.table.machine``; the callbacks it names are the thin methods at the end of this class.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from types import EllipsisType
from typing import Any

from transitions import MachineError

from controller.journal import kinds
from controller.roles import Role
from controller.rules.errors import RulesError
from controller.rules.model import Dealing, Target, WagerKind
from controller.rules.wagers import Wager
from controller.table import checks, command_failures, dealing, events, faults, preparation, resume, rounds
from controller.table.aside import CardsAside
from controller.table.commands import admit
from controller.table.errors import Refused
from controller.table.inspection import Inspection
from controller.table.io import (
    CommandFailed, DeviceInput, DeviceStatus, GiveUpMissingEvents, Notice, OperatorInput, Output, TableRecord, SendCommand, jsonable,
)
from controller.table.machine import build_machine, next_step
from controller.table.round import RoundInProgress, ShoeRounds
from controller.table.shoe import Shoe
from firmware_bridge.protocol import messages as m

__all__ = ["Refused", "TableCore"]


class TableCore:
    """See the module docstring.

    Args:
        submission: the Rules Submission in force.
        table_id: names the shoes (``T1-S0001``).
        automatic_shoe: an automatic reshuffling shoe (681a.5(h)): no cut, no idle inspection;
            ``approval``: the Bureau's approval of it (461a.4) as its profile records it, journaled.
        shuffler: False when the dealer shuffles by hand (681a.5(a), (g)(1)).
        shuffler_keeps_one_batch: the automated shuffler "stores a single batch of shuffled cards
            inside the shuffler in a secure manner" (681a.5(g)(2); a batch shuffler, not a
            continuous one): only then may the batch taken out of it after an idle table's
            inspection be dealt without being spread and reshuffled.
        shuffler_in_shoe: the shoe has the shuffler built in (a profile of kind ``shuffler-shoe``):
            one device plays both roles, so the shuffler's commands go to the shoe, in order.
        deck_capacity: the most decks every device holds (None: not known); rules of more are refused.
        first_shoe: the number of the first shoe.
    """

    def __init__(self, submission: Any, *, table_id: str = "T1", automatic_shoe: bool = False,
                 approval: str | None = None, shuffler: bool = True, shuffler_keeps_one_batch: bool = True,
                 shuffler_in_shoe: bool = False, deck_capacity: int | None = None, first_shoe: int = 1) -> None:
        self.sub = submission
        self.table_id = table_id
        self.automatic_shoe, self.approval = automatic_shoe, approval
        self.has_shuffler = shuffler
        self.shuffler_keeps_one_batch = shuffler and shuffler_keeps_one_batch
        self.shuffler_in_shoe, self.deck_capacity = shuffler_in_shoe, deck_capacity
        self.inspection = Inspection()  # 681a.5(g): an idle table's spread cards and the shuffle after them
        self.shoe: Shoe | None = None
        self.next_shoe = first_shoe
        self.round: RoundInProgress | None = None
        self.shoe_rounds = ShoeRounds()  # the shoe's rounds: their count, the next one's kind, the last decided
        self.occupied: set[int] = set()
        self.pending_wagers: list[Wager] = []
        self.aside = CardsAside()  # cards out of the shoe waiting for their place; one owed to the discard rack
        self.burns_due = 0                           # 681a.7(c): cards still to burn (Rules Submission's burn_cards)
        self.reshuffle_ordered = False
        self.faults: dict[str, str] = {}            # active fault key -> reason
        self.saved_state: str | None = None
        self.links_since_start: set[str] = set()  # the roles whose link came up since this controller started
        self.devices: dict[str, tuple[str, int]] = {}    # role -> (serial, event epoch) last connected
        self.shoe_lost: str | None = None  # a device lost the shoe in play: given up once no fault holds
        self.shoe_lost_ordered = False  # ... as a floorperson's restart_shoe ordered: their reason stands
        self.prompt_text: str | None = None
        self.unload_due: str | None = None  # 681a.7(d)(1): the shoe whose cards are to be taken out before the next load
        self.dealer: str | None = None
        self.dealer_operator: str | None = None  # the operator dealing here (681a.7(c): another signs in)
        self.automated_dealer_runs = True  # the automated dealer drives the table now (``restarted``)
        self._out: list[Output] = []
        self.machine = build_machine(self)

    # -- the entry point ---------------------------------------------------------------------
    def handle(self, inp: DeviceInput | DeviceStatus | CommandFailed | OperatorInput) -> list[Output]:
        self._out = []
        try:
            if isinstance(inp, OperatorInput):
                self._operator(inp)
            elif isinstance(inp, DeviceInput):
                events.device_event(self, inp.device_role, inp.event)
            elif isinstance(inp, DeviceStatus):
                events.link_status(self, inp)
            elif isinstance(inp, CommandFailed):
                command_failures.command_failed(self, inp)
            else:
                raise Refused(f"unknown input {type(inp).__name__}")
            if self.aside.deferred:
                # A card out early while the round's hands waited at the squeeze or House Money is
                # its next card once they are done: applied here, after the input's transitions have
                # run (inside one, a squeeze it starts would be queued, and the card decided in the
                # wrong state: a review of the change).
                dealing.apply_deferred(self)
        except (Refused, RulesError, MachineError) as exc:
            reason = (f"not allowed while the table is {faults.table_words(self.state, self.faults)}"
                      if isinstance(exc, MachineError) else str(exc))
            self._out = []  # a refused input produces nothing else
            what = inp.command if isinstance(inp, OperatorInput) else self._input_name(inp)
            self.record(kinds.REFUSED, {"input": what, "reason": reason, "state": self.state,
                                        **({"operator": inp.operator} if isinstance(inp, OperatorInput) else {})})
            self.notice("warning", f"{what} refused: {reason}")
        return self._out

    @staticmethod
    def _input_name(inp: DeviceInput | DeviceStatus | CommandFailed) -> str:
        """A device input as the journal names it: the event's wire name, ``link status``, or
        ``<COMMAND> failed``."""
        if isinstance(inp, DeviceInput):
            return m.wire_name(inp.event)
        return f"{inp.command} failed" if isinstance(inp, CommandFailed) else "link status"

    def _operator(self, op: OperatorInput) -> None:
        cut_made = self.shoe is not None and self.shoe.cut_position is not None
        command, args = admit(op, self.state, self.sub, self.faults, self.dealer_operator, self.shoe_lost, self.saved_state,
                              automated_dealer_runs=self.automated_dealer_runs,
                              next_step=next_step(self.state, cut_made=cut_made))
        self.record(kinds.OPERATOR, {"command": op.command, "args": jsonable(op.args), "operator": op.operator,
                                     "operator_role": op.role.label, "state": self.state})
        command.handler(self, op, **args)
        if op.role is Role.DEALER and self.dealer_operator is None:
            self.dealer_operator = op.operator  # the dealer at the table: the first of that role to act

    def recover(self, inputs: Iterable[DeviceInput | DeviceStatus | OperatorInput],
                verdicts: Sequence[str | None] | None = None) -> tuple[int, str | None] | None:
        """Rebuild the state by feeding journaled inputs again; their outputs are discarded (they
        were acted on before the crash). Afterwards ``resume_outputs()`` says what to re-issue.

        ``verdicts``: the refusal each input met when journaled (None: taken); a command refused then
        changed nothing and is not fed again. The first input taken then and refused now stops the
        rebuild: ``(its index, its refusal now)`` is returned (None when every one agreed)."""
        try:
            for i, inp in enumerate(inputs):
                if verdicts is not None and verdicts[i] is not None and isinstance(inp, OperatorInput):
                    continue  # nor acts now, taken by a later version (restart_shoe in a fault)
                outs = self.handle(inp)
                if verdicts is not None:
                    now = next((o.payload["reason"] for o in outs
                                if isinstance(o, TableRecord) and o.kind == kinds.REFUSED), None)
                    if (now is None) != (verdicts[i] is None):
                        return i, now
            return None
        finally:
            self._out = []

    def restarted(self, driver: str | None = None) -> None:
        """The controller started here: where its ``controller_started`` record lies among the
        journaled inputs (the runner calls this as it writes the record; a replay where it reads
        it). What the devices did for a stack being prepared meanwhile is not known
        (``Shoe.restarted``). ``driver`` (the record's; None in a journal written before it):
        whether the automated dealer drives the table from here, which alone holds a person's
        ``dealer_sign_in`` off it (a table it dealt, resumed for operators, refused every person
        for good: a review of restarts)."""
        if driver is not None:
            self.automated_dealer_runs = driver == "automated"
        self.links_since_start = set()  # new links: none knows of a stall the one before reported
        if self.shoe is not None and self.shoe.loaded_count is None:
            self.shoe.restarted = True

    def resume_outputs(self, *, restart: bool = True) -> list[SendCommand]:
        """Commands that bring the devices back in step after a restart or a fault's resume
        (``controller.table.resume``)."""
        return resume.resume_outputs(self, restart=restart)

    def preparation_prompts(self, st: str) -> list[str]:
        return resume.preparation_prompts(self, st)

    # -- snapshot for displays and `ctl status` ---------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        r, shoe = self.round, self.shoe
        face_down = self.deals_face_down()
        return {
            "table": self.table_id,
            "game": self.sub.game.value,
            "submission": self.sub.name,
            "has_shuffler": self.has_shuffler,
            "state": self.state,
            "shoe": shoe.id if shoe else None,
            "round": r.number if r else self.shoe_rounds.count,
            "round_kind": r.kind if r else None,  # a simulated round (627a.13(c)(2), (d)) takes no wagers
            "cut_offered_to": shoe.cut_offeree if shoe and self.state == "cutting" and shoe.cut_position is None else None,
            "dealer": self.dealer, "dealer_operator": self.dealer_operator,  # signed in (681a.7(c)); held as the dealer
            "cards_dealt": shoe.dealt if shoe else 0,
            "cards_remaining": shoe.remaining if shoe else None,
            "cover_reached": bool(shoe and shoe.cover_reached),
            "reshuffle_ordered": self.reshuffle_ordered,  # 681a.5(f): the shoe ends after this round
            "player": r.shown_cards(Target.PLAYER, face_down) if r else [],
            "banker": r.shown_cards(Target.BANKER, face_down) if r else [],
            "seats": list(self.sub.seats),  # the table's (the console completes these)
            "wager_kinds": [k.value for k in WagerKind if self.sub.offers(k)],  # those the Rules Submission offers
            "seats_taken": sorted(self.occupied),
            "wagers": [w.to_json() for w in (r.unsettled_wagers() if r else self.pending_wagers)],  # on the layout
            # the round's House Money Wagers settled before its third cards (629a.8(c)(3)): they stand if it is void
            "house_money_settled": [s.to_json() for s in r.house_money] if r else [],
            "last_outcome": self.shoe_rounds.last_outcome,
            "faults": dict(self.faults),
            "shoe_given_up": self.shoe_lost,  # why the shoe in play is given up once the faults clear, if it is
            "count_problem": shoe.count_problem if shoe and self.state == "count_fault" else None,
            "shoe_collected": bool(shoe and shoe.collected),  # ended: its cards collected and reconciled
            "prompt": self.prompt_text,
        }

    def deals_face_down(self) -> bool:
        """629a.8(c): this round's cards are dealt face down, each hand turned over in its squeeze."""
        return self.sub.dealing is Dealing.FACE_DOWN and self.round is not None and self.round.kind == "normal"

    @property
    def prompt(self) -> str | None:
        """What the shoe's display tells the dealer now."""
        return self.prompt_text

    # -- outputs (for the collaborators) ---------------------------------------------------------
    def record(self, kind: str, payload: dict[str, Any], shown: dict[str, Any] | None = None, *,
               ended_shoe: str | None | EllipsisType = ..., of_round: int | None = None) -> None:
        """A journal entry of the shoe and round in play, or of ``ended_shoe`` (None: of no shoe);
        ``of_round``: of that round of the shoe in play, decided already (a card dealt in error
        after it, 627a.13(b)-(c), is that round's irregularity)."""
        if ended_shoe is ...:
            shoe, number = self.in_play()
            self._out.append(TableRecord(kind, payload, shoe, of_round if of_round is not None else number, shown))
        else:
            self._out.append(TableRecord(kind, payload, ended_shoe, None, shown))

    def notice(self, level: str, text: str) -> None:
        self._out.append(Notice(level, text))

    def send(self, device_role: str, message: Any) -> None:
        shoe, round_no = self.in_play()
        self._send_command(SendCommand(self.device_for(device_role), message, shoe=shoe, round=round_no))

    def in_play(self) -> tuple[str | None, int | None]:
        """The shoe and the round in play (each None when there is none)."""
        return (self.shoe.id if self.shoe else None), (self.round.number if self.round else None)

    def _send_command(self, command: SendCommand) -> None:
        """Every command the core sends as it handles its inputs goes out here, where the stack's
        SHUFFLE and DELIVER are counted (``Shoe.sent``), so that a replay counts the same; a
        restart's re-issued commands (``resume_outputs``) do not."""
        self._out.append(command)
        if self.shoe is not None:
            self.shoe.sent(command.message)

    def give_up_missing_events(self, device_role: str) -> None:
        """Have the runner give up the events the device never sent again (``GiveUpMissingEvents``)."""
        self._out.append(GiveUpMissingEvents(self.device_for(device_role)))

    def device_for(self, role: str) -> str:
        """The device role that carries out ``role``'s commands (the shoe for a built-in shuffler)."""
        return "shoe" if role == "shuffler" and self.shuffler_in_shoe else role

    def show(self, text: str) -> None:
        """Tell the dealer (the shoe's display) what to do next."""
        self.prompt_text = text
        self.send("shoe", m.Display(text))

    def next_card_mark(self) -> str:
        return self.shoe.next_card_mark() if self.shoe else "@1"

    def maybe_resume(self) -> None:
        faults.maybe_resume(self)

    # -- the machine's callbacks (controller.table.machine names them) ----------------------------
    def start_shuffle(self) -> None:
        preparation.start_shuffle(self)

    def count_ok(self) -> bool:
        return preparation.count_ok(self)

    def report_count_fault(self) -> None:
        preparation.report_count_fault(self)

    def deliver_to_dealer(self) -> None:
        preparation.deliver_to_dealer(self)

    def offer_cut(self) -> None:
        preparation.offer_cut(self)

    def deliver_to_shoe(self) -> None:
        preparation.deliver_to_shoe(self)

    def prompt_load(self) -> None:
        self.show(preparation.load_prompt(self))

    def prompt_burn(self) -> None:
        preparation.prompt_burn(self)

    def load_count_ok(self) -> bool:
        return checks.load_count_problem(self.shoe, self.shoe.loaded_count) is None

    def report_load_count_fault(self) -> None:
        preparation.report_load_count_fault(self)

    def spread_cards(self) -> None:
        preparation.spread_cards(self)

    def closed_table(self) -> None:
        preparation.closed_table(self)

    def reshuffle_due(self) -> bool:
        return bool(self.shoe and (self.shoe.cover_reached or self.reshuffle_ordered))

    def cardset_bad(self) -> bool:
        return self.shoe is not None and self.shoe.cardset_bad()

    def collect_and_reshuffle(self) -> None:
        preparation.collect_and_reshuffle(self)

    def report_cardset_fault(self) -> None:
        preparation.report_cardset_fault(self)

    def open_betting(self) -> None:
        rounds.open_betting(self)

    def start_round(self) -> None:
        first = rounds.begin_round(self)
        if first is not None:
            dealing.deal_into_round(self, first.card, first.position)
        else:
            dealing.next_prompt(self)

    def continue_round(self) -> None:
        dealing.continue_round(self)

    def remember_state(self) -> None:
        self.saved_state = self.state

    def resumed(self) -> None:
        self.saved_state = None
        self.record(kinds.RESUMED, {"state": self.state})
        for command in self.resume_outputs(restart=False):
            self._send_command(command)
