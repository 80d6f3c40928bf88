"""Device profiles: every kind of bad file gives one ProfileError naming the file, the dotted key
and the reason; TOML syntax errors give the line and column; bad file stems and unreadable
paths are refused; a byte order mark is accepted."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from firmware_bridge.profiles import ProfileError, load_profile

from .profile_documents import SERIAL_BASE, USB_BASE, dump_toml, with_change, write

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
    # what the table needs of its devices (an integrator's review: each was accepted, and the table
    # then failed with it: count faults at every shuffle, a fault at every card, an irregularity at
    # every shoe's end, a link that never held)
    ("shuffler-that-does-not-count", with_change(USB_BASE, "capabilities.card_count_after_shuffle", False), "capabilities.card_count_after_shuffle", "a shuffler that does not count them is not supported"),
    ("shoe-that-does-not-read", with_change(SERIAL_BASE, "capabilities.card_recognition", False), "capabilities.card_recognition", "a shoe that does not read them is not supported"),
    ("shoe-without-cover-card-sensor", with_change(SERIAL_BASE, "capabilities.cover_card_sensor", False), "capabilities.cover_card_sensor", "only an automatic reshuffling shoe (681a.5(h)) goes without"),
    ("xonxoff", with_change(SERIAL_BASE, "transport.xonxoff", True), "transport.xonxoff", "the wire protocol is binary"),
    ("reconnect-order", with_change(with_change(SERIAL_BASE, "timing.reconnect_min_ms", 5000), "timing.reconnect_max_ms", 100), "timing.reconnect_max_ms", "below reconnect_min_ms"),
    ("retries-range", with_change(SERIAL_BASE, "timing.retries", 100), "timing.retries", "out of range: 100 (allowed 0..20)"),
    # a device review: at 8000 ms the shoe took the quiet host for gone between two heartbeats
    ("heartbeat-past-host-loss", with_change(SERIAL_BASE, "timing.heartbeat_interval_ms", 2501), "timing.heartbeat_interval_ms",
     "out of range: 2501 (allowed 50..2500: a device takes a host silent for 5 s for gone"),
    # past the old general bound, the same reason, not "allowed 50..600000" (a stop's note)
    ("heartbeat-far-past-host-loss", with_change(SERIAL_BASE, "timing.heartbeat_interval_ms", 700_000),
     "timing.heartbeat_interval_ms", "out of range: 700000 (allowed 50..2500: a device takes a host silent for 5 s"),
    # the reason is the highest value's: a value too low is only out of range (a review of the day's changes)
    ("heartbeat-too-short", with_change(SERIAL_BASE, "timing.heartbeat_interval_ms", 10), "timing.heartbeat_interval_ms",
     "out of range: 10 (allowed 50..2500)$"),
    ("unknown-timing-key", with_change(SERIAL_BASE, "timing.timeout", 5), "timing.timeout", "known keys: response_timeout_ms"),
    ("transport-not-a-table", 'transport = "serial"\n[device]\nvendor = "v"\nmodel = "m"\nkind = "shoe"\n', "transport", "expected a table ([transport]), got a string"),
    ("toml-syntax", '[device]\nvendor = "v\n', "", "TOML syntax error"),
    ("toml-duplicate-key", '[device]\nvendor = "a"\nvendor = "b"\n', "", "TOML syntax error"),
    ("not-utf8", b'[device]\nvendor = "\xff"\n', "", "not UTF-8 text (bad byte at offset 19)"),
    ("huge-integer", "[timing]\nretries = " + "9" * 5000 + "\n", "", "TOML"),
    ("empty-file", "", "device", "required section [device] is missing"),
    # A review of an integrator's install: lsusb shows "ID 1209:0003"; `usb_vid = 1209` is TOML's
    # decimal 1209 (0x04b9), another vendor's id, and the udev rule made from it matched nothing.
    ("usb-id-in-decimal", dump_toml(SERIAL_BASE).replace("usb_vid = 0x1209", "usb_vid = 1209"), "transport.usb_vid",
     "1209 is a decimal number (0x04b9): write USB ids in hexadecimal, as lsusb shows them; if lsusb shows 1209, "
     "write 0x1209$"),
    ("usb-id-in-decimal-dotted", 'transport.type = "usb"\ntransport.vid = 0x1209\ntransport.pid = 2_0  # from lsusb\n'
     'transport.endpoint_out = 0x02\ntransport.endpoint_in = 0x82\n[device]\nvendor = "v"\nmodel = "m"\nkind = "shuffler"\n'
     '[capabilities]\nshuffler = "batch"\ncard_count_after_shuffle = true\n', "transport.pid", "2_0 is a decimal number (0x0014)"),
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
    assert reason in err.reason if not reason.endswith("$") else err.reason == reason[:-1], err.reason
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
    with pytest.raises(ProfileError, match=r"not a profile file: a profile file is named NAME\.toml"):
        load_profile(write(tmp_path, dump_toml(SERIAL_BASE), "profile.txt"))
    # without .toml, a missing path or a folder was told only how profile files are named
    with pytest.raises(ProfileError, match="file not found"):
        load_profile(tmp_path / "missing")
    with pytest.raises(ProfileError, match=r"a folder: a profile file is named NAME\.toml"):
        load_profile(tmp_path)
    with pytest.raises(ProfileError, match="cannot read the file"):
        load_profile("bad\0name.toml")


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, b"\xef\xbb\xbf" + dump_toml(SERIAL_BASE).encode(), "bom.toml")
    assert load_profile(path).vendor == "Test Vendor"


@pytest.mark.reg("681a.5(h)")
def test_an_automatic_reshuffling_shoe_needs_the_reference_of_its_approval(tmp_path: Path) -> None:
    """681a.5(h): such a device may be used "provided that the device is submitted to the Bureau of
    Gaming Laboratory Operations and approved in accordance with § 461a.4 ... prior to its use". No
    file can prove an approval, but a profile that drops the cut and the inspection (b)-(g) names
    the approval it relies on, and the journal records it (a gaming lab's review: nothing did)."""
    shipped = (Path(__file__).resolve().parents[2] / "device_profiles" / "emulated-autoshoe.toml").read_text()
    lines = [line for line in shipped.splitlines() if not line.startswith("approval")]
    path = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(ProfileError) as caught:
        load_profile(path)
    assert caught.value.key == "capabilities.approval"
    assert "only once the Bureau has approved it (461a.4): give the approval's reference" in str(caught.value)
    path.write_text(shipped.replace('approval = "none: an emulated', 'approval = "BGLO 2026-0417; none: an emulated'))
    assert load_profile(path).capabilities.approval.startswith("BGLO 2026-0417")


def test_the_longest_heartbeat_is_half_the_devices_host_loss_timeout() -> None:
    """The profile layer does not import the protocol's timing: the two figures are held together
    here (a heartbeat, retried, reaches the device before it takes the host for gone)."""
    from firmware_bridge.profile_parser import HEARTBEAT_MAX_MS
    from firmware_bridge.protocol import HOST_LOSS_TIMEOUT_S

    assert HEARTBEAT_MAX_MS * 2 == HOST_LOSS_TIMEOUT_S * 1000


_USB_SHUFFLER = ('[device]\nvendor = "v"\nmodel = "m"\nkind = "shuffler"\n[capabilities]\nshuffler = "batch"\ncard_count_after_shuffle = true\n')


@pytest.mark.parametrize("transport", [
    'transport = {type = "usb", vid = 1209, pid = 0x0001, endpoint_out = 0x01, endpoint_in = 0x81}\n',
    '[transport]\ntype = "usb"\n"vid" = 1209\npid = 0x0001\n',
    "[transport]\ntype = \"usb\"\n'vid' = 1209\npid = 0x0001\n",
    '[transport]\ntype = "usb"\nvid = +1209\npid = 0x0001\n',
    '[transport]\ntype = "usb"\nvid=1209 # lsusb\npid = 0x0001\n',
], ids=["inline-table", "quoted-key", "literal-quoted-key", "plus-sign", "no-spaces-and-a-comment"])
def test_a_decimal_usb_id_is_refused_however_the_key_is_written(tmp_path: Path, transport: str) -> None:
    """A review of the first fix: the decimal id was refused only as `vid = 1209` on a line of its
    own; in an inline table, under a quoted key or with a sign it still gave 0x04b9, another
    vendor's id (docs/device-profiles.md: "a decimal one is refused")."""
    text = transport + _USB_SHUFFLER if transport.startswith("transport =") else _USB_SHUFFLER + transport
    with pytest.raises(ProfileError, match=r"transport\.vid: \+?1209 is a decimal number \(0x04b9\)"):
        load_profile(write(tmp_path, text))


@pytest.mark.parametrize("transport", [
    'transport = {type = "usb", vid = 0x1209, pid = 0o1, endpoint_out = 0x01, endpoint_in = 0x81}\n',
    '[transport]\ntype = "usb"\nvid = 0x1209  # lsusb: vid = 1209\npid = 0b1\nproduct = "vid = 1209"\n',
    '[transport]\ntype = "usb"\nvid = 0x1209\npid = 0x0001\nmanufacturer = """\nvid = 1209\n"""\n',
], ids=["hex-and-octal-inline", "a-comment-and-a-string-saying-it", "a-multi-line-string-saying-it"])
def test_a_usb_id_written_otherwise_than_in_decimal_is_taken(tmp_path: Path, transport: str) -> None:
    """What the refusal must not catch: hexadecimal, octal and binary ids, and a comment or a
    string that says `vid = 1209` (a description may say anything)."""
    text = transport + _USB_SHUFFLER if transport.startswith("transport =") else _USB_SHUFFLER + transport
    profile = load_profile(write(tmp_path, text))
    assert (profile.transport.vid, profile.transport.pid) == (0x1209, 1)


_TAIL = '[device]\nvendor = "A"\nmodel = "B"\nkind = "shuffler"\n\n[capabilities]\nshuffler = "batch"\ncard_count_after_shuffle = true\n'


@pytest.mark.parametrize("transport", [
    '[transport]\ntype = "usb"\n"v\\u0069d" = 1209\npid = 0x0001\n',  # a key written with a Unicode escape
    # a multi-line literal string that ends with one quote of its own (''''): TOML allows it
    "transport = { type = 'usb', manufacturer = '''it'''', vid = 1209, pid = 0x0001, product = 'P' }\n",
], ids=["escaped-key", "literal-string-ending-in-a-quote"])
def test_a_decimal_usb_id_is_refused_as_tomllib_reads_the_key(tmp_path: Path, transport: str) -> None:
    """A second review of the check: a quoted key's escapes were not read, and a multi-line string
    ending in a quote of its own was closed early; tomllib reads each of these as `vid = 1209`."""
    import tomllib

    text = transport + _TAIL
    assert tomllib.loads(text)["transport"]["vid"] == 1209
    with pytest.raises(ProfileError, match="1209 is a decimal number"):
        load_profile(write(tmp_path, text))


def test_a_hexadecimal_profile_is_taken_whatever_its_strings_hold(tmp_path: Path) -> None:
    """The same review: a multi-line basic string ending in a quote of its own, then a string
    saying `vid = 1209`: the profile's id is 0x1209 and it is taken."""
    import tomllib

    text = ('transport = { type = "usb", manufacturer = """Acme "1"""", product = " vid = 1209", '
            'vid = 0x1209, pid = 0x0001 }\n' + _TAIL)
    assert tomllib.loads(text)["transport"]["vid"] == 0x1209
    assert load_profile(write(tmp_path, text)).transport.vid == 0x1209
