"""The operators file: who may work the table, in which role, with which PIN hash.

The file is TOML, one table per operator (docs/operators.md)::

    [operators.d1]
    role = "dealer"                 # dealer | floorperson | supervisor
    name = "Dana Lee"               # optional
    pin_hash = "scrypt$n=16384,r=8,p=1$<salt base64>$<hash base64>"
    created = 2025-03-01T18:04:11Z  # optional, an offset date-time

Contract:
- ``load_operators(path)`` reads and validates the whole file and returns ``Operators`` (a
  read-only mapping id -> ``Operator``). Every problem raises ``OperatorsError(source, key,
  reason)`` (a ``UsageError``, so a ``ValueError``) whose one-line message names the file, the
  dotted key (``operators.d1.role``) and the reason; nothing else escapes. A file that the group
  or others may read or write (mode bits 0o066) is not an error: it is reported in
  ``Operators.warnings``.
- ``add_operator`` / ``remove_operator`` read, change and rewrite the file under an exclusive
  lock (``.NAME.lock`` beside it, or beside the file a symbolic link names), both in
  ``controller.operators.file_writes``. Writes are atomic: a temporary file in the same directory,
  created 0600, written and fsynced, then ``os.replace``d over the old one and the directory
  fsynced. When anything fails the old file is untouched. The new file keeps the owner and group
  of the one it replaces (and the lock file gets them) where the process may give them (root);
  its mode is 0600 all the same. The file is machine-written: comments and formatting are not
  preserved. A new PIN must pass ``check_pin``; only its hash is stored.
- PIN rules and hashing live in ``controller.operators.pins``; their public names are also
  importable from here.
- No I/O at import time; nothing is cached.
"""
from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from controller.errors import UsageError
from controller.operators.file_writes import locked, write_whole
from controller.operators.ids import ID_RULE, is_operator_id, reserved_id
from controller.operators.pins import (  # the PIN names are also public here (__all__)
    PinError,
    PinHash,
    PinHashError,
    check_pin,
    hash_pin,
    parse_pin_hash,
    verify_pin,
)
from controller.roles import Role
from shoectl_config.documents import parse_toml
from shoectl_config.errors import ConfigError
from shoectl_config.files import read_regular_file
from shoectl_config.parser import DocumentParser
from shoectl_config.text import key_part, safe as _safe, typename as _typename

__all__ = [
    "DEFAULT_PATH", "FILE_MODE", "OPERATORS_FILE", "Operator", "Operators", "OperatorsError", "PinError", "PinHash",
    "PinHashError", "add_operator", "check_name", "check_pin", "hash_pin", "is_operator_id", "load_operators",
    "operators_file_beside", "parse_pin_hash", "remove_operator", "reserved_id", "verify_pin",
]
OPERATORS_FILE = "operators.toml"  # its name beside a journal, where a table looks for it by default
DEFAULT_PATH = f"var/{OPERATORS_FILE}"  # relative to the working directory


def operators_file_beside(journal: str | os.PathLike[str]) -> Path:
    """The operators file a table on ``journal`` reads unless ``--operators`` names another."""
    return Path(journal).parent / OPERATORS_FILE


FILE_MODE = 0o600
MAX_FILE_BYTES = 1024 * 1024
ROLE_NAMES = tuple(r.name.lower() for r in Role)  # ("dealer", "floorperson", "supervisor")
MAX_NAME = 64

_OPERATOR_KEYS = ("role", "name", "pin_hash", "created")
_HEADER = (
    "# shoectl operators file: written by `shoectl operators`; see docs/operators.md.\n"
    "# PIN hashes only, never PINs. Keep this file mode 0600.\n"
)


# Errors -------------------------------------------------------------------------------------


class OperatorsError(UsageError, ConfigError):
    """The operators file is invalid, missing, unreadable or cannot be written, or a change to it
    is refused. The message names the file, the dotted key and the reason, on one line; the parts
    are also available as attributes (``ConfigError``). A ``UsageError`` (so a ``ValueError``): a
    command that lets it escape reports it as one line, exit 2."""


# Data ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Operator:
    """One operator. ``pin_hash`` is kept out of ``repr`` so it does not end up in logs."""

    id: str
    role: Role
    name: str | None
    pin_hash: str = field(repr=False)
    created: datetime | None = None

    def to_public(self) -> dict[str, Any]:
        """``{"id", "role", "name", "created"}`` (``created`` as RFC 3339 UTC or None); never the hash."""
        return {"id": self.id, "role": self.role.name.lower(), "name": self.name,
                "created": _format_datetime(self.created) if self.created is not None else None}


