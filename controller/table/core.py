"""The table core: the regulated life of a shoe, sans-I/O.

Contract: ``TableCore(submission, ...)``; ``handle(input) -> list[Output]`` is the only entry
point. Inputs are ``DeviceInput``, ``DeviceStatus`` and ``OperatorInput`` (controller.table.io);
outputs are ``SendCommand`` (to a device role), ``Record`` (to journal) and ``Notice``. The core is
deterministic: the same inputs in the same order give the same state and outputs, so a restarted
controller rebuilds its state by feeding the journaled inputs again (``recover``).

An input that is not allowed now (a command above the operator's role, a wager after "no more
bets", a cut too close to the end of the stack, a trigger the state machine does not accept) is
refused: the output is a ``refused`` record and a notice with the reason, and nothing changes.

The states and transitions are data in ``controller.table.machine``; the callbacks named there are
the methods below. Which clause each piece implements is said where it is implemented.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from transitions import MachineError

from controller.rules import irregularities as irr
from controller.rules.cards import SUITS, Card, card as make_card
from controller.rules.errors import RulesError
from controller.rules.model import Dealing, Target, WagerKind
from controller.rules.shoe import CutError, check_cut, check_second_cover
from controller.rules.wagers import Wager, add_house_money, settle, settle_house_money, void
from controller.table import faults as checks
from controller.table.io import DeviceInput, DeviceStatus, Notice, OperatorInput, Output, Record, Role, SendCommand, jsonable
from controller.table.machine import LIVE_SET, build_machine
from controller.table.round import RoundInProgress

from firmware_bridge.protocol import messages as m

GATE_OPEN_STATES = frozenset({"burning", "betting", "dealing", "squeeze", "house_money"})

# The least role that may give each operator command.
PERMISSIONS: dict[str, Role] = {
    "open": Role.FLOORPERSON,
    "close": Role.FLOORPERSON,
    "sit": Role.DEALER,
    "leave": Role.DEALER,
    "wager": Role.DEALER,
    "no_more_bets": Role.DEALER,
    "cut_decline": Role.DEALER,
    "cut": Role.DEALER,
    "cover": Role.DEALER,
    "load": Role.DEALER,
    "dealer_sign_in": Role.DEALER,
    "reveal": Role.DEALER,
    "house_money_add": Role.DEALER,
    "continue": Role.DEALER,
    "relinquish": Role.DEALER,          # 629a.8(d): the dealer or the floorperson
    "order_recut": Role.FLOORPERSON,    # 681a.5(e)
    "order_reshuffle": Role.FLOORPERSON,  # 681a.5(e)-(f)
    "declare_idle": Role.FLOORPERSON,   # 681a.5(g)
    "inspection_done": Role.FLOORPERSON,
    "clear_fault": Role.FLOORPERSON,
    "enter_card": Role.FLOORPERSON,
    "void_round": Role.FLOORPERSON,
    "manual_shuffle_done": Role.DEALER,
    "restart_shoe": Role.FLOORPERSON,
    "set_submission": Role.FLOORPERSON,
}


class Refused(ValueError):
    """An input the table does not accept now; the message is the reason."""


@dataclass
class ShoeRecord:
    """What the controller knows about the shoe in play."""

    id: str
    decks: int
    stack_size: int
    cut_position: int | None = None
    cut_by: str | None = None
    cover_from_bottom: int | None = None
    loaded_count: int | None = None
    burned: list[str] = field(default_factory=list)
    dealt: int = 0          # cards that left the shoe (burns included)
    cover_reached: bool = False
    reads: list[tuple[int, int, int]] = field(default_factory=list)  # (position, rank, suit) as read
    cut_offer: list[int] = field(default_factory=list)   # seats still to be offered the cut, in order
    cut_offeree: int | None = None                       # None and no offer left = the dealer cuts


class TableCore:
    """See the module docstring."""

    def __init__(self, submission: Any, *, table_id: str = "T1", automatic_shoe: bool = False,
                 shuffler: bool = True, first_shoe: int = 1) -> None:
        self.sub = submission
        self.table_id = table_id
        self.automatic_shoe = automatic_shoe
        self.has_shuffler = shuffler  # False: the dealer shuffles by hand (681a.5(a), (g)(1))
        self._washing = False
        self._spread_face_up = False
        self._cardset_cache: tuple[tuple[Any, ...], Any] | None = None
        self.shoe: ShoeRecord | None = None
        self.next_shoe = first_shoe
        self.round: RoundInProgress | None = None
        self.last_round: RoundInProgress | None = None  # until a card or a new round follows it
        self.round_count = 0          # rounds in the current shoe
        self.occupied: set[int] = set()
        self.pending_wagers: list[Wager] = []
        self.held_card: Card | None = None          # 627a.13(a)/(b): first card of the next hand
        self.pending_simulated: Card | None = None  # 627a.13(c)(2)/(d): starts a simulated round
        self.discard_next = 0                        # 627a.13(c)(1): cards to discard face down
        self.reshuffle_ordered = False
        self.faults: dict[str, str] = {}            # active fault key -> reason
        self.saved_state: str | None = None
        self.misread_pending = False
        self.prompt: str | None = None
        self.dealer: str | None = None
        self.last_outcome: str | None = None
        self._out: list[Output] = []
        self._next_round_kind = "normal"
        self.deferred: list[tuple[Card, bool, int]] = []  # cards read while a fault held the table
        self.devices: dict[str, tuple[str, int]] = {}    # role -> (serial, event epoch) last connected
        self.shoe_lost: str | None = None  # a device lost the shoe in play: given up once no fault holds
        self.machine = build_machine(self)

    # -- the entry point ---------------------------------------------------------------------
    def handle(self, inp: DeviceInput | DeviceStatus | OperatorInput) -> list[Output]:
        self._out = []
        try:
            if isinstance(inp, OperatorInput):
                self._operator(inp)
            elif isinstance(inp, DeviceInput):
                self._device(inp)
            elif isinstance(inp, DeviceStatus):
                self._status(inp)
            else:
                raise Refused(f"unknown input {type(inp).__name__}")
        except (Refused, RulesError, MachineError) as exc:
            reason = str(exc)
            if isinstance(exc, MachineError):
                reason = f"not allowed while the table is {self.state}"
            self._out = []  # a refused input changes nothing and produces nothing else
            what = inp.command if isinstance(inp, OperatorInput) else type(getattr(inp, "event", inp)).__name__
            self._record("refused", {"input": what, "reason": reason, "state": self.state,
                                     **({"operator": inp.operator} if isinstance(inp, OperatorInput) else {})})
            self._notice("warning", f"{what} refused: {reason}")
        return self._out

    def recover(self, inputs: Iterable[DeviceInput | DeviceStatus | OperatorInput]) -> None:
        """Rebuild the state by feeding journaled inputs again; their outputs are discarded (they
        were acted on before the crash). Afterwards ``resume_outputs()`` says what to re-issue."""
        for inp in inputs:
            self.handle(inp)
        self._out = []

    def resume_outputs(self) -> list[Output]:
        """Commands that bring the devices back in step after a restart or a reconnect, safe to
        repeat: a shuffle not yet reported done is asked for again (nothing has been dealt from
        it; its count is checked when it reports), a stack not yet cut is delivered to the dealer
        again, and the current prompt is shown again (a display is idempotent)."""
        out: list[Output] = []
        st = self.saved_state or self.state
        if st in GATE_OPEN_STATES:
            out.append(SendCommand("shoe", m.GateUnlock()))  # a shoe locks its gate when it loses the host
        if st == "shuffling" and self.has_shuffler:
            out.append(SendCommand("shuffler", m.Shuffle(self.sub.decks)))
        elif st == "cutting" and self.shoe is not None and self.shoe.cut_position is None:
            out.append(SendCommand("shuffler", m.Deliver(m.DeliverTarget.DEALER)))
        if self.prompt:
            out.append(SendCommand("shoe", m.Display(self.prompt)))
        return out

    # -- snapshot for displays and `ctl status` ---------------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        r = self.round
        return {
            "table": self.table_id,
            "game": self.sub.game.value,
            "submission": self.sub.name,
            "state": self.state,
            "shoe": self.shoe.id if self.shoe else None,
            "round": r.number if r else self.round_count,
            "cards_dealt": self.shoe.dealt if self.shoe else 0,
            "cards_remaining": (self.shoe.loaded_count - self.shoe.dealt) if self.shoe and self.shoe.loaded_count else None,
            "cover_reached": bool(self.shoe and self.shoe.cover_reached),
            "player": [str(c) for c, t, _ in r.cards if t is Target.PLAYER] if r else [],
            "banker": [str(c) for c, t, _ in r.cards if t is Target.BANKER] if r else [],
            "wagers": [w.to_json() for w in (r.wagers if r else self.pending_wagers)],
            "last_outcome": self.last_outcome,
            "faults": dict(self.faults),
            "prompt": self.prompt,
        }

    # -- outputs -------------------------------------------------------------------------------
    def _record(self, kind: str, payload: dict[str, Any]) -> None:
        self._out.append(Record(kind, payload, self.shoe.id if self.shoe else None,
                                self.round.number if self.round else None))

    def _notice(self, level: str, text: str) -> None:
        self._out.append(Notice(level, text))

    def _send(self, device: str, message: Any) -> None:
        self._out.append(SendCommand(device, message))

    def _prompt(self, text: str) -> None:
        """Tell the dealer (the shoe's display) what to do next."""
        self.prompt = text
        self._send("shoe", m.Display(text))

    # -- operators -----------------------------------------------------------------------------
    def _operator(self, op: OperatorInput) -> None:
        need = PERMISSIONS.get(op.command)
        if need is None:
            raise Refused(f"unknown command {op.command!r}")
        if op.role < need:
            raise Refused(f"{op.command} needs a {need.name.lower()} or above; {op.operator} is a {op.role.name.lower()}")
        self._record("operator", {"command": op.command, "args": jsonable(op.args), "operator": op.operator,
                                  "role": op.role.name.lower(), "state": self.state})
        try:
            getattr(self, f"op_{op.command}")(op, **op.args)
        except TypeError as exc:
            raise Refused(f"{op.command}: bad arguments {sorted(op.args)} ({exc})") from None

    def op_open(self, op: OperatorInput) -> None:
        self.open()

    def op_close(self, op: OperatorInput) -> None:
        if self.round is not None:
            raise Refused("a round is in progress")
        self.close()

    def op_sit(self, op: OperatorInput, seat: int) -> None:
        self._check_seat(seat)
        self.occupied.add(int(seat))

    def op_leave(self, op: OperatorInput, seat: int) -> None:
        self._check_seat(seat)
        if any(w.seat == seat for w in self.pending_wagers):
            raise Refused(f"seat {seat} has wagers on the layout")
        self.occupied.discard(int(seat))

    def _check_seat(self, seat: Any) -> None:
        if seat not in self.sub.seats:
            raise Refused(f"seat {seat!r} is not at this table (seats {', '.join(map(str, self.sub.seats))})")

    def op_wager(self, op: OperatorInput, seat: int, kind: str, amount: int) -> None:
        if self.state != "betting":
            raise Refused(f"wagers are accepted only while betting is open (the table is {self.state})")
        self._check_seat(seat)
        try:
            k = WagerKind(kind)
        except ValueError:
            raise Refused(f"unknown wager kind {kind!r}") from None
        if not self.sub.offers(k):
            raise Refused(f"the {k.value} wager is not offered at this table")
        w = Wager(int(seat), k, amount)
        self.occupied.add(w.seat)
        self.pending_wagers.append(w)
        self._record("wager", w.to_json())

    def op_no_more_bets(self, op: OperatorInput) -> None:
        """629a.8(b): "no more bets" before any card is dealt."""
        self.no_more_bets()

    # cut (681a.5(b)-(d))
    def op_cut_decline(self, op: OperatorInput, seat: int) -> None:
        shoe = self._in_cut()
        if shoe.cut_offeree != seat:
            raise Refused(f"the cut is offered to seat {shoe.cut_offeree}, not seat {seat}")
        self._record("cut_declined", {"seat": seat})
        self._offer_next_cut()

    def op_cut(self, op: OperatorInput, position: int, seat: int | None = None) -> None:
        shoe = self._in_cut()
        if shoe.cut_position is not None:
            raise Refused("the stack is already cut; place the second cover card")
        if shoe.cut_offeree is not None and seat != shoe.cut_offeree:
            raise Refused(f"the cut is offered to seat {shoe.cut_offeree}; it cuts, or declines first")
        if shoe.cut_offeree is None and seat is not None:
            raise Refused("every player declined: the dealer cuts")
        try:
            check_cut(shoe.stack_size, int(position), self.sub.min_cover_depth)
        except CutError as exc:
            raise Refused(str(exc)) from None
        shoe.cut_position = int(position)
        shoe.cut_by = f"seat {seat}" if seat is not None else "dealer"
        self._record("cut", {"position": shoe.cut_position, "by": shoe.cut_by, "stack": shoe.stack_size})
        self._prompt(f"CUT {shoe.cut_position}")

    def op_cover(self, op: OperatorInput, from_bottom: int) -> None:
        shoe = self._in_cut()
        if shoe.cut_position is None:
            raise Refused("cut the stack before placing the second cover card")
        try:
            check_second_cover(shoe.stack_size, int(from_bottom), self.sub.min_cover_depth)
        except CutError as exc:
            raise Refused(str(exc)) from None
        shoe.cover_from_bottom = int(from_bottom)
        self._record("cover", {"from_bottom": shoe.cover_from_bottom})
        self._prompt(f"COVER {shoe.cover_from_bottom}")
        self.cut_complete()

    def _in_cut(self) -> ShoeRecord:
        if self.state != "cutting" or self.shoe is None:
            raise Refused(f"no cut is under way (the table is {self.state})")
        return self.shoe

    def op_load(self, op: OperatorInput) -> None:
        self.load()

    def op_order_recut(self, op: OperatorInput) -> None:
        """681a.5(e): after the cut, before the cards are in the shoe."""
        self.recut()

    def op_order_reshuffle(self, op: OperatorInput) -> None:
        """681a.5(e) before loading: reshuffle now; 681a.5(f) after any round: after this round."""
        if self.state in ("ready_to_load", "cutting", "count_fault"):
            self.reshuffle()
        elif self.state in ("betting", "dealing", "squeeze", "house_money"):
            self.reshuffle_ordered = True
            self._record("reshuffle_ordered", {"by": op.operator})
            if self.state == "betting" and self.round is None:
                if self.pending_wagers:
                    raise Refused("wagers are on the layout: deal this round first, or the reshuffle follows it")
                self.reshuffle()
        else:
            raise Refused(f"no shoe to reshuffle while the table is {self.state}")

    def op_dealer_sign_in(self, op: OperatorInput, dealer: str) -> None:
        """681a.7(c): each new dealer burns one card before dealing."""
        if self.state == "betting" and self.pending_wagers:
            raise Refused("sign in between rounds, before wagers are placed")
        self.dealer = str(dealer)
        self._record("dealer", {"dealer": self.dealer})
        if self.state == "betting":
            self.new_dealer()

    def op_declare_idle(self, op: OperatorInput, face_up: bool = False) -> None:
        """681a.5(g): no gaming activity: spread the cards for inspection, face down unless a
        player asks for them face up."""
        if self.automatic_shoe:
            raise Refused("681a.5(h): an automatic reshuffling shoe is in use; 681a.5(g) does not apply")
        if self.pending_wagers:
            raise Refused("there are wagers on the layout")
        self._spread_face_up = bool(face_up)
        self.declare_idle()

    def op_inspection_done(self, op: OperatorInput) -> None:
        """681a.5(g)(1)-(2): after the inspection, washed and shuffled by hand then cut, or put
        into the automated shuffler (the batch already in it taken out)."""
        if self.has_shuffler:
            self._record("shuffler_batch_removed", {"clause": "681a.5(g)(2)"})
        else:
            self._washing = True
        self.inspected()

    def op_reveal(self, op: OperatorInput) -> None:
        self._reveal(f"operator {op.operator}")

    def op_house_money_add(self, op: OperatorInput, seat: int, side: str, amount: int) -> None:
        """629a.8(c)(3)(i)(A)-(B): the dealer places all or the allowed portion of a winning House
        Money payout on the player's original Player or Banker wager."""
        if self.state != "house_money" or self.round is None:
            raise Refused("no House Money settlement is under way")
        r = self.round
        hm = next((s for s in r.house_money if s.seat == seat), None)
        if hm is None:
            raise Refused(f"seat {seat} has no House Money wager")
        try:
            kind = WagerKind(side)
        except ValueError:
            raise Refused(f"unknown wager kind {side!r} (player or banker)") from None
        r.wagers = add_house_money(r.wagers, hm, kind, int(amount), self.sub)
        self._record("house_money_added", {"seat": seat, "side": side, "amount": int(amount)})

    def op_continue(self, op: OperatorInput) -> None:
        if self.state != "house_money":
            raise Refused("nothing to continue")
        self.house_money_done()

    def op_clear_fault(self, op: OperatorInput, key: str | None = None) -> None:
        if self.state != "fault":
            raise Refused("there is no fault")
        keys = [key] if key else [k for k in self.faults if not k.startswith("link:") and k != "misread"]
        if not keys:
            raise Refused(f"no fault an operator can clear ({', '.join(self.faults)}: a link clears when the device "
                          "reconnects, a misread when the card is entered)")
        for k in keys:
            if k not in self.faults:
                raise Refused(f"no fault {k!r} (active: {', '.join(self.faults)})")
            if k.startswith("link:"):
                raise Refused(f"{k} clears when the device reconnects")
            if k == "misread":
                raise Refused("enter the misread card (enter_card) to clear it")
        for k in keys:
            self.faults.pop(k, None)
            kind, _, device = k.partition(":")
            if kind in ("jam", "fault") and device:
                # The floorperson has cleared the mechanism; the device re-homes (its gate locks,
                # and opens again with the resume).
                self._send(device, m.Reset(m.ResetKind.MECHANISM))
        self._record("fault_cleared", {"faults": keys, "by": op.operator})
        self._maybe_resume()

    def op_enter_card(self, op: OperatorInput, card: str) -> None:
        """A card the shoe could not read, shown to and entered by the floorperson."""
        if "misread" not in self.faults:
            raise Refused("no misread card is waiting")
        from controller.rules.cards import parse_card

        c = parse_card(card)
        self.faults.pop("misread")
        self._record("card_entered", {"card": str(c), "by": op.operator})
        self._maybe_resume()
        self._accept_card(c, face_up=False, position=0)

    def op_void_round(self, op: OperatorInput) -> None:
        if self.round is None:
            raise Refused("no round in progress")
        self._void_round("voided by the floorperson")

    def op_set_submission(self, op: OperatorInput, submission: dict[str, Any], source: str = "operator") -> None:
        """At opening (the table closed), a floorperson sets the Rules Submission's choices. The
        whole submission travels in the command (journaled), so replaying it never reads a file."""
        from controller.rules.submission import parse_submission

        if self.state != "closed":
            raise Refused("the Rules Submission can be changed only while the table is closed")
        if not isinstance(submission, dict):
            raise Refused("submission must be the Rules Submission's contents")
        new = parse_submission(submission, source)
        self.sub = new
        self._record("submission", {"source": source, **new.to_dict()})

    def op_restart_shoe(self, op: OperatorInput, reason: str = "the devices lost the shoe") -> None:
        """The shoe in play is gone (the devices were replaced or restarted without their cards):
        a round in progress is void and its wagers returned (as 627a.13(e)), wagers on the layout
        are returned, and a new shoe is shuffled."""
        if self.state in ("closed", "fault", "shuffling"):
            raise Refused(f"nothing to restart while the table is {self.state}")
        self._give_up_shoe(reason)

    def _give_up_shoe(self, reason: str) -> None:
        """The shoe in play is gone: void a round in progress (627a.13(e)), return the wagers on
        the layout, collect, reconcile and reshuffle (681a.7(d)(1)-(2))."""
        self.deferred, self.discard_next, self.saved_state = [], 0, None  # cards of the lost shoe
        if self.round is not None and not self.round.settled:
            self._record_void(reason)
        self._return_pending_wagers()
        self._record("shoe_restarted", {"reason": reason})
        self.restart()

    def op_manual_shuffle_done(self, op: OperatorInput) -> None:
        """681a.5(a), (g)(1): the dealer has shuffled by hand (after a wash for an idle table)."""
        if self.has_shuffler:
            raise Refused("this table uses an automated shuffler")
        if self.state != "shuffling":
            raise Refused(f"no shuffle is under way (the table is {self.state})")
        n = self.sub.decks * 52
        self._shuffle_count = (n, n)  # a hand shuffle is not counted by a device
        self._record("manual_shuffle", {"washed": self._washing, "dealer": self.dealer})
        self._washing = False
        self._spread_face_up = False
        self._cardset_cache: tuple[tuple[Any, ...], Any] | None = None
        self.shuffle_done()

    # -- devices -------------------------------------------------------------------------------
    def _device(self, d: DeviceInput) -> None:
        ev = d.event
        handler = getattr(self, f"on_{type(ev).__name__}", None)
        if handler is not None:
            handler(d.device, ev)

    def _status(self, s: DeviceStatus) -> None:
        key = f"link:{s.device}"
        if not s.up:
            self._raise_fault(key, f"link to the {s.device} lost{': ' + s.reason if s.reason else ''}")
            return
        if key in self.faults:
            self.faults.pop(key)
            self._record("fault_cleared", {"faults": [key], "by": "reconnect"})
        why = checks.replaced_identity(self.devices.get(s.device), s.serial, s.epoch)
        if s.epoch is not None:
            self.devices[s.device] = (s.serial, s.epoch)
        if why is not None:
            self._device_replaced(s, why)
        self._maybe_resume()

    def _device_replaced(self, s: DeviceStatus, why: str) -> None:
        """The device in ``s.device`` is not the one that was there: whatever it held is gone."""
        state = self.saved_state if self.state == "fault" else self.state
        lost = bool(state) and checks.cards_lost_with(s.device, state, self.automatic_shoe)
        self._record("device_replaced", {"role": s.device, "serial": s.serial, "epoch": s.epoch, "reason": why,
                                         "state": state, "shoe_lost": lost})
        if not lost:
            self._notice("warning", f"the {s.device} came back as a new device: {why}")
            return
        self.shoe_lost = f"the {s.device} came back as a new device ({why})"
        if self.faults.pop("misread", None) is not None:  # a card of the lost shoe
            self._record("fault_cleared", {"faults": ["misread"], "by": "shoe given up"})
        self._notice("fault", f"{self.shoe_lost}: the shoe in play is given up")

    def on_ShuffleDone(self, device: str, ev: m.ShuffleDone) -> None:
        self._shuffle_count = (ev.card_count, ev.expected_count)
        self.shuffle_done()

    def on_ShoeLoaded(self, device: str, ev: m.ShoeLoaded) -> None:
        if self.state != "loading" or self.shoe is None:
            raise Refused(f"the shoe reports {ev.card_count} cards loaded but no load is under way")
        self.shoe.loaded_count = ev.card_count
        self._record("shoe_loaded", {"cards": ev.card_count})
        self.loaded()

    def load_count_ok(self) -> bool:
        return checks.load_count_problem(self.shoe, self.shoe.loaded_count) is None

    def report_load_count_fault(self) -> None:
        """681a.7(a): the shoe holds another number of cards than the stack prepared under
        681a.5: the cards are taken out and the table stays closed until a floorperson orders a
        reshuffle (681a.7(d)(1): "to ensure that no cards are missing")."""
        shoe = self.shoe
        self._record("count_fault", {"loaded": shoe.loaded_count, "expected": shoe.stack_size,
                                     "problem": checks.count_difference(shoe.loaded_count, shoe.stack_size)})
        self._notice("fault", f"{checks.load_count_problem(shoe, shoe.loaded_count)}; the table stays closed")
        self._reconcile()

    def on_CoverCard(self, device: str, ev: m.CoverCard) -> None:
        """681a.7(d): the cover card is set aside; the hand is completed, then the reshuffle."""
        if self.shoe is None:
            raise Refused("a cover card with no shoe in play")
        self.shoe.cover_reached = True
        self._record("cover_card", {"position": ev.position, "during_round": self.round is not None})
        self._notice("info", "cover card reached: this round is completed, then the cards are reshuffled")

    def _missed_cover_card(self, device: str) -> None:
        """681a.5(d), 681a.7(d): the card just read lies below the second cover card, yet no cover
        card came out. Dealing stops (the card is kept, applied when the fault clears) until a
        floorperson has checked the shoe; the cover position is reached all the same, so the round
        is completed and then the cards are collected and reshuffled."""
        shoe = self.shoe
        shoe.cover_reached = True
        due = checks.cover_card_due(shoe)
        self._record("cover_card_missing", {"expected_after": due, "cards_out": shoe.dealt, "clause": "681a.7(d)"})
        self._raise_fault(f"cover:{device}", f"the {device} passed the cover card's position ({due} cards out) and no "
                          "cover card came out: check the shoe; after this round the cards are reshuffled")

    def on_ShoeEmpty(self, device: str, ev: m.ShoeEmpty) -> None:
        """No card is left to deal: a round in progress is void (627a.13(e)); between rounds the
        cards are reshuffled now, not at a round that could never be dealt. Cards the controller
        counted as still in the shoe are said to be missing."""
        shoe = self.shoe
        if shoe is None or self.state not in GATE_OPEN_STATES:
            return  # an unloaded shoe, or one emptied while the table was held
        left = (shoe.loaded_count or 0) - shoe.dealt
        shoe.cover_reached = True
        if left > 0:
            self._record("shoe_empty", {"cards_counted_in_shoe": left})
            self._notice("fault", f"the shoe is empty, yet {left} cards counted in it never came out")
        if self.round is not None and not self.round.engine.complete:
            self._void_round("627a.13(e): insufficient cards to complete the round")
        elif self.state == "betting" and self.round is None:
            self._return_pending_wagers()  # the round they were for cannot be dealt (627a.13(e))
            self.reshuffle()

    def on_Door(self, device: str, ev: m.Door) -> None:
        key = f"door:{device}"
        if ev.open:
            self._raise_fault(key, f"{device} door open")
            self._send("shoe", m.Display("CLOSE DOOR"))  # not the current prompt: shown once
        elif key in self.faults:
            self.faults.pop(key)
            self._record("fault_cleared", {"faults": [key], "by": "door closed"})
            self._maybe_resume()

    def on_Jam(self, device: str, ev: m.Jam) -> None:
        self._raise_fault(f"jam:{device}", f"{device} card jam ({getattr(ev.location, 'name', ev.location)})")

    def on_Fault(self, device: str, ev: m.Fault) -> None:
        self._raise_fault(f"fault:{device}", f"{device} fault {ev.code}: {ev.text}")

    def on_ButtonPress(self, device: str, ev: m.ButtonPress) -> None:
        if ev.button == m.ButtonId.REVEAL and self.state == "squeeze":
            self._reveal("reveal button")

    def on_CardRead(self, device: str, ev: m.CardRead) -> None:
        if self.shoe is not None:
            self.shoe.dealt += 1
            self.shoe.reads.append((ev.position, ev.rank, ev.suit))
            if checks.missed_cover_card(self.shoe):
                self._missed_cover_card(device)
        if not ev.readable:
            self._raise_fault("misread", f"card at position {ev.position} could not be read: show it to the floorperson")
            return
        c = make_card(ev.rank, SUITS[ev.suit])
        self._accept_card(c, face_up=ev.face_up, position=ev.position)

    # -- cards -------------------------------------------------------------------------------
    def _accept_card(self, c: Card, *, face_up: bool, position: int) -> None:
        st = self.state
        if st == "fault":
            # Nothing is lost: a card that left the shoe while the table was held is applied,
            # in order, when the fault clears.
            self.deferred.append((c, face_up, position))
            self._record("card_deferred", {"card": str(c), "position": position})
            return
        if self.discard_next:
            # 627a.13(c)(1): one more card drawn face down to the discard rack, undisclosed.
            self.discard_next -= 1
            self._record("discard", {"card": str(c), "position": position, "reason": "627a.13(c)(1)"})
            self._next_prompt()
            return
        if st == "burning":
            self.shoe.burned.append(str(c))
            self._record("burn", {"card": str(c), "position": position, "dealer": self.dealer})
            self.burned()
            return
        if st == "dealing" and self.round is not None and not self.round.engine.complete:
            r = self.round
            if face_up and r.cards:
                # 627a.13(d): a card found face up in the shoe mid-round is set aside; it opens a
                # simulated round after this one, and this round goes on with the next card.
                self._irregularity(irr.face_up_card_in_shoe(c, submission=self.sub), c)
                self.pending_simulated = c
                self._next_prompt()
                return
            if face_up and not r.cards and r.kind == "normal":
                # 627a.13(d): the disclosed card opens a simulated round: no wagers accepted.
                self._irregularity(irr.face_up_card_in_shoe(c, submission=self.sub), c)
                self._make_simulated(r)
            self._deal_into_round(c, position)
            return
        # A card drawn when none was called for: a card drawn in error (627a.13).
        self._card_in_error(c, face_up, position)

    def _card_in_error(self, c: Card, face_up: bool, position: int) -> None:
        last, self.last_round = self.last_round, None
        if (self.state == "betting" and self.round is None and last is not None and last.kind == "normal"
                and len(last.cards) == 4 and not self.pending_wagers):
            # The card right after a round that ended on four cards: the dealer drew a third card
            # for the Player when none was authorized (627a.13(b)-(c)).
            decision = irr.unauthorized_player_third_card(last.first_four(), c, disclosed=face_up, submission=self.sub)
        else:
            decision = irr.card_drawn_in_error(c, disclosed=face_up, game=self.sub.game)
        self._irregularity(decision, c)
        action = decision.action
        if action is irr.Action.NEXT_HAND_FIRST_CARD:
            self.held_card = c
        elif action is irr.Action.SIMULATED_ROUND:
            self.pending_simulated = c
        elif action is irr.Action.DISCARD_WITH_ONE_MORE:
            self._record("discard", {"card": str(c), "position": position, "reason": "627a.13(c)(1)"})
            self.discard_next = 1
            self._prompt(f"BURN {self._next_card_mark()}")
            return
        elif action is irr.Action.BANKER_THIRD_CARD:  # pragma: no cover - the engine drew it already
            raise Refused("the Banker's third card is dealt by the tableau")
        if self.state == "betting" and self.pending_simulated is not None and self.round is None:
            self._start_simulated()

    def _irregularity(self, decision: Any, c: Card) -> None:
        self._record("irregularity", decision.to_json())
        self._notice("warning", f"{decision.clause}: {decision.reason}")

    def _deal_into_round(self, c: Card, position: int) -> None:
        r = self.round
        target = r.engine.feed(c)
        r.cards.append((c, target, position))
        self._record("card", {"card": str(c), "to": target.value, "position": position, "n": len(r.cards)})
        self._after_card()

    def _after_card(self) -> None:
        r = self.round
        n = len(r.cards)
        face_down = self.sub.dealing is Dealing.FACE_DOWN and r.kind == "normal"
        if n == 4 and face_down and "player" not in r.squeezed:
            self._begin_squeeze("player")
            return
        if n == 4 and not r.house_money_settled:
            r.house_money_settled = True
            if r.house_money_wagers() and r.kind == "normal":
                self._settle_house_money()
                return
        if face_down and n > 4 and f"third:{n}" not in r.squeezed:
            # 629a.8(c)(4)-(5): a third card goes face down to the player who squeezed that hand.
            r.squeezed.add(f"third:{n}")
            self._begin_squeeze(r.cards[-1][1].hand)
            return
        self._next_prompt()

    def _next_prompt(self) -> None:
        r = self.round
        if self.discard_next:
            self._prompt(f"BURN {self._next_card_mark()}")
            return
        if r is None or self.state != "dealing":
            return
        target = r.engine.next_target()
        if target is None:
            self._complete_round()
        else:
            self._prompt(f"DRAW {target.value.upper()} {self._next_card_mark()}")

    def continue_round(self) -> None:
        r = self.round
        if r is not None and len(r.cards) == 4 and not r.house_money_settled:
            self._after_card()
        else:
            self._next_prompt()

    # -- squeeze (629a.8(c)(1)-(2), (4)-(6), (d)) ------------------------------------------------
    def _begin_squeeze(self, hand: str) -> None:
        """Hand ``hand``'s cards, face down, to the player entitled to them."""
        r = self.round
        if hand not in r.holders:
            r.holders[hand] = self._highest_wager_seat(WagerKind(hand), r)
        r.squeeze_phase = hand
        holder = r.holders[hand]
        self._record("squeeze", {"hand": hand, "seat": holder})
        if self.state == "dealing":
            self.squeeze_start()
        if holder is None:
            self._reveal("the dealer (no player holds the hand)")
        else:
            self._prompt(f"SQUEEZE {hand.upper()} SEAT {holder}")

    def _highest_wager_seat(self, side: WagerKind, r: RoundInProgress) -> int | None:
        """629a.8(c)(1)-(2), (6): the highest wager on the hand; ties go to the player closest to
        the dealer counterclockwise (earliest in the counterclockwise seat order)."""
        totals: dict[int, int] = {}
        for w in r.wagers:
            if w.kind is side:
                totals[w.seat] = totals.get(w.seat, 0) + w.amount
        if not totals:
            return None
        order = {s: i for i, s in enumerate(self.sub.seats)}
        return min(totals, key=lambda s: (-totals[s], order[s]))

    def _next_holder(self, previous: int, r: RoundInProgress) -> int | None:
        """629a.8(d): the player immediately to the right of the previous player, then each other
        player in turn counterclockwise."""
        seats = list(self.sub.seats)
        i = seats.index(previous)
        for k in range(1, len(seats)):
            s = seats[(i + k) % len(seats)]
            if s in self.occupied and s not in r.squeeze_refused:
                return s
        return None

    def _in_squeeze(self) -> RoundInProgress:
        if self.state != "squeeze" or self.round is None or self.round.squeeze_phase is None:
            raise Refused("no hand is being squeezed")
        return self.round

    def op_relinquish(self, op: OperatorInput) -> None:
        """629a.8(d): a player who delays the game gives up the cards; the right passes on for
        the remainder of the round; if no player takes it, the dealer turns the cards over."""
        r = self._in_squeeze()
        hand = r.squeeze_phase
        previous = r.holders.get(hand)
        if previous is None:
            raise Refused("the dealer holds the cards")
        r.squeeze_refused.add(previous)
        r.holders[hand] = self._next_holder(previous, r)
        self._record("relinquished", {"seat": previous, "to": r.holders[hand], "hand": hand})
        if r.holders[hand] is None:
            self._reveal("the dealer (no player accepted)")
        else:
            self._prompt(f"SQUEEZE {hand.upper()} SEAT {r.holders[hand]}")

    def _reveal(self, by: str) -> None:
        r = self._in_squeeze()
        hand = r.squeeze_phase
        r.squeezed.add(hand)
        r.squeeze_phase = None
        self._record("revealed", {"hand": hand, "by": by})
        if hand == "player" and len(r.cards) == 4:
            self._begin_squeeze("banker")  # 629a.8(c)(2): then the Banker's Hand
            return
        self.squeeze_done()

    # -- house money (629a.8(c)(3)) --------------------------------------------------------------
    def _settle_house_money(self) -> None:
        r = self.round
        r.house_money = settle_house_money(r.first_four(), r.house_money_wagers(), self.sub)
        for s in r.house_money:
            self._record("settlement", s.to_json())
        self.house_money_start()
        self._prompt("HOUSE MONEY")

    # -- rounds --------------------------------------------------------------------------------
    def open_betting(self) -> None:
        self.round = None
        if self.pending_simulated is not None:
            self._start_simulated()
            return
        self._prompt("PLACE BETS")

    def start_round(self) -> None:
        self.last_round = None
        self.round_count += 1
        wagers, self.pending_wagers = self.pending_wagers, []
        self.round = RoundInProgress.begin(self.round_count, self._next_round_kind, wagers, self.sub)
        self._next_round_kind = "normal"
        self._record("round_start", {"round": self.round_count, "kind": self.round.kind,
                                     "wagers": [w.to_json() for w in wagers]})
        if self.held_card is not None:
            held, self.held_card = self.held_card, None
            self._record("held_card_used", {"card": str(held), "clause": "627a.13(a)"})
            self._deal_into_round(held, 0)
            return
        self._next_prompt()

    def _start_simulated(self) -> None:
        """627a.13(c)(2)/(d): the disclosed card opens a simulated round without wagers."""
        c, self.pending_simulated = self.pending_simulated, None
        self._next_round_kind = "simulated"
        self.held_card = c
        self.no_more_bets()

    def _make_simulated(self, r: RoundInProgress) -> None:
        r.kind = "simulated"
        returned = void(r.wagers)
        for s in returned:
            self._record("settlement", s.to_json())
        r.wagers = []
        self._record("round_kind", {"kind": "simulated", "clause": "627a.13(d)"})

    def _complete_round(self) -> None:
        r = self.round
        r.result = r.engine.result()
        if r.kind == "normal" and not r.settled:
            for s in settle(r.result, r.main_wagers(), self.sub):
                self._record("settlement", s.to_json())
        r.settled = True
        self.last_outcome = r.result.outcome.value
        self._record("round_result", {"round": r.number, "kind": r.kind, **r.result.to_json()})
        self.last_round = r
        # 681a.7(l): to the discard rack in an order that permits reconstructing each hand.
        self._record("discard_rack", {"cards": [str(c) for c, _, _ in r.cards]})
        self.round_over()

    def _void_round(self, reason: str) -> None:
        self._record_void(reason)
        self._notice("warning", f"round void: {reason}; all wagers returned")
        self.shoe.cover_reached = True  # 627a.13(e): the entire set reshuffled
        self.round_over()

    def _return_pending_wagers(self) -> None:
        for s in void(self.pending_wagers):
            self._record("wager_returned", s.to_json())
        self.pending_wagers = []

    def _record_void(self, reason: str) -> None:
        """627a.13(e): the round in progress is void and every wager on it is returned."""
        r = self.round
        for s in void(r.wagers):
            self._record("settlement", s.to_json())
        r.kind, r.settled = "void", True
        self._record("round_result", {"round": r.number, "kind": "void", "reason": reason,
                                      "cards": [{"card": str(c), "to": t.value} for c, t, _ in r.cards]})

    def reshuffle_due(self) -> bool:
        return bool(self.shoe and (self.shoe.cover_reached or self.reshuffle_ordered))

    def collect_and_reshuffle(self) -> None:
        """681a.7(d)(1)-(2): collect the cards, prove none is missing, reshuffle."""
        self.round = None
        self._reconcile()
        self.start_shuffle()

    def _cardset(self) -> Any:
        """The card-set check of the shoe in play (controller.audit.cardset): the cards read
        against the N-deck composition; the cards left in the shoe are counted, not read."""
        from controller.audit.cardset import verify_cardset

        shoe = self.shoe
        key = (shoe.id, len(shoe.reads), shoe.dealt, shoe.loaded_count)
        if self._cardset_cache is None or self._cardset_cache[0] != key:  # asked up to 3 times per reshuffle
            remaining = max(0, (shoe.loaded_count or 0) - shoe.dealt)
            report = verify_cardset(shoe.reads, decks=shoe.decks, loaded=shoe.loaded_count, remaining=remaining, shoe=shoe.id)
            self._cardset_cache = (key, report)
        return self._cardset_cache[1]

    def cardset_bad(self) -> bool:
        return self.shoe is not None and self.shoe.loaded_count is not None and not self._cardset().ok

    def report_cardset_fault(self) -> None:
        """A duplicated, foreign or missing card: the cards are collected and the table stays
        closed until a floorperson has dealt with it and orders a reshuffle (681a.7(d)(1))."""
        self.round = None
        self._reconcile()
        problems = self._cardset().problems
        self._record("count_fault", {"problem": "; ".join(problems), "cardset": True})
        self._notice("fault", f"the cards of shoe {self.shoe.id} do not reconcile: {'; '.join(problems)}; the table stays closed")

    def _reconcile(self) -> None:
        shoe = self.shoe
        if shoe is None:
            return
        remaining = (shoe.loaded_count or 0) - shoe.dealt
        cardset = self._cardset() if shoe.loaded_count is not None else None
        self._record("reconciliation", {
            "loaded": shoe.loaded_count, "left_shoe": shoe.dealt, "burned": len(shoe.burned),
            "remaining_in_shoe": remaining, "total": shoe.dealt + remaining,
            "expected": shoe.decks * 52,
            "ok": shoe.dealt + remaining == shoe.decks * 52 and (cardset is None or cardset.ok),
        })
        if cardset is not None:
            self._record("cardset", cardset.to_json())
        self._prompt("UNLOAD")

    # -- shoe preparation ----------------------------------------------------------------------
    def start_shuffle(self) -> None:
        """681a.5(a): shuffle with the automated shuffler."""
        self.reshuffle_ordered = False
        sid = f"{self.table_id}-S{self.next_shoe:04d}"
        self.next_shoe += 1
        self.shoe = ShoeRecord(sid, self.sub.decks, self.sub.decks * 52)
        self.round_count = 0
        self._record("shoe_start", {"shoe": sid, "decks": self.sub.decks})
        if self.has_shuffler:
            self._send("shuffler", m.Shuffle(self.sub.decks))
            self._prompt("SHUFFLING")
        else:
            self._prompt("WASH AND SHUFFLE" if self._washing else "SHUFFLE BY HAND")

    def count_ok(self) -> bool:
        got, _expected = self._shuffle_count
        return got == self.sub.decks * 52

    def report_count_fault(self) -> None:
        got, expected = self._shuffle_count
        want = self.sub.decks * 52
        what = checks.count_difference(got, want)
        self._record("count_fault", {"counted": got, "expected": want, "device_expected": expected, "problem": what})
        self._notice("fault", f"card count after the shuffle is {got}, expected {want}: {what}; the table stays closed")

    def deliver_to_dealer(self) -> None:
        """The shuffled stack goes to the dealer, to be cut (681a.5(a)-(b))."""
        if self.has_shuffler:
            self._send("shuffler", m.Deliver(m.DeliverTarget.DEALER))

    def offer_cut(self) -> None:
        """681a.5(b): offer the cut from the highest-numbered occupied seat, clockwise."""
        shoe = self.shoe
        shoe.cut_position = shoe.cover_from_bottom = None
        shoe.cut_offer = self._cut_offer_order()
        self._record("cut_offer", {"order": list(shoe.cut_offer)})
        self._offer_next_cut()

    def _cut_offer_order(self) -> list[int]:
        seats = list(self.sub.seats)  # counterclockwise from the dealer's right
        occupied = [s for s in seats if s in self.occupied]
        if not occupied:
            return []
        start = seats.index(max(occupied))
        clockwise = [seats[(start - k) % len(seats)] for k in range(len(seats))]
        return [s for s in clockwise if s in self.occupied]

    def _offer_next_cut(self) -> None:
        shoe = self.shoe
        if shoe.cut_offer:
            shoe.cut_offeree = shoe.cut_offer.pop(0)
            self._prompt(f"OFFER CUT SEAT {shoe.cut_offeree}")
        else:
            shoe.cut_offeree = None
            self._prompt("DEALER CUTS")

    def deliver_to_shoe(self) -> None:
        """681a.5(h): an automatic reshuffling shoe: no cut; the stack goes into the shoe."""
        self._record("cut_skipped", {"clause": "681a.5(h)"})
        self._send("shuffler", m.Deliver(m.DeliverTarget.SHOE))

    def prompt_load(self) -> None:
        self._prompt("LOAD")

    def prompt_burn(self) -> None:
        self._send("shoe", m.GateUnlock())  # the shoe's gate opens once it holds a cut, loaded stack
        self._prompt(f"BURN {self._next_card_mark()}")

    def _next_card_mark(self) -> str:
        """``@N``: the N-th card out of this shoe. A prompt shown again (after a restart or a
        reconnect) names the same card, so the dealer never draws twice for it."""
        return f"@{(self.shoe.dealt if self.shoe else 0) + 1}"

    def spread_cards(self) -> None:
        self._record("inspection", {"clause": "681a.5(g)", "face_up": self._spread_face_up})
        self._prompt("SPREAD FACE UP" if self._spread_face_up else "SPREAD")

    def closed_table(self) -> None:
        self._send("shoe", m.GateLock())
        self._prompt("CLOSED")

    # -- faults --------------------------------------------------------------------------------
    def _raise_fault(self, key: str, reason: str) -> None:
        self.faults[key] = reason
        self._record("fault", {"fault": key, "reason": reason})
        self._notice("fault", reason)
        if self.state != "fault" and self.state in LIVE_SET:
            self.fault()

    def remember_state(self) -> None:
        self.saved_state = self.state

    def _maybe_resume(self) -> None:
        """Resume where the table stopped once no fault holds it; a shoe lost meanwhile is given
        up instead (at once when no fault held the table)."""
        if self.shoe_lost and (self.state != "fault" or not self.faults):
            reason, self.shoe_lost = self.shoe_lost, None
            self._give_up_shoe(reason)
        elif self.state == "fault" and not self.faults and self.saved_state:
            getattr(self, f"resume_{self.saved_state}")()

    def resumed(self) -> None:
        self.saved_state = None
        self._record("resumed", {"state": self.state})
        for o in self.resume_outputs():
            self._out.append(o)
        deferred, self.deferred = self.deferred, []
        for c, face_up, position in deferred:
            self._accept_card(c, face_up=face_up, position=position)
