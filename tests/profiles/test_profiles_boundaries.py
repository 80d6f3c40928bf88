"""Boundaries of docs/device-profiles.md that no other test held (found by mutation testing):
each documented range is taken at its ends and refused one past them, and the consistency rules
name the key they break."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from firmware_bridge.profiles import ProfileError, load_profile

from .profile_documents import SERIAL_BASE, USB_BASE, dump_toml, with_change, write

_AUTO_SHUFFLER = with_change(with_change(USB_BASE, "capabilities.automatic_reshuffle", True),
                             "capabilities.approval", "BGLO 2026-0417")

TAKEN: list[tuple[str, dict[str, Any], str, Any]] = [
    # (id, document, dotted key, the value it has once loaded)
    ("serial-number-126", with_change(USB_BASE, "transport.serial_number", "S" * 126), "transport.serial_number", "S" * 126),
    ("serial-number-colon", with_change(USB_BASE, "transport.serial_number", "AB:CD-01.x_y"), "transport.serial_number",
     "AB:CD-01.x_y"),
    ("adapter-serial-colon", with_change(SERIAL_BASE, "transport.usb_serial", "FT:01"), "transport.usb_serial", "FT:01"),
    ("configuration-1", with_change(USB_BASE, "transport.configuration", 1), "transport.configuration", 1),
    ("configuration-255", with_change(USB_BASE, "transport.configuration", 255), "transport.configuration", 255),
    ("interface-255", with_change(USB_BASE, "transport.interface", 255), "transport.interface", 255),
    ("baudrate-50", with_change(SERIAL_BASE, "transport.baudrate", 50), "transport.baudrate", 50),
    ("approval-200", with_change(_AUTO_SHUFFLER, "device.kind", "shuffler-shoe"), "capabilities.approval", "BGLO 2026-0417"),
    ("approval-200-chars", with_change(with_change(_AUTO_SHUFFLER, "device.kind", "shuffler-shoe"),
                                       "capabilities.approval", "A" * 200), "capabilities.approval", "A" * 200),
    ("description-500", with_change(SERIAL_BASE, "device.description", "d" * 500), "device.description", "d" * 500),
    ("reconnect-max-equal-to-min", with_change(with_change(SERIAL_BASE, "timing.reconnect_min_ms", 2000),
                                               "timing.reconnect_max_ms", 2000), "timing.reconnect_max_ms", 2000),
]

REFUSED: list[tuple[str, dict[str, Any], str, str]] = [
    # (id, document, dotted key, reason fragment)
    ("serial-number-127", with_change(USB_BASE, "transport.serial_number", "S" * 127), "transport.serial_number",
     "bad serial number"),
    ("adapter-serial-without-ids", with_change(with_change(with_change(SERIAL_BASE, "transport.usb_vid", delete=True),
                                                           "transport.usb_pid", delete=True),
                                               "transport.usb_serial", "FT01"),
     "transport.usb_serial", "needs usb_vid and usb_pid"),
    ("configuration-0", with_change(USB_BASE, "transport.configuration", 0), "transport.configuration",
     "out of range: 0 (allowed 1..255)"),
    ("baudrate-49", with_change(SERIAL_BASE, "transport.baudrate", 49), "transport.baudrate", "out of range: 49"),
    ("approval-201-chars", with_change(with_change(_AUTO_SHUFFLER, "device.kind", "shuffler-shoe"),
                                       "capabilities.approval", "A" * 201), "capabilities.approval",
     "at most 200 characters"),
    ("description-501", with_change(SERIAL_BASE, "device.description", "d" * 501), "device.description",
     "at most 500 characters"),
    # a shuffler that counts and names an approval is still no dealing shoe: 681a.5(h) is a shoe's
    ("auto-reshuffle-on-a-shuffler", _AUTO_SHUFFLER, "capabilities.automatic_reshuffle", 'this is kind "shuffler"'),
]


def _get(profile: Any, dotted: str) -> Any:
    section, key = dotted.split(".")
    return getattr(getattr(profile, section) if section != "device" else profile, key)


@pytest.mark.parametrize("doc,key,value", [c[1:] for c in TAKEN], ids=[c[0] for c in TAKEN])
def test_a_documented_bound_is_taken(tmp_path: Path, doc: dict, key: str, value: Any) -> None:
    doc = with_change(doc, "capabilities.card_count_after_shuffle", True) if key == "capabilities.approval" else doc
    if key == "capabilities.approval":
        doc = with_change(with_change(doc, "capabilities.cover_card_sensor", True), "capabilities.card_recognition", True)
    profile = load_profile(write(tmp_path, dump_toml(doc)))
    assert _get(profile, key) == value


@pytest.mark.parametrize("doc,key,reason", [c[1:] for c in REFUSED], ids=[c[0] for c in REFUSED])
def test_one_past_a_documented_bound_is_refused(tmp_path: Path, doc: dict, key: str, reason: str) -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile(write(tmp_path, dump_toml(doc)))
    assert caught.value.key == key
    assert reason in caught.value.reason, caught.value.reason


def test_in_a_checkout_udev_check_reads_the_repositorys_rules() -> None:
    """docs/udev.md: without FILE, in a checkout (the package beside pyproject.toml), `shoectl udev
    check` reads udev/99-shoectl.rules; only an installed copy reads /etc/udev/rules.d."""
    from firmware_bridge.udev import checked_in_rules_path, default_rules_path

    assert (checked_in_rules_path().parents[1] / "pyproject.toml").is_file()
    assert default_rules_path() == checked_in_rules_path()
