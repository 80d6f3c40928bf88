"""What a journal's rounds yielded (``shoectl audit results``): the figures a gaming lab certifies
a game by, from the rounds the table dealt rather than from a simulation.

``collect_results(entries)`` reads the ``submission``, ``round_result``, ``settlement`` and
``wager_returned`` records, in journal order, and returns one ``RulesResults`` per Rules
Submission the rounds were dealt under (a floorperson's ``set_submission`` starts another), each:

- ``tally``: the normal rounds as ``controller.simulation`` tallies a simulation's (each shoe a
  batch of its own, so the 95 % intervals are over whole shoes: a shoe's rounds are not
  independent), from each ``round_result``'s facts (outcome, pairs, Dragon 7 / Panda 8, 21
  Baccarat's bonus ranks); ``bonus_tally`` the same over the rounds a 21 Baccarat table dealt its
  Bonus cards in (``bonus_in_play``: the Bonus Wagers' figures are over those alone);
- ``simulated`` and ``void``: the rounds of those kinds (not in the tally: no wager was decided
  by a simulated round, and a void one decided none);
- ``money``: by wager kind, the wagers the table settled (``count``, ``staked``, ``players_net``,
  ``commission``, ``won``/``lost``/``pushed``) and those it returned without a decision
  (``returned``, ``returned_amount``: ``wager_returned`` records, and the pushes a void or
  simulated round settles its wagers with, which no round decided; a House Money Wager decided
  before a void stands as settled), in minor units. ``staked`` is what the players wagered (the
  ``wager`` records): a House Money payout the dealer placed on a wager (``house_money_added``) is
  winnings moved on the layout, counted apart (``house_money_riding``) and left out of
  ``returned_amount``; the hold is ``-players_net / (staked + house_money_riding)``, per unit at
  risk (a money review: the payouts were counted as staked, and the totals did not reconcile with
  the wagers).

A record whose payload lacks what this needs raises ``JournalContentError`` naming the entry
(``malformed_entry``), as every reader of a journal does.
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from controller.journal.errors import malformed_entry
from controller.journal import kinds
from controller.rules.engine import RoundFacts
from controller.rules.model import BonusRank, Outcome
from controller.rules.submission import submission_from_document
from controller.simulation import batch_size
from controller.simulation_shoe import Tally

RESULTS_KINDS = (kinds.SUBMISSION, kinds.ROUND_RESULT, kinds.SETTLEMENT, kinds.WAGER_RETURNED, kinds.HOUSE_MONEY_ADDED)
_RESULTS = ("win", "lose", "push")


@dataclass(frozen=True)
class Settled:
    """A ``settlement`` record's money, read (and checked) where it lies in the journal."""

    kind: str
    amount: int
    net: int
    commission: int
    result: str | None
    riding: int = 0  # of ``amount``: a House Money payout the dealer placed on the wager, not staked

    @classmethod
    def of(cls, p: dict[str, Any], riding: int = 0) -> Settled:
        return cls(str(p["kind"]), int(p["amount"]), int(p["net"]), int(p.get("commission") or 0), p.get("result"),
                   riding)


@dataclass
class WagerMoney:
    """One wager kind's money, in minor units."""

    count: int = 0
    staked: int = 0
    house_money_riding: int = 0  # House Money payouts placed on these wagers and decided with them
    players_net: int = 0
    commission: int = 0
    results: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_RESULTS, 0))
    returned: int = 0
    returned_amount: int = 0

    def settle(self, s: Settled) -> None:
        """A wager a round decided (or pushed)."""
        self.count += 1
        self.staked += s.amount - s.riding
        self.house_money_riding += s.riding
        self.players_net += s.net
        self.commission += s.commission
        if s.result in self.results:
            self.results[s.result] += 1

    def give_back(self, amount: int) -> None:
        """A wager returned without a decision."""
        self.returned += 1
        self.returned_amount += amount

    def add(self, other: WagerMoney) -> None:
        """``other``'s wagers counted in these too (a total)."""
        for f in fields(self):
            if f.name != "results":
                setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        for result, n in other.results.items():
            self.results[result] += n

    def to_json(self) -> dict[str, Any]:
        at_risk = self.staked + self.house_money_riding
        hold = None if not at_risk else -self.players_net / at_risk
        return {"settled": self.count, "staked": self.staked, "house_money_riding": self.house_money_riding,
                "players_net": self.players_net, "hold": hold,
                "commission": self.commission, "won": self.results["win"], "lost": self.results["lose"],
                "pushed": self.results["push"], "returned": self.returned, "returned_amount": self.returned_amount}


