"""From a journal's shoes to the two audits (the CLI's glue; pure, no I/O).

- ``select_shoes(shoes, patterns)``: the shoes whose id matches any of the ``fnmatch`` patterns
  (all when ``patterns`` is empty); ``AuditInputError`` naming a pattern that matches nothing.
- ``dealt(shoe)``: a shoe that was loaded or had cards read (a shoe just started when the journal
  ends is not).
- ``cards_audit(shoes) -> CardsAudit``: ``verify`` of every dealt shoe.
- ``shuffle_audit(shoes, *, confidence, order, pre_order, seed) -> ShuffleAudit``: the shoes that
  can be audited (dealt, a known deck count equal to the most common one, a complete card set, a
  position map) become complete orders (``orders.impute``, seeded per shoe from ``seed``); the
  others are listed in ``excluded`` with the reason. ``pre_order``: ``"fresh"`` (the emulator's
  new decks, ``orders.fresh_order``), ``"previous"`` (the previous shoe in deal order,
  ``journal_source.previous_orders``, the previous shoe taken from ``context``, all the journal's
  shoes, when given) or ``"none"`` (no adjacency or rising-sequence test).
  Raises ``AuditInputError`` (a ``ValueError``) when no shoe can be audited.
"""
from __future__ import annotations

import fnmatch
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from controller.rules.cards import MAX_DECKS

from .cardset import CardSetReport
from .journal_source import ShoeData, partial_order, previous_orders, stack_map
from .orders import fresh_order, impute
from .shuffle_audit import AuditResult, audit_orders

__all__ = ["AuditInputError", "CardsAudit", "PRE_ORDERS", "ShuffleAudit", "cards_audit", "dealt", "select_shoes", "shuffle_audit"]

PRE_ORDERS = ("fresh", "previous", "none")


class AuditInputError(ValueError):
    """Nothing to audit: a selection that matches no shoe, or no shoe that can be audited."""

PRE_ORDER_TEXT = {"fresh": "new decks in the emulator's order (stated, not read from the journal)",
                  "previous": "the previous shoe in deal order (assumed), unread cards at random",
                  "none": "unknown (adjacency and rising sequences not tested)"}


def select_shoes(shoes: Sequence[ShoeData], patterns: Sequence[str]) -> list[ShoeData]:
    if not patterns:
        return list(shoes)
    for pat in patterns:
        if not any(fnmatch.fnmatchcase(s.shoe, pat) for s in shoes):
            raise AuditInputError(f"no shoe {pat!r} in the journal")
    return [s for s in shoes if any(fnmatch.fnmatchcase(s.shoe, pat) for pat in patterns)]


def dealt(shoe: ShoeData) -> bool:
    return shoe.loaded is not None or bool(shoe.reads)


@dataclass(frozen=True)
class CardsAudit:
    reports: list[CardSetReport]
    skipped: list[tuple[str, str]]
    # by shoe: the cards entered by hand for reads the shoe could not make (``ShoeData.entered``)
    entered: dict[str, list[dict[str, str]]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.reports)

    def to_json(self) -> dict[str, Any]:
        shoes = [{**r.to_json(), "entered_by_hand": self.entered.get(r.shoe or "", [])} for r in self.reports]
        return {"ok": self.ok, "shoes": shoes,
                "failed": [r.shoe for r in self.reports if not r.ok],
                "skipped": [{"shoe": s, "reason": why} for s, why in self.skipped]}


SAID_PROBLEMS = 3  # a shoe's card-set findings named in its exclusion's reason


def _decks_out_of_range(decks: int | None) -> str | None:
    """Why a shoe's deck count is no shoe's (only a forger writes it), or None (none said, or one a
    shoe holds)."""
    if not decks or 1 <= decks <= MAX_DECKS:
        return None
    return f"the journal says {str(decks)[:20]} decks; a shoe holds 1 to {MAX_DECKS}"


def cards_audit(shoes: Sequence[ShoeData]) -> CardsAudit:
    reports, skipped = [], []
    for s in shoes:
        if not dealt(s):
            skipped.append((s.shoe, "not dealt"))
        elif not s.decks:
            skipped.append((s.shoe, "the journal does not say how many decks"))
        elif (forged := _decks_out_of_range(s.decks)) is not None:  # said with the shoe, not raised
            skipped.append((s.shoe, forged))
        else:
            reports.append(s.verify())
    return CardsAudit(reports, skipped, {s.shoe: list(s.entered) for s in shoes if s.entered})


