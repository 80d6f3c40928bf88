"""Reconstruct shoes and rounds from a journal (681a.7(l): any hand can be reconstructed).

``replay(entries, shoe=None, round=None, hold=None) -> Iterator[dict]`` yields, in journal order (a replay
of one shoe needs only what ``entries_needed(shoe)`` keeps):
- ``{"type": "shoe", "shoe", "started", "decks", "cut": {"position", "by"}, "cover_from_bottom",
  "cuts_before": [{"position", "by", "cover_from_bottom"}, ...] (the cuts a recut undid, in order), "burned": [...], "loaded", "rounds", "cover_card_position", "reconciliation"}`` when a shoe ends
  (or at the end of the journal for the shoe in play);
- ``{"type": "round", "shoe", "round", "kind": "normal"|"simulated"|"void", "cards": [{"card",
  "to", "position", "seq", "ts", "device_event"}, ...] (in the order they left the shoe; from the
  ``card`` record that placed it, null for one no such record placed: ``position``, its place in
  the stack, ``seq`` and ``ts``, that record's; ``device_event``: ``{"serial", "epoch",
  "counter"}`` of the device's CARD_READ of that place of the shoe, when the entries read hold
  the inputs; null for a card entered by hand, whose read was unreadable), "player": {"cards", "total"}, "banker": {...},
  "outcome", "wagers": [...], "settlements": [...], "started", "decided"}`` for each completed round
  (``started``: the journal time of its ``round_start``, ``decided``: of its ``round_result``; a
  shoe's ``started``: of its ``shoe_start``; UTC, as the entries hold it);
- each wager (a round's, the layout's) holds ``placed_by``: the operator whose command placed it,
  when the entries read hold the inputs (else null);
- with ``open_rounds`` (a reading of a journal as written, ``journal replay``; not a live one), a
  round begun and never decided (a fault holds the table, the table was killed mid-round), when
  its shoe or the entries end: the same, with ``"unfinished": True`` and no hands or outcome; and
  each shoe holds ``"layout"``: the wagers placed and in no round, never returned.
Each also holds ``"events"``: what surveillance asks after beside the cards, in journal order,
``{"seq", "kind", "operator", "payload"}`` each (``operator``: whose command it followed, when
the entries read hold the inputs, else the entry's own; null for what no one gave): the
procedures (a declined cut, an inspection, a reshuffle ordered, a shoe restarted, a count
fault), the irregularities (a card entered by hand, a card discarded and why, a wager returned),
faults and their clearing, dealer sign-ins, device replacements, the controller's restarts, a
hand's squeeze and its reveal, a House Money addition, every input refused (a command, a login,
a malformed request: each changed nothing), and every operator command but the routine ones of
a round (``ROUTINE_COMMANDS``, whose effects the round's own records and the events above show). A round's go with
the round (those journaled while it was dealt, and, when rounds are held (``hold``: by default
in a reading of one ``round``), an irregularity of it journaled after, as a card dealt to the
Player when no third card was due, 627a.13(b)-(c)), and the irregularity or deferral journaled
between rounds that set aside the card a round's ``held_card_used`` takes (627a.13(a)-(d)) goes
with that round, with every decision on that card after it (a floorperson's ``card_disclosed``
decides it again); the others with the shoe. A reading of one
``shoe`` or ``round`` shows the clock steps journaled where it shows nothing else (another shoe or
round), and every reading the steps journaled between rounds (shown among the shoe's events, which
come after its rounds), on the next document it yields that began after them, as
``"clock_steps_before"`` (events as above; the key only when there are some): the times of that
document and after are the stepped clock's.
Only the core's records are read; inputs are not needed. A record whose payload lacks what its
kind needs, or holds it as another type (a card that is not text, a total or a net that is not a
whole number), and a round whose cards go to the rack without its result, raise
``JournalContentError`` naming the entry: a journal whose chain verifies may still have been
written by a forger who recomputed it.
"""
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


# The records a replay lists as events (see the module docstring), and the operator commands it
# leaves out as routine (the round's own records show them: its wagers, its cards, its squeeze,
# reveals and House Money additions).
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


def _event(e: Any, actor: str | None) -> dict[str, Any] | None:
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


