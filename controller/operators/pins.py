"""PINs: the rules a new PIN must pass, and the scrypt hash that is stored instead of it.

Contract:
- ``hash_pin(pin)`` -> ``"scrypt$n=16384,r=8,p=1$<salt>$<hash>"`` (hashlib.scrypt, a fresh
  16-byte salt from ``secrets``, a 32-byte hash, standard base64 with padding). It does not apply
  the PIN rules.
- ``verify_pin(pin, pin_hash)`` compares in constant time; a malformed or weakened hash string
  raises ``PinHashError`` (a ``ValueError``) rather than returning False.
- ``parse_pin_hash(text)`` -> ``PinHash``, checking the scheme, the scrypt parameters (bounded, so
  a hand-edited file can neither weaken a hash nor make every login cost seconds and gigabytes),
  and canonical base64; ``PinHash.format()`` gives the string back.
- ``check_pin(pin, operator_id)`` enforces the PIN rules (4 to 12 ASCII digits, not guessable)
  and raises ``PinError`` (a ``UsageError``).
- ``pin_bytes(pin)``: the bytes a PIN is hashed as (here and by ``controller.operators.remembered``).
- No message ever contains a PIN or a hash string. No I/O; nothing is cached.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, field

from controller.errors import UsageError
from shoectl_config.text import quoted

__all__ = [
    "is_pin_shaped",
    "PIN_MAX",
    "PIN_MIN",
    "SCRYPT_N",
    "SCRYPT_P",
    "SCRYPT_R",
    "PinError",
    "PinHash",
    "PinHashError",
    "check_pin",
    "hash_pin",
    "parse_pin_hash",
    "pin_bytes",
    "pin_shaped_hidden",
    "typed_shown",
    "verify_pin",
]

# scrypt parameters written by hash_pin, and the bounds a stored hash must respect (so a hand-edited
# file can neither weaken a hash nor make every login cost seconds and gigabytes).
SCHEME = "scrypt"
SCRYPT_N, SCRYPT_R, SCRYPT_P = 16384, 8, 1
SALT_BYTES, HASH_BYTES = 16, 32
MIN_N, MAX_N = 2**14, 2**20
MIN_R, MAX_R = 8, 32
MIN_P, MAX_P = 1, 16
MAX_SCRYPT_MEMORY = 256 * 1024 * 1024  # 128 * r * n bytes
MIN_SALT, MAX_SALT = 16, 64
MIN_HASH, MAX_HASH = 32, 64

PIN_MIN, PIN_MAX = 4, 12
_B64 = r"[A-Za-z0-9+/]+={0,2}"
_HASH_RE = re.compile(rf"^scrypt\$n=([1-9][0-9]{{0,9}}),r=([1-9][0-9]{{0,4}}),p=([1-9][0-9]{{0,4}})\$({_B64})\$({_B64})$")


class PinHashError(ValueError):
    """A PIN hash string is malformed or outside the accepted parameters."""


class PinError(UsageError):
    """A PIN breaks the PIN rules (a ``UsageError``, so a ``ValueError``). The message never
    contains the PIN."""


# PIN hashing --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PinHash:
    """A parsed ``scrypt$n=N,r=R,p=P$<salt>$<hash>`` string."""

    n: int
    r: int
    p: int
    salt: bytes = field(repr=False)
    digest: bytes = field(repr=False)

    def format(self) -> str:
        salt = base64.b64encode(self.salt).decode("ascii")
        digest = base64.b64encode(self.digest).decode("ascii")
        return f"{SCHEME}$n={self.n},r={self.r},p={self.p}${salt}${digest}"


def _b64(text: str, what: str) -> bytes:
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise PinHashError(f"the {what} is not base64") from None
    if base64.b64encode(raw).decode("ascii") != text:  # one spelling per value: padding, no stray bits
        raise PinHashError(f"the {what} is not canonical base64")
    return raw


def parse_pin_hash(text: str) -> PinHash:
    """Parse and check a stored PIN hash string; raise ``PinHashError`` saying what is wrong."""
    if not isinstance(text, str):
        raise PinHashError("a PIN hash is a string")
    m = _HASH_RE.fullmatch(text)
    if m is None:  # the text is never echoed: a PIN typed in by mistake must not reach a message
        if "$" in text and text.split("$", 1)[0] != SCHEME:
            raise PinHashError(f"unsupported hash scheme (only {SCHEME})")
        raise PinHashError(f"not a PIN hash of the form {SCHEME}$n=N,r=R,p=P$<salt base64>$<hash base64>")
    n, r, p = (int(m.group(i)) for i in (1, 2, 3))
    if n & (n - 1) or not MIN_N <= n <= MAX_N:
        raise PinHashError(f"scrypt n={n} must be a power of two from {MIN_N} to {MAX_N}")
    if not MIN_R <= r <= MAX_R:
        raise PinHashError(f"scrypt r={r} must be {MIN_R} to {MAX_R}")
    if not MIN_P <= p <= MAX_P:
        raise PinHashError(f"scrypt p={p} must be {MIN_P} to {MAX_P}")
    if 128 * r * n > MAX_SCRYPT_MEMORY:
        raise PinHashError(f"scrypt n={n}, r={r} needs more than {MAX_SCRYPT_MEMORY >> 20} MiB")
    salt = _b64(m.group(4), "salt")
    digest = _b64(m.group(5), "hash")
    if not MIN_SALT <= len(salt) <= MAX_SALT:
        raise PinHashError(f"the salt is {len(salt)} bytes; it must be {MIN_SALT} to {MAX_SALT}")
    if not MIN_HASH <= len(digest) <= MAX_HASH:
        raise PinHashError(f"the hash is {len(digest)} bytes; it must be {MIN_HASH} to {MAX_HASH}")
    return PinHash(n, r, p, salt, digest)


def pin_bytes(pin: str) -> bytes:
    """The bytes a PIN is hashed as (its UTF-8; a lone surrogate from a JSON request kept, not refused)."""
    return pin.encode("utf-8", "surrogatepass")


def _scrypt(pin: str, n: int, r: int, p: int, salt: bytes, dklen: int) -> bytes:
    secret = pin_bytes(pin)
    return hashlib.scrypt(secret, salt=salt, n=n, r=r, p=p, dklen=dklen,
                          maxmem=128 * r * (n + p + 2) + (1 << 20))


def hash_pin(pin: str) -> str:
    """The stored form of ``pin``: scrypt with the default parameters and a fresh random salt.
    Does not apply the PIN rules (see ``check_pin``)."""
    if not isinstance(pin, str):
        raise TypeError("a PIN is a string")
    salt = secrets.token_bytes(SALT_BYTES)
    digest = _scrypt(pin, SCRYPT_N, SCRYPT_R, SCRYPT_P, salt, HASH_BYTES)
    return PinHash(SCRYPT_N, SCRYPT_R, SCRYPT_P, salt, digest).format()


def verify_pin(pin: str, pin_hash: str) -> bool:
    """True if ``pin`` hashes to ``pin_hash`` (compared with ``hmac.compare_digest``). A malformed
    ``pin_hash`` raises ``PinHashError``; a ``pin`` that is not a string raises ``TypeError``."""
    if not isinstance(pin, str):
        raise TypeError("a PIN is a string")
    h = parse_pin_hash(pin_hash)
    return hmac.compare_digest(_scrypt(pin, h.n, h.r, h.p, h.salt, len(h.digest)), h.digest)


# PIN rules ----------------------------------------------------------------------------------


def _is_straight_run(pin: str) -> bool:
    """0123, 4567, 9876, 7890 (runs wrap around 9-0 as on a keypad row)."""
    steps = {(int(b) - int(a)) % 10 for a, b in zip(pin, pin[1:])}
    return steps in ({1}, {9})


def _is_repeated_block(pin: str) -> bool:
    """1111, 1212, 123123, 12341234: a shorter block repeated."""
    return any(len(pin) % k == 0 and pin == pin[:k] * (len(pin) // k) for k in range(1, len(pin) // 2 + 1))


def is_pin_shaped(pin: str) -> bool:
    """Whether ``pin`` could be a PIN at all: ``PIN_MIN`` to ``PIN_MAX`` ASCII digits (``check_pin``
    says why not, and refuses the easily guessed ones besides)."""
    return pin.isascii() and pin.isdigit() and PIN_MIN <= len(pin) <= PIN_MAX


def pin_shaped_id_hidden(text: object) -> str | None:
    """How a message shows an operator id that may be a PIN typed where the id goes (digits only,
    spaces around them): ``<an id of 5 digits, not shown: it may be a PIN>``; None for another."""
    digits = text.strip() if isinstance(text, str) else ""
    return f"<an id of {len(digits)} digits, not shown: it may be a PIN>" if is_pin_shaped(digits) else None


def pin_shaped_hidden(value: object) -> str | None:
    """How a refusal names something a client gave that may be a PIN typed in the wrong place (a
    command, an argument, a file's name): text of a PIN's shape (digits only, blanks around
    them) as ``<text of 4 digits, not shown: they may be a PIN>``, a number of a PIN's shape as
    ``<a number of 4 digits, ...>`` (the type is said: it may be what was wrong); None for
    anything else, a negative number among it (no PIN is one)."""
    if isinstance(value, str) and is_pin_shaped(value.strip()):
        return f"<text of {len(value.strip())} digits, not shown: they may be a PIN>"
    if type(value) is int and is_pin_shaped(str(value)):
        return f"<a number of {len(str(value))} digits, not shown: they may be a PIN>"
    return None


def typed_shown(text: str) -> str:
    """What a person typed, as a local refusal names it (``ctl``, the console): quoted, or hidden
    as ``pin_shaped_hidden`` hides it (a PIN typed where a command or an argument goes was printed
    to the terminal's scrollback and a script's logged errors: a review)."""
    return pin_shaped_hidden(text) or quoted(text)


def check_pin(pin: str, operator_id: str | None = None) -> None:
    """Raise ``PinError`` unless ``pin`` is 4 to 12 ASCII digits and not easily guessed: not one
    digit repeated (1111), not a straight run up or down (1234, 9876, 7890), not a shorter block
    repeated (1212, 123123), and not the operator's id."""
    if not isinstance(pin, str):
        raise PinError("a PIN is a string of digits")
    if not (pin.isascii() and pin.isdigit()):
        raise PinError(f"a PIN is {PIN_MIN} to {PIN_MAX} digits 0-9 and nothing else")
    if not PIN_MIN <= len(pin) <= PIN_MAX:
        raise PinError(f"a PIN is {PIN_MIN} to {PIN_MAX} digits; this one has {len(pin)}")
    if len(set(pin)) == 1:
        raise PinError("the PIN is one digit repeated; choose one that is harder to guess")
    if _is_straight_run(pin):
        raise PinError("the PIN is a straight run of digits, up or down; choose one that is harder to guess")
    if _is_repeated_block(pin):
        raise PinError("the PIN repeats a shorter pattern of digits; choose one that is harder to guess")
    if operator_id is not None and pin == operator_id:
        raise PinError("the PIN is the operator's id; choose one that is harder to guess")

