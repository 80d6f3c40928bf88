"""A sans-I/O test bench for the table core: scripted devices that obey its commands and prompts.

The bench plays the shuffler (answers SHUFFLE with SHUFFLE_DONE and the stack's count), the
dealer (obeys CUT n / COVER n / LOAD / BURN / DRAW / DISCARD prompts when ``auto_deal``; like the
emulated dealer, not a BURN or DRAW whose ``@N`` names a card already drawn) and the
card-reading shoe (CARD_READ for each card drawn, COVER_CARD when the cover card comes out,
SHOE_EMPTY at the end). Inputs and outputs are kept so tests can assert on them and replay them; ``sent(outs, type)`` picks
the device messages of one type out of a list of outputs.
"""
from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from typing import Any

from controller.rules.cards import Card, Composition, parse_cards
from controller.rules.submission import load_preset
from controller.table.core import TableCore
from controller.table.io import (
    CommandFailed, DeviceInput, DeviceStatus, Notice, OperatorInput, TableRecord, SendCommand,
)
from controller.roles import Role
from firmware_bridge.protocol import messages as m

SUIT_CODE = {"C": 0, "D": 1, "H": 2, "S": 3}


def sent(outs: list[Any], message_type: type) -> list[Any]:
    """The device messages of ``message_type`` among the core's outputs ``outs``, in order."""
    return [o.message for o in outs if isinstance(o, SendCommand) and isinstance(o.message, message_type)]


P_WINS = parse_cards("3S,2H,4D,4C")  # Player 7, Banker 6: both stand, the round ends on four cards
AFTER_P_WINS = "9S,AS,2S,3S,4S,5S,6S"


def after_a_four_card_round(unauthorized_third_card: str = "discard", then: str = AFTER_P_WINS) -> Bench:
    """627a.13(b)-(c): a Minibaccarat table whose first round (seat 1, 100 on the Player) ended on
    four cards (``P_WINS``), the cards ``then`` next in the shoe, and the submission's option for an
    unauthorized Player third card; the bench deals only what the test draws from here."""
    sub = dataclasses.replace(load_preset("minibaccarat"), unauthorized_third_card=unauthorized_third_card)
    b = Bench(stack=stack_with(P_WINS + parse_cards(then)), submission=sub)
    b.open_and_cut()
    b.play_round([(1, "player", 100)])
    b.auto_deal = False
    return b


def stack_with(front: list[Card], decks: int = 8, burn: int = 1) -> list[Card]:
    """A full shoe whose cards after the cut and the ``burn`` burned cards start with ``front``
    (cut at 100)."""
    rest = Composition.standard(decks).remove(front).cards()
    burned, rest = rest[:burn], rest[burn:]
    ordered = burned + list(front) + rest   # the order after the cut
    n = 100
    return ordered[-n:] + ordered[:-n]    # undo a cut at 100