def _mostly_unknown(s: ShoeData, imputed: int, cards: int) -> str | None:
    """Why a shoe is left out of the shuffle audit: more than half its order would be filled in at
    random, which pulls the tests towards a pass (a lab's review: a shoe stopped after 20 rounds was
    audited with 310 of 416 cards filled in; another, a shoe ended early by a misplaced cover card,
    with 383 of 416, and a 4-riffle shuffler passed). A shoe dealt to its cover card has its few
    unread cards filled in, as docs/audit.md says."""
    if 2 * imputed <= cards:
        return None
    when = "ended" if s.reconciliation is not None else "in play when the journal ends"
    return f"{when}: {imputed} of its {cards} cards never read, too many to fill in at random"


@dataclass(frozen=True)
class ShuffleAudit:
    result: AuditResult
    shoes: list[str]
    excluded: list[tuple[str, str]]
    imputed: int
    order: str
    pre_order: str
    seed: int
    extra: dict[str, Any] = field(default_factory=dict)
    orders: list[list[int]] = field(default_factory=list, repr=False)  # the audited orders, for charts

    def to_json(self) -> dict[str, Any]:
        doc = self.result.to_json()
        doc.update(order=self.order, pre_order=self.pre_order, pre_order_meaning=PRE_ORDER_TEXT[self.pre_order],
                   seed=self.seed, imputed_cards=self.imputed, audited=list(self.shoes),
                   excluded=[{"shoe": s, "reason": why} for s, why in self.excluded])
        return doc


def shuffle_audit(shoes: Sequence[ShoeData], *, confidence: float = 0.99,
                  order: Literal["shuffler", "shoe"] = "shuffler", pre_order: str = "fresh",
                  seed: int = 0, context: Sequence[ShoeData] | None = None) -> ShuffleAudit:
    if pre_order not in PRE_ORDERS:
        raise ValueError(f"pre-shuffle order must be one of {', '.join(PRE_ORDERS)}, not {pre_order!r}")
    dealt_shoes: list[ShoeData] = []
    excluded: list[tuple[str, str]] = [(s.shoe, "not dealt") for s in shoes if not dealt(s)]
    forged: list[tuple[str, str]] = []
    for s in shoes:
        # A deck count no shoe holds is only a forger's: said with its shoe, as `audit cards` says it
        # (it was a bare "decks must be a whole number from 1 to 12": a lab's review)
        if not dealt(s):
            continue
        if (why := _decks_out_of_range(s.decks)) is None:
            dealt_shoes.append(s)
        else:
            forged.append((s.shoe, why))
    excluded += forged
    known = Counter(s.decks for s in dealt_shoes if s.decks)
    if not known:
        said = "".join(f"; {shoe}: {why}" for shoe, why in excluded if why != "not dealt")
        raise AuditInputError(f"no dealt shoe with a known number of decks to audit{said[:400]}")
    decks = known.most_common(1)[0][0]
    chosen: list[ShoeData] = []
    orders: list[list[int]] = []
    imputed = 0
    for s in dealt_shoes:
        reason = None
        if s.decks != decks:
            reason = f"{s.decks} decks (the audit's shoes have {decks})"
        else:
            report = s.verify()
            if not report.ok:
                problems = report.problems  # the first few: a forged deck count made 400 (a 9,342-character line)
                more = f"; and {len(problems) - SAID_PROBLEMS} more" if len(problems) > SAID_PROBLEMS else ""
                reason = "card set: " + "; ".join(problems[:SAID_PROBLEMS]) + more
            else:
                _, why = stack_map(s)
                reason = why and f"positions: {why}"
        if reason is None:
            try:
                full, n = impute(partial_order(s, order), decks, random.Random(f"{seed}:{s.shoe}"))
            except ValueError as exc:
                reason = str(exc)
            else:
                reason = _mostly_unknown(s, n, len(full))
        if reason is not None:
            excluded.append((s.shoe, reason))
            continue
        chosen.append(s)
        orders.append(full)
        imputed += n
    if not chosen:
        raise AuditInputError("no shoe can be audited: " + "; ".join(f"{s}: {why}" for s, why in excluded))
    pres: Any
    if pre_order == "fresh":
        pres = fresh_order(decks)
    elif pre_order == "previous":
        everything = list(context if context is not None else shoes)
        by_id = dict(zip((s.shoe for s in everything), previous_orders(everything, decks, seed)))
        pres = [by_id.get(s.shoe) for s in chosen]
        if all(p is None for p in pres):
            pres = None
    else:
        pres = None
    result = audit_orders(orders, confidence=confidence, pre_orders=pres, seed=seed)
    effective = pre_order if pres is not None else "none"
    return ShuffleAudit(result, [s.shoe for s in chosen], excluded, imputed, order, effective, seed, orders=orders)
