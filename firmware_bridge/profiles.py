"""Device profiles: what a device model is (identity, transport, capabilities, timing), as TOML data.

One file per device model, ``NAME.toml``; the file stem is the profile name. Every key is
documented in ``docs/device-profiles.md``.

Contract:
- ``load_profile(path)`` reads and validates one file; ``parse_profile(data, source, name)``
  validates an already-parsed mapping. The result is an immutable ``Profile``.
- ``profile_dirs()`` is the search path: the directories in ``$SHOECTL_PROFILE_PATH``
  (``os.pathsep``-separated, searched first, so a site can override a shipped profile by name),
  then the built-in profiles (``device_profiles/``, an installed data package).
  ``profile_files()`` lists the ``*.toml`` files in it (names starting with ``.`` are ignored:
  editor lock and backup files).
- ``list_profiles()`` loads the first file of each name, sorted by name, and raises on the first
  bad file: nothing is skipped silently. ``check_profiles(paths)`` loads every file and returns
  one ``ProfileCheck`` per file instead of raising. ``get_profile(name)`` loads one profile by
  name; ``resolve_profile(spec)`` takes a name or a file path.
- Every problem raises ``ProfileError(source, key, reason)`` (a ``ValueError``): one line naming
  the file, the dotted key (``transport.endpoint_in``) and the reason. Nothing else escapes from
  these functions: bad bytes, bad TOML, bad types and values, unreadable files and unknown names
  are all ``ProfileError``.
- No I/O at import time; nothing is cached (a profile edited on disk is seen on the next call).
"""
from __future__ import annotations

import importlib.resources
import math
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path
from typing import Any, ClassVar

__all__ = [
    "Capabilities",
    "KINDS",
    "PROFILE_PATH_ENV",
    "Profile",
    "ProfileCheck",
    "ProfileError",
    "SerialTransportSpec",
    "Timing",
    "UsbIdentity",
    "UsbTransportSpec",
    "builtin_profile_dir",
    "check_profiles",
    "get_profile",
    "list_profiles",
    "load_profile",
    "parse_profile",
    "profile_dirs",
    "profile_files",
    "profile_names",
    "resolve_profile",
]

PROFILE_PATH_ENV = "SHOECTL_PROFILE_PATH"
MAX_FILE_BYTES = 64 * 1024  # a profile is about a kilobyte

KINDS = ("shoe", "shuffler", "shuffler-shoe")
SHUFFLERS = ("none", "batch", "continuous")
TRANSPORTS = ("serial", "usb")
PARITIES = ("N", "E", "O", "M", "S")  # pyserial's PARITY_NONE, _EVEN, _ODD, _MARK, _SPACE
STOPBITS = (1, 1.5, 2)  # pyserial's STOPBITS_ONE, _ONE_POINT_FIVE, _TWO
TRANSFERS = ("bulk", "interrupt")
BULK_PACKET_SIZES = (8, 16, 32, 64, 512, 1024)  # full, high and super speed bulk endpoints
MIN_BAUD, MAX_BAUD = 50, 4_000_000
MAX_TEXT = 126  # a USB string descriptor holds at most 126 UTF-16 code units
MAX_DESCRIPTION = 500

_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
# Serial numbers end up in udev match values, where * ? [ ] | are patterns and " ends the value.
_SERIAL_RE = re.compile(r"^[A-Za-z0-9._:-]{1,126}$")
_NAME_RULE = "1-64 characters: lowercase letters, digits, '.', '_', '-', starting with a letter or digit"
_SERIAL_RULE = "1-126 characters: letters, digits, '.', '_', ':', '-'"


class ProfileError(ValueError):
    """A device profile is invalid or cannot be found. The message names the file, the dotted key
    and the reason, on one line; the parts are also available as attributes."""

    def __init__(self, source: str, key: str, reason: str) -> None:
        self.source = source
        self.key = key
        self.reason = reason
        where = f"{source}: {key}" if key else source
        super().__init__(f"{where}: {reason}")


# Data ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class UsbIdentity:
    """How a device shows itself on the USB bus: vendor and product IDs, optionally a serial."""

    vid: int
    pid: int
    serial: str | None = None

    @property
    def id_str(self) -> str:
        """``"1209:0001"``: four lowercase hex digits each, as lsusb and udev show them."""
        return f"{self.vid:04x}:{self.pid:04x}"

    def matches(self, vid: int | None, pid: int | None, serial: str | None = None) -> bool:
        """True if a device with these IDs (and serial number, when this identity names one) is
        this device. A device whose serial number is unknown (``None``) does not match an
        identity that names one."""
        if vid != self.vid or pid != self.pid:
            return False
        return self.serial is None or serial == self.serial


