"""Shuffle integrity: card-set verification and a statistical randomness audit (docs/audit.md).

Modules, one job each:

- ``orders``: card codes (0-51, ``Card.code``), the emulator's fresh-deck order, complete and
  partial orders, filling in unknown cards.
- ``cardset``: ``verify_cardset(reads, decks=...)`` -> ``CardSetReport`` (the live table's
  reshuffle check and the offline ``shoectl audit cards``).
- ``stats``: chi-square, gamma, beta and normal tails, the count law, Holm-Bonferroni.
- ``moments``: exact null means and variances of the statistics.
- ``randomness``: the tests over complete orders (``positional_test``, ``position_max_test``,
  ``adjacency_test``, ``rising_sequences_test``, ``runs_test``, ``serial_correlation_test``).
- ``shuffle_audit``: ``audit_orders(orders, confidence=..., pre_orders=...)`` -> ``AuditResult``
  (all tests, Holm-Bonferroni verdict). Tests and benchmarks drive this without a journal.
- ``journal_source``: the journal's shoes (``collect_shoes``), the stack rebuilt from the cut
  (``partial_order``).
- ``journal_audit``: from journal shoes to the two audits; ``report``: their text form.

Importing the package imports nothing heavy and starts nothing.
"""
from .cardset import UNREADABLE, CardSetReport, Read, verify_cardset
from .orders import card_text, check_complete, fresh_order, impute
from .randomness import TestResult
from .shuffle_audit import ALL_TESTS, AuditResult, audit_orders

__all__ = [
    "ALL_TESTS", "AuditResult", "CardSetReport", "Read", "TestResult", "UNREADABLE", "audit_orders",
    "card_text", "check_complete", "fresh_order", "impute", "verify_cardset",
]
