"""Checking a parsed device profile: ``parse_profile(data, source, name)`` -> ``Profile``.

One validation pass (``ProfileParser``, a ``shoectl_config`` ``DocumentParser``) over the mapping
``tomllib`` gives: every section and key known, every value of the right type and in range, and
the values consistent with each other (a shoe has no shuffler, an IN endpoint has bit 0x80, ...).
Every problem raises ``ProfileError(source, key, reason)``. Every key is documented in
``docs/device-profiles.md``.
"""
from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from shoectl_config.parser import DocumentParser
from shoectl_config.text import described, safe, show

from .protocol.framing import PROTOCOL_VERSION
from .profile_data import (
    Capabilities, Profile, ProfileError, SerialTransportSpec, Timing, TransportSpec, UsbTransportSpec,
)

__all__ = ["KINDS", "NAME_RE", "NAME_RULE", "ProfileParser", "parse_profile"]

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

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
# Serial numbers end up in udev match values, where * ? [ ] | are patterns and " ends the value.
_SERIAL_RE = re.compile(r"^[A-Za-z0-9._:-]{1,126}$")
NAME_RULE = "1-64 characters: lowercase letters, digits, '.', '_', '-', starting with a letter or digit"
_SERIAL_RULE = "1-126 characters: letters, digits, '.', '_', ':', '-'"

_DEVICE_KEYS = ("vendor", "model", "kind", "protocol_version", "description")
_SERIAL_KEYS = ("type", "baudrate", "bytesize", "parity", "stopbits", "rtscts", "xonxoff", "dsrdtr",
                "usb_vid", "usb_pid", "usb_serial")
_USB_KEYS = ("type", "vid", "pid", "serial_number", "configuration", "interface", "endpoint_out",
             "endpoint_in", "transfer", "max_packet", "manufacturer", "product")
_CAP_KEYS = ("card_recognition", "face_up_detection", "cover_card_sensor", "card_count_after_shuffle",
             "automatic_reshuffle", "shuffler", "deck_capacity", "approval")
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
# Half the devices' host-loss timeout (5 s, docs/protocol.md section 8; protocol.HOST_LOSS_TIMEOUT_S,
# which this layer does not import: a test holds the two together): the heartbeat of a quiet link
# reaches the device in time.
HEARTBEAT_MAX_MS = 2_500
_TIMING_RANGES = {
    "response_timeout_ms": (10, 60_000),
    "heartbeat_interval_ms": (50, HEARTBEAT_MAX_MS),
    "retries": (0, 20),
    "reconnect_min_ms": (10, 600_000),
    "reconnect_max_ms": (10, 3_600_000),
    "shuffle_ms": (100, 3_600_000),
}

# Why the highest value is the highest, said of a value above it: a link quiet for the device's
# host-loss timeout loses its session (a shoe locks its gate), so a heartbeat, retried, must reach
# it well within (a device review).
_TIMING_HINTS = {
    "heartbeat_interval_ms": f": a device takes a host silent for {2 * HEARTBEAT_MAX_MS / 1000:g} s for gone "
                             "(docs/protocol.md section 8), so the heartbeat comes at least twice in that time",
}


def parse_profile(data: Mapping[str, Any], source: str, name: str) -> Profile:
    """Validate an already-parsed profile (e.g. the dict ``tomllib`` returns) called ``name``."""
    return ProfileParser(data, safe(str(source)), name).parse()