@dataclass(frozen=True, slots=True)
class SerialTransportSpec:
    """A serial line (a tty, a pty served by the emulator, or a USB-serial adapter).

    ``usb_vid`` / ``usb_pid`` / ``usb_serial`` identify the USB-serial adapter, if there is one,
    for udev rules and ``shoectl devices``; they do not change how the line is opened.
    """

    type: ClassVar[str] = "serial"
    baudrate: int = 115200
    bytesize: int = 8
    parity: str = "N"
    stopbits: float = 1  # 1, 1.5 or 2 (ints for 1 and 2, as pyserial's constants)
    rtscts: bool = False
    xonxoff: bool = False
    dsrdtr: bool = False
    usb_vid: int | None = None
    usb_pid: int | None = None
    usb_serial: str | None = None

    def pyserial_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``serial.Serial`` / ``serial.serial_for_url``, in the value types
        of pyserial's constants (``bytesize`` 8 = ``EIGHTBITS``, ``parity`` ``"N"`` =
        ``PARITY_NONE``, ``stopbits`` 1 / 1.5 / 2)."""
        return {
            "baudrate": self.baudrate,
            "bytesize": self.bytesize,
            "parity": self.parity,
            "stopbits": self.stopbits,
            "rtscts": self.rtscts,
            "xonxoff": self.xonxoff,
            "dsrdtr": self.dsrdtr,
        }

    @property
    def usb_identity(self) -> UsbIdentity | None:
        """The USB-serial adapter's identity, or ``None`` for a plain serial line."""
        if self.usb_vid is None or self.usb_pid is None:
            return None
        return UsbIdentity(self.usb_vid, self.usb_pid, self.usb_serial)

    def summary(self) -> str:
        """One line, e.g. ``serial 38400 8E1 rtscts, adapter 1209:0003``."""
        stop = "1.5" if self.stopbits == 1.5 else str(int(self.stopbits))
        text = f"serial {self.baudrate} {self.bytesize}{self.parity}{stop}"
        flow = [f for f in ("rtscts", "xonxoff", "dsrdtr") if getattr(self, f)]
        if flow:
            text += " " + ",".join(flow)
        ident = self.usb_identity
        if ident is not None:
            text += f", adapter {ident.id_str}" + (f" serial {ident.serial}" if ident.serial else "")
        return text

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        out.update(self.pyserial_kwargs())
        for key in ("usb_vid", "usb_pid", "usb_serial"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out


@dataclass(frozen=True, slots=True)
class UsbTransportSpec:
    """A native USB device spoken to over one interface's pair of bulk or interrupt endpoints.

    ``manufacturer`` / ``product`` / ``serial_number`` are the string descriptors the device
    reports (the emulator serves them); ``serial_number`` also narrows the udev match.
    """

    type: ClassVar[str] = "usb"
    vid: int
    pid: int
    manufacturer: str
    product: str
    serial_number: str | None = None
    configuration: int = 1
    interface: int = 0
    endpoint_out: int = 0x01
    endpoint_in: int = 0x81
    transfer: str = "bulk"
    max_packet: int = 64

    @property
    def usb_identity(self) -> UsbIdentity:
        return UsbIdentity(self.vid, self.pid, self.serial_number)

    def summary(self) -> str:
        """One line, e.g. ``usb 1209:0001 bulk out 0x01 in 0x81``."""
        text = f"usb {self.usb_identity.id_str}"
        if self.serial_number:
            text += f" serial {self.serial_number}"
        return f"{text} {self.transfer} out 0x{self.endpoint_out:02x} in 0x{self.endpoint_in:02x}"

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "vid": self.vid, "pid": self.pid}
        if self.serial_number is not None:
            out["serial_number"] = self.serial_number
        out.update(
            configuration=self.configuration,
            interface=self.interface,
            endpoint_out=self.endpoint_out,
            endpoint_in=self.endpoint_in,
            transfer=self.transfer,
            max_packet=self.max_packet,
            manufacturer=self.manufacturer,
            product=self.product,
        )
        return out