class Operators(Mapping[str, Operator]):
    """A read-only mapping id -> ``Operator`` as loaded from ``path``, with the non-fatal findings
    about the file (e.g. its permissions) in ``warnings``."""

    def __init__(self, operators: Iterable[Operator] = (), *, path: str | None = None,
                 warnings: Iterable[str] = ()) -> None:
        self._by_id: dict[str, Operator] = {}
        for op in operators:
            if op.id in self._by_id:
                raise ValueError(f"operator {op.id!r} given twice")
            self._by_id[op.id] = op
        self.path = path
        self.warnings: list[str] = list(warnings)

    def __getitem__(self, key: str) -> Operator:
        return self._by_id[key]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._by_id))

    def __len__(self) -> int:
        return len(self._by_id)

    def __repr__(self) -> str:
        return f"Operators({sorted(self._by_id)!r}, path={self.path!r})"


# Loading ------------------------------------------------------------------------------------


def _source(path: str | os.PathLike[str]) -> str:
    try:
        return os.fspath(path)
    except TypeError:
        raise OperatorsError(_safe(repr(path)), "", "not a file path") from None


def _mode_warnings(source: str, mode: int) -> list[str]:
    perms = stat.S_IMODE(mode)
    out = []
    if perms & 0o022:
        out.append(f"{source}: mode {perms:04o} lets other users change who may operate the table; "
                   f"chmod 600 {source}")
    if perms & 0o044:
        out.append(f"{source}: mode {perms:04o} lets other users read the PIN hashes; chmod 600 {source}")
    return out


def check_name(value: object, source: str = "--name", key: str = "name") -> str:
    """An operator's display name: one printable line of at most ``MAX_NAME`` characters, stripped;
    ``OperatorsError`` otherwise (``source`` and ``key`` name where it came from)."""
    return _OperatorsParser(None, source).text(key, value, MAX_NAME)


def _check_id(value: object, source: str, key: str, *, reserved_ok: bool = False) -> str:
    if not is_operator_id(value):
        raise OperatorsError(source, key, f"not a valid operator id ({ID_RULE})")
    if not reserved_ok and (why := reserved_id(value)) is not None:
        raise OperatorsError(source, key, why)
    return value


class _OperatorsParser(DocumentParser):
    """One validation pass over a parsed operators file; raises on the first problem."""

    error = OperatorsError
    reserved_ok = False  # a reserved id let in: only for ``remove_operator`` to take it out

    def operators(self) -> list[Operator]:
        self.document(("operators",))
        return [self.operator(op_id, entry) for op_id, entry in self.section("operators", None).items()]

    def operator(self, op_id: str, entry: object) -> Operator:
        base = f"operators.{key_part(op_id)}"
        _check_id(op_id, self.source, base, reserved_ok=self.reserved_ok)
        entry = self.table(base, entry, _OPERATOR_KEYS)
        for key in ("role", "pin_hash"):
            if key not in entry:
                raise self.missing(f"{base}.{key}")
        role = Role.parse(self.choice(f"{base}.role", entry["role"], ROLE_NAMES))
        pin_hash = entry["pin_hash"]
        if not isinstance(pin_hash, str):  # never shown: it may be a PIN typed in by mistake
            raise self.fail(f"{base}.pin_hash", f"expected a string, got {_typename(pin_hash)}")
        try:
            parse_pin_hash(pin_hash)
        except PinHashError as exc:
            raise self.fail(f"{base}.pin_hash", str(exc)) from None
        name = self.text(f"{base}.name", entry["name"], MAX_NAME) if "name" in entry else None
        created = entry.get("created")
        if created is not None and not (isinstance(created, datetime) and created.tzinfo is not None):
            raise self.fail(f"{base}.created",
                            f"must be an offset date-time such as 2025-03-01T18:04:11Z, not {_typename(created)}")
        if created is not None:
            try:  # it is shown and written in UTC: a time at the calendar's edge has none (a review of clocks)
                created.astimezone(timezone.utc)
            except OverflowError:
                raise self.fail(f"{base}.created", f"{created.isoformat()} is outside the years 1 to 9999 in UTC") from None
        return Operator(op_id, role, name, pin_hash, created)


def _parse_document(raw: bytes, source: str, reserved_ok: bool = False) -> list[Operator]:
    parser = _OperatorsParser(parse_toml(raw, source, OperatorsError), source)
    parser.reserved_ok = reserved_ok
    return parser.operators()


def _read(path: str | os.PathLike[str], reserved_ok: bool = False,
          owner_problem: Callable[[int], str | None] | None = None) -> tuple[list[Operator], list[str]]:
    shown, raw, mode = read_regular_file(path, MAX_FILE_BYTES, OperatorsError, owner_problem=owner_problem)
    return _parse_document(raw, shown, reserved_ok), _mode_warnings(shown, mode)


def load_operators(path: str | os.PathLike[str] = DEFAULT_PATH, *,
                   owner_problem: Callable[[int], str | None] | None = None) -> Operators:
    """Read and validate the operators file at ``path``. Raises ``OperatorsError``, also when
    ``owner_problem(the uid of the file read)`` says why its owner may not decide; a file others
    may read or write loads, with a finding in ``.warnings``."""
    ops, warnings = _read(path, owner_problem=owner_problem)
    return Operators(ops, path=_safe(_source(path)), warnings=warnings)


# Writing ------------------------------------------------------------------------------------


