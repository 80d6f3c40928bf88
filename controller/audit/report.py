"""Plain-text reports of the audits (the JSON documents are the results' ``to_json()``).

- ``cards_text(path, audit) -> str``: one line per shoe (``ok`` or ``FAILED`` with every
  problem), skipped shoes, and a summary line.
- ``shuffle_text(path, audit) -> str``: a header (shoes, decks, order, pre-shuffle order,
  confidence), one row per test (statistic, df, null mean, p-value, Holm-adjusted p-value, result)
  and the verdict with the multiple-testing method; excluded shoes at the end.
"""
from __future__ import annotations

from shoectl_config.text import safe

from .journal_audit import PRE_ORDER_TEXT, CardsAudit, ShuffleAudit
from .shuffle_audit import MULTIPLE_TESTING_METHOD

__all__ = ["cards_text", "shuffle_text"]


def cards_text(path: str, audit: CardsAudit) -> str:
    lines = []
    for r in audit.reports:
        head = (f"{r.shoe}: {'ok' if r.ok else 'FAILED'}: {r.expected} expected, "
                f"{r.loaded if r.loaded is not None else '?'} loaded, {r.read} read ({r.identified} identified"
                f"{', ' + str(len(r.unreadable)) + ' unreadable' if r.unreadable else ''}), {r.unread} never read")
        lines.append(head)
        lines.extend(f"    {p}" for p in r.problems)
        entered = audit.entered.get(r.shoe or "")
        if entered:  # known from a person's entry alone: said, as surveillance asks (an examiner's review)
            cards = safe(", ".join(f"{e['card']} by {e['by']}" for e in entered))  # journal text: escaped
            lines.append(f"    {len(entered)} entered by hand for reads the shoe could not make (not checked "
                         f"against the cards: counted unidentified): {cards}")
    for shoe, why in audit.skipped:
        lines.append(f"{shoe}: skipped ({why})")
    failed = sum(1 for r in audit.reports if not r.ok)
    lines.append(f"{path}: card sets {'ok' if audit.ok else 'FAILED'}: {len(audit.reports)} shoes checked, {failed} failed")
    return "\n".join(lines)


def _num(x: float | None, places: int | None = None) -> str:
    if x is None:
        return "-"
    if places is not None:
        return f"{x:.{places}f}"
    return f"{x:.7g}"


def _p(x: float) -> str:
    return f"{x:.4f}" if x >= 1e-4 else f"{x:.1e}"


def shuffle_text(path: str, audit: ShuffleAudit) -> str:
    res = audit.result
    lines = [
        f"shuffle audit of {path}: {res.shoes} shoes of {res.decks} decks, {audit.order} order, "
        f"confidence {res.confidence:.0%} (alpha {res.alpha:g})",
        f"pre-shuffle order: {PRE_ORDER_TEXT[audit.pre_order]}",
        f"{'test':<20}{'statistic':>12}{'df':>9}{'expected':>12}{'p-value':>10}{'Holm p':>10}  result",
    ]
    for t, adj, rej in zip(res.tests, res.adjusted, res.rejected):
        result = ("no test (too few shoes to reject anything)" if not res.testable(t) else "REJECTED" if rej
                  else "pass" if t.p_value >= res.alpha else "low p (not rejected after Holm)")
        lines.append(f"{t.name:<20}{_num(t.statistic):>12}{_num(t.df, 0):>9}{_num(t.expected):>12}"
                     f"{_p(t.p_value):>10}{_p(adj):>10}  {result}")
    counted = sum(res.testable(t) for t in res.tests)
    lines.append(f"verdict: {'PASS' if res.passed else 'FAIL'} ({MULTIPLE_TESTING_METHOD} over {counted} tests "
                 f"at alpha {res.alpha:g}); {audit.imputed} unread cards filled in at random (seed {audit.seed})")
    for shoe, why in audit.excluded:
        lines.append(f"excluded {shoe}: {why}")
    return "\n".join(lines)
