"""One pass of ``controller.journal.replay.replay`` over a journal's entries: ``ReplayPass`` holds the
shoes and rounds in hand and yields each document when it is done (the contract is that module's
docstring), and which records a replay lists as events (``EVENT_KINDS``, ``ROUTINE_COMMANDS``)."""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from controller.journal import kinds
from controller.journal.errors import JournalContentError, malformed_entry, text_field
from controller.journal.replay_fields import (
    UNREADABLE_RANK, dealt_field, hand_field, outcome_field, placed_cards, wager_field, whole_field,
)
from controller.journal.replay_set_aside import SetAsideCards
from controller.journal.vocabulary import current_payload

__all__ = ["EVENT_KINDS", "ROUTINE_COMMANDS", "ReplayPass"]

Doc = dict[str, Any]

# The records a replay lists as events (see ``controller.journal.replay``'s docstring), and the
# operator commands it leaves out as routine (the round's own records show them: its wagers, its
# cards, its squeeze, reveals and House Money additions).
EVENT_KINDS = frozenset({
    kinds.OPERATOR, kinds.CUT_DECLINED, kinds.COUNT_FAULT, kinds.COVER_CARD_MISSING, kinds.COVER_CARD_EARLY, kinds.TOO_FEW_CARDS,
    kinds.INSPECTION, kinds.SHUFFLER_BATCH_REMOVED, kinds.MANUAL_SHUFFLE, kinds.RESHUFFLE_ORDERED, kinds.SHOE_RESTARTED,
    kinds.CARD_DEFERRED, kinds.HELD_CARD_USED, kinds.CARD_ENTERED, kinds.DISCARD, kinds.IRREGULARITY,
    kinds.RELINQUISHED, kinds.WAGER_RETURNED, kinds.DEALER, kinds.DEVICE_REPLACED, kinds.FAULT,
    kinds.FAULT_CLEARED, kinds.EVENTS_GIVEN_UP, kinds.RESUMED, kinds.CONTROLLER_STARTED,
    # the times of the entries after it are a stepped clock's: matching them to footage needs it
    kinds.CLOCK_STEP,
    # who was handed the cards and who turned them over (629a.8(c)), what House Money added to a
    # wager (629a.8(c)(3)): a round's settlements cannot be read without them
    kinds.SQUEEZE, kinds.REVEALED, kinds.HOUSE_MONEY_ADDED,
    # what was attempted and refused (nothing changed): a refused void or a wrong PIN during a
    # disputed round is what surveillance looks for
    kinds.REFUSED, kinds.AUTH_REFUSED, kinds.BAD_REQUEST,
})
ROUTINE_COMMANDS = frozenset({"wager", "no_more_bets", "sit", "leave", "cut", "cut_decline", "cover", "load",
                              "reveal", "continue", "house_money_add"})


def _event(e: Any, actor: str | None) -> Doc | None:
    """The entry as an event, or None when it is none (see ``EVENT_KINDS``). ``actor``: the
    operator whose command the core was deciding on when it made the record (the last
    ``input.operator`` entry, when the entries read hold the inputs)."""
    if e.kind not in EVENT_KINDS:
        return None
    if e.kind == kinds.OPERATOR and text_field(e.payload, "command") in ROUTINE_COMMANDS:
        return None
    if e.kind == kinds.CLOCK_STEP:
        actor = None  # the clock's doing, found by the journal's writer: no operator's
    return {"seq": e.seq, "kind": e.kind, "operator": e.operator or e.payload.get("operator") or actor,
            "payload": dict(e.payload)}


