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

The package itself exports nothing: import from the module that does the job (``from
controller.audit.cardset import verify_cardset``), so that the live table's reshuffle check loads
the card-set check alone, not the statistics.
"""
