"""Operators: who may work the table, in which role, and how they prove it (a PIN).

- ``controller.operators.store``: the operators file (TOML, PIN hashes only), read and validated,
  changed under a lock with atomic writes.
- ``controller.operators.pins``: the PIN rules and the scrypt PIN hash.
- ``controller.operators.remembered``: the PINs that just passed their scrypt check, kept for a
  short time as a keyed hash so that an operator's next commands do not each cost another.
- ``controller.operators.errors``: what an operator is refused, with the words they are told
  (an unknown id is told what a known one would be) and what the journal keeps.
- ``controller.operators.lockouts``: failed logins in a row per id, known or not, and lockouts.
- ``controller.operators.auth``: ``Authenticator`` (PIN check with lockout) and ``authorize``
  (role check against the least role of each command, ``controller.table.commands.MIN_ROLES``), with the CLI exit codes ``EXIT_AUTH`` and
  ``EXIT_FORBIDDEN``.

See docs/operators.md. Importing this package has no side effects.
"""
from __future__ import annotations

from controller.operators.auth import (
    EXIT_AUTH,
    EXIT_FORBIDDEN,
    AccessError,
    AuthError,
    Authenticator,
    LockedOut,
    NotPermitted,
    UnknownOperator,
    WrongPin,
    authorize,
)
from controller.operators.pins import PinError, PinHashError, check_pin, hash_pin, verify_pin
from controller.operators.store import (
    DEFAULT_PATH,
    Operator,
    Operators,
    OperatorsError,
    add_operator,
    load_operators,
    remove_operator,
)

__all__ = [
    "DEFAULT_PATH",
    "EXIT_AUTH",
    "EXIT_FORBIDDEN",
    "AccessError",
    "AuthError",
    "Authenticator",
    "LockedOut",
    "NotPermitted",
    "Operator",
    "Operators",
    "OperatorsError",
    "PinError",
    "PinHashError",
    "UnknownOperator",
    "WrongPin",
    "add_operator",
    "authorize",
    "check_pin",
    "hash_pin",
    "load_operators",
    "remove_operator",
    "verify_pin",
]
