"""What the scoreboard shows of one table, kept up to date one journal entry at a time.

``TableView(table_id=None)``; ``view.apply(entry)`` for each journal entry in ``seq`` order (an
``Entry`` of ``controller.journal``); ``TableView.from_entries(entries)`` does both.
``view.to_json(lang="en"|"zh") -> dict`` is THE object ``/tables/<id>/state.json`` returns and the
page renders (``ValueError`` for another language):

- ``table``: the table id (the entries' ``table_id``, or the one given).
- ``version``: the ``seq`` of the last entry applied (0 before any): states with the same version
  are the same.
- ``state``: ``{"name", "text", "reason", "faults"}``: the table's state by name (``STATES``), in
  words (``text``), why the table is held (a fault's or a count fault's reason, else null), and
  the faults holding it (``[{"fault", "reason"}]``), from the journal's records (``STATE_AFTER``).
- ``game``: the game (``punto-banco``, ``ez-baccarat``, ``21-baccarat``, ...) from the Rules
  Submission or the rounds' results, null until either is journaled.
- ``shoe``: the shoe's id (null before the first), ``round``: the number of the round in play or
  the last one of this shoe (0 before the first).
- ``roads``: the roads of the shoe exactly as ``shoectl roadmap --json`` gives them
  (``controller.roadmaps.compute(...).to_json()``: ``bead_plate``, ``big_road``, ``big_eye_boy``,
  ``small_road``, ``cockroach_pig``; ties, pairs and the unfolded columns as documented in
  docs/roadmaps.md).
- ``placed``: where the page draws each road's cells: ``{"big_road", "big_eye_boy",
  "small_road", "cockroach_pig"}``, each ``[[x, y], ...]`` for the road's cells in logical order
  (column by column, top to bottom) as ``controller.roadmaps.fold`` places them (six rows, dragon
  tails turning right), the placement of ``shoectl roadmap``'s text and pictures (``placed``).
- ``ask``: ``{"banker": {"big_eye_boy", "small_road", "cockroach_pig"}, "player": {...}}``, each
  ``"red"``, ``"blue"`` or null (``controller.roadmaps.ask``).
- ``last_round``: the last completed round of the shoe (any kind: normal, simulated, void) as
  ``shoectl journal replay --json`` gives it, without the money (``wagers``, ``settlements``,
  ``house_money_added``) and without ``type``: ``shoe``, ``round``, ``kind``, ``cards`` (``[{"card",
  "to", "position"}]`` in the order they left the shoe; not their entries, times and device events), ``player``/``banker`` (``cards``, ``total``; at 21
  Baccarat also ``bonus_cards``, ``bonus_rank``), ``outcome``, and those of ``natural``,
  ``player_pair``, ``banker_pair``, ``dragon7``, ``panda8`` the game records (a void round:
  ``reason``); null before the first round of the shoe.
- ``last_round_facts``: what to say about the last round, in order: ``[{"key", "text"}]`` with
  ``key`` among ``natural``, ``player_pair``, ``banker_pair``, ``dragon7``, ``panda8``,
  ``bonus_card`` (21 Baccarat: a card dealt to a hand's Bonus only; ``card`` is added) and
  ``player_bonus``/``banker_bonus`` (a winning bonus rank; ``rank`` is added), ``text`` its label.
- ``shoe_so_far``: ``{"rounds", "banker", "player", "tie", "percent": {"banker", "player", "tie"},
  "player_pairs", "banker_pairs", "naturals", "dragon7", "panda8", "not_on_roads"}``: counts of
  the shoe's normal rounds (those on the roads); percentages of ``rounds`` with one decimal (0
  when there is none); ``not_on_roads`` the simulated and void rounds.
- ``rules``: the Rules Submission in force, from its ``submission`` record: ``{"name", "game",
  "decks", "offered", "paytable", "bonus_paytable", "commission", "player_commission",
  "house_money"}``: odds (``{"tie": "8:1", ...}``, 21 Baccarat's ``bonus_paytable`` by rank) and
  rates (``commission`` on the Banker wager, ``player_commission`` on the Player wager at 21
  Baccarat) as the record's text, what a game has not null; null while the journal has no such
  record (``shoectl run`` journals one when the table opens and when a floorperson sets the
  submission: a journal of an earlier version may have none).
- ``rules_terms``: the terms a player reads beside the paytable, in ``lang``: ``[{"key", "label",
  "text"}]``, the commissions as exact percentages, EZ Baccarat's push, House Money's odds
  (``controller.scoreboard.terms``); ``[]`` while ``rules`` is null.
- ``limits``: the table limits of the Rules Submission in force (its ``submission`` record's
  ``limits``): ``{KIND: {"min", "max", "text"}, ..., "table_max": {"max", "text"}}``, the wager
  kinds in ``WagerKind`` order, amounts in minor units and ``text`` in major units as people read
  them (``"25.00 – 5,000.00"``; ``controller.money``); ``table_max`` (all of one seat's wagers of a
  round) only when set. Null when the submission sets no limits or none is journaled: the page
  says "Limits: ask the dealer".
- ``journal_problem``: null while the journal is followed; once the follower stopped because the
  journal failed its check (or cannot be read any more), that in words, in ``lang``: ``"the journal
  failed its check at entry 61: hash mismatch: the entry was edited; the state shown is as of entry
  60"`` (``labels.journal_problem_text``). The rest of the object is then the state up to the last
  good entry (``version``), frozen: nothing the journal holds after it is shown. Set by the source
  (``view.journal_problem = JournalProblem(...)``); a view fed entries alone never has one.
- ``labels``: every word the page shows, in ``lang`` (``controller.scoreboard.labels``).

A new shoe resets the roads, the round, the last round and the shoe's counts. Each entry costs
little: a round's entries are kept until it completes, then replayed by
``controller.journal.replay`` (the same reconstruction as ``journal replay``), and the shoe's
roads recomputed once per completed round.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from controller.journal import kinds
from controller.journal.errors import JournalContentError, malformed_entry
from controller.journal.replay import replay
from controller.money import money_text
from controller.roadmaps import Result, ask_indicators, compute, fold, result_from_round
from controller.rules.model import WagerKind
from controller.scoreboard.labels import STATE_WORDS, journal_problem_text, labels
from controller.scoreboard.terms import terms

STATES: tuple[str, ...] = tuple(STATE_WORDS)

#: The state a record leaves the table in (records not listed leave it as it was). The records
#: that carry the state itself (``operator``, ``refused``, ``resumed``, ``device_replaced``:
#: their ``state``), a new dealer during betting (burning), a burn with more ``due``, House
#: Money's settlements and the faults are handled in ``TableView._follow_state``.
STATE_AFTER: Mapping[str, str] = {
    kinds.SHOE_START: "shuffling",
    kinds.SHOE_RESTARTED: "shuffling",
    kinds.INSPECTION: "inspection",
    kinds.COUNT_FAULT: "count_fault",
    kinds.CUT_OFFER: "cutting",
    kinds.COVER: "ready_to_load",
    kinds.CUT_SKIPPED: "loading",
    kinds.SHOE_LOADED: "burning",
    kinds.BURN: "betting",
    kinds.WAGER: "betting",
    kinds.ROUND_START: "no_more_bets",
    kinds.CARD: "dealing",
    kinds.HELD_CARD_USED: "dealing",
    kinds.SQUEEZE: "squeeze",
    kinds.REVEALED: "dealing",
    kinds.HOUSE_MONEY_ADDED: "house_money",
    kinds.ROUND_RESULT: "betting",
    kinds.DISCARD_RACK: "betting",
}

#: Operator commands whose effect on the state no other record shows.
STATE_AFTER_COMMAND: Mapping[str, str] = {"close": "closed", "load": "loading", "continue": "dealing"}

#: Keys of a replayed round that are not for the board (players' money).
_MONEY_KEYS = ("wagers", "settlements", "house_money_added")
# A public page shows no money, nor who did what, nor when to the microsecond (surveillance's).
_NOT_SHOWN = (*_MONEY_KEYS, "events", "started", "decided")
_CARD_SHOWN = ("card", "to", "position")  # not its entry, time and device event (surveillance's)
_FLAGS = ("natural", "player_pair", "banker_pair", "dragon7", "panda8")


@dataclass(frozen=True)
class JournalProblem:
    """Why a table's journal is not followed past the state shown (``journal_problem``): ``kind``
    ``"failed_check"`` (the chain broke, or an entry no table wrote), ``"unreadable"`` or
    ``"not_shown"`` (an entry this program failed to show: its defect, not the journal's);
    ``entry`` the entry it failed at (None when not known); ``reason`` in the journal's words."""

    kind: str
    entry: int | None
    reason: str


def _percent(n: int, of: int) -> float:
    return round(100 * n / of, 1) if of else 0.0


class TableView:
    """One table's scoreboard state, fed journal entries one at a time (see the module docstring)."""

    def __init__(self, table_id: str | None = None) -> None:
        self.table_id = table_id
        self.version = 0
        self.state = "closed"
        self.faults: dict[str, str] = {}
        self.count_problem: str | None = None
        self.game: str | None = None
        self.rules: dict[str, Any] | None = None
        self.limits: dict[str, Any] | None = None
        self.journal_problem: JournalProblem | None = None
        self._last_round_dealt = False  # the cover card is out or a reshuffle ordered: no round after this one
        self._new_shoe(None)

    def _new_shoe(self, shoe: str | None) -> None:
        self.shoe = shoe
        self.round = 0
        self.last_round: dict[str, Any] | None = None
        self._round_entries: list[Any] = []
        self._results: list[Result] = []
        self._rounds_off_roads = 0
        self._flag_counts = dict.fromkeys(_FLAGS, 0)
        self._roads = compute([])
        self._road_documents: tuple[dict[str, Any], dict[str, Any], dict[str, Any]] | None = None

    @classmethod
    def from_entries(cls, entries: Iterable[Any], table_id: str | None = None) -> TableView:
        view = cls(table_id)
        for e in entries:
            view.apply(e)
        return view

    # -- feeding -------------------------------------------------------------------------------------

    def apply(self, entry: Any) -> None:
        """Take one journal entry (the next in ``seq`` order) into the view. A record whose payload
        lacks what its kind needs (a forger's, or a journal read unchecked) raises
        ``JournalContentError`` naming the entry, as ``journal replay`` does."""
        try:
            k, p = entry.kind, entry.payload
            if k == kinds.SHOE_START:
                self._new_shoe(str(p["shoe"]))
            elif k == kinds.SUBMISSION:
                self.rules = _rules(p)
                self.limits = _limits(p.get("limits"))
                self.game = self.rules["game"] or self.game
            self._follow_round(entry)
            self._follow_state(k, p)
        except JournalContentError:
            raise  # replay's own, naming the entry
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise malformed_entry(entry, exc) from None
        self.version = entry.seq
        if self.table_id is None:
            self.table_id = entry.table_id

    def _follow_round(self, entry: Any) -> None:
        k = entry.kind
        if k == kinds.ROUND_START:
            self._round_entries = [entry]
            self.round = entry.payload["round"]
            return
        if not self._round_entries:
            return
        self._round_entries.append(entry)
        if k == kinds.ROUND_RESULT and "game" in entry.payload:
            self.game = entry.payload["game"]
        void = k == kinds.ROUND_RESULT and entry.payload.get("kind") == "void"
        if k == kinds.DISCARD_RACK or void:
            docs = [d for d in replay(self._round_entries) if d["type"] == "round"]
            self._round_entries = []
            if docs:
                self._round_done(docs[-1])

    def _round_done(self, doc: dict[str, Any]) -> None:
        self.last_round = {key: v for key, v in doc.items() if key != "type" and key not in _NOT_SHOWN}
        self.last_round["cards"] = [{key: c[key] for key in _CARD_SHOWN} for c in doc["cards"]]
        result = result_from_round(doc)
        if result is None:
            self._rounds_off_roads += 1
            return
        self._results.append(result)
        for flag in _FLAGS:
            self._flag_counts[flag] += bool(doc.get(flag))
        self._roads = compute(self._results)
        self._road_documents = None

    def _follow_state(self, k: str, p: Mapping[str, Any]) -> None:
        if k == kinds.FAULT:
            self.faults[p["fault"]] = p["reason"]
        elif k == kinds.FAULT_CLEARED:
            for key in p["faults"]:
                self.faults.pop(key, None)
        elif k in (kinds.OPERATOR, kinds.REFUSED, kinds.RESUMED, kinds.DEVICE_REPLACED):
            self.state = p["state"]
            if k == kinds.OPERATOR:
                self.state = STATE_AFTER_COMMAND.get(p["command"], self.state)
        elif k == kinds.DEALER and self.state == "betting":
            self.state = "burning"  # a new dealer burns a card before the next round (681a.7(c))
        elif k == kinds.BURN and p.get("due"):
            self.state = "burning"  # more burns owed (a Rules Submission's burn_cards above one)
        elif k == kinds.SETTLEMENT and p.get("kind") == "house_money":
            self.state = "house_money"  # settled on the first four cards: the table waits at House Money
        elif k in STATE_AFTER:
            self.state = STATE_AFTER[k]
            if self.state == "betting" and k in (kinds.ROUND_RESULT, kinds.DISCARD_RACK) and self._last_round_dealt:
                # the cover card came out, or a reshuffle was ordered: this shoe deals no more
                # rounds (681a.7(d)); "Place your bets" showed until the next shoe's records came
                # (a review of the scoreboard)
                self.state = "shuffling"
        if k == kinds.COVER_CARD or (k == kinds.OPERATOR and p.get("command") == "order_reshuffle"):
            self._last_round_dealt = True
        elif k in (kinds.SHOE_START, kinds.SHOE_RESTARTED):
            self._last_round_dealt = False
        if k == kinds.COUNT_FAULT:
            self.count_problem = str(p["problem"])
        elif self.state != "count_fault":
            self.count_problem = None

    # -- the object the page renders -----------------------------------------------------------------

    def state_json(self, lang: str) -> dict[str, Any]:
        """``{"name", "text", "reason", "faults"}`` (see the module docstring)."""
        words = labels(lang)
        name = "fault" if self.faults else self.state
        reason = "; ".join(self.faults.values()) if self.faults else self.count_problem
        return {"name": name, "text": words.get(f"state.{name}", name), "reason": reason,
                "faults": [{"fault": key, "reason": why} for key, why in self.faults.items()]}

    def to_json(self, lang: str = "en") -> dict[str, Any]:
        """THE object of ``/tables/<id>/state.json`` (see the module docstring)."""
        words = labels(lang)
        roads, places, ask = self._roads_as_shown()
        return {
            "table": self.table_id,
            "version": self.version,
            "state": self.state_json(lang),
            "game": self.game,
            "shoe": self.shoe,
            "round": self.round,
            "roads": roads,
            "placed": places,
            "ask": ask,
            "last_round": self.last_round,
            "last_round_facts": _facts(self.last_round, words),
            "shoe_so_far": self._shoe_so_far(),
            "rules": self.rules,
            "rules_terms": terms(self.rules, words),
            "limits": self.limits,
            "journal_problem": self._journal_problem(lang),
            "labels": words,
        }

    def _roads_as_shown(self) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        """The roads, their cells' places and the ask indicators as the page takes them: made once
        per result, not for each document (one per language at every update, and a late shoe's
        four folded roads are most of a document's work). Shared by the documents, which are only
        read (serialized)."""
        if self._road_documents is None:
            roads = self._roads.to_json()
            self._road_documents = (roads, placed(roads), ask_indicators(self._roads.big_road).to_json())
        return self._road_documents

    def _journal_problem(self, lang: str) -> str | None:
        problem = self.journal_problem
        if problem is None:
            return None
        return journal_problem_text(lang, problem.kind, problem.entry, problem.reason, self.version)

    def _shoe_so_far(self) -> dict[str, Any]:
        n = len(self._results)
        counts = {name: sum(1 for r in self._results if r.outcome == letter)
                  for name, letter in (("banker", "B"), ("player", "P"), ("tie", "T"))}
        f = self._flag_counts
        return {"rounds": n, **counts, "percent": {name: _percent(c, n) for name, c in counts.items()},
                "player_pairs": f["player_pair"], "banker_pairs": f["banker_pair"], "naturals": f["natural"],
                "dragon7": f["dragon7"], "panda8": f["panda8"], "not_on_roads": self._rounds_off_roads}


#: The roads the page draws on a folding grid (the bead plate fills its grid in order).
FOLDED_ROADS = ("big_road", "big_eye_boy", "small_road", "cockroach_pig")


def placed(roads: Mapping[str, Any]) -> dict[str, list[list[int]]]:
    """Each folded road's cells' places ``[x, y]`` in logical order (see the module docstring),
    from roads as ``shoectl roadmap --json`` gives them."""
    return {name: [[c.x, c.y] for c in fold(roads.get(name) or [])] for name in FOLDED_ROADS}


def _facts(doc: Mapping[str, Any] | None, words: Mapping[str, str]) -> list[dict[str, Any]]:
    """What to say about a round: its flags that are set, a 21 Baccarat bonus-only card, a
    winning bonus rank (see the module docstring)."""
    if doc is None:
        return []
    out: list[dict[str, Any]] = [{"key": f, "text": words[f]} for f in _FLAGS if doc.get(f)]
    for c in doc.get("cards", []):
        if str(c["to"]).endswith("_bonus"):
            out.append({"key": "bonus_card", "text": words["bonus_card"], "card": c["card"], "to": c["to"]})
    for side in ("player", "banker"):
        hand = doc.get(side) or {}
        rank = hand.get("bonus_rank")
        if rank and rank != "none":
            out.append({"key": f"{side}_bonus", "text": words[f"{side}_bonus"], "rank": rank})
    return out


def _limits(limits: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The table limits of a ``submission`` record's ``limits``, for the board (see the module
    docstring); None for none."""
    if not limits:
        return None
    out: dict[str, Any] = {}
    for kind in WagerKind:  # the journal keeps no key order: the wagers in their own order
        if kind.value in limits:
            low, high = int(limits[kind.value]["min"]), int(limits[kind.value]["max"])
            out[kind.value] = {"min": low, "max": high, "text": f"{money_text(low)} \u2013 {money_text(high)}"}
    if limits.get("table_max") is not None:
        out["table_max"] = {"max": int(limits["table_max"]), "text": money_text(limits["table_max"])}
    return out


def _rules(p: Mapping[str, Any]) -> dict[str, Any]:
    """The Rules Submission of a ``submission`` record, for the board."""
    sub, commission = p["submission"], p["commission"]
    return {"name": sub.get("name"), "game": sub.get("game"), "decks": sub.get("decks"),
            "offered": list(p["wagers"].get("offered", [])), "paytable": dict(p["paytable"]),
            "bonus_paytable": p.get("bonus_paytable"), "commission": commission.get("rate"),
            "player_commission": commission.get("player_rate"), "house_money": p.get("house_money")}
