"""The journal's canonical encoding and hash chain, and the HMAC key file.

Every entry n carries ``prev_hash`` (the hash of entry n-1; 64 zeros for entry 1) and
``hash = H(prev_hash || body)`` where ``prev_hash`` is its 64 lowercase hex characters in ASCII and
``body`` is the UTF-8 of the canonical JSON array::

    [seq, ts, kind, table_id, shoe_id, round_no, device_serial, device_epoch, device_counter, operator, payload]

(``null`` for an absent column, ``payload`` the object itself). Canonical JSON is
``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``; the stored
``payload`` column is exactly the canonical JSON of the payload, so the body is built by splicing
that text in. ``H`` is SHA-256, or HMAC-SHA-256 with the journal's secret key; ``check_key``
says whether a key given fits a journal's (verify and the readers that follow a journal ask it).
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
from collections.abc import Callable
from decimal import Decimal
from json.encoder import c_make_encoder, encode_basestring
from pathlib import Path
from typing import Any

from controller.journal.errors import JournalError, PayloadError
from shoectl_config.files import NotARegularFile, permission_hint, require_regular_file

GENESIS_HASH = "0" * 64
_HEX = frozenset("0123456789abcdef")


def is_hex(value: Any, length: int) -> bool:
    """Whether ``value`` is text of ``length`` lower-case hex digits (a hash, a MAC, a key id)."""
    return isinstance(value, str) and len(value) == length and set(value) <= _HEX
SHA256 = "sha256"
HMAC_SHA256 = "hmac-sha256"
ALGORITHMS = (SHA256, HMAC_SHA256)
MIN_KEY_BYTES = 16

_KEY_ID_PREFIX = b"shoectl-journal key id\x00"
_SHA256_BLOCK = 64
_IPAD = bytes(b ^ 0x36 for b in range(256))
_OPAD = bytes(b ^ 0x5C for b in range(256))


_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_HEAD = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _one_shot(encoder: json.JSONEncoder) -> Callable[[Any], str]:
    """``encoder.encode`` without building an encoder object per call (what ``JSONEncoder.encode``
    does): json's C encoder made once, with the same options. It does not look for circular
    references (a circular value raises RecursionError), so it is used only where that is caught
    or cannot happen; the text it returns is ``encoder.encode``'s."""
    if c_make_encoder is None:  # a Python without json's C accelerator
        return encoder.encode
    make = c_make_encoder(None, encoder.default, encode_basestring, None, encoder.key_separator,
                          encoder.item_separator, encoder.sort_keys, encoder.skipkeys, encoder.allow_nan)
    return lambda obj: "".join(make(obj, 0))


_canonical_unchecked = _one_shot(_CANONICAL)
_head_json = _one_shot(_HEAD)


def canonical_json(obj: Any) -> str:
    """The canonical JSON text of ``obj`` (sorted keys, no spaces, UTF-8 characters kept):
    ``json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``."""
    return _CANONICAL.encode(obj)


def _where(path: str) -> str:
    return path or "the payload"


class _FloatFound(Exception):
    pass


def _float_found(text: str) -> Any:
    raise _FloatFound(text)


_STRICT = json.JSONDecoder(parse_float=_float_found, parse_constant=_float_found)


def decode_payload_strict(text: str) -> Any:
    """``json.loads`` that raises PayloadError on a float, NaN or Infinity."""
    try:
        return _STRICT.decode(text)
    except _FloatFound as exc:
        raise PayloadError(f"{exc} in the payload is a float, which the journal never stores") from None


def decode_canonical(text: str) -> tuple[bool, Any]:
    """(True, what ``text`` decodes to) when ``text`` is a payload as the writer stores it: a JSON
    object and ``canonical_json(decode_payload_strict(text)) == text``; else (False, None). The
    same answer as ``shapes.is_canonical_reference`` without the decoder's and the encoder's set-up
    per call (a decoded value is never circular; whitespace around the value is never canonical)."""
    try:
        value, end = _STRICT.scan_once(text, 0)
        if end == len(text) and text[:1] == "{" and _canonical_unchecked(value) == text:
            return True, value
    except (ValueError, RecursionError, StopIteration, _FloatFound):
        pass
    return False, None


