"""Device profiles as data: what a device model is (identity, transport, capabilities, timing).

Immutable values built by ``firmware_bridge.profile_parser`` from a profile file and used by the
transports, the link and the emulator. ``ProfileError`` is the one error of the profile loader.
Every key is documented in ``docs/device-profiles.md``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from shoectl_config.errors import ConfigError

__all__ = [
    "Capabilities",
    "Profile",
    "ProfileCheck",
    "ProfileError",
    "SerialTransportSpec",
    "Timing",
    "TransportSpec",
    "UsbIdentity",
    "UsbTransportSpec",
]


class ProfileError(ConfigError):
    """A device profile is invalid or cannot be found. The message names the file, the dotted key
    and the reason, on one line; the parts are also available as attributes (``ConfigError``)."""


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
    approval: str | None = None  # 681a.5(h): the Bureau's approval of the model (461a.4), as recorded


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
                **({"approval": caps.approval} if caps.approval else {}),
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
