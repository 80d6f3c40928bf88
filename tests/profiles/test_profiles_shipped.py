"""Device profiles: the shipped ones validate and round-trip, their USB identities are test IDs
and distinct, the emulated and the realistic families carry what they need, and every key is
documented."""
from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from firmware_bridge.profiles import (
    ProfileError,
    SerialTransportSpec,
    UsbIdentity,
    UsbTransportSpec,
    builtin_profile_dir,
    get_profile,
    list_profiles,
    load_profile,
    parse_profile,
)

from .profile_documents import EXPECTED_NAMES, SHIPPED, dump_toml, with_change


def test_the_expected_profiles_are_shipped() -> None:
    assert EXPECTED_NAMES <= {p.stem for p in SHIPPED}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_profile_validates(path: Path) -> None:
    p = load_profile(path)
    assert p.name == path.stem and p.source == str(path)
    assert p.vendor and p.model and p.description
    # Round trip: the TOML layout gives back the same profile, in memory and through a file.
    assert parse_profile(p.to_dict(), p.source, p.name) == p
    assert tomllib.loads(dump_toml(p.to_dict())) == p.to_dict()


def test_shipped_usb_identities_are_test_ids_and_distinct() -> None:
    """pid.codes test IDs only (1209:0001..000f): never a real vendor's; no two profiles claim one
    device (two udev rules would fight over it)."""
    idents = [(p.name, p.usb_identity) for p in list_profiles() if p.usb_identity is not None]
    assert len(idents) >= 3
    for name, ident in idents:
        assert ident.vid == 0x1209 and 0x0001 <= ident.pid <= 0x000F, name
    pairs = [(i.vid, i.pid) for _, i in idents]
    assert len(set(pairs)) == len(pairs)


def test_emulated_profiles_have_what_the_emulator_needs() -> None:
    shoe, shuffler = get_profile("emulated-shoe"), get_profile("emulated-shuffler")
    assert shoe.kind == "shoe" and isinstance(shoe.transport, SerialTransportSpec)
    c = shoe.capabilities
    assert c.card_recognition and c.face_up_detection and c.cover_card_sensor and c.shuffler == "none"
    assert shuffler.kind == "shuffler" and shuffler.capabilities.card_count_after_shuffle
    assert shuffler.capabilities.shuffler == "batch"
    for p in (shoe, shuffler):  # a pty cannot do modem-line flow control
        assert p.usb_identity is None and not p.transport.rtscts and not p.transport.dsrdtr

    usb = get_profile("emulated-usb-shuffler").transport
    assert isinstance(usb, UsbTransportSpec)
    assert (usb.vid, usb.pid, usb.configuration, usb.interface) == (0x1209, 0x0001, 1, 0)
    assert usb.endpoint_in & 0x80 and not usb.endpoint_out & 0x80
    assert usb.transfer == "bulk" and usb.max_packet == 64
    assert usb.manufacturer and usb.product and usb.serial_number


def test_realistic_families() -> None:
    bsx = get_profile("acme-batchshuffler-x")
    assert bsx.transport.type == "usb" and bsx.capabilities.card_count_after_shuffle
    rs = get_profile("acme-readershoe-s")
    assert rs.transport.type == "serial" and rs.usb_identity == UsbIdentity(0x1209, 0x0003)
    assert "fictitious" in bsx.vendor.lower() and "fictitious" in rs.vendor.lower()


@pytest.mark.reg("681a.5(h)")
def test_automatic_reshuffling_shoe_profile() -> None:
    """681a.5(h): "a dealing shoe or other device that automatically reshuffles and counts the
    cards": the shipped profile states both capabilities, and a profile claiming the reshuffle
    without the count is refused naming the clause."""
    p = get_profile("acme-autoshoe-r")
    assert p.kind == "shuffler-shoe"
    assert p.capabilities.automatic_reshuffle and p.capabilities.card_count_after_shuffle
    # A device that reshuffles but does not count is not the device 681a.5(h) describes.
    data = with_change(p.to_dict(), "capabilities.card_count_after_shuffle", False)
    with pytest.raises(ProfileError) as ei:
        parse_profile(data, "x.toml", "x")
    assert ei.value.key == "capabilities.automatic_reshuffle" and "681a.5(h)" in ei.value.reason


def test_every_key_is_documented() -> None:
    from firmware_bridge.profile_parser import _SECTIONS

    doc = (builtin_profile_dir().parent / "docs" / "device-profiles.md").read_text(encoding="utf-8")
    for section, keys in _SECTIONS.items():
        assert f"`[{section}]`" in doc, section
        for key in keys:
            assert f"| `{key}` |" in doc, f"{section}.{key} is not in docs/device-profiles.md"
