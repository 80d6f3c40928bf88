"""What an operator is refused, as exceptions: their words for the person at the socket, their
truth for the journal.

- ``AuthError`` (exit code ``EXIT_AUTH``, 3): not authenticated. ``str(exc)`` is what happened
  (journaled: ``unknown operator 'x'``); ``exc.said`` is what the person who tried is told. The two
  differ only for ``UnknownOperator``, which is told exactly what a known id would be told after as
  many failed logins (``WrongPin`` or ``LockedOut``): the replies do not say which ids exist.
  ``WrongPin`` says how many tries are left (``tries_left``), ``LockedOut`` for how long
  (``retry_after``); ``Throttled``: a connection that failed too often.
- ``NotPermitted`` (exit code ``EXIT_FORBIDDEN``, 4): authenticated, but the role is too low.

No message contains a PIN; an id is shown escaped and cut to 40 characters.
"""
from __future__ import annotations

import math
from typing import ClassVar

from controller.operators.store import Operator
from controller.roles import Role

__all__ = [
    "EXIT_AUTH", "EXIT_FORBIDDEN", "AccessError", "AuthError", "LockedOut", "NotPermitted", "Throttled",
    "UnknownOperator", "WrongPin",
]

EXIT_AUTH = 3  # unknown operator, wrong PIN, locked out
EXIT_FORBIDDEN = 4  # authenticated, but the role is too low for the command
_MAX_SHOWN_ID = 40


def shown_id(op_id: object) -> str:
    """An operator id as messages show it: quoted, escaped, at most about 40 characters."""
    text = op_id if isinstance(op_id, str) else repr(op_id)
    if len(text) > _MAX_SHOWN_ID:
        text = text[:_MAX_SHOWN_ID] + "..."
    return repr(text)


def duration(seconds: float) -> str:
    """``"5 min"``, ``"4 min 12 s"``, ``"40 s"`` (rounded up to the second)."""
    s = max(1, math.ceil(seconds))
    m, s = divmod(s, 60)
    if not m:
        return f"{s} s"
    return f"{m} min" + (f" {s} s" if s else "")


class AccessError(Exception):
    """Base of authentication and authorization refusals; ``exit_code`` is the CLI exit code."""

    exit_code: ClassVar[int] = EXIT_AUTH


class AuthError(AccessError):
    """The operator could not be authenticated (exit code ``EXIT_AUTH``)."""

    exit_code: ClassVar[int] = EXIT_AUTH

    def __init__(self, operator_id: str, message: str) -> None:
        self.operator_id = operator_id
        super().__init__(message)

    @property
    def said(self) -> str:
        """What the person who tried is told."""
        return str(self)


class WrongPin(AuthError):
    """A failed login; ``tries_left`` more are allowed before the lockout."""

    def __init__(self, operator_id: str, tries_left: int, lockout_s: float) -> None:
        self.tries_left = tries_left
        tries = "1 try" if tries_left == 1 else f"{tries_left} tries"
        super().__init__(operator_id, f"wrong PIN, or no operator {shown_id(operator_id)}; {tries} left "
                                      f"before a {duration(lockout_s)} lockout")


class LockedOut(AuthError):
    """Logins as this id are locked out for ``retry_after`` more seconds."""

    def __init__(self, operator_id: str, retry_after: float, failures: int, *, just_now: bool = False) -> None:
        self.retry_after = retry_after
        self.failures = failures
        if just_now:
            text = (f"wrong PIN, or no operator {shown_id(operator_id)}; {failures} failed logins in a row: "
                    f"locked out for {duration(retry_after)}")
        else:
            text = (f"logins as {shown_id(operator_id)} are locked out for another {duration(retry_after)} "
                    f"after {failures} failed in a row")
        super().__init__(operator_id, text)


class UnknownOperator(AuthError):
    """No operator has this id. ``told`` is what a known id would have met (see the module
    docstring); its ``tries_left`` or ``retry_after`` is this error's too."""

    def __init__(self, operator_id: str, told: WrongPin | LockedOut) -> None:
        self.told = told
        self.tries_left = getattr(told, "tries_left", None)
        self.retry_after = getattr(told, "retry_after", None)
        super().__init__(operator_id, f"unknown operator {shown_id(operator_id)}")

    @property
    def said(self) -> str:
        return str(self.told)


class Throttled(AuthError):
    """Too many failed logins ``where`` (e.g. "on this connection"): ``retry_after`` seconds."""

    def __init__(self, operator_id: str, retry_after: float, where: str) -> None:
        self.retry_after = retry_after
        super().__init__(operator_id, f"too many failed logins {where}; try again in {duration(retry_after)}")


class NotPermitted(AccessError):
    """The operator's role is too low for ``command`` (``needed`` is None for an unknown command)."""

    exit_code: ClassVar[int] = EXIT_FORBIDDEN

    def __init__(self, operator: Operator, command: str, needed: Role | None) -> None:
        self.operator_id = operator.id
        self.command = command
        self.needed = needed
        self.role = operator.role
        role = operator.role.name.lower()
        if needed is None:
            text = f"{shown_id(command)} is not a command an operator may give ({operator.id} is a {role})"
        else:
            text = f"{command} needs a {needed.name.lower()} or above; {operator.id} is a {role}"
        super().__init__(text)
