"""The edge monitor's figures (docs/edge-monitor.md): what is left in the shoe after a round, counted
from the table's own records, and every offered wager's exact expected value on it.

- ``ShoeCards`` follows a table's records in order (live ``TableRecord``s or journal entries: each
  has a kind, a payload and a shoe) and knows, for the shoe in play, its decks and every card that
  has left it, keyed by its position in the stack, so a card recorded twice (drawn while a fault
  held the table, dealt when it cleared; set aside by an irregularity, dealt in a later round) is
  one card: dealt to a hand (``card``), burned, discarded, deferred, set aside (``irregularity``).
  ``remaining()`` is the shoe's decks less those cards. The cards below the cover card are never
  seen: they are part of that unknown remainder, as every card not yet out is; so is a card that
  left the shoe unread (a misread discarded, its record's ``card`` null): it is counted out of
  the shoe, as the reconciliation counts it, and its rank stays among the unseen (the figures
  over the unseen cards are those of the cards left: which of them left unread is unknown).
- ``edge_figures(submission, remaining)``: ``controller.rules.odds.exact_odds`` on it (or
  ``wager_figures(report)`` of a report already made), as the
  ``edge`` record's ``wagers``: each wager's expected value per unit for the player, exact
  (``"N/D"``) and as fixed-point decimal text. Run wherever it suits (the monitor runs it in its worker, a
  thread by default).
- ``edge_payload(...)`` the whole ``edge`` record's payload; ``above(wagers, threshold)`` the
  wagers whose player edge exceeds it; ``journaled_edge`` and ``journaled_alert`` check a
  journaled ``edge`` and ``edge_alert`` payload for what their readers take from it
  (``journaled_figures(entry)``: either, naming the entry).
- ``after_round(entries, shoe, round)``: the same, recomputed from a journal, for ``shoectl odds
  --journal`` and the tests: the composition at that round's ``round_result``, exactly as the
  monitor saw it (by default the last round decided: the moment surveillance asks about); of
  one shoe, it needs only what ``controller.journal.replay.entries_needed(shoe)`` keeps.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from fractions import Fraction
from typing import Any

from controller.journal import kinds
from controller.journal.errors import JournalContentError, malformed_entry
from controller.rules.cards import Card, Composition, parse_card
from controller.rules.errors import RulesError
from controller.rules.odds import exact_odds
from controller.rules.odds_sequences import ROUND_CARDS

# The records that say a card left the shoe, with its position in the stack.
CARD_OUT_KINDS = (kinds.CARD, kinds.BURN, kinds.DISCARD, kinds.CARD_DEFERRED, kinds.IRREGULARITY)
# The records that end a shoe: its pending figures are dropped.
SHOE_END_KINDS = (kinds.RECONCILIATION, kinds.SHOE_RESTARTED)
EDGE_PLACES = Decimal("0.00000001")


@dataclass(frozen=True)
class Remaining:
    """The cards left in a shoe after ``cards_out`` have left it (``unread`` of them never read);
    ``composition``: the unseen cards, those left and those out unread, or None when the figures
    cannot be had (``why``: fewer than six cards left, or cards out that the shoe's decks do not
    hold, which the card-set check reports)."""

    composition: Composition | None
    cards_out: int
    why: str = ""
    unread: int = 0

    @property
    def left(self) -> int:
        """The cards still in the shoe (0 when there are no figures)."""
        return self.composition.total - self.unread if self.composition is not None else 0


class ShoeCards:
    """The cards out of the shoe in play, from the table's records (see the module docstring)."""

    def __init__(self) -> None:
        self.shoe: str | None = None
        self.decks: int | None = None
        self.out: dict[int, Card] = {}
        self.unread: set[int] = set()  # positions of cards that left the shoe unread
        self.ended = True

    def feed(self, kind: str, payload: Mapping[str, Any], shoe: str | None) -> None:
        if kind == kinds.SHOE_START:
            self.shoe, self.decks, self.out, self.unread, self.ended = payload["shoe"], payload["decks"], {}, set(), False
        elif kind in SHOE_END_KINDS:
            self.ended = True
        elif kind in CARD_OUT_KINDS and shoe == self.shoe and (position := payload.get("position")) is not None:
            if payload.get("card"):
                self.out[position] = parse_card(payload["card"])
                self.unread.discard(position)  # entered by hand since: known now
            elif position not in self.out:
                self.unread.add(position)

    def feed_entry(self, e: Any) -> None:
        """``feed`` a journal entry; a payload it cannot take (a forged card, a shoe start without
        its decks) is a ``JournalContentError`` naming the entry."""
        try:
            self.feed(e.kind, e.payload, e.shoe_id)
        except RulesError as exc:  # an unknown card: its words, with the entry's
            raise JournalContentError(f"entry {e.seq} ({e.kind}): {exc}") from None
        except (KeyError, TypeError, AttributeError) as exc:
            raise malformed_entry(e, exc) from None

    def remaining(self) -> Remaining:
        out, unread = len(self.out) + len(self.unread), len(self.unread)
        if self.decks is None:
            return Remaining(None, out, "the shoe's decks are not on record", unread)
        try:
            unseen = Composition.standard(self.decks).remove(self.out.values())
        except RulesError as exc:  # a foreign or extra card: the card-set check says so
            return Remaining(None, out, str(exc), unread)
        if unseen.total - unread < ROUND_CARDS:
            return Remaining(None, out, f"{unseen.total - unread} cards left: a round can use {ROUND_CARDS}", unread)
        return Remaining(unseen, out, "", unread)