class ReplayPass:
    """The state of one replay (``shoe``, ``round``, ``hold``, ``open_rounds`` as ``replay`` takes
    them): ``run(entries)`` yields its documents, once, in the order ``replay`` promises, and
    raises what it raises."""

    def __init__(self, *, shoe: str | None, round: int | None, hold: bool | None, open_rounds: bool) -> None:
        self.shoe, self.round, self.open_rounds = shoe, round, open_rounds
        self.shoes: dict[str, Doc] = {}
        self.layout: dict[str, list[Doc]] = {}  # by shoe: wagers placed since its last round began
        self.rounds: dict[tuple[str, int], Doc] = {}
        self.current: str | None = None
        self.ending: str | None = None  # the shoe before the current one, shown once the current one is loaded
        self.ended: set[str] = set()  # shoes done: a record of one after it (a card drawn from it once ended) is late
        # Clock steps journaled where this reading shows nothing (another shoe, another round): the
        # times of what it shows after them are the stepped clock's, so the first document shown that
        # began after a step carries it (a review of clocks: one shoe's replay showed its times an hour
        # off without a word). ``began``: the seq of the entry each shoe (by its id) and round (by its
        # key in ``rounds``) in hand began at, let go with it.
        self.hidden_steps: list[Doc] = []
        self.began: dict[Any, int] = {}
        self.seq_now = 0
        # Held (a reading of a journal written, and of one round by default), a round decided waits
        # until the next one of its shoe starts (or the shoe ends): an irregularity of it that comes
        # after its cards went to the rack (627a.13(b)-(c), journaled with its round) goes with it. A
        # live reading (the scoreboard's) has each round at once; such an irregularity is then among
        # the shoe's events.
        self.hold = round is not None if hold is None else hold
        self.held: dict[str, tuple[str, int]] = {}
        self.actor: str | None = None
        # by (shoe, stack position): the device event each card of a shoe in play was read as (a card
        # held or deferred is placed later than its read, after other reads: matched by its place)
        self.reads: dict[tuple[str | None, int], Doc] = {}
        self.unplaced: list[Doc] = []  # the events before the first shoe
        self.set_aside = SetAsideCards()  # the events that set a card aside between rounds, until its round
        # What each kind of record changes in the documents in hand: ``_updates`` only that,
        # ``_steps`` may also let documents go (yielded).
        self._updates: dict[str, Callable[[Any, Doc], None]] = {
            kinds.CUT: self._cut, kinds.COVER: self._cover, kinds.BURN: self._burn,
            kinds.COVER_CARD: self._cover_card, kinds.RECONCILIATION: self._reconciliation,
            kinds.WAGER: self._wager, kinds.WAGER_RETURNED: self._wager_returned,
            kinds.ROUND_KIND: self._round_kind, kinds.CARD: self._card, kinds.SETTLEMENT: self._settlement,
            kinds.HOUSE_MONEY_ADDED: self._house_money_added,
        }
        self._steps: dict[str, Callable[[Any, Doc], Iterator[Doc]]] = {
            kinds.SHOE_LOADED: self._shoe_loaded, kinds.ROUND_START: self._round_start,
            kinds.ROUND_RESULT: self._round_result, kinds.DISCARD_RACK: self._discard_rack,
        }

    def run(self, entries: Iterable[Any]) -> Iterator[Doc]:
        """Every document of ``entries``; a payload a record's kind cannot read raises
        ``JournalContentError`` naming the entry (``malformed_entry``)."""
        for e in entries:
            self.seq_now = e.seq
            try:
                yield from self._entry(e)
            except JournalContentError:
                raise
            except (KeyError, TypeError, AttributeError, ValueError) as exc:
                raise malformed_entry(e, exc) from None
        yield from self._end()

    def _want(self, sid: str | None, rno: int | None = None) -> bool:
        return (self.shoe is None or sid == self.shoe) and (self.round is None or rno == self.round)

    def _shown(self, doc: Doc, start: int) -> Doc:
        """``doc`` (begun at entry ``start``) as yielded: with the hidden clock steps journaled
        before it, which it takes."""
        before = [step for step in self.hidden_steps if step["seq"] < start]  # a held round decided before a step: not it
        if not before:
            return doc
        self.hidden_steps[:] = [step for step in self.hidden_steps if step["seq"] >= start]
        return {**doc, "clock_steps_before": before}

    def _shoe_doc(self, sid: str) -> Doc:
        """The document of shoe ``sid`` in hand, begun at the current entry when it is new."""
        if sid not in self.shoes:
            self.shoes[sid] = {"type": "shoe", "shoe": sid, "started": None, "decks": None, "cut": None,
                               "cover_from_bottom": None, "cuts_before": [], "burned": [], "loaded": None,
                               "rounds": 0, "cover_card_position": None, "reconciliation": None, "events": []}
            self.began[sid] = self.seq_now
        return self.shoes[sid]

    def _shoe_done(self, sid: str) -> Iterator[Doc]:
        """The shoe ``sid`` ends, or the entries do: its rounds still held, then (``open_rounds``)
        those begun and never decided, then the shoe."""
        yield from self._release(sid)
        if self.open_rounds:
            for key in [k for k in self.rounds if k[0] == sid]:
                r, start = self.rounds.pop(key), self.began.pop(key, self.seq_now)
                if self._want(*key):
                    yield {**self._shown(r, start), "unfinished": True}
        self.ended.add(sid)
        doc, on_layout = self.shoes.pop(sid, None), self.layout.pop(sid, [])
        start = self.began.pop(sid, self.seq_now)
        if doc is not None and self._want(sid) and self.round is None:
            if self.open_rounds:
                doc["layout"] = on_layout
            yield self._shown(doc, start)

    def _release(self, sid: str | None) -> Iterator[Doc]:
        """The round of ``sid`` held, if any, let go."""
        key = self.held.pop(sid, None) if sid is not None else None
        if key is not None:
            r, start = self.rounds.pop(key), self.began.pop(key, self.seq_now)
            if self._want(*key):
                yield self._shown(r, start)

    def _decided(self, sid: str, rno: int) -> Iterator[Doc]:
        """Round ``rno`` of ``sid`` is decided: held, or yielded at once (a live reading)."""
        yield from self._release(sid)
        self.held[sid] = (sid, rno)
        if not self.hold:
            yield from self._release(sid)

    def _entry(self, e: Any) -> Iterator[Doc]:
        """Entry ``e`` read into the documents in hand; those it completes."""
        k, p, sid, rno = e.kind, e.payload, e.shoe_id, e.round_no
        if k in kinds.INPUT_KINDS:
            self._input(e)
            return
        if k == kinds.CONTROLLER_STARTED:
            self.actor = None  # a new process: what follows is not the last command's doing (a review saw a restart "by" the dealer)
        if k == kinds.SHOE_START:
            yield from self._shoe_start(e)
            return
        if sid is None:
            # Before the first shoe: a clock step (a computer set by NTP as it started), and what
            # people did as the table opened (who opened it under which rules, a wrong PIN, a refused
            # command: a review found them in no replay). First among the first shoe's events.
            if (event := _event(e, self.actor)) is not None:
                self.unplaced.append(event)
            return
        if sid in self.ended and sid != self.current:
            self._late(e)
            return
        # position 0: "unknown", a shoe that does not sense positions (docs/protocol.md 9.18): nothing
        # is placed by it (a review: the next card out "was" a card set aside, whose irregularity
        # then stayed with the shoe instead of the round it opens)
        if k in (kinds.CARD, kinds.BURN, kinds.DISCARD) and p.get("position"):
            self.set_aside.left_shoe(sid, rno, p["position"])
        doc = self._shoe_doc(sid)
        self._listed(e, doc)
        if k in self._updates:
            self._updates[k](e, doc)
        elif k in self._steps:
            yield from self._steps[k](e, doc)

    def _input(self, e: Any) -> None:
        """An input: whose command the records after it follow, and the device event a card was read as."""
        self.actor = e.operator if e.kind == kinds.INPUT_OPERATOR else None
        if e.kind == kinds.INPUT_DEVICE and (read := current_payload(e)).get("event") == "CARD_READ":
            fields = read.get("fields") or {}  # (a version-1 journal's as version 2 names them)
            position = fields.get("position")
            if type(position) is int and fields.get("rank") != UNREADABLE_RANK:  # an entered card's read: not it
                self.reads[(e.shoe_id, position)] = {"serial": e.device_serial, "epoch": e.device_epoch,
                                                     "counter": e.device_counter}

    def _shoe_start(self, e: Any) -> Iterator[Doc]:
        """A new shoe begins: the shoe before the one in play is let go."""
        p = e.payload
        if self.ending is not None:
            yield from self._shoe_done(self.ending)
        # The shoe before is shown once the next stack is loaded: until then a card drawn
        # from it (the ended shoe's, discarded with its cards) is its own, with --shoe too
        # (a review: it was shown nowhere, then only without --shoe).
        self.ending = self.current
        self.reads.clear()  # the reads of the shoe before: none of its cards is placed after this
        self.current = p["shoe"]
        self._shoe_doc(self.current)["decks"] = p.get("decks")
        if self._want(self.current) and self.round is None:
            self.shoes[self.current]["events"][:0] = self.unplaced  # what happened before it, first
        else:
            self.hidden_steps.extend(event for event in self.unplaced if event["kind"] == kinds.CLOCK_STEP)
        self.unplaced = []
        self.shoes[self.current]["started"] = getattr(e, "ts", None)

    def _late(self, e: Any) -> None:
        """A record of a shoe shown already (a card drawn from it after it ended, discarded with its
        cards): among the events of the shoe in play, where it happened. It was shown nowhere (a
        surveillance review)."""
        event = _event(e, self.actor)
        if event is not None and self.current is not None and self._want(self.current):
            self._shoe_doc(self.current)["events"].append(event)
            if self.round is not None and e.kind == kinds.CLOCK_STEP:
                self.hidden_steps.append(event)
        elif event is not None and e.kind == kinds.CLOCK_STEP:
            self.hidden_steps.append(event)

    def _listed(self, e: Any, doc: Doc) -> None:
        """The entry among the events of its round in hand, else of its shoe (``doc``), when it is one."""
        k, p, sid, rno = e.kind, e.payload, e.shoe_id, e.round_no
        event = _event(e, self.actor)
        if event is None:
            return
        in_round = (sid, rno) in self.rounds
        target = self.rounds[(sid, rno)] if in_round else doc
        target["events"].append(event)
        if in_round and k == kinds.HELD_CARD_USED:
            self.set_aside.held(sid, rno, p.get("card"), event, doc, target)
        if not in_round and k in (kinds.IRREGULARITY, kinds.CARD_DEFERRED) and p.get("card"):
            self.set_aside.waits(sid, p["card"], event)
        # A step between rounds is shown among its shoe's events, which come after the
        # rounds: the next round shown carries it too, before its stepped times.
        if k == kinds.CLOCK_STEP and (not in_round or not self._want(sid, rno)):
            self.hidden_steps.append(event)

    def _end(self) -> Iterator[Doc]:
        """The entries end: the shoe before the one in play, the rounds held, the shoe in play."""
        if self.ending is not None:
            yield from self._shoe_done(self.ending)
        for sid in list(self.held):
            yield from self._release(sid)
        if self.current is not None:
            yield from self._shoe_done(self.current)

    def _cut(self, e: Any, doc: Doc) -> None:
        p = e.payload
        if doc["cut"] is not None:  # a recut (681a.5(e)): the cut it undid stays on record
            doc["cuts_before"].append({**doc["cut"], "cover_from_bottom": doc["cover_from_bottom"]})
            doc["cover_from_bottom"] = None
        doc["cut"] = {"position": p["position"], "by": p["by"]}

    def _cover(self, e: Any, doc: Doc) -> None:
        doc["cover_from_bottom"] = e.payload["from_bottom"]

    def _burn(self, e: Any, doc: Doc) -> None:
        doc["burned"].append(text_field(e.payload, "card"))

    def _shoe_loaded(self, e: Any, doc: Doc) -> Iterator[Doc]:
        """The shoe is loaded: the one before it is let go."""
        doc["loaded"] = e.payload["cards"]
        if self.ending is not None and self.ending != e.shoe_id:
            yield from self._shoe_done(self.ending)
            self.ending = None

    def _cover_card(self, e: Any, doc: Doc) -> None:
        doc["cover_card_position"] = e.payload.get("position")

    def _reconciliation(self, e: Any, doc: Doc) -> None:
        doc["reconciliation"] = e.payload

    def _wager(self, e: Any, doc: Doc) -> None:
        self.layout.setdefault(e.shoe_id, []).append({**wager_field(e.payload), "placed_by": self.actor})

    def _wager_returned(self, e: Any, doc: Doc) -> None:
        _take_off(self.layout.get(e.shoe_id, []), wager_field(e.payload))

    def _round_start(self, e: Any, doc: Doc) -> Iterator[Doc]:
        """A round begins: the round of its shoe held is let go."""
        p, sid = e.payload, e.shoe_id
        yield from self._release(sid)
        # those the round takes, each with who placed it; a simulated round's stay on the layout
        wagers = [{**w, "placed_by": _placed_by(_take_off(self.layout.get(sid, []), w))}
                  for w in map(wager_field, p["wagers"])]
        self.rounds[(sid, p["round"])] = {"type": "round", "shoe": sid, "round": p["round"], "kind": p["kind"],
                                          "cards": [], "player": None, "banker": None, "outcome": None,
                                          "wagers": wagers, "settlements": [], "events": [],
                                          "started": getattr(e, "ts", None), "decided": None}
        self.began[(sid, p["round"])] = e.seq

    def _round_kind(self, e: Any, doc: Doc) -> None:
        p, key = e.payload, (e.shoe_id, e.round_no)
        if key not in self.rounds:
            return
        self.rounds[key]["kind"] = p["kind"]
        # its wagers put back on the layout for the next round (simulated_round_wagers = stay)
        taken = list(self.rounds[key]["wagers"])
        self.layout.setdefault(e.shoe_id, []).extend({**wager_field(w), "placed_by": _placed_by(_take_off(taken, w))}
                                                     for w in p.get("wagers_kept") or ())

    def _card(self, e: Any, doc: Doc) -> None:
        p, sid, key = e.payload, e.shoe_id, (e.shoe_id, e.round_no)
        if key not in self.rounds:
            return
        position = p.get("position")
        if position is not None:
            whole_field(p, "position")
        self.rounds[key]["cards"].append({"card": text_field(p, "card"), "to": text_field(p, "to"),
                                          "position": position, "seq": getattr(e, "seq", None),
                                          "ts": getattr(e, "ts", None),
                                          "device_event": self.reads.pop((sid, position), None)})

    def _settlement(self, e: Any, doc: Doc) -> None:
        p, key = e.payload, (e.shoe_id, e.round_no)
        if key not in self.rounds:
            return
        whole_field(p, "net")
        wager_field(p)
        for optional in ("win", "commission"):
            if p.get(optional) is not None:
                whole_field(p, optional)
        self.rounds[key]["settlements"].append(p)

    def _house_money_added(self, e: Any, doc: Doc) -> None:
        key = (e.shoe_id, e.round_no)
        if key in self.rounds:
            self.rounds[key].setdefault("house_money_added", []).append(e.payload)

    def _round_result(self, e: Any, doc: Doc) -> Iterator[Doc]:
        """The round's result; a void round is decided with it (another's when its cards go to the rack)."""
        p, sid, rno = e.payload, e.shoe_id, e.round_no
        if (sid, rno) not in self.rounds:
            return
        r = self.rounds[(sid, rno)]
        r["kind"] = p.get("kind", r["kind"])
        r["decided"] = getattr(e, "ts", None)
        if r["kind"] != "void":
            r["player"], r["banker"], r["outcome"] = hand_field(p, "player"), hand_field(p, "banker"), outcome_field(p)
            r["cards"] = placed_cards(dealt_field(p), r["cards"])
            for extra in ("natural", "dragon7", "panda8", "player_pair", "banker_pair"):
                if extra in p:
                    r[extra] = p[extra]
        else:
            r["reason"] = p.get("reason")
        doc["rounds"] += 1
        if r["kind"] == "void":
            yield from self._decided(sid, rno)

    def _discard_rack(self, e: Any, doc: Doc) -> Iterator[Doc]:
        """The round's cards go to the rack: it is decided (it must have its result)."""
        sid, rno = e.shoe_id, e.round_no
        if (sid, rno) not in self.rounds or self.held.get(sid) == (sid, rno):
            return
        r = self.rounds[(sid, rno)]
        if r["kind"] != "void" and r["outcome"] is None:
            raise JournalContentError(f"entry {e.seq} ({e.kind}): round {rno} of shoe {sid} went to the "
                                      "discard rack without its round_result")
        yield from self._decided(sid, rno)


def _take_off(wagers: list[Doc], returned: Any) -> Doc | None:
    """The wager ``returned`` (a ``wager_returned`` payload, or a wager a round took) is no longer on
    the layout ``wagers``; the one taken off, or None."""
    for i, w in enumerate(wagers):
        if (w.get("seat"), w.get("kind"), w.get("amount")) == (returned["seat"], returned["kind"], returned["amount"]):
            return wagers.pop(i)
    return None


def _placed_by(wager: Doc | None) -> str | None:
    return None if wager is None else wager.get("placed_by")