class Bench:
    def __init__(self, preset: str = "minibaccarat", *, seed: int = 1, stack: list[Card] | None = None,
                 count_delta: int = 0, auto_deal: bool = True, automatic_shoe: bool = False, submission: Any = None,
                 shuffler: bool = True, shuffler_keeps_one_batch: bool = True) -> None:
        self.sub = submission or load_preset(preset)
        self.core = TableCore(self.sub, automatic_shoe=automatic_shoe, shuffler=shuffler,
                              shuffler_keeps_one_batch=shuffler_keeps_one_batch)
        self.rng = random.Random(seed)
        self.base = stack
        self.count_delta = count_delta
        self.auto_deal = auto_deal
        self.stack: list[Card] = []
        self.cover_index: int | None = None
        self.cut_made = False
        self.drawn = 0
        self.inputs: list[Any] = []
        self.records: list[TableRecord] = []
        self.notices: list[Notice] = []
        self.sent: list[SendCommand] = []
        self.face_up_at: set[int] = set()
        self.misread_at: set[int] = set()         # positions the shoe reads as unreadable
        self.misread: dict[int, Card] = {}        # position -> the card it could not read

    # -- feeding ---------------------------------------------------------------------------
    def feed(self, inp: Any) -> list[Any]:
        self.inputs.append(inp)
        outs = self.core.handle(inp)
        for o in outs:
            if isinstance(o, TableRecord):
                self.records.append(o)
            elif isinstance(o, Notice):
                self.notices.append(o)
            else:
                self.sent.append(o)
        for o in outs:
            if isinstance(o, SendCommand):
                self._device_acts(o)
        return outs

    def op(self, command: str, role: Role = Role.FLOORPERSON, operator: str = "fp1", **args: Any) -> list[Any]:
        return self.feed(OperatorInput(command, args, operator, role))

    def event(self, device_role: str, ev: Any) -> list[Any]:
        return self.feed(DeviceInput(device_role, ev))

    def link(self, device_role: str, up: bool, *, serial: str = "", epoch: int | None = None) -> list[Any]:
        """The link of ``device_role`` went down or came up (with the identity of the device then
        answering: ``serial`` and event ``epoch``)."""
        return self.feed(DeviceStatus(device_role, up, serial=serial, epoch=epoch))

    # -- the scripted devices ------------------------------------------------------------------
    def _device_acts(self, o: SendCommand) -> None:
        msg = o.message
        if isinstance(msg, m.Shuffle):
            cards = list(self.base) if self.base is not None else Composition.standard(msg.decks).cards()
            if self.base is None:
                self.rng.shuffle(cards)
            self.stack, self.drawn, self.cover_index, self.cut_made = cards, 0, None, False
            n = len(cards) + self.count_delta
            self.event("shuffler", m.ShuffleDone(n, msg.decks * 52))
        elif isinstance(msg, m.Deliver) and msg.target is m.DeliverTarget.SHOE:
            self.cover_index = len(self.stack) - 14 if self.cover_index is None else self.cover_index
            self.event("shoe", m.ShoeLoaded(len(self.stack)))
        elif isinstance(msg, m.Display):
            self._prompted(msg.text)

    def _prompted(self, text: str) -> None:
        word, *rest = text.split()
        if word == "CUT" and not self.cut_made:  # like the emulated dealer: a CUT shown again does nothing
            n = int(rest[0])
            self.stack = self.stack[n:] + self.stack[:n]
            self.cut_made = True
        elif word == "COVER":
            self.cover_index = len(self.stack) - int(rest[0])
        elif word == "LOAD" and self.auto_deal:
            self.event("shoe", m.ShoeLoaded(len(self.stack)))
        elif word in ("BURN", "DRAW") and self.auto_deal:
            marks = [int(a[1:]) for a in rest if a.startswith("@")]
            if not marks or marks[-1] > self.drawn:  # a prompt shown again names a card already drawn
                self.draw()

    def draw(self, face_up: bool = False) -> None:
        """The dealer draws the next card from the shoe (the cover card first, if it is next)."""
        if self.cover_index is not None and self.drawn == self.cover_index:
            self.cover_index = None
            self.event("shoe", m.CoverCard(self.drawn + 1))
        if self.drawn >= len(self.stack):
            self.event("shoe", m.ShoeEmpty())
            return
        c = self.stack[self.drawn]
        self.drawn += 1
        up = face_up or self.drawn in self.face_up_at
        if self.drawn in self.misread_at:
            self.misread[self.drawn] = c  # shown to the floorperson, who enters it
            self.event("shoe", m.CardRead(0xFF, 0xFF, up, self.drawn, self.drawn * 1000))
            return
        self.event("shoe", m.CardRead(c.rank, SUIT_CODE[c.suit], up, self.drawn, self.drawn * 1000))

    # -- scenarios -----------------------------------------------------------------------------
    def open_and_cut(self, cut: int = 100, cover: int = 14, seats: tuple[int, ...] = ()) -> None:
        for s in seats:
            self.op("sit", Role.DEALER, seat=s)
        self.op("open")
        if self.core.state == "cutting":
            while self.core.shoe.cut_offeree is not None:
                self.op("cut_decline", Role.DEALER, seat=self.core.shoe.cut_offeree)
            self.op("cut", Role.DEALER, position=cut)
            self.op("cover", Role.DEALER, from_bottom=cover)
            self.op("load", Role.DEALER)

    def dealing_by_hand(self) -> None:
        """Opened and cut, one wager on the layout and no more bets: a round begins, and the bench
        deals only what a test draws."""
        self.open_and_cut()
        self.auto_deal = False
        self.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
        self.op("no_more_bets", Role.DEALER)

    def cards_drawn_in_error(self, n: int) -> None:
        """627a.13(a): with a wager on the layout, the dealer draws ``n`` cards face down, none
        called for (the bench then deals only what a test draws)."""
        self.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
        self.auto_deal = False
        for _ in range(n):
            self.draw()

    def player_arrives(self) -> int:
        """681a.5(g): a player sits down at the lowest free seat (at an idle table's spread cards,
        the first to arrive, who may inspect them); returns the seat."""
        seat = min(s for s in self.sub.seats if s not in self.core.occupied)
        self.op("sit", Role.DEALER, seat=seat)
        return seat

    def cards_into_a_round(self, cards: int = 2) -> None:
        """After ``open_and_cut``: the dealer deals by hand from here (``auto_deal`` off), 100 on the
        Player at seat 1, no more bets, and ``cards`` cards of the round drawn."""
        self.auto_deal = False
        self.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
        self.op("no_more_bets", Role.DEALER)
        for _ in range(cards):
            self.draw()

    def play_round(self, wagers: list[tuple[int, str, int]] = ()) -> list[TableRecord]:
        start = len(self.records)
        for seat, kind, amount in wagers:
            self.op("wager", Role.DEALER, seat=seat, kind=kind, amount=amount)
        self.op("no_more_bets", Role.DEALER)
        return self.records[start:]

    def kinds(self, since: int = 0) -> list[str]:
        return [r.kind for r in self.records[since:]]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [r.payload for r in self.records if r.kind == kind]


def refusing(b: Bench, refuses: Callable[[SendCommand], bool]) -> tuple[list[CommandFailed], Callable]:
    """Make ``b``'s scripted devices refuse (NAK BUSY) each command ``refuses`` picks, carrying out
    the others; (the refusals, not fed: each reaches the core after what is under way, and the
    devices' own behaviour, to put back)."""
    obey, refusals = b._device_acts, []

    def acts(o: SendCommand) -> None:
        if not refuses(o):
            obey(o)
            return
        name, text = m.wire_name(o.message), getattr(o.message, "text", None)
        refusals.append(CommandFailed(o.device_role, name, f"{name} refused: BUSY", refused=True, code="BUSY",
                                      prompt=text))

    b._device_acts = acts
    return refusals, obey
