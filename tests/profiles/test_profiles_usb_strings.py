"""A USB string descriptor holds at most 126 UTF-16 code units (bLength is one byte: 2 + 2 x 126 =
254); profile_parser.MAX_TEXT says so, but the check counts characters. A character outside the
Basic Multilingual Plane is two code units: 64 of them (128 units) were taken, and the emulated USB
device then failed GET_DESCRIPTOR with ValueError (bytes must be in range(0, 256))."""
from __future__ import annotations

from pathlib import Path

import pytest

from firmware_bridge.profiles import ProfileError, load_profile
from emulator.host_support import find_usb

from .profile_documents import USB_BASE, dump_toml, with_change, write

WIDE = "\U0001D538"  # MATHEMATICAL DOUBLE-STRUCK CAPITAL A: printable, two UTF-16 code units


@pytest.mark.parametrize("key", ["transport.manufacturer", "transport.product"])
def test_a_usb_string_longer_than_126_utf16_code_units_is_refused(tmp_path: Path, key: str) -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile(write(tmp_path, dump_toml(with_change(USB_BASE, key, WIDE * 64))))
    assert caught.value.key == key


def test_the_longest_usb_string_a_profile_takes_is_served_by_the_emulated_device(tmp_path: Path) -> None:
    """63 characters beyond U+FFFF are 126 UTF-16 code units: taken, and served whole."""
    from firmware_bridge.emulator import EmulatedUsbBackend, build_device

    profile = load_profile(write(tmp_path, dump_toml(with_change(USB_BASE, "transport.manufacturer", WIDE * 63)),
                                 "wide-usb.toml"))
    dev = find_usb(EmulatedUsbBackend(build_device(profile)), product=0x0002)
    assert dev.manufacturer == WIDE * 63
