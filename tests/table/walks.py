"""``Walk``: the staff and players at a bench table (``bench.Bench``) acting at random, with the
irregularities of 627a.13 and worse, and keeping which cards left the shoe."""
from __future__ import annotations

import random
from collections import Counter

from bench import Bench

from controller.roles import Role
from firmware_bridge.protocol import messages as m


class Walk:
    """The people at the table, acting at random but as they may (a few of their commands are
    refused, as at a real table); the dealer draws only when the shoe's prompt asks, or in error."""

    def __init__(self, b: Bench, rnd: random.Random) -> None:
        self.b, self.rnd = b, rnd
        self.reads: Counter[tuple[str, int]] = Counter()   # (shoe, position) of every card out
        self.cards: dict[tuple[str, int], str] = {}        # (shoe, position) -> the card that it is
        self.shoe_seen: str | None = None
        self.door_open = False
        self.shoe_epoch = 1
        b.link("shuffler", True, serial="SH-1", epoch=1)
        b.link("shoe", True, serial="SO-1", epoch=self.shoe_epoch)

    def draw(self, face_up: bool = False) -> None:
        core, b = self.b.core, self.b
        if b.drawn < len(b.stack):  # else the shoe reports itself empty
            self.reads[(core.shoe.id, b.drawn + 1)] += 1
            self.cards[(core.shoe.id, b.drawn + 1)] = str(b.stack[b.drawn])
        b.draw(face_up)

    def new_shoe(self) -> None:
        """Irregularities planted in the shoe just shuffled: cards face up, cards unreadable."""
        b, rnd = self.b, self.rnd
        n = len(b.stack)
        b.face_up_at = {rnd.randrange(1, n) for _ in range(rnd.randint(0, 3))}
        b.misread_at = {rnd.randrange(1, n) for _ in range(rnd.randint(0, 2))}

    def step(self) -> None:
        b, core, rnd = self.b, self.b.core, self.rnd
        if core.shoe is not None and core.shoe.id != self.shoe_seen:
            self.shoe_seen = core.shoe.id
            self.new_shoe()
        state = core.state
        if state == "closed":
            b.op("open")
        elif state == "count_fault":
            b.op("order_reshuffle")
        elif state == "inspection":
            if core.inspection.first_seat is None:  # 681a.5(g): a player arrives to see the spread cards
                self.arrive()
            elif not core.inspection.face_up and rnd.random() < 0.3:
                b.op("spread_face_up", Role.DEALER)  # the player asks to see them face up
            else:
                b.op("inspection_done")
        elif state == "cutting":
            self.cutting()
        elif state == "ready_to_load":
            b.op(rnd.choice(["load"] * 8 + ["order_recut", "order_reshuffle"]), Role.FLOORPERSON)
        elif state == "loading":
            b.event("shoe", m.ShoeLoaded(len(b.stack)))
        elif state == "burning":
            self.draw()
        elif state == "betting":
            self.betting()
        elif state in ("dealing", "squeeze", "house_money"):
            self.in_round(state)
        elif state == "fault":
            self.fault()
        else:  # pragma: no cover - a state the walk does not know
            raise AssertionError(f"the walk does not know the state {state}")

    def arrive(self) -> None:
        """A player sits down at a free seat (one leaves first when every seat is taken)."""
        b, core, rnd = self.b, self.b.core, self.rnd
        free = [s for s in b.sub.seats if s not in core.occupied]
        if not free:
            seat = rnd.choice(sorted(core.occupied))
            b.op("leave", Role.DEALER, seat=seat)
            free = [seat]
        b.op("sit", Role.DEALER, seat=rnd.choice(free))

    def cutting(self) -> None:
        b, shoe, rnd = self.b, self.b.core.shoe, self.rnd
        if shoe.cut_position is None:
            if rnd.random() < 0.05:
                self.arrive()  # a player sits down while the stack goes round (681a.5(b))
            elif shoe.cut_offeree is not None and rnd.random() < 0.5:
                b.op("cut_decline", Role.DEALER, seat=shoe.cut_offeree)
            else:
                by = {} if shoe.cut_offeree is None else {"seat": shoe.cut_offeree}
                b.op("cut", Role.DEALER, position=rnd.randint(10, shoe.stack_size - 10), **by)
        elif rnd.random() < 0.05:
            b.op("order_recut")
        else:
            b.op("cover", Role.DEALER, from_bottom=rnd.randint(14, 16))

    def betting(self) -> None:
        b, core, rnd = self.b, self.b.core, self.rnd
        if core.aside.discards_owed:  # 627a.13(c)(1): one more card, face down, to the discard rack
            self.draw()
            return
        # Most shoes are dealt to the cover card: what ends one early is rare.
        roll = rnd.random()
        if roll < 0.02:
            self.draw(face_up=rnd.random() < 0.5)  # a card drawn in error
        elif roll < 0.025:
            b.op("dealer_sign_in", Role.DEALER, dealer=f"D{rnd.randint(1, 9)}")
        elif roll < 0.0255:
            b.op("declare_idle")
        elif roll < 0.026:
            b.op("order_reshuffle")
        elif roll < 0.0263:
            b.op("restart_shoe", reason="test")
        elif roll < 0.0266:
            b.op("close", reason="test")  # refused while wagers are on the layout
        elif roll < 0.35 and len(core.pending_wagers) < 6:
            kinds = sorted(k.value for k in b.sub.wagers)
            kind = rnd.choice(kinds)
            # House Money mostly beside the seat's own Player or Banker wager, where a win can be added
            backed = sorted({w.seat for w in core.pending_wagers if w.kind.value in ("player", "banker")})
            seat = rnd.choice(backed) if kind == "house_money" and backed and roll < 0.3 else rnd.choice(b.sub.seats)
            b.op("wager", Role.DEALER, seat=seat, kind=kind, amount=rnd.choice([100, 500, 1000, 2500]))
        else:
            b.op("no_more_bets", Role.DEALER)

    def in_round(self, state: str) -> None:
        b, core, rnd = self.b, self.b.core, self.rnd
        roll = rnd.random()
        if roll < 0.0003:
            b.op("void_round")
        elif roll < 0.0006:
            b.op("order_reshuffle")
        elif roll < 0.0106 and not self.door_open:
            b.event("shoe", m.Door(True))
            self.door_open = True
        elif state == "squeeze":
            b.op("relinquish" if roll < 0.2 else "reveal", Role.DEALER)
        elif state == "house_money":
            if roll < 0.5 and core.round.house_money:
                # mostly a payout there is to add, onto a wager the seat holds; at times any, anywhere
                held = {(w.seat, w.kind.value) for w in core.round.wagers if w.kind.value in ("player", "banker")}
                addable = [(s, side) for s in core.round.house_money for side in ("player", "banker")
                           if s.win > 0 and (s.seat, side) in held]
                if addable and roll < 0.4:
                    s, side = rnd.choice(addable)
                    # the seat's whole payout (all its House Money wagers): the preset's portion is all
                    amount = sum(x.win for x in core.round.house_money if x.seat == s.seat)
                else:
                    s, side = rnd.choice(core.round.house_money), rnd.choice(["player", "banker"])
                    amount = rnd.choice([1, 100, max(1, s.win // 2), max(1, s.win)])
                b.op("house_money_add", Role.DEALER, seat=s.seat, side=side, amount=amount)
            elif roll < 0.55:
                self.draw(face_up=rnd.random() < 0.5)  # a card drawn in error during House Money
            else:
                b.op("continue", Role.DEALER)
        else:
            self.draw()

    def fault(self) -> None:
        b, core, rnd = self.b, self.b.core, self.rnd
        if self.door_open and (rnd.random() < 0.6 or "misread" not in core.faults):
            roll = rnd.random()
            if roll < 0.3 and core.saved_state in ("dealing",):
                self.draw()  # a card taken while the door is open: deferred, not lost
            elif roll < 0.31:
                # the shoe's link drops and it comes back with its memory lost: the shoe is
                # given up (a round voided, the cards collected) once the door is closed
                b.link("shoe", False)
                self.shoe_epoch += 1
                b.link("shoe", True, serial="SO-1", epoch=self.shoe_epoch)
            else:
                b.event("shoe", m.Door(False))
                self.door_open = False
            return
        if "misread" in core.faults:
            position = next(d.position for d in core.aside.deferred if d.card is None)
            b.op("enter_card", card=str(b.misread[position]))
            return
        b.op("clear_fault")  # a missing cover card: the floorperson has checked the shoe

    def outstanding(self) -> list:
        """The wagers not yet settled: on the layout, and in a round not yet settled."""
        core = self.b.core
        in_round = core.round.unsettled_wagers() if core.round is not None and not core.round.settled else []
        return list(core.pending_wagers) + in_round
