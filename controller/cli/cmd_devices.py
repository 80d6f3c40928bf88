"""``shoectl devices [--json]``: attached serial ports and USB devices, and the profiles they match.

Serial ports come from ``serial.tools.list_ports.comports()``; a port with USB IDs (a USB-serial
adapter) matches the serial profiles whose ``usb_vid``/``usb_pid`` (and ``usb_serial``, when
given) are its IDs. USB devices come from ``usb.core.find(find_all=True)`` and match the usb
profiles whose ``vid``/``pid`` (and ``serial_number``) are theirs, and the serial profiles whose
adapter they are. A device whose serial number cannot be read (no permission) does not match a
profile that names one.

Why a device was not taken is said (an integrator review found only "no matching profile"): a
profile with its IDs that names another serial number (``near``), and a USB device this user may
not open (``access``: the udev rules' business, ``firmware_bridge.transport.usb.access_denied``),
when a profile has its IDs (no rule of ours gives a hub or a keyboard to the group).

Nothing attached is a normal answer ("no devices found", exit 0). No libusb backend is a normal
line that says how to install it ("USB: no libusb backend (install libusb: apt install
libusb-1.0-0)"), exit 0: the serial ports are still listed. A bad profile: the devices are still
listed (without matches), then the profile error is printed and the exit code is 2.

``--json`` prints one object (a stable contract)::

    {"serial_ports": [{"device", "description", "hwid", "vid", "pid", "serial_number",
                       "profiles": [names], "near": [{"profile", "serial_number"}]}],
     "usb": {"backend": true|false, "error": null|"...",
             "devices": [{"bus", "address", "vid", "pid", "serial_number", "manufacturer",
                          "product", "profiles": [names], "near": [...],
                          "access": null|"permission denied (...)"}]},
     "profile_error": null|"..."}

``vid``/``pid`` are integers (``null`` for a port without USB IDs).
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from controller.cli.common import print_json
from firmware_bridge.profiles import Profile, ProfileError, list_profiles
from firmware_bridge.transport.usb import NO_LIBUSB, PERMISSION_WORDS, access_denied

NO_BACKEND = f"USB: {NO_LIBUSB}"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("devices", help="attached serial ports and USB devices, with their matching profiles")
    p.add_argument("--json", action="store_true", help="one JSON object")
    p.set_defaults(func=run)


def serial_ports() -> list[dict[str, Any]]:
    """The serial ports the OS reports, as plain dicts (no ``profiles`` key yet)."""
    from serial.tools import list_ports

    out = []
    for info in sorted(list_ports.comports(), key=lambda i: i.device):
        out.append({
            "device": info.device,
            "description": info.description,
            "hwid": info.hwid,
            "vid": info.vid,
            "pid": info.pid,
            "serial_number": info.serial_number,
        })
    return out


def usb_devices(profiles: list[Profile]) -> tuple[bool, str | None, list[dict[str, Any]]]:
    """``(backend available, error text or None, devices)``, each with the ``profiles`` it is
    and those ``near`` it (``_matches``); never raises for a missing backend or a device that
    cannot be read. Whether this account may open a device is looked at only for one a profile
    names: a hub, a keyboard, no rule of ours gives to the group (a review)."""
    import usb.core

    try:
        found = list(usb.core.find(find_all=True))
    except usb.core.NoBackendError:
        return False, None, []
    except usb.core.USBError as exc:
        return True, f"cannot enumerate USB devices: {exc}", []
    out = []
    for dev in found:
        unread: list[BaseException] = []
        entry = {
            "bus": getattr(dev, "bus", None),
            "address": getattr(dev, "address", None),
            "vid": dev.idVendor,
            "pid": dev.idProduct,
            "serial_number": _string(dev, "serial_number", unread),
            "manufacturer": _string(dev, "manufacturer", unread),
            "product": _string(dev, "product", unread),
        }
        entry["profiles"], entry["near"] = _matches(profiles, entry["vid"], entry["pid"], entry["serial_number"],
                                                    ("usb", "serial"))
        ours = entry["profiles"] or entry["near"]
        # an error that says so, else the device's node: looked at once
        denied = ours and (any(access_denied(None, e) for e in unread) or access_denied(dev))
        out.append({**entry, "access": PERMISSION_WORDS if denied else None})
    out.sort(key=lambda d: (d["bus"] or 0, d["address"] or 0, d["vid"], d["pid"]))
    return True, None, out


def _string(dev: Any, attr: str, unread: list[BaseException]) -> str | None:
    """A string descriptor, or None when the device has none or it cannot be read (the error
    added to ``unread``)."""
    import usb.core

    try:
        value = getattr(dev, attr)
    except (usb.core.USBError, ValueError, NotImplementedError, OSError) as exc:
        unread.append(exc)
        return None
    return value if isinstance(value, str) else None


def _matches(profiles: list[Profile], vid: int | None, pid: int | None, serial: str | None,
             transports: tuple[str, ...]) -> tuple[list[str], list[dict[str, str]]]:
    """The profiles a device with these IDs and serial number is, and those with its IDs that
    name another serial number (``near``)."""
    if vid is None or pid is None:
        return [], []
    ours = [p for p in profiles if p.transport.type in transports and p.usb_identity is not None]
    names = [p.name for p in ours if p.usb_identity.matches(vid, pid, serial)]
    near = [{"profile": p.name, "serial_number": p.usb_identity.serial} for p in ours
            if (p.usb_identity.vid, p.usb_identity.pid) == (vid, pid) and p.name not in names]
    return names, near


def run(args: argparse.Namespace) -> int:
    profile_error: ProfileError | None = None
    try:
        profiles = list_profiles()
    except ProfileError as exc:
        profiles, profile_error = [], exc

    ports = serial_ports()
    for port in ports:
        port["profiles"], port["near"] = _matches(profiles, port["vid"], port["pid"], port["serial_number"], ("serial",))
    backend, usb_error, devices = usb_devices(profiles)

    if args.json:
        print_json({
            "serial_ports": ports,
            "usb": {"backend": backend, "error": usb_error, "devices": devices},
            "profile_error": None if profile_error is None else str(profile_error),
        })
    else:
        _print_text(ports, backend, usb_error, devices)
    if profile_error is not None:
        print(f"shoectl devices: error: {' '.join(str(profile_error).split())} (profiles not matched)", file=sys.stderr)
        return 2
    return 0


def _ids(vid: int | None, pid: int | None) -> str:
    return f"{vid:04x}:{pid:04x}" if vid is not None and pid is not None else "-"


def _profiles_text(found: dict[str, Any]) -> str:
    """What a device is: its profiles, or why none (a profile of its IDs names another serial
    number, or the serial number cannot be read); and whether this user may open it."""
    names = found["profiles"]
    text = f"profile: {', '.join(names)}" if names else "no matching profile"
    if not names and found["near"]:
        expected = "; ".join(f"{n['profile']} has these IDs and names serial {n['serial_number']}" for n in found["near"])
        unread = "; its serial number cannot be read" if found["serial_number"] is None else ""
        text += f" ({expected}{unread})"
    if found.get("access"):
        text += f"; {found['access']}"
    return text


def _print_text(ports: list[dict[str, Any]], backend: bool, usb_error: str | None,
                devices: list[dict[str, Any]]) -> None:
    if ports:
        print("Serial ports:")
        for p in ports:
            serial = f" serial {p['serial_number']}" if p["serial_number"] else ""
            print(f"  {p['device']}  {_ids(p['vid'], p['pid'])}{serial}  {p['description']}  [{p['hwid']}]"
                  f"  -> {_profiles_text(p)}")
    if devices:
        print("USB devices:")
        for d in devices:
            serial = f" serial {d['serial_number']}" if d["serial_number"] else ""
            name = " ".join(x for x in (d["manufacturer"], d["product"]) if x) or "(no name readable)"
            print(f"  bus {d['bus']} address {d['address']}  {_ids(d['vid'], d['pid'])}{serial}  {name}"
                  f"  -> {_profiles_text(d)}")
    if not backend:
        print(NO_BACKEND)
    if usb_error:
        print(f"USB: {usb_error}")
    if not ports and not devices:
        print("no devices found")
