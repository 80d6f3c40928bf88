"""Which engine evaluates: the names every ``--engine`` option takes, and whether numpy is there.

- ``ENGINES``: ``"auto"`` (numpy when it can be imported and can serve, else pure Python),
  ``"python"`` (the pure-Python paths, the reference) or ``"numpy"`` (the optional ``fast``
  extra). ``shoectl simulate`` (``controller.simulation``) and the exact odds
  (``odds_main_game``) both choose by these names.
- ``numpy_available()``: whether numpy can be imported, found once per process without
  importing it.
"""
from __future__ import annotations

import importlib.util
from functools import cache

__all__ = ["ENGINES", "numpy_available"]

ENGINES = ("auto", "python", "numpy")


@cache
def numpy_available() -> bool:
    """Whether numpy can be imported (without importing it)."""
    return importlib.util.find_spec("numpy") is not None
