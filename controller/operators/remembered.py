"""PINs that have just passed their scrypt check, remembered for a short time so that an operator's
next commands do not each cost another one.

Contract:
- ``RememberedPins(remember_s, clock)``: ``remember(operator, pin)`` after a scrypt check passed;
  ``matches(operator, pin)`` is True only if ``pin`` is the PIN remembered for that operator, it
  was remembered less than ``remember_s`` seconds ago (counted from the scrypt check, not renewed
  by use), and the operator's stored PIN hash is still the one it was checked against (a new PIN
  in a reloaded operators file ends it); ``forget(operator_id)``; ``keep_only(ids)``.
  ``remember_s`` 0 remembers nothing. Not thread-safe: the ``Authenticator`` calls it under its lock.
- What is kept is an HMAC-SHA256 of the PIN under a key drawn for this object at random, never the
  PIN, in memory only. Only a right PIN is ever remembered, so a wrong guess still costs a full
  scrypt: guessing is no faster. A right PIN is answered sooner than a wrong one, which tells
  nothing the reply does not say.

Why: every command an operator gives carries the PIN, and each scrypt check takes 50-100 ms of
a processor, one at a time for the whole table; a dealer entering seven wagers waited up to
half a second for the seventh, and the checks took the processor from the table's own work.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterable

from controller.operators.pins import pin_bytes
from controller.operators.store import Operator


class RememberedPins:
    """See the module docstring."""

    def __init__(self, remember_s: float, clock: Callable[[], float]) -> None:
        if remember_s < 0:
            raise ValueError("remember_s must be 0 or more")
        self.remember_s = float(remember_s)
        self._clock = clock
        self._key = secrets.token_bytes(32)
        self._by_id: dict[str, tuple[str, bytes, float]] = {}  # id -> (PIN hash checked, MAC, until)

    def _mac(self, pin: str) -> bytes:
        return hmac.new(self._key, pin_bytes(pin), hashlib.sha256).digest()

    def matches(self, operator: Operator, pin: str) -> bool:
        held = self._by_id.get(operator.id)
        if held is None:
            return False
        checked_hash, mac, until = held
        if checked_hash != operator.pin_hash or self._clock() >= until:
            del self._by_id[operator.id]
            return False
        return hmac.compare_digest(mac, self._mac(pin))

    def remember(self, operator: Operator, pin: str) -> None:
        if self.remember_s > 0:
            self._by_id[operator.id] = (operator.pin_hash, self._mac(pin), self._clock() + self.remember_s)

    def forget(self, operator_id: str) -> None:
        self._by_id.pop(operator_id, None)

    def keep_only(self, operator_ids: Iterable[str]) -> None:
        """Forget every operator not in ``operator_ids`` (those a reloaded file no longer has)."""
        keep = set(operator_ids)
        self._by_id = {k: v for k, v in self._by_id.items() if k in keep}
