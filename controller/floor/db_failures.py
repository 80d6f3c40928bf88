"""How the floor collector takes a failure of its database (``controller.floor.collector``): which
are the database's, retried while a person mends them, and which are refusals of what it was given
or defects of this program, which no retry mends."""
from __future__ import annotations

from controller.floor.schema import StoreError

__all__ = ["database_failure", "refuses_content"]


def refuses_content(exc: Exception) -> bool:
    """Whether PostgreSQL refused what it was given (SQLSTATE class 22, data exception; 54, a limit
    exceeded), not a failure of its own (a lost connection, a deadlock, a full disk: retried)."""
    return (getattr(exc, "sqlstate", None) or "")[:2] in ("22", "54")


# PostgreSQL's refusals of a statement (ProgrammingError) that a person mends on the database
# while the collector waits: a privilege revoked, the entries' table or schema dropped, the
# database renamed. Any other refusal of a statement is this program's.
_MENDED_BY_A_PERSON = frozenset({"42501", "42P01", "3F000", "3D000"})


def database_failure(exc: Exception) -> bool:
    """Whether ``exc`` is the database's (PostgreSQL's, its connection's, the store's words for
    them), retried; any other is a defect of this program, which no retry mends (a review of the
    floor's exactly-once: it was retried for ever as "the database is unavailable", every table
    waiting behind it)."""
    import psycopg  # noqa: PLC0415 - the store's own dependency, imported where it is used

    if isinstance(exc, psycopg.InterfaceError):  # the driver misused: this program's
        return False
    if isinstance(exc, psycopg.ProgrammingError) and exc.sqlstate not in _MENDED_BY_A_PERSON:
        return False  # a statement PostgreSQL cannot run (syntax, a column, a parameter): this program's
    return isinstance(exc, (StoreError, OSError, psycopg.Error))
