"""PIN authentication with lockout, and role authorization.

Contract:
- ``Authenticator(operators, *, max_failures=5, lockout_s=300, clock=time.monotonic,
  unknown_limit=5, window_s=60, max_unknown_ids=1024, dummy_hashes_per_s=2, remember_s=300,
  reload=None)``; ``reload``, when given, is asked before each check for the operators read again
  (``controller.operators.following``: a running table follows its operators file).
  ``authenticate(id, pin)`` returns the ``Operator`` or raises an ``AuthError``:
  ``UnknownOperator`` (no such id; a PIN hash is still computed so the time taken does not reveal
  which ids exist), ``WrongPin`` (``tries_left`` before the lockout), ``LockedOut``
  (``retry_after`` seconds). ``max_failures`` wrong PINs in a row lock that operator out for
  ``lockout_s`` seconds (the failure that reaches the limit raises ``LockedOut``); while locked out
  even the right PIN is refused, without checking it. A success resets the count; so does the end
  of a lockout (the operator then has ``max_failures`` fresh tries). Wrong PINs do not expire
  otherwise.
- Unknown ids are throttled instead, in bounded memory: ``unknown_limit`` failures for one unknown
  id within ``window_s`` seconds make further attempts for it fail at once with ``Throttled``
  (``retry_after``) until the oldest leaves the window; the last ``max_unknown_ids`` ids are
  remembered (the least recently tried forgotten first). The dummy PIN hash that makes an unknown
  id cost the same as a known one is computed at most ``dummy_hashes_per_s`` times a second on
  average (in bursts of twice that); beyond that an unknown id is refused without it, so a flood
  of unknown ids cannot take the table's processor time nor delay the operators' logins.
- A PIN that passed its scrypt check is remembered for ``remember_s`` seconds (from that check;
  ``controller.operators.remembered``: a keyed hash in memory, ended by a new PIN in the file):
  the same operator's right PIN is then accepted without another scrypt. A wrong PIN always
  costs a scrypt, and makes the operator's PIN be checked in full again next time; so does a
  lockout. The lockout check comes first, as before: while locked out even a remembered PIN is
  refused.
- Every PIN check runs on one thread of the ``Authenticator``'s own (started at the first check),
  so the 16 MiB each scrypt takes is one buffer reused, not one kept per connection thread.
- The lockout state is in memory only: a restart of the process that owns the ``Authenticator``
  (``shoectl run``) clears it. Restarting needs access to the table computer, which the console
  does not give.
- ``authenticate`` is thread-safe: attempts for known ids are serialized under one lock (each
  costs one scrypt, about 50-100 ms), so parallel guesses cannot overrun the limit.
- ``LoginThrottle`` (failures per key in a sliding window, bounded memory) is public: the control
  socket uses one per connection too.
- ``authorize(operator, command, permissions)`` raises ``NotPermitted`` unless the operator's role
  is at least ``permissions[command]``; a command not in ``permissions`` is not permitted.
- Exit codes for the CLI layer: ``EXIT_AUTH`` (3) for any ``AuthError``, ``EXIT_FORBIDDEN`` (4)
  for ``NotPermitted``; both are on the exception as ``exit_code``. No message contains a PIN.
"""
from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import ClassVar

from controller.operators.pins import SCRYPT_N, SCRYPT_P, SCRYPT_R, PinHash, verify_pin
from controller.operators.remembered import RememberedPins
from controller.operators.store import Operator
from controller.roles import Role

__all__ = [
    "EXIT_AUTH",
    "EXIT_FORBIDDEN",
    "AccessError",
    "AuthError",
    "Authenticator",
    "LockedOut",
    "LoginThrottle",
    "NotPermitted",
    "Throttled",
    "UnknownOperator",
    "WrongPin",
    "authorize",
]

EXIT_AUTH = 3  # unknown operator, wrong PIN, locked out
EXIT_FORBIDDEN = 4  # authenticated, but the role is too low for the command

