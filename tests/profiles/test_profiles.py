"""Device profiles: the shipped ones validate; every kind of bad file gives one ProfileError naming
the file, the dotted key and the reason; garbage never raises anything else; the search path."""
from __future__ import annotations

import copy
import json
import os
import pty
import tomllib
from pathlib import Path
from typing import Any

import pytest
import serial
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from firmware_bridge.profiles import (
    PROFILE_PATH_ENV,
    Profile,
    ProfileError,
    SerialTransportSpec,
    UsbIdentity,
    UsbTransportSpec,
    builtin_profile_dir,
    check_profiles,
    get_profile,
    list_profiles,
    load_profile,
    parse_profile,
    profile_dirs,
    resolve_profile,
)

SHIPPED = sorted(builtin_profile_dir().glob("*.toml"))
SHIPPED_SERIAL = [p for p in SHIPPED if tomllib.loads(p.read_text(encoding="utf-8"))["transport"]["type"] == "serial"]
EXPECTED_NAMES = {
    "emulated-shuffler", "emulated-shoe", "emulated-usb-shuffler", "acme-batchshuffler-x", "acme-readershoe-s",
}


@pytest.fixture(autouse=True)
def _no_site_profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests see the shipped profiles only, unless they set the variable themselves."""
    monkeypatch.delenv(PROFILE_PATH_ENV, raising=False)


# A tiny TOML writer for the flat sections of a profile (tomllib reads, it does not write).
def dump_toml(data: dict[str, dict[str, Any]]) -> str:
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v, ensure_ascii=False)  # a JSON string is a TOML basic string
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        raise TypeError(type(v))

    out = []
    for section, table in data.items():
        out.append(f"[{section}]")
        out += [f"{k} = {value(v)}" for k, v in table.items()]
        out.append("")
    return "\n".join(out)


SERIAL_BASE: dict[str, dict[str, Any]] = {
    "device": {"vendor": "Test Vendor", "model": "Shoe 1", "kind": "shoe", "protocol_version": 1},
    "transport": {"type": "serial", "baudrate": 9600, "parity": "E", "usb_vid": 0x1209, "usb_pid": 0x0003},
    "capabilities": {"card_recognition": True, "cover_card_sensor": True, "shuffler": "none"},
    "timing": {"retries": 2},
}
USB_BASE: dict[str, dict[str, Any]] = {
    "device": {"vendor": "Test Vendor", "model": "Shuffler 1", "kind": "shuffler"},
    "transport": {"type": "usb", "vid": 0x1209, "pid": 0x0002, "endpoint_out": 0x02, "endpoint_in": 0x82},
    "capabilities": {"shuffler": "batch", "card_count_after_shuffle": True},
}


def with_change(base: dict, dotted: str, new: Any = None, *, delete: bool = False) -> dict:
    data = copy.deepcopy(base)
    parts = dotted.split(".")
    table = data
    for p in parts[:-1]:
        table = table.setdefault(p, {})
    if delete:
        del table[parts[-1]]
    else:
        table[parts[-1]] = new
    return data


def write(tmp_path: Path, text: str | bytes, name: str = "bad-device.toml") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


# -- the shipped profiles -------------------------------------------------------------------------


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
    """681a.5(h): a shoe that reshuffles and counts the cards itself; the cut does not apply."""
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


# -- the serial settings are pyserial's ----------------------------------------------------------


@pytest.mark.parametrize("path", SHIPPED_SERIAL, ids=lambda p: p.stem)
def test_pyserial_accepts_the_settings(path: Path) -> None:
    p = load_profile(path)
    assert isinstance(p.transport, SerialTransportSpec)
    kw = p.transport.pyserial_kwargs()
    assert set(kw) == {"baudrate", "bytesize", "parity", "stopbits", "rtscts", "xonxoff", "dsrdtr"}
    assert kw["bytesize"] in serial.Serial.BYTESIZES
    assert kw["parity"] in serial.Serial.PARITIES
    assert kw["stopbits"] in serial.Serial.STOPBITS
    port = serial.serial_for_url("loop://", **kw)
    try:
        assert (port.baudrate, port.bytesize, port.parity, port.stopbits) == (
            kw["baudrate"], kw["bytesize"], kw["parity"], kw["stopbits"])
    finally:
        port.close()


def test_emulated_serial_settings_open_a_real_pty() -> None:
    """The emulator serves a pseudo-terminal: the profile's settings must open it."""
    master, slave = pty.openpty()
    try:
        kw = get_profile("emulated-shoe").transport.pyserial_kwargs()
        port = serial.Serial(os.ttyname(slave), timeout=1, **kw)
        try:
            port.write(b"ping")
            assert os.read(master, 4) == b"ping"
        finally:
            port.close()
    finally:
        os.close(master)
        os.close(slave)


