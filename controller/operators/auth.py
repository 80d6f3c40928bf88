"""PIN authentication with lockout, and role authorization.

Contract:
- ``Authenticator(operators, *, max_failures=5, lockout_s=300, clock=time.monotonic,
  max_unknown_ids=4096, dummy_hashes_per_s=2, remember_s=300, reload=None, sleep=time.sleep)``
  (``clock`` and ``sleep`` for tests); ``reload``, when
  given, is asked before each check for the operators read again (``controller.operators.following``:
  a running table follows its operators file). ``authenticate(id, pin)`` returns the ``Operator``
  or raises an ``AuthError`` (``controller.operators.errors``): ``WrongPin`` (``tries_left`` before
  the lockout), ``LockedOut`` (``retry_after`` seconds), ``UnknownOperator`` (no such id). ``max_failures`` failed logins in a row lock that id out
  for ``lockout_s`` seconds (the failure that reaches the limit raises ``LockedOut``); while locked
  out even the right PIN is refused, without checking it. A success resets the count; so does the
  end of a lockout, and ``lockout_s`` without another failed login.
- Every id is counted and locked out alike, an operator's or not (``controller.operators.lockouts``:
  of the ids that are no operator's, the last ``max_unknown_ids`` to fail), and
  ``UnknownOperator.said`` is what an operator would be told at that count: the replies do not say
  which ids exist. Nor does the time one check takes: an
  unknown id's PIN is checked against a dummy hash with the same scrypt parameters, at most
  ``dummy_hashes_per_s`` times a second on average (in bursts of twice that); beyond that the
  check waits as long as a check takes instead, so a flood of unknown ids cannot take the table's
  processor time. Guesses for one id wait for each other, known or not. (Guesses for several
  ids at once still differ: every operator's check waits for the one lock, an unknown id's only
  for its own id's turn; docs/operators.md.)
- A PIN that passed its scrypt check is remembered for ``remember_s`` seconds (from that check;
  ``controller.operators.remembered``: a keyed hash in memory, ended by a new PIN in the file):
  the same operator's right PIN is then accepted without another scrypt. A wrong PIN always
  costs a scrypt, and makes the operator's PIN be checked in full again next time; so does a
  lockout. The lockout check comes first, as before: while locked out even a remembered PIN is
  refused.
- ``unlock(id)`` ends an operator's count and lockout (a supervisor's ``unlock_operator``);
  ``knows(id)``, ``failures(id)`` and ``locked_for(id)`` report.
- Every PIN check runs on one thread of the ``Authenticator``'s own (started at the first check),
  so the 16 MiB each scrypt takes is one buffer reused, not one kept per connection thread.
- The lockout state is in memory only: a restart of the process that owns the ``Authenticator``
  (``shoectl run``) clears it. Restarting needs access to the table computer, which the console
  does not give.
- ``authenticate`` is thread-safe: operators' attempts are serialized under one lock (each costs
  one scrypt, about 50-100 ms), so parallel guesses cannot overrun the limit; an unknown id's is
  counted under that lock and then waits its id's turn outside it.
- ``LoginThrottle`` (failures per key in a sliding window, bounded memory) is public: the control
  socket uses one per connection.
- ``authorize(operator, command, permissions)`` raises ``NotPermitted`` unless the operator's role
  is at least ``permissions[command]``; a command not in ``permissions`` is not permitted.
- Exit codes for the CLI layer: ``EXIT_AUTH`` (3) for any ``AuthError``, ``EXIT_FORBIDDEN`` (4)
  for ``NotPermitted``; both are on the exception as ``exit_code``. No message contains a PIN.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor

from controller.operators.errors import (
    EXIT_AUTH,
    EXIT_FORBIDDEN,
    AccessError,
    AuthError,
    LockedOut,
    NotPermitted,
    Throttled,
    UnknownOperator,
    WrongPin,
)
from controller.operators.lockouts import Lockouts
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

_TURNS = 64  # locks that give guesses for one unknown id their turns (ids share one by hash)
# Verified against when the id is unknown, so that an unknown id costs one scrypt like a known one.
_DUMMY_HASH = PinHash(SCRYPT_N, SCRYPT_R, SCRYPT_P, b"\0" * 16, b"\0" * 32).format()


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
        self.typical_s = 0.05  # how long a check takes here, followed as checks are made

    def verify(self, pin: str, stored: str) -> bool:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="shoectl-pin-check")
        return self._pool.submit(self._timed, pin, stored).result()

    def _timed(self, pin: str, stored: str) -> bool:
        started = time.perf_counter()
        try:
            return verify_pin(pin, stored)
        finally:
            self.typical_s += (time.perf_counter() - started - self.typical_s) / 8


# Authentication -----------------------------------------------------------------------------


class Authenticator:
    """Checks operators' PINs against ``operators`` (id -> ``Operator``, e.g. the result of
    ``load_operators``), with a lockout after ``max_failures`` failed logins in a row."""

    def __init__(self, operators: Mapping[str, Operator], *, max_failures: int = 5, lockout_s: float = 300.0,
                 clock: Callable[[], float] = time.monotonic, max_unknown_ids: int = 4096,
                 dummy_hashes_per_s: float = 2.0, remember_s: float = 300.0,
                 reload: Callable[[], Mapping[str, Operator] | None] | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self._lockouts = Lockouts(max_failures, lockout_s, max_unknown_ids, clock)
        self._sleep = sleep  # the wait of an unknown id past the dummy budget
        self.max_failures = self._lockouts.max_failures
        self.lockout_s = self._lockouts.lockout_s
        self._clock = clock
        self._lock = threading.Lock()
        self._operators: dict[str, Operator] = dict(operators)
        self._lockouts.know(self._operators)
        self._turns = tuple(threading.Lock() for _ in range(_TURNS))  # an unknown id's turn, by its hash
        self._dummy_budget = _Budget(dummy_hashes_per_s, max(1, round(dummy_hashes_per_s * 2)), clock)
        self._hasher = _PinHasher()
        self._remembered = RememberedPins(remember_s, clock)
        self._reload = reload  # the operators file read again when it changed (operators.following)
        self._following = threading.Lock()  # one reload read and applied at a time

    @property
    def operators(self) -> Mapping[str, Operator]:
        """The operators currently accepted (a copy)."""
        with self._lock:
            return dict(self._operators)

    def has_operators(self) -> bool:
        """Whether any operator is known, the operators file read again first if it changed."""
        self._follow()
        with self._lock:
            return bool(self._operators)

    def _follow(self) -> None:
        # The file read and the list applied in one turn: two connections following at once applied
        # their reads in the wrong order (the older after the newer), and the file unchanged since,
        # a removed operator was accepted until its next change (a review of the threads).
        if self._reload is not None:
            with self._following:
                fresh = self._reload()
                if fresh is not None:
                    self.update_operators(fresh)

    def update_operators(self, operators: Mapping[str, Operator]) -> None:
        """Replace the operators (e.g. after the file was reloaded). Counts and lockouts are by id
        and stay as they were: editing the file neither ends nor reveals them."""
        with self._lock:
            self._operators = dict(operators)
            self._lockouts.know(self._operators)
            self._remembered.keep_only(self._operators)

    def authenticate(self, operator_id: str, pin: str) -> Operator:
        """The operator ``operator_id`` if ``pin`` is theirs; else raise ``WrongPin``,
        ``LockedOut`` or ``UnknownOperator`` (all ``AuthError``)."""
        if not isinstance(operator_id, str) or not isinstance(pin, str):
            raise TypeError("an operator id and a PIN are strings")
        self._follow()
        with self._lock:
            op, told = self._before_check(operator_id)
            dummy = op is None and self._dummy_budget.take()
        if op is None:  # outside the lock, in this id's turn: guesses for one id wait for each other
            with self._turns[hash(operator_id) % _TURNS]:
                if dummy:
                    self._hasher.verify(pin, _DUMMY_HASH)  # the same work as for a known id
                else:
                    self._sleep(self._hasher.typical_s)  # the same time, without the work
            raise UnknownOperator(operator_id, told)
        with self._lock:
            # Again: a parallel guess may have locked the operator out meanwhile, or the file
            # changed; then nothing is checked.
            op, told = self._before_check(operator_id)
            if op is None:
                raise UnknownOperator(operator_id, told)
            if self._remembered.matches(op, pin):
                self._lockouts.succeeded(operator_id)
                return op
            if self._hasher.verify(pin, op.pin_hash):
                self._lockouts.succeeded(operator_id)
                self._remembered.remember(op, pin)
                return op
            self._remembered.forget(operator_id)
            raise self._lockouts.failed(operator_id)

    def _before_check(self, operator_id: str) -> tuple[Operator, None] | tuple[None, WrongPin | LockedOut]:
        """Under the lock, before any PIN is checked: raise ``LockedOut`` while the id is locked out
        (an unknown id's ``UnknownOperator`` says the same); (the operator, None) when there is a
        PIN to check; (None, the failure just counted) for an unknown id."""
        op = self._operators.get(operator_id)
        held = self._lockouts.holding(operator_id)
        if held is not None:
            raise held if op is not None else UnknownOperator(operator_id, held)
        if op is None:
            return None, self._lockouts.failed(operator_id)
        return op, None

    def authorize(self, operator: Operator, command: str, permissions: Mapping[str, Role]) -> None:
        """``authorize`` (module function) as a method, for callers holding an Authenticator."""
        authorize(operator, command, permissions)

    def knows(self, operator_id: str) -> bool:
        """Whether ``operator_id`` is one of the operators accepted now."""
        with self._lock:
            return operator_id in self._operators

    def failures(self, operator_id: str) -> int:
        """Failed logins in a row so far for ``operator_id`` (0 after a success or a finished lockout)."""
        with self._lock:
            return self._lockouts.failures(operator_id)

    def locked_for(self, operator_id: str) -> float:
        """Seconds of lockout left for ``operator_id`` (0.0 when not locked out)."""
        with self._lock:
            return self._lockouts.locked_for(operator_id)

    def unlock(self, operator_id: str) -> str:
        """Clear ``operator_id``'s count of failed logins and lockout (a supervisor's
        ``unlock_operator``) and say what was cleared, in the operator's words."""
        with self._lock:
            return self._lockouts.unlock(operator_id)