# Verified against when the id is unknown, so that an unknown id costs one scrypt like a known one.
_DUMMY_HASH = PinHash(SCRYPT_N, SCRYPT_R, SCRYPT_P, b"\0" * 16, b"\0" * 32).format()
_MAX_SHOWN_ID = 40


def _shown(op_id: object) -> str:
    text = op_id if isinstance(op_id, str) else repr(op_id)
    if len(text) > _MAX_SHOWN_ID:
        text = text[:_MAX_SHOWN_ID] + "..."
    return repr(text)


def _duration(seconds: float) -> str:
    """``"5 min"``, ``"4 min 12 s"``, ``"40 s"`` (rounded up to the second)."""
    s = max(1, math.ceil(seconds))
    m, s = divmod(s, 60)
    if not m:
        return f"{s} s"
    return f"{m} min" + (f" {s} s" if s else "")


# Errors -------------------------------------------------------------------------------------


class AccessError(Exception):
    """Base of authentication and authorization refusals; ``exit_code`` is the CLI exit code."""

    exit_code: ClassVar[int] = EXIT_AUTH


class AuthError(AccessError):
    """The operator could not be authenticated (exit code ``EXIT_AUTH``)."""

    exit_code: ClassVar[int] = EXIT_AUTH

    def __init__(self, operator_id: str, message: str) -> None:
        self.operator_id = operator_id
        super().__init__(message)


class UnknownOperator(AuthError):
    def __init__(self, operator_id: str) -> None:
        super().__init__(operator_id, f"unknown operator {_shown(operator_id)}")


class WrongPin(AuthError):
    """A wrong PIN; ``tries_left`` more wrong PINs in a row are allowed before the lockout."""

    def __init__(self, operator_id: str, tries_left: int, lockout_s: float) -> None:
        self.tries_left = tries_left
        tries = "1 try" if tries_left == 1 else f"{tries_left} tries"
        super().__init__(operator_id, f"wrong PIN for operator {_shown(operator_id)}; {tries} left "
                                      f"before a {_duration(lockout_s)} lockout")


class LockedOut(AuthError):
    """The operator is locked out for ``retry_after`` more seconds."""

    def __init__(self, operator_id: str, retry_after: float, failures: int, *, just_now: bool = False) -> None:
        self.retry_after = retry_after
        self.failures = failures
        if just_now:
            text = (f"wrong PIN for operator {_shown(operator_id)}; {failures} wrong PINs in a row: "
                    f"locked out for {_duration(retry_after)}")
        else:
            text = (f"operator {_shown(operator_id)} is locked out for another {_duration(retry_after)} "
                    f"after {failures} wrong PINs in a row")
        super().__init__(operator_id, text)


class Throttled(AuthError):
    """Too many failed logins for an unknown id (or on one connection): ``retry_after`` seconds."""

    def __init__(self, operator_id: str, retry_after: float, what: str | None = None) -> None:
        self.retry_after = retry_after
        what = what or f"for operator {_shown(operator_id)}"
        super().__init__(operator_id, f"too many failed logins {what}; try again in {_duration(retry_after)}")


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
            text = f"{_shown(command)} is not a command an operator may give ({operator.id} is a {role})"
        else:
            text = f"{command} needs a {needed.name.lower()} or above; {operator.id} is a {role}"
        super().__init__(text)


# Authorization ------------------------------------------------------------------------------


def authorize(operator: Operator, command: str, permissions: Mapping[str, Role]) -> None:
    """Raise ``NotPermitted`` unless ``operator.role >= permissions[command]`` (deny when the
    command is not in ``permissions``)."""
    needed = permissions.get(command)
    if needed is None or operator.role < needed:
        raise NotPermitted(operator, command, needed)


# Throttling ---------------------------------------------------------------------------------