def test_stopbits_one_and_a_half_is_pyserials_constant() -> None:
    data = with_change(SERIAL_BASE, "transport.stopbits", 1.5)
    spec = parse_profile(data, "x.toml", "x").transport
    assert spec.pyserial_kwargs()["stopbits"] == serial.STOPBITS_ONE_POINT_FIVE
    data = with_change(SERIAL_BASE, "transport.stopbits", 2.0)
    assert parse_profile(data, "x.toml", "x").transport.stopbits == serial.STOPBITS_TWO


def test_defaults_and_timing_in_seconds() -> None:
    p = parse_profile(USB_BASE, "x.toml", "x")
    t = p.transport
    assert isinstance(t, UsbTransportSpec)
    assert (t.configuration, t.interface, t.transfer, t.max_packet) == (1, 0, "bulk", 64)
    assert (t.manufacturer, t.product) == ("Test Vendor", "Shuffler 1")  # from [device]
    assert p.protocol_version == 1 and p.description == ""
    assert p.timing.response_timeout_s == 0.25 and p.timing.reconnect_max_s == 5.0
    assert p.timing.heartbeat_interval_s == 1.0 and p.timing.shuffle_s == 30.0


def test_usb_identity_matching() -> None:
    ident = UsbIdentity(0x1209, 0x0001, "SN1")
    assert ident.matches(0x1209, 0x0001, "SN1")
    assert not ident.matches(0x1209, 0x0001, "SN2")
    assert not ident.matches(0x1209, 0x0001, None)  # unreadable serial: not proven to be this one
    assert UsbIdentity(0x1209, 0x0001).matches(0x1209, 0x0001, None)
    assert not UsbIdentity(0x1209, 0x0001).matches(0x1209, 0x0002)
    assert ident.id_str == "1209:0001"


# -- bad profiles ---------------------------------------------------------------------------------

