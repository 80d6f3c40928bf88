"""Reconstruct shoes and rounds from a journal (681a.7(l): any hand can be reconstructed).

``replay(entries, shoe=None, round=None) -> Iterator[dict]`` yields, in journal order:
- ``{"type": "shoe", "shoe", "decks", "cut": {"position", "by"}, "cover_from_bottom",
  "burned": [...], "loaded", "rounds", "cover_card_position", "reconciliation"}`` when a shoe ends
  (or at the end of the journal for the shoe in play);
- ``{"type": "round", "shoe", "round", "kind": "normal"|"simulated"|"void", "cards": [{"card",
  "to"}, ...] (in the order they left the shoe), "player": {"cards", "total"}, "banker": {...},
  "outcome", "wagers": [...], "settlements": [...]}`` for each completed round.
Only the core's records are read; inputs are not needed. A record whose payload lacks what its
kind needs, or holds it as another type (a card that is not text, a total or a net that is not a
whole number), and a round whose cards go to the rack without its result, raise
``JournalContentError`` naming the entry: a journal whose chain verifies may still have been
written by a forger who recomputed it.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from controller.journal import kinds
from controller.journal.errors import JournalContentError, malformed_entry


OUTCOMES = ("player", "banker", "tie")  # a round_result's outcome (docs/journal.md)


def _text(p: Any, key: str) -> str:
    value = p[key]
    if not isinstance(value, str):
        raise TypeError(key)
    return value


def _whole(p: Any, key: str) -> int:
    value = p[key]
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(key)
    return value


def _hand(p: Any, key: str) -> dict[str, Any]:
    hand = p[key]
    _whole(hand, "total")
    if not all(isinstance(c, str) for c in hand["cards"]):
        raise TypeError(key)
    return hand


def _outcome(p: Any) -> str:
    outcome = _text(p, "outcome")
    if outcome not in OUTCOMES:
        raise TypeError("outcome")
    return outcome


def _dealt(p: Any) -> list[dict[str, str]]:
    return [{"card": _text(d, "card"), "to": _text(d, "to")} for d in p["dealt"]]


def replay(entries: Iterable[Any], *, shoe: str | None = None, round: int | None = None) -> Iterator[dict[str, Any]]:
    shoes: dict[str, dict[str, Any]] = {}
    rounds: dict[tuple[str, int], dict[str, Any]] = {}
    current: str | None = None

    def want(sid: str | None, rno: int | None = None) -> bool:
        return (shoe is None or sid == shoe) and (round is None or rno == round)

    def shoe_doc(sid: str) -> dict[str, Any]:
        return shoes.setdefault(sid, {"type": "shoe", "shoe": sid, "decks": None, "cut": None, "cover_from_bottom": None,
                                      "burned": [], "loaded": None, "rounds": 0, "cover_card_position": None,
                                      "reconciliation": None})

    for e in entries:
        try:
            k, p, sid, rno = e.kind, e.payload, e.shoe_id, e.round_no
            if k == kinds.SHOE_START:
                if current is not None and current in shoes and want(current) and round is None:
                    yield shoes.pop(current)
                current = p["shoe"]
                shoe_doc(current)["decks"] = p.get("decks")
                continue
            if sid is None:
                continue
            doc = shoe_doc(sid)
            if k == kinds.CUT:
                doc["cut"] = {"position": p["position"], "by": p["by"]}
            elif k == kinds.COVER:
                doc["cover_from_bottom"] = p["from_bottom"]
            elif k == kinds.BURN:
                doc["burned"].append(_text(p, "card"))
            elif k == kinds.SHOE_LOADED:
                doc["loaded"] = p["cards"]
            elif k == kinds.COVER_CARD:
                doc["cover_card_position"] = p.get("position")
            elif k == kinds.RECONCILIATION:
                doc["reconciliation"] = p
            elif k == kinds.ROUND_START:
                rounds[(sid, p["round"])] = {"type": "round", "shoe": sid, "round": p["round"], "kind": p["kind"],
                                             "cards": [], "player": None, "banker": None, "outcome": None,
                                             "wagers": list(p["wagers"]), "settlements": []}
            elif k == kinds.ROUND_KIND and (sid, rno) in rounds:
                rounds[(sid, rno)]["kind"] = p["kind"]
            elif k == kinds.CARD and (sid, rno) in rounds:
                rounds[(sid, rno)]["cards"].append({"card": _text(p, "card"), "to": _text(p, "to")})
            elif k == kinds.SETTLEMENT and (sid, rno) in rounds:
                _whole(p, "net")
                rounds[(sid, rno)]["settlements"].append(p)
            elif k == kinds.HOUSE_MONEY_ADDED and (sid, rno) in rounds:
                rounds[(sid, rno)].setdefault("house_money_added", []).append(p)
            elif k == kinds.ROUND_RESULT and (sid, rno) in rounds:
                r = rounds[(sid, rno)]
                r["kind"] = p.get("kind", r["kind"])
                if r["kind"] != "void":
                    r["player"], r["banker"], r["outcome"] = _hand(p, "player"), _hand(p, "banker"), _outcome(p)
                    r["cards"] = _dealt(p)
                    for extra in ("natural", "dragon7", "panda8", "player_pair", "banker_pair"):
                        if extra in p:
                            r[extra] = p[extra]
                else:
                    r["reason"] = p.get("reason")
                doc["rounds"] += 1
            elif k == kinds.DISCARD_RACK and (sid, rno) in rounds:
                r = rounds.pop((sid, rno))
                if r["kind"] != "void" and r["outcome"] is None:
                    raise JournalContentError(f"entry {e.seq} ({k}): round {rno} of shoe {sid} went to the "
                                              "discard rack without its round_result")
                if want(sid, rno):
                    yield r
                continue
            if k == kinds.ROUND_RESULT and (sid, rno) in rounds and rounds[(sid, rno)]["kind"] == "void":
                r = rounds.pop((sid, rno))
                if want(sid, rno):
                    yield r
        except JournalContentError:
            raise
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise malformed_entry(e, exc) from None
    if current is not None and current in shoes and want(current) and round is None:
        yield shoes.pop(current)