def _format_datetime(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


def _render(ops: Iterable[Operator]) -> str:
    parts = [_HEADER]
    for op in sorted(ops, key=lambda o: o.id):
        lines = [f"[operators.{op.id}]", f'role = "{op.role.name.lower()}"']
        if op.name is not None:
            lines.append(f"name = {json.dumps(op.name, ensure_ascii=False)}")  # a valid TOML basic string
        lines.append(f'pin_hash = "{op.pin_hash}"')
        if op.created is not None:
            lines.append(f"created = {_format_datetime(op.created)}")
        parts.append("\n" + "\n".join(lines) + "\n")
    return "".join(parts)


@contextlib.contextmanager
def _changing(path: str | os.PathLike[str], *, create: bool) -> Iterator[tuple[str, dict[str, Operator], list[Operator]]]:
    """Lock the file, yield (shown name, current operators by id, a list to fill with the new
    contents), then write the new contents atomically. OSErrors become ``OperatorsError``. A
    remove (not ``create``) reads a reserved id too, to take it out; its caller read the file first."""
    source = _source(path)
    shown = _safe(source)
    p = Path(source)
    if create and not p.parent.is_dir() and os.path.normpath(source) != os.path.normpath(DEFAULT_PATH):
        # A mistyped folder would put the operators where no table reads them: only var/ is made.
        raise OperatorsError(shown, "", f"no such folder {_safe(str(p.parent))} (create it first)")
    try:
        if create:
            p.parent.mkdir(parents=True, exist_ok=True)
        with locked(p, FILE_MODE, lambda reason: OperatorsError(shown, "", reason)):
            try:
                current = {op.id: op for op in _read(p, reserved_ok=not create)[0]}
            except OperatorsError as exc:
                if not (create and exc.reason == "file not found"):
                    raise
                current = {}
            new: list[Operator] = []
            yield shown, current, new
            data = _render(new).encode("utf-8")
            _parse_document(data, shown)  # never write a file this module could not load back
            write_whole(p, data, FILE_MODE)
    except OSError as exc:
        reason = _safe(exc.strerror or str(exc))
        raise OperatorsError(shown, "", f"cannot write the file: {reason}") from None
    except ValueError as exc:
        if isinstance(exc, OperatorsError):
            raise
        raise OperatorsError(shown, "", f"cannot write the file: {_safe(str(exc))}") from None


def add_operator(path: str | os.PathLike[str], id: str, role: Role | str, pin: str, name: str | None = None,
                 *, replace: bool = False, now: datetime | None = None) -> Operator:
    """Add operator ``id`` with ``role`` and the hash of ``pin`` to the file at ``path`` (created
    if missing; of a missing folder only ``DEFAULT_PATH``'s is made) and return it. Refuses an existing id unless ``replace``;
    replacing keeps the old name when ``name`` is None, and when the operator was added
    (``created``: a PIN changed every few months lost it, a review). The PIN must pass ``check_pin``.
    Raises ``OperatorsError`` (bad id, role or name, existing id, unusable file) or ``PinError``."""
    shown = _safe(_source(path))
    key = f"operators.{_safe(str(id))}"
    _check_id(id, shown, key)
    if isinstance(role, str):
        try:
            role = Role.parse(role)
        except ValueError as exc:
            raise OperatorsError(shown, f"{key}.role", str(exc)) from None
    elif not isinstance(role, Role):
        raise OperatorsError(shown, f"{key}.role", f"must be one of {', '.join(ROLE_NAMES)}")
    if name is not None:
        name = check_name(name, shown, f"{key}.name")
    check_pin(pin, id)
    pin_hash = hash_pin(pin)
    created = now if now is not None else datetime.now(timezone.utc)
    with _changing(path, create=True) as (shown, current, new):
        old = current.pop(id, None)
        if old is not None and not replace:
            raise OperatorsError(shown, key, "already exists (use --replace to change its role, name or PIN)")
        if old is not None and name is None:
            name = old.name
        if old is not None:  # a new PIN or role: the operator was added then (or when, the file does not say)
            created = old.created
        op = Operator(id, role, name, pin_hash, created)
        new.extend([*current.values(), op])
    return op


def remove_operator(path: str | os.PathLike[str], id: str) -> Operator:
    """Remove operator ``id`` from the file at ``path`` and return it. Raises ``OperatorsError``
    if there is no such operator or the file cannot be read or written."""
    # Said before the lock file is made beside it: a refused command changes nothing there (a
    # configuration review); the lock's own read says it again if the file changed meanwhile.
    if id not in {op.id for op in _read(_source(path), reserved_ok=True)[0]}:  # (an id reserved since: taken out)
        raise OperatorsError(_safe(_source(path)), f"operators.{_safe(str(id))}", "no such operator")
    with _changing(path, create=False) as (shown, current, new):
        old = current.pop(id, None)
        if old is None:
            raise OperatorsError(shown, f"operators.{_safe(str(id))}", "no such operator")
        new.extend(current.values())
    return old
