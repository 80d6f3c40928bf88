"""The operators file as a running table follows it: an operator removed, a PIN changed or a
role changed (``shoectl operators add|remove``) counts from the next command, without a restart.

Contract:
- ``FollowedOperators(path)``, made before the table reads the file at start-up, then
  ``read_at_start(operators)`` with what it read: a change in between is read again at once (it
  was missed: a dealer removed as the table started stayed accepted until the next edit, a review).
  ``changed()`` returns the operators read again when the file changed since the last look (its
  size, modification or change time, inode or device: ``operators`` writes a new file and renames it into
  place), else None. Thread-safe; one ``stat`` per call when nothing changed.
- A file that changed but cannot be read now (half-copied by hand, damaged, removed), or one
  another account owns (``load_table_operators``), keeps the operators read last: a table never loses every operator to a typo. That is said once per change
  of the file, at ``error`` (a person must mend the file; until then a removed operator may still
  be accepted). Its non-fatal findings (e.g. permissions) are said at ``warning`` once per change.
- ``Authenticator(..., reload=followed.changed)`` asks before each PIN check
  (docs/operators.md, "A running table follows the file").
"""
from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from pathlib import Path

import structlog

from controller.operators.store import Operator, Operators, OperatorsError, load_operators
from shoectl_config.files import another_owner

__all__ = ["FollowedOperators", "load_table_operators"]

log = structlog.get_logger()


def load_table_operators(path: str | os.PathLike[str]) -> Operators:
    """``load_operators(path)`` for a table: also ``OperatorsError`` for a file that belongs to an
    account other than the one running the table or root. The file's owner and mode are the
    access control for managing operators (docs/operators.md): another account that made it where
    the table looks (a folder it may write to) made itself a supervisor (a security review)."""
    return load_operators(path, owner_problem=_not_the_tables)


def _not_the_tables(uid: int) -> str | None:
    owner = another_owner(uid)
    return None if owner is None else (f"belongs to {owner}, not to the account running the table or root: "
                                       "another account's file does not decide who operates the table (chown it, "
                                       "or move it away)")

_Signature = tuple[int, int, int, int, int] | None


def _signature(path: Path) -> _Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    # the change time too: a chown or chmod changes who the file's owner lets decide (load_table_operators)
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


class FollowedOperators:
    """See the module docstring."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._seen = _signature(self.path)  # before the start-up's read: a change after it is read at once
        self._ids: frozenset[str] = frozenset()

    def read_at_start(self, operators: Mapping[str, Operator]) -> None:
        """The operators the table read from the file at start-up, after this was made."""
        self._ids = frozenset(operators)

    def changed(self) -> Mapping[str, Operator] | None:
        """The operators read again if the file changed since the last call, else None."""
        now = _signature(self.path)
        if now == self._seen:
            return None
        with self._lock:
            if now == self._seen:  # another thread read this change meanwhile
                return None
            self._seen = now
            try:
                operators = load_table_operators(self.path)
            except OperatorsError as exc:
                log.error("the operators file cannot be read; the table keeps the operators it read before",
                          reason=str(exc))
                return None
            for warning in operators.warnings:
                log.warning("operators file", finding=warning)
            removed, added = sorted(self._ids - set(operators)), sorted(set(operators) - self._ids)
            self._ids = frozenset(operators)
            log.info("operators file read again", operators=len(operators), removed=removed or None,
                     added=added or None)
            return operators