def _check(value: Any, path: str, depth: int, seen: set[int]) -> None:
    if value is None or value is True or value is False:
        return
    if isinstance(value, float):  # before int: no float subclass is an int, but be explicit
        raise PayloadError(
            f"{_where(path)} is a float ({value!r}): the journal takes no floats; "
            "write money and numbers as int (e.g. minor units) or str")
    if isinstance(value, int):
        return
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise PayloadError(f"{_where(path)} is not valid Unicode text ({exc.reason})") from None
        return
    if isinstance(value, (dict, list, tuple)):
        if id(value) in seen:
            raise PayloadError(f"{_where(path)} contains itself (circular reference)")
        seen.add(id(value))
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    raise PayloadError(f"{_where(path)} has a non-string key {key!r}: JSON object keys are strings")
                _check(key, f"{path}[{key!r}]", depth + 1, seen)
                _check(item, f"{path}[{key!r}]", depth + 1, seen)
        else:
            for i, item in enumerate(value):
                _check(item, f"{path}[{i}]", depth + 1, seen)
        seen.discard(id(value))
        return
    hint = " (use int minor units or str)" if isinstance(value, Decimal) else ""
    raise PayloadError(f"{_where(path)} is a {type(value).__name__}, which is not a JSON value{hint}")


def encode_payload(payload: Any) -> str:
    """Check that ``payload`` is a JSON object without floats and return its canonical JSON text.

    Raises PayloadError naming the offending place, e.g. ``payload['bets'][0]['amount'] is a float``.
    Tuples are accepted and read back as lists.
    """
    return encode_payload_value(payload)[0]


def encode_payload_value(payload: Any) -> tuple[str, Any]:
    """``encode_payload``, also returning the payload as it reads back (``json.loads`` of the text)."""
    text, _, value = encode_payload_parts(payload)
    return text, value


def encode_payload_parts(payload: Any) -> tuple[str, bytes, Any]:
    """``encode_payload_value`` with the text's UTF-8 bytes in the middle: the writer stores the
    text and hashes those bytes (``entry_body_bytes``), encoding the payload once."""
    if not isinstance(payload, dict):
        raise PayloadError(f"the payload must be a dict (a JSON object), got {type(payload).__name__}")
    # Fast path: encode, decode refusing floats, compare. Any doubt goes to the precise walk below.
    try:
        text = _canonical_unchecked(payload)
        data = text.encode("utf-8")
        back = _STRICT.scan_once(text, 0)[0]  # the whole text: one value the encoder just wrote
        if back == payload:
            return text, data, back
    except (TypeError, ValueError, RecursionError, _FloatFound, StopIteration):
        pass
    try:
        _check(payload, "payload", 0, set())  # raises with the place, or passes (e.g. a tuple)
        text = canonical_json(payload)
    except PayloadError:
        raise
    except RecursionError:
        raise PayloadError("the payload is nested too deeply") from None
    except (TypeError, ValueError) as exc:
        raise PayloadError(f"the payload is not JSON: {exc}") from None
    return text, text.encode("utf-8"), json.loads(text)


def entry_body(seq: int, ts: str, kind: str, table_id: str, shoe_id: str | None, round_no: int | None,
               device_serial: str | None, device_epoch: int | None, device_counter: int | None,
               operator: str | None, payload_text: str) -> bytes:
    """The bytes an entry's hash covers after ``prev_hash`` (see the module docstring)."""
    return entry_body_bytes(seq, ts, kind, table_id, shoe_id, round_no, device_serial, device_epoch, device_counter,
                            operator, payload_text.encode("utf-8"))


def entry_body_bytes(seq: int, ts: str, kind: str, table_id: str, shoe_id: str | None, round_no: int | None,
                     device_serial: str | None, device_epoch: int | None, device_counter: int | None,
                     operator: str | None, payload_bytes: bytes) -> bytes:
    """``entry_body`` with the payload's canonical JSON given as its UTF-8 bytes (the same result)."""
    head = _head_json([seq, ts, kind, table_id, shoe_id, round_no, device_serial, device_epoch, device_counter,
                       operator])  # no containers in it: nothing circular
    return b"".join((head[:-1].encode("utf-8"), b",", payload_bytes, b"]"))


def key_id(key: bytes) -> str:
    """A public fingerprint of an HMAC key (16 hex digits), stored in the journal's ``meta`` table
    so that a wrong key is reported as such. It is not the key and does not reveal it."""
    return hashlib.sha256(_KEY_ID_PREFIX + key).hexdigest()[:16]