BAD_CASES: list[tuple[str, dict | str | bytes, str, str]] = [
    # (id, document, dotted key, reason fragment)
    ("unknown-section", with_change(SERIAL_BASE, "extra.a", 1), "extra", "unknown section; known sections: device, transport"),
    ("unknown-device-key", with_change(SERIAL_BASE, "device.colour", "red"), "device.colour", "unknown key; known keys: vendor, model"),
    ("usb-key-in-serial", with_change(SERIAL_BASE, "transport.vid", 0x1209), "transport.vid", "a USB-serial adapter is named by usb_vid"),
    ("serial-key-in-usb", with_change(USB_BASE, "transport.baudrate", 9600), "transport.baudrate", "belongs to a serial transport"),
    ("bool-for-int", with_change(SERIAL_BASE, "timing.retries", True), "timing.retries", "expected an integer, got a boolean"),
    ("float-for-int", with_change(SERIAL_BASE, "capabilities.deck_capacity", 8.0), "capabilities.deck_capacity", "expected an integer, got a float"),
    ("string-for-int", with_change(SERIAL_BASE, "transport.baudrate", "fast"), "transport.baudrate", "expected an integer, got a string"),
    ("deck-capacity-range", with_change(SERIAL_BASE, "capabilities.deck_capacity", 13), "capabilities.deck_capacity", "out of range: 13 (allowed 1..12)"),
    ("baud-range", with_change(SERIAL_BASE, "transport.baudrate", 0), "transport.baudrate", "out of range: 0"),
    ("bytesize-range", with_change(SERIAL_BASE, "transport.bytesize", 9), "transport.bytesize", "out of range: 9 (allowed 5..8)"),
    ("parity-enum", with_change(SERIAL_BASE, "transport.parity", "X"), "transport.parity", "unknown value 'X'; allowed: N, E, O, M, S"),
    ("stopbits", with_change(SERIAL_BASE, "transport.stopbits", 3), "transport.stopbits", "allowed 1, 1.5, 2"),
    ("stopbits-bool", with_change(SERIAL_BASE, "transport.stopbits", True), "transport.stopbits", "got a boolean"),
    ("flow-not-bool", with_change(SERIAL_BASE, "transport.rtscts", 1), "transport.rtscts", "expected a boolean"),
    ("kind-enum", with_change(SERIAL_BASE, "device.kind", "dealer"), "device.kind", "unknown value 'dealer'; allowed: shoe, shuffler, shuffler-shoe"),
    ("transport-enum", with_change(SERIAL_BASE, "transport.type", "bluetooth"), "transport.type", "allowed: serial, usb"),
    ("shuffler-enum", with_change(USB_BASE, "capabilities.shuffler", "riffle"), "capabilities.shuffler", "allowed: none, batch, continuous"),
    ("missing-vendor", with_change(SERIAL_BASE, "device.vendor", delete=True), "device.vendor", "required key is missing"),
    ("missing-kind", with_change(SERIAL_BASE, "device.kind", delete=True), "device.kind", "required key is missing; allowed: shoe"),
    ("missing-transport", {k: v for k, v in SERIAL_BASE.items() if k != "transport"}, "transport", "required section [transport] is missing"),
    ("missing-transport-type", with_change(SERIAL_BASE, "transport.type", delete=True), "transport.type", "required key is missing"),
    ("missing-vid", with_change(USB_BASE, "transport.vid", delete=True), "transport.vid", "required key is missing"),
    ("empty-vendor", with_change(SERIAL_BASE, "device.vendor", "  "), "device.vendor", "must not be empty"),
    ("multiline-description", with_change(SERIAL_BASE, "device.description", "a\nb"), "device.description", "one printable line"),
    ("protocol-version", with_change(SERIAL_BASE, "device.protocol_version", 0), "device.protocol_version", "out of range: 0 (allowed 1..255)"),
    ("vid-range", with_change(USB_BASE, "transport.vid", 0x10000), "transport.vid", "out of range: 0x10000 (allowed 0x0000..0xffff)"),
    ("pid-negative", with_change(USB_BASE, "transport.pid", -1), "transport.pid", "out of range: -1"),
    ("endpoint-in-without-0x80", with_change(USB_BASE, "transport.endpoint_in", 0x01), "transport.endpoint_in", "bit 0x80 set"),
    ("endpoint-out-with-0x80", with_change(USB_BASE, "transport.endpoint_out", 0x81), "transport.endpoint_out", "bit 0x80 clear"),
    ("endpoint-zero", with_change(USB_BASE, "transport.endpoint_out", 0x00), "transport.endpoint_out", "endpoint numbers are 1..15"),
    ("endpoint-reserved-bits", with_change(USB_BASE, "transport.endpoint_in", 0x91), "transport.endpoint_in", "endpoint numbers are 1..15"),
    ("transfer-enum", with_change(USB_BASE, "transport.transfer", "isochronous"), "transport.transfer", "allowed: bulk, interrupt"),
    ("max-packet-range", with_change(USB_BASE, "transport.max_packet", 2048), "transport.max_packet", "out of range: 2048 (allowed 8..1024)"),
    ("bulk-packet-size", with_change(USB_BASE, "transport.max_packet", 100), "transport.max_packet", "a bulk endpoint takes one of"),
    ("adapter-half-identity", with_change(SERIAL_BASE, "transport.usb_pid", delete=True), "transport.usb_pid", "required with the other"),
    ("adapter-serial-quote", with_change(SERIAL_BASE, "transport.usb_serial", 'A"B'), "transport.usb_serial", "bad serial number"),
    ("serial-trailing-newline", with_change(USB_BASE, "transport.serial_number", "SN1\n"), "transport.serial_number", "bad serial number"),
    ("usb-serial-pattern", with_change(USB_BASE, "transport.serial_number", "SN*"), "transport.serial_number", "bad serial number"),
    ("shoe-with-shuffler", with_change(SERIAL_BASE, "capabilities.shuffler", "batch"), "capabilities.shuffler", "has no shuffler"),
    ("shuffler-without-shuffler", with_change(USB_BASE, "capabilities.shuffler", "none"), "capabilities.shuffler", "needs a shuffler"),
    ("shuffler-cover-card", with_change(USB_BASE, "capabilities.cover_card_sensor", True), "capabilities.cover_card_sensor", "no cover card sensor"),
    ("auto-reshuffle-on-a-shoe", with_change(SERIAL_BASE, "capabilities.automatic_reshuffle", True), "capabilities.automatic_reshuffle", "681a.5(h)"),
    ("count-without-shuffler", with_change(SERIAL_BASE, "capabilities.card_count_after_shuffle", True), "capabilities.card_count_after_shuffle", "needs a shuffler"),
    ("reconnect-order", with_change(with_change(SERIAL_BASE, "timing.reconnect_min_ms", 5000), "timing.reconnect_max_ms", 100), "timing.reconnect_max_ms", "below reconnect_min_ms"),
    ("retries-range", with_change(SERIAL_BASE, "timing.retries", 100), "timing.retries", "out of range: 100 (allowed 0..20)"),
    ("unknown-timing-key", with_change(SERIAL_BASE, "timing.timeout", 5), "timing.timeout", "known keys: response_timeout_ms"),
    ("transport-not-a-table", 'transport = "serial"\n[device]\nvendor = "v"\nmodel = "m"\nkind = "shoe"\n', "transport", "expected a table ([transport]), got a string"),
    ("toml-syntax", '[device]\nvendor = "v\n', "", "TOML syntax error"),
    ("toml-duplicate-key", '[device]\nvendor = "a"\nvendor = "b"\n', "", "TOML syntax error"),
    ("not-utf8", b'[device]\nvendor = "\xff"\n', "", "not UTF-8 text (bad byte at offset 19)"),
    ("huge-integer", "[timing]\nretries = " + "9" * 5000 + "\n", "", "TOML"),
    ("empty-file", "", "device", "required section [device] is missing"),
]


