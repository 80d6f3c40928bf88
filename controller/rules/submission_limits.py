"""The ``[limits]`` table of a Rules Submission: ``parse_limits(parser, section, wagers)``.

Per offered wager kind ``KIND = { min = M, max = N }`` in minor units (integers, ``1 <= M <= N <=
MAX_LIMIT``), and optionally ``table_max``: the most all of one seat's wagers of a round may come
to (at least the largest ``min``). A limit on a wager the table does not offer, a key other than
``min``/``max`` and a missing one are refused through ``parser.fail`` (one line naming the file
and the dotted key). Documented in ``docs/rules-submission.md``.
"""
from __future__ import annotations

import types
from collections.abc import Mapping
from typing import Any

from shoectl_config.parser import DocumentParser

from .model import WagerKind
from .submission_data import TableLimits, WagerLimit

__all__ = ["LIMIT_KEYS", "MAX_LIMIT", "parse_limits"]

MAX_LIMIT = 10**11  # minor units: a billion in major units, far above any table's limit
LIMIT_KEYS: tuple[str, ...] = (*(k.value for k in WagerKind), "table_max")
_BOUND_KEYS = ("min", "max")


def parse_limits(parser: DocumentParser, section: Mapping[str, Any], wagers: frozenset[WagerKind]) -> TableLimits:
    """The checked ``[limits]`` section (its keys already among ``LIMIT_KEYS``)."""
    per_wager: dict[WagerKind, WagerLimit] = {}
    for key, value in section.items():
        if key == "table_max":
            continue
        kind = WagerKind(key)
        if kind not in wagers:
            offered = ", ".join(k.value for k in WagerKind if k in wagers)
            raise parser.fail(f"limits.{key}", f"wager not offered at this table; offered: {offered}")
        bounds = parser.table(f"limits.{key}", value, _BOUND_KEYS)
        for bound in _BOUND_KEYS:
            if bound not in bounds:
                raise parser.missing(f"limits.{key}.{bound}", " (limits are { min = ..., max = ... } in minor units)")
        low = parser.integer(f"limits.{key}.min", bounds["min"], 1, MAX_LIMIT)
        high = parser.integer(f"limits.{key}.max", bounds["max"], 1, MAX_LIMIT)
        if low > high:
            raise parser.fail(f"limits.{key}", f"min {low} is above max {high}")
        per_wager[kind] = WagerLimit(low, high)
    table_max = None
    if "table_max" in section:
        table_max = parser.integer("limits.table_max", section["table_max"], 1, MAX_LIMIT)
        for kind, lim in per_wager.items():
            if lim.min > table_max:
                raise parser.fail("limits.table_max", f"{table_max} is below the {kind.value} minimum {lim.min}")
    ordered = {k: per_wager[k] for k in WagerKind if k in per_wager}
    return TableLimits(types.MappingProxyType(ordered), table_max)