@dataclass
class RulesResults:
    """The rounds dealt under one Rules Submission (see the module docstring)."""

    document: dict[str, Any]  # the submission record's payload
    submission: Any  # the document read (controller.rules.submission), once
    # each round's settlements until its round_result says whether a round decided them
    pending: dict[tuple[str | None, int | None], list[Settled]] = field(default_factory=dict)
    # House Money payouts placed on a wager: (shoe, round, seat, kind) -> amount, until its settlement
    riding: dict[tuple[str | None, int | None, int, str], int] = field(default_factory=dict)
    shoes: dict[str, Tally] = field(default_factory=dict)  # each shoe's normal rounds, in order
    bonus_shoes: dict[str, Tally] = field(default_factory=dict)
    simulated: int = 0
    void: int = 0
    money: dict[str, WagerMoney] = field(default_factory=dict)
    # The rules given (``collect_results``'s ``given``): whether they counted rounds the journal
    # named no rules for, before its first submission record (the journal's end when none).
    before_journaled: bool = False

    def money_of(self, kind: str) -> WagerMoney:
        return self.money.setdefault(kind, WagerMoney())

    @property
    def tally(self) -> Tally:
        return _batched(self.shoes)

    @property
    def bonus_tally(self) -> Tally:
        return _batched(self.bonus_shoes)


def _batched(shoes: dict[str, Tally]) -> Tally:
    """The shoes' tallies merged in batches of whole shoes, as a simulation's (``batch_size``)."""
    total = Tally()
    size = batch_size(len(shoes))
    for i, one in enumerate(shoes.values()):
        total.merge(one, new_batch=i % size == 0)
    return total


def facts_of(p: dict[str, Any]) -> RoundFacts:
    """A ``round_result`` payload's facts: what settlement knows of a round."""
    return RoundFacts(Outcome(p["outcome"]), bool(p.get("player_pair", False)), bool(p.get("banker_pair", False)),
                      bool(p.get("dragon7", False)), bool(p.get("panda8", False)),
                      BonusRank(p["player"].get("bonus_rank", "none")), BonusRank(p["banker"].get("bonus_rank", "none")))


def collect_results(entries: Any, given: RulesResults | None = None) -> list[RulesResults]:
    """See the module docstring. Rounds before any ``submission`` record (a journal written before
    tables journaled their rules) are counted under ``given`` (the rules named for them: ``audit
    results --submission``; returned first when it counted any), else not: nothing says what their
    wagers paid."""
    groups: list[RulesResults] = [] if given is None else [given]
    current, named = given, False  # named: the journal named its rules so far (a submission record)
    for e in entries:
        if not named and e.kind == kinds.SUBMISSION:
            named = True
            if given is not None:
                given.before_journaled = _counted(given)
        try:
            current = _collect_one(e, current, groups)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise malformed_entry(e, exc) from None
    if given is not None and not named:
        given.before_journaled = _counted(given)
    for g in groups:  # a round the journal ends in: what it settled (House Money) stands
        for settled in g.pending.values():
            for one in settled:
                g.money_of(one.kind).settle(one)
        g.pending.clear()
    return [g for g in groups if _counted(g)]


def _counted(g: RulesResults) -> bool:
    return bool(g.shoes or g.simulated or g.void or g.money)


def _collect_one(e: Any, current: RulesResults | None, groups: list[RulesResults]) -> RulesResults | None:
    kind, p = e.kind, e.payload
    if kind == kinds.SUBMISSION:
        if current is None or current.document != p:  # the rules given, journaled alike: one Rules Submission
            current = next((g for g in groups if g.document == p), None)
            if current is None:  # a record that is no Rules Submission is refused here, by entry
                current = RulesResults(dict(p), submission_from_document(p))
                groups.append(current)
        return current
    if current is None:
        return None
    if kind == kinds.ROUND_RESULT:
        round_kind = p.get("kind", "normal")
        for settled in current.pending.pop((e.shoe_id, e.round_no), []):
            if round_kind != "normal" and settled.result == "push":  # no round decided it
                current.money_of(settled.kind).give_back(settled.amount - settled.riding)
            else:
                current.money_of(settled.kind).settle(settled)
        if round_kind == "simulated":
            current.simulated += 1
        elif round_kind == "void":
            current.void += 1
        else:
            facts, cards = facts_of(p), int(p.get("cards_used") or 0)
            _add(current.shoes, e.shoe_id, facts, cards)
            if p.get("bonus_in_play"):
                _add(current.bonus_shoes, e.shoe_id, facts, cards)
    elif kind == kinds.SETTLEMENT:
        # The first of the seat's wagers of the kind carries the payout placed on it (add_house_money).
        riding = current.riding.pop((e.shoe_id, e.round_no, int(p.get("seat", 0)), str(p["kind"])), 0)
        current.pending.setdefault((e.shoe_id, e.round_no), []).append(Settled.of(p, riding))
    elif kind == kinds.HOUSE_MONEY_ADDED:
        key = (e.shoe_id, e.round_no, int(p["seat"]), str(p["side"]))
        current.riding[key] = current.riding.get(key, 0) + int(p["amount"])
    elif kind == kinds.WAGER_RETURNED:
        riding = current.riding.pop((e.shoe_id, e.round_no, int(p.get("seat", 0)), str(p["kind"])), 0)
        current.money_of(str(p["kind"])).give_back(int(p["amount"]) - riding)
    return current


def _add(shoes: dict[str, Tally], shoe_id: str | None, rnd: RoundFacts, cards: int) -> None:
    """One normal round of ``shoe_id`` into its shoe's tally."""
    shoe = shoes.setdefault(shoe_id or "", Tally(shoes=1))
    shoe.rounds += 1
    shoe.cards_dealt += cards
    shoe.facts[rnd] += 1