class LoginThrottle:
    """Failed logins per key in a sliding window of ``window_s`` seconds: after ``limit`` of them,
    ``wait(key)`` is the time until the oldest leaves the window (0.0: go ahead). At most
    ``max_keys`` keys are remembered, the least recently failed forgotten first. Not thread-safe:
    the owner serializes calls."""

    def __init__(self, limit: int, window_s: float, max_keys: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window_s, self.max_keys = int(limit), float(window_s), int(max_keys)
        self._clock = clock
        self._failures: OrderedDict[object, deque[float]] = OrderedDict()

    def wait(self, key: object) -> float:
        times = self._failures.get(key)
        if times is None or len(times) < self.limit:
            return 0.0
        return max(0.0, times[0] + self.window_s - self._clock())

    def failed(self, key: object) -> None:
        times = self._failures.get(key)
        if times is None:
            times = self._failures[key] = deque(maxlen=self.limit)
            while len(self._failures) > self.max_keys:
                self._failures.popitem(last=False)
        else:
            self._failures.move_to_end(key)
        times.append(self._clock())

    def forget(self, key: object) -> None:
        self._failures.pop(key, None)

    def __len__(self) -> int:
        return len(self._failures)


class _Budget:
    """A token bucket: ``take()`` is True at most ``rate`` times a second on average, ``burst`` at once."""

    def __init__(self, rate: float, burst: int, clock: Callable[[], float]) -> None:
        self.rate, self.burst, self._clock = float(rate), float(burst), clock
        self._tokens, self._at = float(burst), clock()

    def take(self) -> bool:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        if self._tokens < 1.0:
            return False
        self._tokens -= 1.0
        return True


class _PinHasher:
    """Runs every PIN check on one thread of its own. A check takes 16 MiB (scrypt), and memory
    freed on a thread stays with that thread's malloc arena: checks on many connection threads at
    once took hundreds of MB that never came back. On one thread it is one buffer, reused."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def verify(self, pin: str, stored: str) -> bool:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shoectl-pin-check")
        return self._pool.submit(verify_pin, pin, stored).result()


# Authentication -----------------------------------------------------------------------------


@dataclass
class _Failures:
    count: int = 0
    locked_until: float | None = None


class Authenticator:
    """Checks operators' PINs against ``operators`` (id -> ``Operator``, e.g. the result of
    ``load_operators``), with a lockout after ``max_failures`` wrong PINs in a row."""

    def __init__(self, operators: Mapping[str, Operator], *, max_failures: int = 5, lockout_s: float = 300.0,
                 clock: Callable[[], float] = time.monotonic, unknown_limit: int = 5, window_s: float = 60.0,
                 max_unknown_ids: int = 1024, dummy_hashes_per_s: float = 2.0, remember_s: float = 300.0,
                 reload: Callable[[], Mapping[str, Operator] | None] | None = None) -> None:
        if max_failures < 1:
            raise ValueError("max_failures must be at least 1")
        if not lockout_s > 0:
            raise ValueError("lockout_s must be more than 0")
        self.max_failures = int(max_failures)
        self.lockout_s = float(lockout_s)
        self._clock = clock
        self._lock = threading.Lock()
        self._operators: dict[str, Operator] = dict(operators)
        self._failures: dict[str, _Failures] = {}
        self._unknown = LoginThrottle(unknown_limit, window_s, max_unknown_ids, clock)
        self._dummy_budget = _Budget(dummy_hashes_per_s, max(1, round(dummy_hashes_per_s * 2)), clock)
        self._hasher = _PinHasher()
        self._remembered = RememberedPins(remember_s, clock)
        self._reload = reload  # the operators file read again when it changed (operators.following)

    @property
    def operators(self) -> Mapping[str, Operator]:
        """The operators currently accepted (a copy)."""
        with self._lock:
            return dict(self._operators)

    def update_operators(self, operators: Mapping[str, Operator]) -> None:
        """Replace the operators (e.g. after the file was reloaded). Lockouts of operators that are
        still there are kept; those of removed operators are dropped."""
        with self._lock:
            self._operators = dict(operators)
            self._failures = {k: v for k, v in self._failures.items() if k in self._operators}
            self._remembered.keep_only(self._operators)

    def authenticate(self, operator_id: str, pin: str) -> Operator:
        """The operator ``operator_id`` if ``pin`` is theirs; else raise ``UnknownOperator``,
        ``Throttled``, ``WrongPin`` or ``LockedOut`` (all ``AuthError``)."""
        if not isinstance(operator_id, str) or not isinstance(pin, str):
            raise TypeError("an operator id and a PIN are strings")
        if self._reload is not None:
            fresh = self._reload()
            if fresh is not None:
                self.update_operators(fresh)
        with self._lock:
            known = operator_id in self._operators
            if not known:
                wait = self._unknown.wait(operator_id)
                if wait:
                    raise Throttled(operator_id, wait)
                self._unknown.failed(operator_id)
                dummy = self._dummy_budget.take()
        if not known:
            if dummy:
                self._hasher.verify(pin, _DUMMY_HASH)  # the same work as for a known id
            raise UnknownOperator(operator_id)
        with self._lock:
            op = self._operators.get(operator_id)
            if op is None:  # removed by update_operators meanwhile
                raise UnknownOperator(operator_id)
            now = self._clock()
            state = self._failures.get(operator_id)
            if state is not None and state.locked_until is not None:
                if now < state.locked_until:
                    raise LockedOut(operator_id, state.locked_until - now, state.count)
                state = None  # the lockout is over: fresh tries
                del self._failures[operator_id]
            if self._remembered.matches(op, pin):
                self._failures.pop(operator_id, None)
                return op
            if self._hasher.verify(pin, op.pin_hash):
                self._failures.pop(operator_id, None)
                self._remembered.remember(op, pin)
                return op
            self._remembered.forget(operator_id)
            count = (state.count if state is not None else 0) + 1
            if count >= self.max_failures:
                self._failures[operator_id] = _Failures(count, now + self.lockout_s)
                raise LockedOut(operator_id, self.lockout_s, count, just_now=True)
            self._failures[operator_id] = _Failures(count)
            raise WrongPin(operator_id, self.max_failures - count, self.lockout_s)

    def authorize(self, operator: Operator, command: str, permissions: Mapping[str, Role]) -> None:
        """``authorize`` (module function) as a method, for callers holding an Authenticator."""
        authorize(operator, command, permissions)

    def failures(self, operator_id: str) -> int:
        """Wrong PINs in a row so far for ``operator_id`` (0 after a success or a finished lockout)."""
        with self._lock:
            state = self._failures.get(operator_id)
            if state is None:
                return 0
            if state.locked_until is not None and self._clock() >= state.locked_until:
                return 0
            return state.count

    def locked_for(self, operator_id: str) -> float:
        """Seconds of lockout left for ``operator_id`` (0.0 when not locked out)."""
        with self._lock:
            state = self._failures.get(operator_id)
            if state is None or state.locked_until is None:
                return 0.0
            return max(0.0, state.locked_until - self._clock())

    def knows(self, operator_id: str) -> bool:
        """Whether ``operator_id`` is one of the operators accepted now."""
        with self._lock:
            return operator_id in self._operators

    def unlock(self, operator_id: str) -> str:
        """Clear ``operator_id``'s wrong-PIN count and lockout (a supervisor's ``unlock_operator``)
        and say what was cleared, in the operator's words."""
        with self._lock:
            state = self._failures.pop(operator_id, None)
            now = self._clock()
        shown = _shown(operator_id)
        if state is None or (state.locked_until is not None and now >= state.locked_until):
            return f"operator {shown} had no wrong PINs to clear"
        wrong = "1 wrong PIN" if state.count == 1 else f"{state.count} wrong PINs"
        if state.locked_until is None:
            return f"operator {shown}: {wrong} in a row cleared"
        return (f"operator {shown} may log in again (locked out after {wrong} in a row, "
                f"with {_duration(state.locked_until - now)} to go)")