class Hasher:
    """Computes entry hashes for one algorithm (and key): ``digest(prev_hash, body)``, or
    ``hex_digest(data)`` of ``prev_hash || body`` already joined (hex, as stored)."""

    __slots__ = ("algorithm", "_key", "key_id", "hex_digest")

    def __init__(self, key: bytes | None = None) -> None:
        if key is not None and not isinstance(key, (bytes, bytearray)):
            raise TypeError("the HMAC key must be bytes (see load_hmac_key)")
        if key is not None and len(key) == 0:
            raise JournalError("the HMAC key is empty")
        self._key = bytes(key) if key is not None else None
        self.algorithm = HMAC_SHA256 if key is not None else SHA256
        self.key_id = key_id(self._key) if self._key is not None else None
        self.hex_digest: Callable[[bytes], str] = _sha256_hex if self._key is None else _hmac_sha256_hex(self._key)

    def digest(self, prev_hash: str, body: bytes) -> str:
        return self.hex_digest(prev_hash.encode("ascii") + body)

    def mac(self, domain: bytes, data: bytes) -> str | None:
        """HMAC-SHA-256 with the key over ``domain`` (a prefix that no other use shares and that
        never starts like an entry's ``prev_hash``) and ``data``; None without a key."""
        if self._key is None:
            return None
        return hmac.digest(self._key, domain + data, "sha256").hex()


def _sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _hmac_sha256_hex(key: bytes) -> Callable[[bytes], str]:
    """HMAC-SHA-256 with ``key`` (RFC 2104), its keyed inner and outer states computed once and
    copied for each message: several times faster than ``hmac.digest`` for short messages."""
    if len(key) > _SHA256_BLOCK:
        key = hashlib.sha256(key).digest()
    key = key.ljust(_SHA256_BLOCK, b"\0")
    inner = hashlib.sha256(key.translate(_IPAD))
    outer = hashlib.sha256(key.translate(_OPAD))

    def hex_digest(data: bytes) -> str:
        i = inner.copy()
        i.update(data)
        o = outer.copy()
        o.update(i.digest())
        return o.hexdigest()
    return hex_digest


def load_hmac_key(path: str | os.PathLike[str]) -> bytes:
    """Read an HMAC key from a secret file: its exact bytes (a trailing newline is part of the key).

    The file must exist, be a regular file, hold at least 16 bytes, and be readable and writable
    by its owner only (no group or world permission to read or write it): otherwise JournalError
    says why.
    Create one with ``umask 077; head -c 32 /dev/urandom > journal.key``.
    """
    p = Path(path)
    try:
        require_regular_file(p)  # a FIFO is never opened (it would block until a writer came)
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise JournalError(f"{p}: HMAC key file not found") from None
    except NotARegularFile as exc:
        raise JournalError(f"{exc} (the HMAC key file)") from None
    except PermissionError:
        raise JournalError(f"{p}: cannot read the HMAC key file: permission denied ({permission_hint(p)})") from None
    except OSError as exc:
        raise JournalError(f"{p}: cannot read the HMAC key file: {exc.strerror or exc}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise JournalError(f"{p}: the HMAC key file is not a regular file")
        mode = stat.S_IMODE(st.st_mode)
        if mode & (stat.S_IRGRP | stat.S_IROTH):
            raise JournalError(
                f"{p}: the HMAC key file is readable by group or others (mode {mode:04o}); "
                "restrict it with chmod 600")
        if mode & (stat.S_IWGRP | stat.S_IWOTH):  # a security review: 0622 was taken without a word
            raise JournalError(
                f"{p}: the HMAC key file is writable by group or others (mode {mode:04o}): any of them could put "
                "a key of their own in its place; restrict it with chmod 600")
        chunks = []
        while True:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    except JournalError:
        raise
    except OSError as exc:
        raise JournalError(f"{p}: cannot read the HMAC key file: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    key = b"".join(chunks)
    if not key:
        raise JournalError(f"{p}: the HMAC key file is empty")
    if len(key) < MIN_KEY_BYTES:
        raise JournalError(f"{p}: the HMAC key is too short ({len(key)} bytes; at least {MIN_KEY_BYTES} needed)")
    return key


def key_id_shown(key_id: str | None) -> str:
    """`` (key id ...)`` for a message, or nothing for no key id (a plain chain, or an edited file)."""
    return f" (key id {key_id})" if key_id else ""


def check_key(meta: dict[str, str], hasher: Hasher) -> tuple[str | None, bool]:
    """For a journal whose ``meta`` table says this, read with ``hasher``: (why the key does not
    fit, whether a key is missing); (None, False) when it fits."""
    algorithm = meta["hash_algorithm"]
    if algorithm == HMAC_SHA256 and hasher.algorithm != HMAC_SHA256:
        return f"HMAC key required: the journal is HMAC-protected{key_id_shown(meta.get('key_id'))}; give its key", True
    if algorithm != HMAC_SHA256 and hasher.algorithm == HMAC_SHA256:
        return ("an HMAC key was given but the journal is not HMAC-protected (plain sha256): "
                "it was created without a key, or re-chained without it"), False
    if algorithm == HMAC_SHA256 and meta.get("key_id") is not None and meta.get("key_id") != hasher.key_id:
        return f"wrong HMAC key: its key id is {hasher.key_id}, the journal's is {meta.get('key_id')}", False
    return None, False