TransportSpec = SerialTransportSpec | UsbTransportSpec


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What the device can do. ``automatic_reshuffle`` marks a device that reshuffles and counts
    the cards itself (681a.5(h)): the manual cut, 681a.5(b)-(g), does not apply to it."""

    card_recognition: bool = False
    face_up_detection: bool = False
    cover_card_sensor: bool = False
    card_count_after_shuffle: bool = False
    automatic_reshuffle: bool = False
    shuffler: str = "none"
    deck_capacity: int = 8


@dataclass(frozen=True, slots=True)
class Timing:
    """The link layer's timing for this device, in milliseconds (``*_s``: the same in seconds).

    ``response_timeout_ms``: how long to wait for a reply before a retry; ``retries``: retries of
    one request before the link is declared lost; ``heartbeat_interval_ms``: idle time after which
    the host sends a heartbeat; ``reconnect_min_ms`` / ``reconnect_max_ms``: the first and the
    largest delay of the exponential reconnect backoff; ``shuffle_ms``: the longest a shuffle may
    take before the host declares it failed.
    """

    response_timeout_ms: int = 250
    heartbeat_interval_ms: int = 1000
    retries: int = 3
    reconnect_min_ms: int = 100
    reconnect_max_ms: int = 5000
    shuffle_ms: int = 30000

    @property
    def response_timeout_s(self) -> float:
        return self.response_timeout_ms / 1000

    @property
    def heartbeat_interval_s(self) -> float:
        return self.heartbeat_interval_ms / 1000

    @property
    def reconnect_min_s(self) -> float:
        return self.reconnect_min_ms / 1000

    @property
    def reconnect_max_s(self) -> float:
        return self.reconnect_max_ms / 1000

    @property
    def shuffle_s(self) -> float:
        return self.shuffle_ms / 1000


@dataclass(frozen=True, slots=True)
class Profile:
    """A validated device profile. ``name`` is the file stem, ``source`` the file it came from."""

    name: str
    source: str
    vendor: str
    model: str
    kind: str
    protocol_version: int
    description: str
    transport: TransportSpec
    capabilities: Capabilities
    timing: Timing

    @property
    def usb_identity(self) -> UsbIdentity | None:
        """The identity udev and ``shoectl devices`` match on: the USB device itself, or the
        USB-serial adapter in front of a serial device; ``None`` for a plain serial line."""
        return self.transport.usb_identity

    def to_dict(self) -> dict[str, Any]:
        """The profile in the TOML file's layout (every key, defaults filled in), so that
        ``parse_profile(p.to_dict(), p.source, p.name) == p``. JSON-ready."""
        caps = self.capabilities
        t = self.timing
        return {
            "device": {
                "vendor": self.vendor,
                "model": self.model,
                "kind": self.kind,
                "protocol_version": self.protocol_version,
                "description": self.description,
            },
            "transport": self.transport.to_dict(),
            "capabilities": {
                "card_recognition": caps.card_recognition,
                "face_up_detection": caps.face_up_detection,
                "cover_card_sensor": caps.cover_card_sensor,
                "card_count_after_shuffle": caps.card_count_after_shuffle,
                "automatic_reshuffle": caps.automatic_reshuffle,
                "shuffler": caps.shuffler,
                "deck_capacity": caps.deck_capacity,
            },
            "timing": {
                "response_timeout_ms": t.response_timeout_ms,
                "heartbeat_interval_ms": t.heartbeat_interval_ms,
                "retries": t.retries,
                "reconnect_min_ms": t.reconnect_min_ms,
                "reconnect_max_ms": t.reconnect_max_ms,
                "shuffle_ms": t.shuffle_ms,
            },
        }

    def to_json(self) -> dict[str, Any]:
        """``to_dict()`` plus ``name`` and ``source`` (the ``--json`` contract)."""
        return {"name": self.name, "source": self.source, **self.to_dict()}


@dataclass(frozen=True, slots=True)
class ProfileCheck:
    """The result of checking one file: a profile or an error. ``shadowed_by`` is set when an
    earlier directory of the search path holds a profile of the same name (that one is used)."""

    path: str
    profile: Profile | None = None
    error: ProfileError | None = None
    shadowed_by: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


# Search path --------------------------------------------------------------------------------


def builtin_profile_dir() -> Path:
    """The built-in profiles: the ``device_profiles`` data package (the repository's
    ``device_profiles/``, shipped in the wheel), found through the import system so that a
    checkout and an installed copy behave alike. pip installs packages as files, so this is a
    real directory."""
    return Path(str(importlib.resources.files("device_profiles")))


def profile_dirs() -> list[Path]:
    """The search path: ``$SHOECTL_PROFILE_PATH`` entries (empty entries ignored) first, then
    the built-in directory; duplicates removed. Directories are not checked here."""
    dirs: list[Path] = []
    for entry in os.environ.get(PROFILE_PATH_ENV, "").split(os.pathsep):
        if entry.strip():
            dirs.append(Path(entry))
    dirs.append(builtin_profile_dir())
    out: list[Path] = []
    seen: set[str] = set()
    for d in dirs:
        key = os.path.normcase(os.path.abspath(d))
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def profile_files() -> list[tuple[Path, Path | None]]:
    """Every ``*.toml`` file in the search path, in search order (directories in order, files
    sorted by name), each with the earlier file of the same name that shadows it, or ``None``.

    Raises ``ProfileError`` for a directory of the search path that does not exist or cannot be
    read (a mistyped ``SHOECTL_PROFILE_PATH`` is reported, not ignored).
    """
    out: list[tuple[Path, Path | None]] = []
    first: dict[str, Path] = {}
    for d in profile_dirs():
        for path in _toml_files(d):
            out.append((path, first.get(path.stem)))
            first.setdefault(path.stem, path)
    return out


def profile_names() -> list[str]:
    """The names of the profiles in the search path, sorted (files are not parsed)."""
    return sorted({path.stem for path, _ in profile_files()})


def list_profiles() -> list[Profile]:
    """Load the profiles of the search path (the first file of each name), sorted by name.

    Raises ``ProfileError`` on the first bad file or directory: a broken profile is never
    skipped silently. Use ``check_profiles()`` to see every problem at once.
    """
    profiles = [load_profile(path) for path, shadow in profile_files() if shadow is None]
    return sorted(profiles, key=lambda p: p.name)


def check_profiles(paths: Iterable[str | os.PathLike[str]] | None = None) -> list[ProfileCheck]:
    """Check the given files, or (``None``) every file of the search path, shadowed ones too.

    Never raises ``ProfileError``: each file gives one ``ProfileCheck``; a directory of the
    search path that cannot be read gives a failed check naming the directory.
    """
    results: list[ProfileCheck] = []
    if paths is None:
        try:
            entries = profile_files()
        except ProfileError as exc:
            return [ProfileCheck(path=exc.source, error=exc)]
        items: list[tuple[str | os.PathLike[str], Path | None]] = list(entries)
    else:
        items = [(p, None) for p in paths]
    for path, shadow in items:
        shown = _safe(_fspath(path))
        try:
            profile = load_profile(path)
        except ProfileError as exc:
            results.append(ProfileCheck(path=shown, error=exc, shadowed_by=_opt_str(shadow)))
        else:
            results.append(ProfileCheck(path=shown, profile=profile, shadowed_by=_opt_str(shadow)))
    return results


def get_profile(name: str) -> Profile:
    """Load the profile called ``name`` from the first directory of the search path that has it.

    Only that file is read, so another broken profile does not stop this one. Raises
    ``ProfileError`` for an unknown name (listing the available ones) or a bad file.
    """
    text = name if isinstance(name, str) else repr(name)
    if isinstance(name, str) and _NAME_RE.fullmatch(name):
        for d in profile_dirs():
            path = d / f"{name}.toml"
            if path.is_file():
                return load_profile(path)
    try:
        available = ", ".join(profile_names()) or "none"
    except ProfileError as exc:
        available = f"none readable ({exc})"
    searched = ", ".join(str(d) for d in profile_dirs())
    raise ProfileError(
        f"profile {_safe(text)!r}", "", f"unknown profile; available: {available} (searched {searched})"
    )


def resolve_profile(spec: str | os.PathLike[str]) -> Profile:
    """A profile from a name (``get_profile``) or, if ``spec`` names an existing file, ends in
    ``.toml`` or contains a path separator, from that file (``load_profile``)."""
    text = _fspath(spec)
    if os.path.isfile(text) or text.endswith(".toml") or os.sep in text or (os.altsep and os.altsep in text):
        return load_profile(text)
    return get_profile(text)


# Reading ------------------------------------------------------------------------------------


def load_profile(path: str | os.PathLike[str]) -> Profile:
    """Read, parse and validate one profile file; its name is the file stem."""
    try:
        source = _fspath(path)
    except TypeError:
        raise ProfileError(_safe(repr(path)), "", "not a file path") from None
    shown = _safe(source)
    name = Path(source).stem if source.endswith(".toml") else Path(source).name
    if not source.endswith(".toml"):
        raise ProfileError(shown, "", "a profile file is named NAME.toml")
    try:
        with open(source, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        raise ProfileError(shown, "", "file not found") from None
    except IsADirectoryError:
        raise ProfileError(shown, "", "is a directory, not a file") from None
    except PermissionError:
        raise ProfileError(shown, "", "cannot read the file: permission denied") from None
    except (OSError, ValueError) as exc:  # ValueError: embedded NUL in the path
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ProfileError(shown, "", f"cannot read the file: {_safe(reason)}") from None
    if len(raw) > MAX_FILE_BYTES:
        raise ProfileError(shown, "", f"file is larger than {MAX_FILE_BYTES} bytes")
    return _parse_bytes(raw, shown, name)


def parse_profile(data: Mapping[str, Any], source: str, name: str) -> Profile:
    """Validate an already-parsed profile (e.g. the dict ``tomllib`` returns) called ``name``."""
    return _Parser(data, _safe(str(source)), name).parse()


def _parse_bytes(raw: bytes, source: str, name: str) -> Profile:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProfileError(source, "", f"not UTF-8 text (bad byte at offset {exc.start})") from None
    if text.startswith("\ufeff"):  # a byte-order mark some editors add
        text = text[1:]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(source, "", f"TOML syntax error: {_safe(str(exc))}") from None
    except RecursionError:
        raise ProfileError(source, "", "TOML syntax error: arrays or tables nested too deeply") from None
    except ValueError as exc:  # e.g. an integer longer than Python's digit limit
        raise ProfileError(source, "", f"TOML value error: {_safe(str(exc))}") from None
    return _Parser(data, source, name).parse()


def _toml_files(d: Path) -> list[Path]:
    shown = _safe(str(d))
    try:
        entries = sorted(os.scandir(d), key=lambda e: e.name)
    except FileNotFoundError:
        raise ProfileError(shown, "", f"profile directory not found (search path: ${PROFILE_PATH_ENV} "
                           "entries, then the built-in device_profiles/)") from None
    except NotADirectoryError:
        raise ProfileError(shown, "", "not a directory (profile search path)") from None
    except OSError as exc:
        raise ProfileError(shown, "", f"cannot read the profile directory: {_safe(exc.strerror or str(exc))}") from None
    except ValueError as exc:  # embedded NUL in the path
        raise ProfileError(shown, "", f"cannot read the profile directory: {_safe(str(exc))}") from None
    return [d / e.name for e in entries if e.name.endswith(".toml") and not e.name.startswith(".")]


# Validation ---------------------------------------------------------------------------------

_DEVICE_KEYS = ("vendor", "model", "kind", "protocol_version", "description")
_SERIAL_KEYS = ("type", "baudrate", "bytesize", "parity", "stopbits", "rtscts", "xonxoff", "dsrdtr",
                "usb_vid", "usb_pid", "usb_serial")
_USB_KEYS = ("type", "vid", "pid", "serial_number", "configuration", "interface", "endpoint_out",
             "endpoint_in", "transfer", "max_packet", "manufacturer", "product")
_CAP_KEYS = ("card_recognition", "face_up_detection", "cover_card_sensor", "card_count_after_shuffle",
             "automatic_reshuffle", "shuffler", "deck_capacity")
_TIMING_KEYS = ("response_timeout_ms", "heartbeat_interval_ms", "retries", "reconnect_min_ms",
                "reconnect_max_ms", "shuffle_ms")
_SECTIONS: dict[str, tuple[str, ...]] = {
    "device": _DEVICE_KEYS,
    "transport": tuple(dict.fromkeys(_SERIAL_KEYS + _USB_KEYS)),
    "capabilities": _CAP_KEYS,
    "timing": _TIMING_KEYS,
}
_REQUIRED_SECTIONS = ("device", "transport")

# (key, low, high) for [timing]; all milliseconds except retries.
_TIMING_RANGES = {
    "response_timeout_ms": (10, 60_000),
    "heartbeat_interval_ms": (50, 600_000),
    "retries": (0, 20),
    "reconnect_min_ms": (10, 600_000),
    "reconnect_max_ms": (10, 3_600_000),
    "shuffle_ms": (100, 3_600_000),
}

_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


class _Parser:
    """One validation pass over a parsed document; raises on the first problem."""

    def __init__(self, data: object, source: str, name: str) -> None:
        self.data = data
        self.source = source
        self.name = name

    def fail(self, key: str, reason: str) -> ProfileError:
        return ProfileError(self.source, key, reason)

    # -- typed getters ------------------------------------------------------------------------

    def section(self, name: str, known: tuple[str, ...], hints: Mapping[str, str] | None = None) -> dict[str, Any]:
        assert isinstance(self.data, Mapping)
        value = self.data.get(name, {})
        if not isinstance(value, Mapping):
            raise self.fail(name, f"expected a table ([{name}]), got {_typename(value)}")
        for key in value:
            if not isinstance(key, str) or key not in known:
                hint = (hints or {}).get(key, "") if isinstance(key, str) else ""
                raise self.fail(f"{name}.{_key_part(key)}", f"unknown key{hint}; known keys: {', '.join(known)}")
        return dict(value)

    def integer(self, key: str, value: object, lo: int, hi: int, hex_: bool = False) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"expected an integer, got {_typename(value)} ({_show(value)})")
        if not lo <= value <= hi:
            shown = f"0x{value:x}" if hex_ and 0 <= value <= 0xFFFFFFFF else _show(value)
            rng = f"0x{lo:04x}..0x{hi:04x}" if hex_ else f"{lo}..{hi}"
            raise self.fail(key, f"out of range: {shown} (allowed {rng})")
        return value

    def boolean(self, key: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise self.fail(key, f"expected a boolean (true or false), got {_typename(value)} ({_show(value)})")
        return value

    def text(self, key: str, value: object, max_len: int, empty_ok: bool = False) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {_typename(value)} ({_show(value)})")
        text = value.strip()
        if not text and not empty_ok:
            raise self.fail(key, "must not be empty")
        if len(text) > max_len or not text.isprintable():
            raise self.fail(key, f"must be one printable line of at most {max_len} characters")
        return text

    def choice(self, key: str, value: object, allowed: tuple[str, ...]) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {_typename(value)} ({_show(value)})")
        if value not in allowed:
            raise self.fail(key, f"unknown value {_show(value)}; allowed: {', '.join(allowed)}")
        return value

    def serial_number(self, key: str, value: object) -> str:
        if not isinstance(value, str):
            raise self.fail(key, f"expected a string, got {_typename(value)} ({_show(value)})")
        if not _SERIAL_RE.fullmatch(value):
            raise self.fail(key, f"bad serial number {_show(value)}: {_SERIAL_RULE}")
        return value

    # -- the pass -----------------------------------------------------------------------------

    def parse(self) -> Profile:
        if not isinstance(self.name, str) or not _NAME_RE.fullmatch(self.name):
            raise self.fail("", f"bad profile name {_show(self.name)} (the file stem): {_NAME_RULE}")
        if not isinstance(self.data, Mapping):
            raise self.fail("", f"expected a table of sections, got {_typename(self.data)}")
        for section in self.data:
            if not isinstance(section, str) or section not in _SECTIONS:
                raise self.fail(_key_part(section), f"unknown section; known sections: {', '.join(_SECTIONS)}")
        for section in _REQUIRED_SECTIONS:
            if section not in self.data:
                raise self.fail(section, f"required section [{section}] is missing")

        dev = self.section("device", _DEVICE_KEYS)
        for key in ("vendor", "model", "kind"):
            if key not in dev:
                extra = f"; allowed: {', '.join(KINDS)}" if key == "kind" else ""
                raise self.fail(f"device.{key}", f"required key is missing{extra}")
        vendor = self.text("device.vendor", dev["vendor"], MAX_TEXT)
        model = self.text("device.model", dev["model"], MAX_TEXT)
        kind = self.choice("device.kind", dev["kind"], KINDS)
        protocol_version = self.integer("device.protocol_version", dev.get("protocol_version", 1), 1, 255)
        description = ""
        if "description" in dev:
            description = self.text("device.description", dev["description"], MAX_DESCRIPTION, empty_ok=True)

        transport = self.transport(vendor, model)
        capabilities = self.capabilities(kind)
        timing = self.timing()
        return Profile(
            name=self.name, source=self.source, vendor=vendor, model=model, kind=kind,
            protocol_version=protocol_version, description=description, transport=transport,
            capabilities=capabilities, timing=timing,
        )

    def transport(self, vendor: str, model: str) -> TransportSpec:
        raw = self.data["transport"]  # type: ignore[index]
        if not isinstance(raw, Mapping):
            raise self.fail("transport", f"expected a table ([transport]), got {_typename(raw)}")
        if "type" not in raw:
            raise self.fail("transport.type", f"required key is missing; allowed: {', '.join(TRANSPORTS)}")
        ttype = self.choice("transport.type", raw["type"], TRANSPORTS)
        if ttype == "serial":
            hints = {k: " for a serial transport (a USB-serial adapter is named by usb_vid, usb_pid, usb_serial)"
                     for k in ("vid", "pid", "serial_number")}
            hints.update({k: " for a serial transport (it belongs to a usb transport)"
                          for k in _USB_KEYS if k not in hints and k != "type"})
            t = self.section("transport", _SERIAL_KEYS, hints)
            return self.serial(t)
        hints = {k: " for a usb transport (it belongs to a serial transport)" for k in _SERIAL_KEYS if k != "type"}
        hints.update(usb_vid=" for a usb transport (use vid)", usb_pid=" for a usb transport (use pid)",
                     usb_serial=" for a usb transport (use serial_number)")
        t = self.section("transport", _USB_KEYS, hints)
        return self.usb(t, vendor, model)

    def serial(self, t: dict[str, Any]) -> SerialTransportSpec:
        d = SerialTransportSpec()
        baudrate = self.integer("transport.baudrate", t.get("baudrate", d.baudrate), MIN_BAUD, MAX_BAUD)
        bytesize = self.integer("transport.bytesize", t.get("bytesize", d.bytesize), 5, 8)
        parity = self.choice("transport.parity", t.get("parity", d.parity), PARITIES)
        stopbits = self.stopbits(t.get("stopbits", d.stopbits))
        flags = {k: self.boolean(f"transport.{k}", t.get(k, False)) for k in ("rtscts", "xonxoff", "dsrdtr")}
        vid = pid = None
        if "usb_vid" in t:
            vid = self.integer("transport.usb_vid", t["usb_vid"], 0, 0xFFFF, hex_=True)
        if "usb_pid" in t:
            pid = self.integer("transport.usb_pid", t["usb_pid"], 0, 0xFFFF, hex_=True)
        if (vid is None) != (pid is None):
            missing = "transport.usb_pid" if pid is None else "transport.usb_vid"
            raise self.fail(missing, "required with the other of usb_vid/usb_pid (the adapter is named by both)")
        serial = None
        if "usb_serial" in t:
            serial = self.serial_number("transport.usb_serial", t["usb_serial"])
            if vid is None:
                raise self.fail("transport.usb_serial", "needs usb_vid and usb_pid (the adapter's IDs)")
        return SerialTransportSpec(baudrate=baudrate, bytesize=bytesize, parity=parity, stopbits=stopbits,
                                   usb_vid=vid, usb_pid=pid, usb_serial=serial, **flags)

    def stopbits(self, value: object) -> float:
        key = "transport.stopbits"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(key, f"expected 1, 1.5 or 2, got {_typename(value)} ({_show(value)})")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(key, f"expected 1, 1.5 or 2, got {_show(value)}")
        if value not in STOPBITS:
            raise self.fail(key, f"out of range: {_show(value)} (allowed 1, 1.5, 2)")
        return 1.5 if value == 1.5 else int(value)

    def usb(self, t: dict[str, Any], vendor: str, model: str) -> UsbTransportSpec:
        for key in ("vid", "pid"):
            if key not in t:
                raise self.fail(f"transport.{key}", "required key is missing for a usb transport (0x0000..0xffff)")
        vid = self.integer("transport.vid", t["vid"], 0, 0xFFFF, hex_=True)
        pid = self.integer("transport.pid", t["pid"], 0, 0xFFFF, hex_=True)
        serial = None
        if "serial_number" in t:
            serial = self.serial_number("transport.serial_number", t["serial_number"])
        configuration = self.integer("transport.configuration", t.get("configuration", 1), 1, 255)
        interface = self.integer("transport.interface", t.get("interface", 0), 0, 255)
        ep_out = self.endpoint("transport.endpoint_out", t.get("endpoint_out", 0x01), inbound=False)
        ep_in = self.endpoint("transport.endpoint_in", t.get("endpoint_in", 0x81), inbound=True)
        transfer = self.choice("transport.transfer", t.get("transfer", "bulk"), TRANSFERS)
        max_packet = self.integer("transport.max_packet", t.get("max_packet", 64), 8, 1024)
        if transfer == "bulk" and max_packet not in BULK_PACKET_SIZES:
            raise self.fail("transport.max_packet",
                            f"out of range: {max_packet} (a bulk endpoint takes one of "
                            f"{', '.join(map(str, BULK_PACKET_SIZES))})")
        manufacturer = self.text("transport.manufacturer", t.get("manufacturer", vendor), MAX_TEXT)
        product = self.text("transport.product", t.get("product", model), MAX_TEXT)
        return UsbTransportSpec(vid=vid, pid=pid, serial_number=serial, configuration=configuration,
                                interface=interface, endpoint_out=ep_out, endpoint_in=ep_in,
                                transfer=transfer, max_packet=max_packet, manufacturer=manufacturer,
                                product=product)

    def endpoint(self, key: str, value: object, *, inbound: bool) -> int:
        addr = self.integer(key, value, 0, 0xFF, hex_=False)
        number = addr & 0x0F
        if inbound and not addr & 0x80:
            raise self.fail(key, f"0x{addr:02x} is an OUT address: an IN endpoint has bit 0x80 set (0x81..0x8f)")
        if not inbound and addr & 0x80:
            raise self.fail(key, f"0x{addr:02x} is an IN address: an OUT endpoint has bit 0x80 clear (0x01..0x0f)")
        if addr & 0x70 or number == 0:
            rng = "0x81..0x8f" if inbound else "0x01..0x0f"
            raise self.fail(key, f"out of range: 0x{addr:02x} (endpoint numbers are 1..15: allowed {rng})")
        return addr

    def capabilities(self, kind: str) -> Capabilities:
        c = self.section("capabilities", _CAP_KEYS)
        flags = {k: self.boolean(f"capabilities.{k}", c.get(k, False))
                 for k in ("card_recognition", "face_up_detection", "cover_card_sensor",
                           "card_count_after_shuffle", "automatic_reshuffle")}
        shuffler = self.choice("capabilities.shuffler", c.get("shuffler", "none"), SHUFFLERS)
        decks = self.integer("capabilities.deck_capacity", c.get("deck_capacity", 8), 1, 12)
        caps = Capabilities(shuffler=shuffler, deck_capacity=decks, **flags)
        # Consistency between the kind and what the device can do.
        if kind == "shoe" and shuffler != "none":
            raise self.fail("capabilities.shuffler",
                            f"a device of kind \"shoe\" has no shuffler (got {shuffler!r}); "
                            "a shoe that shuffles is kind \"shuffler-shoe\"")
        if kind in ("shuffler", "shuffler-shoe") and shuffler == "none":
            raise self.fail("capabilities.shuffler",
                            f"a device of kind \"{kind}\" needs a shuffler: batch or continuous")
        if kind == "shuffler" and caps.cover_card_sensor:
            raise self.fail("capabilities.cover_card_sensor",
                            "a shuffler does not deal, so it has no cover card sensor (kind \"shuffler\")")
        if caps.card_count_after_shuffle and shuffler == "none":
            raise self.fail("capabilities.card_count_after_shuffle", "needs a shuffler (capabilities.shuffler)")
        if caps.automatic_reshuffle:
            if kind != "shuffler-shoe":
                raise self.fail("capabilities.automatic_reshuffle",
                                f"only a dealing shoe that reshuffles (kind \"shuffler-shoe\") reshuffles "
                                f"automatically (681a.5(h)); this is kind \"{kind}\"")
            if not caps.card_count_after_shuffle:
                raise self.fail("capabilities.automatic_reshuffle",
                                "681a.5(h) covers a device that reshuffles and counts the cards: "
                                "set card_count_after_shuffle = true")
        return caps

    def timing(self) -> Timing:
        t = self.section("timing", _TIMING_KEYS)
        d = Timing()
        values = {k: self.integer(f"timing.{k}", t.get(k, getattr(d, k)), lo, hi)
                  for k, (lo, hi) in _TIMING_RANGES.items()}
        if values["reconnect_max_ms"] < values["reconnect_min_ms"]:
            raise self.fail("timing.reconnect_max_ms",
                            f"{values['reconnect_max_ms']} is below reconnect_min_ms ({values['reconnect_min_ms']})")
        return Timing(**values)


# Helpers ------------------------------------------------------------------------------------


def _fspath(path: object) -> str:
    text = os.fspath(path)  # type: ignore[arg-type]
    return os.fsdecode(text) if isinstance(text, bytes) else text


def _opt_str(path: Path | None) -> str | None:
    return None if path is None else _safe(str(path))


def _key_part(part: object) -> str:
    text = str(part)
    if _BARE_KEY.fullmatch(text):
        return text
    return '"' + text.encode("unicode_escape").decode("ascii").replace('"', '\\"') + '"'


def _safe(text: str) -> str:
    """Make ``text`` printable on one line (escape control characters)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def _typename(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, Mapping):
        return "a table"
    if isinstance(value, datetime):
        return "a date-time"
    if isinstance(value, date):
        return "a date"
    if isinstance(value, time):
        return "a time"
    return f"a {type(value).__name__}"


def _show(value: object) -> str:
    """A short one-line rendering of a bad value for a message."""
    if isinstance(value, (Mapping, list, tuple)):
        return _typename(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        return "a very large integer"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return _safe(text)