class ProfileParser(DocumentParser):
    """One validation pass over a parsed profile called ``name``; raises on the first problem."""

    error = ProfileError

    def __init__(self, data: object, source: str, name: str) -> None:
        super().__init__(data, source)
        self.name = name

    def serial_number(self, key: str, value: object) -> str:
        """A serial number that is safe in a udev match value."""
        text = self.string(key, value)
        if not _SERIAL_RE.fullmatch(text):
            raise self.fail(key, f"bad serial number {show(text)}: {_SERIAL_RULE}")
        return text

    def usb_string(self, key: str, value: object) -> str:
        """Text a USB string descriptor serves: at most ``MAX_TEXT`` UTF-16 code units, a character
        beyond U+FFFF taking two (counted in characters, 64 such were taken, and the emulated
        device then failed GET_DESCRIPTOR: a mutation review)."""
        text = self.text(key, value, MAX_TEXT)
        if len(text.encode("utf-16-le")) // 2 > MAX_TEXT:
            raise self.fail(key, f"must be at most {MAX_TEXT} UTF-16 code units, a USB string's room (a character "
                                 "beyond U+FFFF takes two)")
        return text

    # -- the pass -----------------------------------------------------------------------------

    def parse(self) -> Profile:
        if not isinstance(self.name, str) or not NAME_RE.fullmatch(self.name):
            raise self.fail("", f"bad profile name {show(self.name)} (the file stem): {NAME_RULE}")
        self.document(_SECTIONS, _REQUIRED_SECTIONS)

        dev = self.section("device", _DEVICE_KEYS)
        for key in ("vendor", "model", "kind"):
            if key not in dev:
                raise self.missing(f"device.{key}", f"; allowed: {', '.join(KINDS)}" if key == "kind" else "")
        vendor = self.text("device.vendor", dev["vendor"], MAX_TEXT)
        model = self.text("device.model", dev["model"], MAX_TEXT)
        kind = self.choice("device.kind", dev["kind"], KINDS)
        protocol_version = self.integer("device.protocol_version", dev.get("protocol_version", 1), 1, 255)
        if protocol_version != PROTOCOL_VERSION:  # listed and given a udev rule, it was a device no link could serve
            raise self.fail("device.protocol_version", f"{protocol_version}: this shoectl speaks version "
                                                       f"{PROTOCOL_VERSION} only")
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
        raw = self.table("transport", self.data["transport"])  # type: ignore[index]
        if "type" not in raw:
            raise self.missing("transport.type", f"; allowed: {', '.join(TRANSPORTS)}")
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
        if flags["xonxoff"]:
            raise self.fail("transport.xonxoff", "the wire protocol is binary: XON/XOFF takes its 0x11 and 0x13 bytes "
                                                 "for flow control, and the link fails; use rtscts, or no flow control")
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
            raise self.fail(key, f"expected 1, 1.5 or 2, got {described(value)}")
        if isinstance(value, float) and not math.isfinite(value):
            raise self.fail(key, f"expected 1, 1.5 or 2, got {show(value)}")
        if value not in STOPBITS:
            raise self.fail(key, f"out of range: {show(value)} (allowed 1, 1.5, 2)")
        return 1.5 if value == 1.5 else int(value)

    def usb(self, t: dict[str, Any], vendor: str, model: str) -> UsbTransportSpec:
        for key in ("vid", "pid"):
            if key not in t:
                raise self.missing(f"transport.{key}", " for a usb transport (0x0000..0xffff)")
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
        manufacturer = self.usb_string("transport.manufacturer", t.get("manufacturer", vendor))
        product = self.usb_string("transport.product", t.get("product", model))
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
        approval = self.text("capabilities.approval", c["approval"], 200) if "approval" in c else None
        caps = Capabilities(shuffler=shuffler, deck_capacity=decks, approval=approval, **flags)
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
            if approval is None:
                raise self.fail("capabilities.approval",
                                "681a.5(h) allows a device that reshuffles automatically only once the Bureau has "
                                "approved it (461a.4): give the approval's reference, e.g. approval = \"BGLO "
                                "2026-0417\"")
        # What the table needs of its devices (an integrator's review: each was accepted here, and
        # the table then failed with it: four count faults a shoe, a fault at every card, an
        # irregularity at every shoe's end).
        if shuffler != "none" and not caps.card_count_after_shuffle:
            raise self.fail("capabilities.card_count_after_shuffle",
                            "shoectl checks the count of the cards after every shuffle: a shuffler that does not "
                            "count them is not supported (set it true for one that does)")
        if kind != "shuffler" and not caps.card_recognition:
            raise self.fail("capabilities.card_recognition",
                            "shoectl decides each round from the cards the shoe reads: a shoe that does not read "
                            "them is not supported (set it true for one that does)")
        if kind != "shuffler" and not caps.cover_card_sensor and not caps.automatic_reshuffle:
            raise self.fail("capabilities.cover_card_sensor",
                            "a shoe dealt with a cut ends at its cover card (681a.5(f), 681a.7(d)), which it must "
                            "sense (set it true for one that does); only an automatic reshuffling shoe (681a.5(h)) "
                            "goes without")
        return caps

    def timing(self) -> Timing:
        t = self.section("timing", _TIMING_KEYS)
        d = Timing()
        values = {k: self.integer(f"timing.{k}", t.get(k, getattr(d, k)), lo, hi, hint=_TIMING_HINTS.get(k, ""))
                  for k, (lo, hi) in _TIMING_RANGES.items()}
        if values["reconnect_max_ms"] < values["reconnect_min_ms"]:
            raise self.fail("timing.reconnect_max_ms",
                            f"{values['reconnect_max_ms']} is below reconnect_min_ms ({values['reconnect_min_ms']})")
        return Timing(**values)
