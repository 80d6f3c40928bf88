"""Operators: who may work the table, in which role, and how they prove it (a PIN).

- ``controller.operators.store``: the operators file (TOML, PIN hashes only), PIN hashing and
  PIN rules, atomic writes.
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
from controller.operators.store import (
    DEFAULT_PATH,
    Operator,
    Operators,
    OperatorsError,
    PinError,
    PinHashError,
    add_operator,
    check_pin,
    hash_pin,
    load_operators,
    remove_operator,
    verify_pin,
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