def decimal_text(value: Fraction) -> str:
    """``value`` as fixed-point text with 8 places (``-0.07611327``; zero, and a value that rounds
    to it, is ``0.00000000``, never ``0E-8`` or ``-0.00000000``)."""
    rounded = (Decimal(value.numerator) / Decimal(value.denominator)).quantize(EDGE_PLACES)
    return format(rounded if rounded else rounded.copy_abs(), "f")


def edge_percent(figures: Mapping[str, str]) -> str:
    """A wager's figures (``{"ev": "N/D", "edge": ...}``) as a person reads them: the exact ``ev``
    as a percentage, rounded once (``-7.6113%``). Not the ``edge`` text: rounded to 8 places
    already, rounded again it was one off in the last digit now and then (-14.6556% for
    -14.65565022%), beside the house edge printed from the exact value. A value other than zero
    that would read ``+0.0000%`` reads ``+<0.0001%``."""
    ev = Fraction(figures["ev"])
    shown = f"{Decimal(ev.numerator * 100) / Decimal(ev.denominator):+.4f}%"
    if ev and shown[1:] == "0.0000%":  # an alert for "nothing" (a review)
        return f"{'+' if ev > 0 else '-'}<0.0001%"
    return shown


def edge_figures(submission: Any, composition: Composition) -> dict[str, dict[str, str]]:
    """Every offered wager -> ``{"ev": "N/D", "edge": "0.01234567"}``: its exact expected value per
    unit staked for the player on ``composition`` (positive: the player's advantage)."""
    return wager_figures(exact_odds(submission, composition))


def wager_figures(report: Any) -> dict[str, dict[str, str]]:
    """``edge_figures`` of an ``exact_odds`` report already made (``OddsReport``)."""
    return {name: {"ev": str(w["expected"]), "edge": decimal_text(w["expected"])} for name, w in report.wagers.items()}


def rank_counts(composition: Composition) -> list[int]:
    """The cards of ``composition`` by rank: A, 2, ..., K."""
    return composition.rank_counts()[1:]


def edge_payload(round_no: int, submission: Any, remaining: Remaining,
                 wagers: Mapping[str, Mapping[str, str]], threshold: str | None = None) -> dict[str, Any]:
    """The ``edge`` record's payload (docs/journal.md); ``threshold``: the monitor's, as its
    ``edge_alert`` says it (the audit holds the alerts to it: ``controller.table.alert_check``)."""
    comp = remaining.composition
    payload = {"round": round_no, "submission": str(getattr(submission, "source", "")), "cards_out": remaining.cards_out,
               "remaining": remaining.left, "remaining_ranks": rank_counts(comp) if comp else [],
               "wagers": {k: dict(v) for k, v in wagers.items()}}
    if threshold is not None:
        payload["threshold"] = threshold
    return payload


def journaled_edge(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    """An ``edge`` record's payload, checked for what its readers take from it (``journal replay
    --edges``, ``odds --journal``): ``wagers`` an object of wager -> {"ev": "N/D", "edge": decimal
    text}, ``remaining`` a whole number. Else ``TypeError`` naming the field: a malformed entry
    (``controller.journal.errors.malformed_entry``), only a forger's or a bug's."""
    wagers = payload["wagers"]
    if not (isinstance(wagers, dict) and all(isinstance(v, dict) and _is_fraction(v.get("ev"))
                                             and _is_decimal(v.get("edge")) for v in wagers.values())):
        raise TypeError("wagers")
    if type(payload["remaining"]) is not int:
        raise TypeError("remaining")
    return payload


def journaled_figures(entry: Any) -> Mapping[str, Any]:
    """The payload of a journaled ``edge`` or ``edge_alert`` ``entry``, checked by
    ``journaled_edge`` or ``journaled_alert``; a ``JournalContentError`` naming the entry if not."""
    try:
        return (journaled_edge if entry.kind == kinds.EDGE else journaled_alert)(entry.payload)
    except (KeyError, TypeError) as exc:
        raise malformed_entry(entry, exc) from None


def journaled_alert(payload: Mapping[str, Any]) -> Mapping[str, Any]:
    """An ``edge_alert`` record's payload, checked as ``journaled_edge`` checks an ``edge``'s:
    ``wagers`` an object of wager -> decimal text, ``threshold`` text."""
    wagers = payload["wagers"]
    if not (isinstance(wagers, dict) and all(_is_decimal(v) for v in wagers.values())):
        raise TypeError("wagers")
    if not isinstance(payload["threshold"], str):
        raise TypeError("threshold")
    return payload


def _is_decimal(text: Any) -> bool:
    """Decimal text as ``decimal_text`` writes it, or an earlier version did (``-7.6E-2``,
    ``0E-8``): an exponent of at most two digits (a forged ``1E999999999`` would be printed digit
    by digit)."""
    return isinstance(text, str) and len(text) <= _MOST_DIGITS and _DECIMAL_TEXT.fullmatch(text) is not None


def _is_fraction(text: Any) -> bool:
    """``N/D`` or ``N`` as ``str(Fraction)`` writes it, D not zero (no exponent, as above)."""
    return isinstance(text, str) and len(text) <= _MOST_DIGITS and _FRACTION.fullmatch(text) is not None


_DECIMAL_TEXT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]{1,2})?")
_FRACTION = re.compile(r"-?[0-9]+(?:/[1-9][0-9]*)?")
_MOST_DIGITS = 4000  # an exact fraction of a depleted shoe's enumeration has far fewer


