"""What an authentication or role refusal at the control socket says, and to whom.

Contract: ``auth_refusal(tried, command, code, error, reason, account, known)`` -> ``AuthRefusal``:
``payload`` (what the journal keeps: ``command``, ``operator`` as shown, ``code``, ``reason``: what
happened, and ``account``, the system account that connected, when known), ``reply`` (what the
person who tried is told: ``error``), ``operator`` (the journal's operator column: only a valid
id) and ``streamed`` (the payload as the event streams, which need no login, show it: ``error``
as the reason). ``known(digits)``: whether an operator has that id.

An id of a PIN's shape (digits only, blanks around them) that failed its login (``code`` auth:
a role refusal follows a login) is neither told back nor streamed, whether an operator has it or
not (a review: hidden only when no operator had it, the reply said which ids exist); the journal
keeps an operator's, and an unknown one is kept out of it too: the person was most likely typing
a PIN.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from controller.control.requests import shown_text
from controller.operators.pins import pin_shaped_id_hidden
from controller.operators.store import is_operator_id
from shoectl_config.text import quoted

__all__ = ["AuthRefusal", "auth_refusal"]


@dataclass(frozen=True)
class AuthRefusal:
    payload: dict[str, Any]
    reply: dict[str, Any]
    operator: str | None
    streamed: dict[str, Any]


def auth_refusal(tried: object, command: Any, code: str, error: str, reason: str | None, account: str | None,
                 known: Callable[[str], bool]) -> AuthRefusal:
    """See the module docstring."""
    operator = tried if is_operator_id(tried) else None
    shown, reason = shown_text(tried), reason or error
    digits = tried.strip() if isinstance(tried, str) else ""  # a PIN is read so: with a space pasted or keyed around it, still a PIN
    hidden = pin_shaped_id_hidden(digits) if code == "auth" else None
    streamed = shown
    if hidden is not None:
        error, streamed = _hide(error, tried, digits, hidden), hidden
        if not known(digits):
            reason, shown, operator = _hide(reason, tried, digits, hidden), hidden, None
    payload = {"command": command, "operator": shown, "code": code, "reason": reason,
               **({"account": account} if account is not None else {})}
    return AuthRefusal(payload, {"ok": False, "code": code, "error": error}, operator,
                       {**payload, "operator": streamed, "reason": error})


def _hide(text: str, operator: Any, digits: str, hidden: str) -> str:
    """``text`` with the id ``operator`` (quoted, or its ``digits`` bare) said as ``hidden``."""
    return text.replace(quoted(operator), hidden).replace(digits, hidden)