@pytest.mark.parametrize("doc,key,reason", [c[1:] for c in BAD_CASES], ids=[c[0] for c in BAD_CASES])
def test_bad_profile_names_file_key_and_reason(tmp_path: Path, doc: Any, key: str, reason: str) -> None:
    text = dump_toml(doc) if isinstance(doc, dict) else doc
    path = write(tmp_path, text)
    with pytest.raises(ProfileError) as ei:
        load_profile(path)
    err = ei.value
    assert isinstance(err, ValueError)
    assert err.source == str(path)
    assert err.key == key
    assert reason in err.reason, err.reason
    msg = str(err)
    assert "\n" not in msg and msg.startswith(str(path)) and (not key or f": {key}: " in msg)


def test_toml_syntax_error_gives_line_and_column(tmp_path: Path) -> None:
    path = write(tmp_path, '[device]\nvendor = "v"\nmodel = = "m"\n')
    with pytest.raises(ProfileError, match=r"line 3, column \d+"):
        load_profile(path)


@pytest.mark.parametrize("stem", ["Bad Name", "UPPER", "-leading", "x" * 65, "trailing-newline\n"])
def test_bad_file_stem(tmp_path: Path, stem: str) -> None:
    path = write(tmp_path, dump_toml(SERIAL_BASE), f"{stem}.toml")
    with pytest.raises(ProfileError, match="bad profile name .*the file stem"):
        load_profile(path)


def test_unreadable_paths(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="file not found"):
        load_profile(tmp_path / "missing.toml")
    (tmp_path / "dir.toml").mkdir()
    with pytest.raises(ProfileError, match="is a directory"):
        load_profile(tmp_path / "dir.toml")
    with pytest.raises(ProfileError, match=r"named NAME\.toml"):
        load_profile(write(tmp_path, dump_toml(SERIAL_BASE), "profile.txt"))
    with pytest.raises(ProfileError, match="cannot read the file"):
        load_profile("bad\0name.toml")


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, b"\xef\xbb\xbf" + dump_toml(SERIAL_BASE).encode(), "bom.toml")
    assert load_profile(path).vendor == "Test Vendor"


# -- garbage never raises anything but ProfileError ----------------------------------------------

toml_scalars = st.one_of(
    st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=True),
    st.text(max_size=20), st.sampled_from(["serial", "usb", "shoe", "batch", "N", "bulk", "E"]),
    st.integers(min_value=0, max_value=0x1FF), st.just(1.5), st.dates(),
)
toml_values = st.recursive(
    toml_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
KEYS = sorted({k for base in (SERIAL_BASE, USB_BASE) for s in base.values() for k in s}
              | {"stopbits", "bytesize", "serial_number", "configuration", "interface", "transfer", "max_packet",
                 "automatic_reshuffle", "deck_capacity", "shuffle_ms", "usb_serial", "manufacturer"})


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.dictionaries(st.one_of(st.text(max_size=12), st.sampled_from(["device", "transport", "capabilities", "timing"])),
                            toml_values, max_size=5))
def test_garbage_documents_raise_only_profile_error(data: dict) -> None:
    try:
        parse_profile(data, "garbage.toml", "garbage")
    except ProfileError as exc:
        assert "\n" not in str(exc)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from([SERIAL_BASE, USB_BASE]),
       section=st.sampled_from(["device", "transport", "capabilities", "timing"]),
       key=st.sampled_from(KEYS), value=toml_values)