def above(wagers: Mapping[str, Mapping[str, str]], threshold: Fraction) -> dict[str, str]:
    """The wagers whose exact player edge is above ``threshold``: kind -> decimal text."""
    return {k: v["edge"] for k, v in wagers.items() if Fraction(v["ev"]) > threshold}


@dataclass(frozen=True)
class JournalPoint:
    """A moment of a journal: the cards left after ``round`` of ``shoe``, the Rules Submission
    record in force then (None: none was journaled), and the ``edge`` record journaled for that
    round (None if there is none); ``no_figures``: why the monitor journals none for it by design
    (a void round; the last round of a shoe that ended), else None."""

    shoe: str
    round: int
    remaining: Remaining
    submission_record: Mapping[str, Any] | None
    edge: Mapping[str, Any] | None
    no_figures: str | None = None


def after_round(entries: Iterable[Any], shoe: str | None = None, round_no: int | None = None) -> JournalPoint | None:
    """The journal's cards left after round ``round_no`` of ``shoe`` (at its ``round_result``,
    where the monitor takes them), with the ``edge`` record journaled for it, or None if the
    journal has no such round. ``shoe`` None: the last shoe that has such a round; ``round_no``
    None: the shoe's last decided round (both None: the last round decided in the journal). A
    void round's cards include those drawn before it that were never read, journaled as its shoe
    is collected. ``entries``: journal entries (``kind``, ``payload``, ``shoe_id``, ``round_no``), read once."""
    exact = shoe is not None and round_no is not None  # one round matches at most: done once it is whole
    cards, submission = ShoeCards(), None
    point: JournalPoint | None = None
    followed = False  # a later round of the point's shoe came: the shoe did not end with it
    voided = False  # the point is a void round whose shoe is still being collected (not reconciled yet)
    for e in entries:
        if e.kind == kinds.SUBMISSION:
            submission = e.payload
        if exact and point is not None and e.kind == kinds.SHOE_START:
            break  # the round's shoe is over: no edge record of it follows
        cards.feed_entry(e)
        if e.kind == kinds.ROUND_RESULT and (shoe is None or e.shoe_id == shoe) \
                and (round_no is None or e.payload.get("round") == round_no):
            void = "the round was void (627a.13(e)): the shoe was reshuffled" if e.payload.get("kind") == "void" else None
            point, followed = JournalPoint(e.shoe_id, e.payload.get("round"), cards.remaining(), submission, None, void), False
            voided = void is not None
        elif voided and e.kind == kinds.DISCARD and e.shoe_id == point.shoe and not e.payload.get("card"):
            # A card drawn before the void that was never read: said as the shoe is collected, after
            # the round's result (a surveillance review: counted as still in the shoe).
            point = replace(point, remaining=cards.remaining())
        elif e.kind == kinds.ROUND_RESULT and point is not None and e.shoe_id == point.shoe:
            followed = True
        if e.kind in (kinds.RECONCILIATION, kinds.SHOE_START):
            voided = False
        if e.kind in SHOE_END_KINDS and point is not None and point.no_figures is None and e.shoe_id == point.shoe \
                and not followed:
            point = replace(point, no_figures="its shoe ended with it: no round was dealt from these cards again")
        elif e.kind == kinds.EDGE and point is not None and point.edge is None and e.shoe_id == point.shoe \
                and e.payload.get("round") == point.round == e.round_no:
            point = replace(point, edge=journaled_figures(e))
            if exact:
                break
    return point


__all__ = ["CARD_OUT_KINDS", "JournalPoint", "Remaining", "SHOE_END_KINDS", "ShoeCards", "above",
           "after_round", "decimal_text", "edge_figures", "edge_percent", "edge_payload", "journaled_alert",
           "journaled_edge", "journaled_figures", "rank_counts", "wager_figures"]