# What a reading of one shoe needs besides that shoe's own records and those of no shoe: who gave
# each command (the inputs of every shoe), where each shoe begins (the chosen one ends there), and
# the Rules Submission in force (``edge_figures.after_round``), and the clock's steps (the times
# shown after one are the stepped clock's: ``clock_steps_before``).
READ_FROM_EVERY_SHOE = frozenset({*kinds.INPUT_KINDS, kinds.SHOE_START, kinds.SUBMISSION, kinds.CLOCK_STEP})


def entries_needed(shoe: str | None) -> Callable[[str, str | None], bool] | None:
    """For a reading of ``shoe`` alone (its replay, its roads, its cards left after a round): a
    test on an entry's kind and shoe id that is false for what such a reading would read and not
    use (the other shoes' records), so that a reader need not decode them
    (``CheckedRead.entries(keep=...)``); None for a reading of every shoe. The replay of the
    entries it keeps is the replay of them all, and ``after_round`` of that shoe on them is
    ``after_round`` on them all."""
    if shoe is None:
        return None

    def needed(kind: str, shoe_id: str | None) -> bool:
        return shoe_id == shoe or shoe_id is None or kind in READ_FROM_EVERY_SHOE

    return needed


def replay(entries: Iterable[Any], *, shoe: str | None = None, round: int | None = None,
           hold: bool | None = None, open_rounds: bool = False) -> Iterator[dict[str, Any]]:
    shoes: dict[str, dict[str, Any]] = {}
    layout: dict[str, list[dict[str, Any]]] = {}  # by shoe: wagers placed since its last round began
    rounds: dict[tuple[str, int], dict[str, Any]] = {}
    current: str | None = None
    ending: str | None = None  # the shoe before the current one, shown once the current one is loaded
    ended: set[str] = set()  # shoes done: a record of one after it (a card drawn from it once ended) is late

    def want(sid: str | None, rno: int | None = None) -> bool:
        return (shoe is None or sid == shoe) and (round is None or rno == round)

    # Clock steps journaled where this reading shows nothing (another shoe, another round): the
    # times of what it shows after them are the stepped clock's, so the first document shown that
    # began after a step carries it (a review of clocks: one shoe's replay showed its times an hour
    # off without a word). ``began``: the seq of the entry each shoe (by its id) and round (by its
    # key in ``rounds``) in hand began at, let go with it.
    hidden_steps: list[dict[str, Any]] = []
    began: dict[Any, int] = {}
    seq_now = 0

    def shown(doc: dict[str, Any], start: int) -> dict[str, Any]:
        before = [step for step in hidden_steps if step["seq"] < start]  # a held round decided before a step: not it
        if not before:
            return doc
        hidden_steps[:] = [step for step in hidden_steps if step["seq"] >= start]
        return {**doc, "clock_steps_before": before}

    def shoe_doc(sid: str) -> dict[str, Any]:
        if sid not in shoes:
            shoes[sid] = {"type": "shoe", "shoe": sid, "started": None, "decks": None, "cut": None,
                          "cover_from_bottom": None, "cuts_before": [], "burned": [], "loaded": None, "rounds": 0,
                          "cover_card_position": None, "reconciliation": None, "events": []}
            began[sid] = seq_now
        return shoes[sid]

    def shoe_done(sid: str) -> Iterator[dict[str, Any]]:
        """The shoe ``sid`` ends, or the entries do: its rounds still held, then (``open_rounds``)
        those begun and never decided, then the shoe."""
        yield from release(sid)
        if open_rounds:
            for key in [k for k in rounds if k[0] == sid]:
                r, start = rounds.pop(key), began.pop(key, seq_now)
                if want(*key):
                    yield {**shown(r, start), "unfinished": True}
        ended.add(sid)
        doc, on_layout, start = shoes.pop(sid, None), layout.pop(sid, []), began.pop(sid, seq_now)
        if doc is not None and want(sid) and round is None:
            if open_rounds:
                doc["layout"] = on_layout
            yield shown(doc, start)

    # Held (a reading of a journal written, and of one round by default), a round decided waits
    # until the next one of its shoe starts (or the shoe ends): an irregularity of it that comes
    # after its cards went to the rack (627a.13(b)-(c), journaled with its round) goes with it. A
    # live reading (the scoreboard's) has each round at once; such an irregularity is then among
    # the shoe's events.
    hold = round is not None if hold is None else hold
    held: dict[str, tuple[str, int]] = {}

    def release(sid: str | None) -> Iterator[dict[str, Any]]:
        key = held.pop(sid, None) if sid is not None else None
        if key is not None:
            r, start = rounds.pop(key), began.pop(key, seq_now)
            if want(*key):
                yield shown(r, start)

    def decided(sid: str, rno: int) -> Iterator[dict[str, Any]]:
        """Round ``rno`` of ``sid`` is decided: held, or yielded at once (a live reading)."""
        yield from release(sid)
        held[sid] = (sid, rno)
        if not hold:
            yield from release(sid)

    actor: str | None = None
    # by (shoe, stack position): the device event each card of a shoe in play was read as (a card
    # held or deferred is placed later than its read, after other reads: matched by its place)
    reads: dict[tuple[str | None, int], dict[str, Any]] = {}
    unplaced: list[dict[str, Any]] = []  # clock steps before the first shoe
    set_aside = SetAsideCards()  # the events that set a card aside between rounds, until its round
    for e in entries:
        seq_now = e.seq
        try:
            k, p, sid, rno = e.kind, e.payload, e.shoe_id, e.round_no
            if k in kinds.INPUT_KINDS:
                actor = e.operator if k == kinds.INPUT_OPERATOR else None
                if k == kinds.INPUT_DEVICE and (read := current_payload(e)).get("event") == "CARD_READ":
                    fields = read.get("fields") or {}  # (a version-1 journal's as version 2 names them)
                    position = fields.get("position")
                    if type(position) is int and fields.get("rank") != UNREADABLE_RANK:  # an entered card's read: not it
                        reads[(sid, position)] = {"serial": e.device_serial, "epoch": e.device_epoch,
                                                  "counter": e.device_counter}
                continue
            if k == kinds.CONTROLLER_STARTED:
                actor = None  # a new process: what follows is not the last command's doing (a review saw a restart "by" the dealer)
            if k == kinds.SHOE_START:
                if ending is not None:
                    yield from shoe_done(ending)
                # The shoe before is shown once the next stack is loaded: until then a card drawn
                # from it (the ended shoe's, discarded with its cards) is its own, with --shoe too
                # (a review: it was shown nowhere, then only without --shoe).
                ending = current
                reads.clear()  # the reads of the shoe before: none of its cards is placed after this
                current = p["shoe"]
                shoe_doc(current)["decks"] = p.get("decks")
                if want(current) and round is None:
                    shoes[current]["events"][:0] = unplaced  # what happened before it, first
                else:
                    hidden_steps.extend(unplaced)
                unplaced = []
                shoes[current]["started"] = getattr(e, "ts", None)
                continue
            if sid is None:
                if k == kinds.CLOCK_STEP:  # before the first shoe (a computer set by NTP as it started)
                    unplaced.append(_event(e, None))
                continue
            if sid in ended and sid != current:
                # A record of a shoe shown already (a card drawn from it after it ended, discarded
                # with its cards): among the events of the shoe in play, where it happened. It
                # was shown nowhere (a surveillance review).
                event = _event(e, actor)
                if event is not None and current is not None and want(current):
                    shoe_doc(current)["events"].append(event)
                    if round is not None and k == kinds.CLOCK_STEP:
                        hidden_steps.append(event)
                elif event is not None and k == kinds.CLOCK_STEP:
                    hidden_steps.append(event)
                continue
            if k in (kinds.CARD, kinds.BURN, kinds.DISCARD) and p.get("position") is not None:
                set_aside.left_shoe(sid, rno, p["position"])
            doc = shoe_doc(sid)
            event = _event(e, actor)
            if event is not None:
                in_round = (sid, rno) in rounds
                target = rounds[(sid, rno)] if in_round else doc
                target["events"].append(event)
                if in_round and k == kinds.HELD_CARD_USED:
                    set_aside.held(sid, rno, p.get("card"), event, doc, target)
                if not in_round and k in (kinds.IRREGULARITY, kinds.CARD_DEFERRED) and p.get("card"):
                    set_aside.waits(sid, p["card"], event)
                # A step between rounds is shown among its shoe's events, which come after the
                # rounds: the next round shown carries it too, before its stepped times.
                if k == kinds.CLOCK_STEP and (not in_round or not want(sid, rno)):
                    hidden_steps.append(event)
            if k == kinds.CUT:
                if doc["cut"] is not None:  # a recut (681a.5(e)): the cut it undid stays on record
                    doc["cuts_before"].append({**doc["cut"], "cover_from_bottom": doc["cover_from_bottom"]})
                    doc["cover_from_bottom"] = None
                doc["cut"] = {"position": p["position"], "by": p["by"]}
            elif k == kinds.COVER:
                doc["cover_from_bottom"] = p["from_bottom"]
            elif k == kinds.BURN:
                doc["burned"].append(text_field(p, "card"))
            elif k == kinds.SHOE_LOADED:
                doc["loaded"] = p["cards"]
                if ending is not None and ending != sid:
                    yield from shoe_done(ending)
                    ending = None
            elif k == kinds.COVER_CARD:
                doc["cover_card_position"] = p.get("position")
            elif k == kinds.RECONCILIATION:
                doc["reconciliation"] = p
            elif k == kinds.WAGER:
                layout.setdefault(sid, []).append({**wager_field(p), "placed_by": actor})
            elif k == kinds.WAGER_RETURNED:
                _take_off(layout.get(sid, []), wager_field(p))
            elif k == kinds.ROUND_START:
                yield from release(sid)
                # those the round takes, each with who placed it; a simulated round's stay on the layout
                wagers = [{**w, "placed_by": _placed_by(_take_off(layout.get(sid, []), w))}
                          for w in map(wager_field, p["wagers"])]
                rounds[(sid, p["round"])] = {"type": "round", "shoe": sid, "round": p["round"], "kind": p["kind"],
                                             "cards": [], "player": None, "banker": None, "outcome": None,
                                             "wagers": wagers, "settlements": [], "events": [],
                                             "started": getattr(e, "ts", None), "decided": None}
                began[(sid, p["round"])] = e.seq
            elif k == kinds.ROUND_KIND and (sid, rno) in rounds:
                rounds[(sid, rno)]["kind"] = p["kind"]
                # its wagers put back on the layout for the next round (simulated_round_wagers = stay)
                taken = list(rounds[(sid, rno)]["wagers"])
                layout.setdefault(sid, []).extend({**wager_field(w), "placed_by": _placed_by(_take_off(taken, w))}
                                                  for w in p.get("wagers_kept") or ())
            elif k == kinds.CARD and (sid, rno) in rounds:
                position = p.get("position")
                if position is not None:
                    whole_field(p, "position")
                rounds[(sid, rno)]["cards"].append({"card": text_field(p, "card"), "to": text_field(p, "to"),
                                                    "position": position, "seq": getattr(e, "seq", None),
                                                    "ts": getattr(e, "ts", None),
                                                    "device_event": reads.pop((sid, position), None)})
            elif k == kinds.SETTLEMENT and (sid, rno) in rounds:
                whole_field(p, "net")
                wager_field(p)
                for optional in ("win", "commission"):
                    if p.get(optional) is not None:
                        whole_field(p, optional)
                rounds[(sid, rno)]["settlements"].append(p)
            elif k == kinds.HOUSE_MONEY_ADDED and (sid, rno) in rounds:
                rounds[(sid, rno)].setdefault("house_money_added", []).append(p)
            elif k == kinds.ROUND_RESULT and (sid, rno) in rounds:
                r = rounds[(sid, rno)]
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
            elif k == kinds.DISCARD_RACK and (sid, rno) in rounds and held.get(sid) != (sid, rno):
                r = rounds[(sid, rno)]
                if r["kind"] != "void" and r["outcome"] is None:
                    raise JournalContentError(f"entry {e.seq} ({k}): round {rno} of shoe {sid} went to the "
                                              "discard rack without its round_result")
                yield from decided(sid, rno)
                continue
            if k == kinds.ROUND_RESULT and (sid, rno) in rounds and rounds[(sid, rno)]["kind"] == "void":
                yield from decided(sid, rno)
        except JournalContentError:
            raise
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise malformed_entry(e, exc) from None
    if ending is not None:
        yield from shoe_done(ending)
    for sid in list(held):
        yield from release(sid)
    if current is not None:
        yield from shoe_done(current)


def _take_off(wagers: list[dict[str, Any]], returned: Any) -> dict[str, Any] | None:
    """The wager ``returned`` (a ``wager_returned`` payload, or a wager a round took) is no longer on
    the layout ``wagers``; the one taken off, or None."""
    for i, w in enumerate(wagers):
        if (w.get("seat"), w.get("kind"), w.get("amount")) == (returned["seat"], returned["kind"], returned["amount"]):
            return wagers.pop(i)
    return None


def _placed_by(wager: dict[str, Any] | None) -> str | None:
    return None if wager is None else wager.get("placed_by")