def test_one_bad_value_raises_only_profile_error(base: dict, section: str, key: str, value: Any) -> None:
    data = with_change(base, f"{section}.{key}", value)
    try:
        p = parse_profile(data, "x.toml", "x")
    except ProfileError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("x.toml")
    else:
        assert isinstance(p, Profile) and parse_profile(p.to_dict(), "x.toml", "x") == p


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(raw=st.one_of(st.binary(max_size=400),
                     st.builds(lambda t, i, s: t[:i] + s + t[i + len(s):],
                               st.just(Path(SHIPPED[0]).read_text(encoding="utf-8")),
                               st.integers(min_value=0, max_value=1200), st.text(max_size=6))))
def test_garbage_files_raise_only_profile_error(tmp_path: Path, raw: bytes | str) -> None:
    path = write(tmp_path, raw, "garbage.toml")
    try:
        load_profile(path)
    except ProfileError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(str(path))


# -- the search path ------------------------------------------------------------------------------


def test_search_path_env_dirs_come_first(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    monkeypatch.setenv(PROFILE_PATH_ENV, os.pathsep.join([str(a), "", str(b)]))
    assert profile_dirs() == [a, b, builtin_profile_dir()]


def test_site_profile_shadows_a_shipped_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    doc = with_change(SERIAL_BASE, "device.model", "Site override")
    write(tmp_path, dump_toml(doc), "emulated-shoe.toml")
    write(tmp_path, dump_toml(USB_BASE), "site-shuffler.toml")
    write(tmp_path, "not toml", "README.md")           # not a profile: ignored
    write(tmp_path, "not toml", ".#emulated-shoe.toml")  # editor lock file: ignored
    monkeypatch.setenv(PROFILE_PATH_ENV, str(tmp_path))
    by_name = {p.name: p for p in list_profiles()}
    assert by_name["emulated-shoe"].model == "Site override"
    assert "site-shuffler" in by_name and EXPECTED_NAMES <= set(by_name)
    assert get_profile("emulated-shoe").source == str(tmp_path / "emulated-shoe.toml")
    checks = {c.path: c for c in check_profiles()}
    shipped = checks[str(builtin_profile_dir() / "emulated-shoe.toml")]
    assert shipped.ok and shipped.shadowed_by == str(tmp_path / "emulated-shoe.toml")


def test_a_bad_file_is_never_skipped(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bad = write(tmp_path, dump_toml(with_change(SERIAL_BASE, "transport.parity", "Q")), "broken.toml")
    monkeypatch.setenv(PROFILE_PATH_ENV, str(tmp_path))
    with pytest.raises(ProfileError) as ei:
        list_profiles()
    assert ei.value.source == str(bad) and ei.value.key == "transport.parity"
    # check_profiles reports every file instead; get_profile still loads a good profile by name.
    results = check_profiles()
    assert [r.path for r in results if not r.ok] == [str(bad)]
    assert sum(r.ok for r in results) == len(SHIPPED)
    assert get_profile("emulated-shoe").name == "emulated-shoe"


def test_missing_search_directory_is_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(PROFILE_PATH_ENV, str(tmp_path / "nope"))
    with pytest.raises(ProfileError, match="profile directory not found"):
        list_profiles()
    [result] = check_profiles()
    assert not result.ok and result.path == str(tmp_path / "nope")


def test_unknown_profile_lists_the_available_ones() -> None:
    for name in ("no-such-device", "../etc/passwd", "Bad Name"):
        with pytest.raises(ProfileError) as ei:
            get_profile(name)
        assert "unknown profile; available: acme-" in str(ei.value) and "emulated-shoe" in str(ei.value)


def test_resolve_profile_takes_a_name_or_a_file(tmp_path: Path) -> None:
    assert resolve_profile("emulated-shuffler").name == "emulated-shuffler"
    path = write(tmp_path, dump_toml(USB_BASE), "my-shuffler.toml")
    assert resolve_profile(str(path)).name == "my-shuffler"
    with pytest.raises(ProfileError, match="file not found"):
        resolve_profile(str(tmp_path / "missing.toml"))


def test_check_profiles_of_given_files(tmp_path: Path) -> None:
    good = write(tmp_path, dump_toml(USB_BASE), "good.toml")
    bad = write(tmp_path, "[device]\n", "bad.toml")
    r_good, r_bad = check_profiles([good, bad])
    assert r_good.ok and r_good.profile is not None and r_good.profile.name == "good"
    assert not r_bad.ok and r_bad.profile is None and r_bad.error is not None and r_bad.error.key == "transport"
