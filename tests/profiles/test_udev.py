"""udev rules generated from the profiles: the checked-in file is current, every rule restricts the
device to group shoectl with mode 0660 and names it /dev/shoectl/<profile>, and udev itself
(``udevadm test``) parses the file without complaint."""
from __future__ import annotations

import os
import re
import subprocess
import uuid
from pathlib import Path

import pytest
from required import require_command

from firmware_bridge.profiles import list_profiles, parse_profile
from firmware_bridge.udev import HEADER, checked_in_rules_path, generate_rules, is_test_profile

RULES_D = Path("/etc/udev/rules.d")
# Devices that exist on most Linux machines, containers included; udevadm test needs one.
SYS_DEVICES = ("/sys/class/tty/ttyS0", "/sys/class/tty/tty0", "/sys/class/mem/null", "/sys/class/net/lo")


def rule_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def test_checked_in_rules_equal_the_generated_rules() -> None:
    path = checked_in_rules_path()
    assert path == Path(__file__).resolve().parents[2] / "udev" / "99-shoectl.rules"
    assert path.read_text(encoding="utf-8") == generate_rules(list_profiles()), (
        "udev/99-shoectl.rules is stale: run `shoectl udev generate -o udev/99-shoectl.rules`"
    )


def test_every_rule_is_group_shoectl_mode_0660_with_a_symlink() -> None:
    profiles = {p.name: p for p in list_profiles()}
    text = generate_rules(profiles.values(), include_test_profiles=True)
    assert text.startswith(HEADER + "\n") and text.endswith("\n")
    lines = rule_lines(text)
    with_identity = {n for n, p in profiles.items() if p.usb_identity is not None}
    assert len(lines) == len(with_identity) >= 3
    symlinks = set()
    for line in lines:
        assert line.count('GROUP="shoectl"') == 1 and line.count('MODE="0660"') == 1, line
        [link] = re.findall(r'SYMLINK\+="shoectl/([a-z0-9._-]+)"', line)
        symlinks.add(link)
        for mode in re.findall(r'MODE="([0-7]+)"', line):
            assert int(mode, 8) & 0o007 == 0, f"world-accessible mode in {line}"
        assert "OWNER" not in line and "uaccess" not in line
    assert symlinks == with_identity


def test_usb_and_tty_rules_use_the_right_match_keys() -> None:
    text = generate_rules(list_profiles(), include_test_profiles=True)
    by_name = {m.group(1): m.group(0) for m in re.finditer(r'^.*SYMLINK\+="shoectl/([^"]+)"$', text, re.M)}
    usb = by_name["acme-batchshuffler-x"]
    assert usb.startswith('SUBSYSTEM=="usb", ENV{DEVTYPE}=="usb_device", ATTR{idVendor}=="1209", ATTR{idProduct}=="0002", ')
    assert "ATTRS{" not in usb
    tty = by_name["acme-readershoe-s"]
    assert tty.startswith('SUBSYSTEM=="tty", ATTRS{idVendor}=="1209", ATTRS{idProduct}=="0003", ')
    assert 'ATTR{' not in tty
    emu = by_name["emulated-usb-shuffler"]
    assert 'ATTR{serial}=="SHOECTL-EMU-0001"' in emu


def test_plain_serial_profiles_are_listed_without_a_rule() -> None:
    text = generate_rules(list_profiles(), include_test_profiles=True)
    for name in ("emulated-shoe", "emulated-shuffler"):
        assert f"# {name}: no rule: not a USB device" in text
        assert f"shoectl/{name}\"" not in text


def test_production_rules_leave_out_the_test_profiles_and_say_so() -> None:
    """A table computer gives no device to group shoectl for the emulator's test IDs; the flag
    (a machine that tests with the emulated USB shuffler) adds them, and nothing else changes."""
    profiles = list_profiles()
    test_names = sorted(p.name for p in profiles if is_test_profile(p))
    assert "emulated-usb-shuffler" in test_names and not any(n.startswith("acme-") for n in test_names)
    production = generate_rules(profiles)
    for name in test_names:
        assert f"# {name}:" not in production and f"shoectl/{name}\"" not in production
    assert f"# Left out: shoectl's emulated test profiles ({', '.join(test_names)});" in production
    assert "--include-test-profiles adds them" in production
    with_tests = generate_rules(profiles, include_test_profiles=True)
    assert 'SYMLINK+="shoectl/emulated-usb-shuffler"' in with_tests and "Left out" not in with_tests
    assert rule_lines(production) == [line for line in rule_lines(with_tests) if "shoectl/emulated-" not in line]


def _profile(name: str, transport: dict) -> object:
    doc = {
        "device": {"vendor": "V", "model": "M", "kind": "shoe"},
        "transport": transport,
        "capabilities": {"card_recognition": True, "cover_card_sensor": True},
    }
    return parse_profile(doc, f"{name}.toml", name)


def test_ids_are_four_lowercase_hex_digits_and_serials_are_matched() -> None:
    p = _profile("z-dev", {"type": "usb", "vid": 0xABCD, "pid": 0x00EF, "serial_number": "Ab-12"})
    q = _profile("a-dev", {"type": "serial", "usb_vid": 0x0403, "usb_pid": 0x6001, "usb_serial": "FT1X"})
    text = generate_rules([p, q])
    assert 'ATTR{idVendor}=="abcd", ATTR{idProduct}=="00ef", ATTR{serial}=="Ab-12"' in text
    assert 'ATTRS{idVendor}=="0403", ATTRS{idProduct}=="6001", ATTRS{serial}=="FT1X"' in text
    # Sorted by name, whatever the input order; deterministic.
    assert text.index("shoectl/a-dev") < text.index("shoectl/z-dev")
    assert generate_rules([q, p]) == text


def test_duplicate_names_are_refused() -> None:
    p = _profile("dup", {"type": "usb", "vid": 1, "pid": 2})
    with pytest.raises(ValueError, match="duplicate profile names: dup"):
        generate_rules([p, p])


# -- udev parses the file -------------------------------------------------------------------------


def _udevadm_test_output(rules_text: str) -> tuple[str, Path]:
    """Install ``rules_text`` as a uniquely named file in /etc/udev/rules.d, run ``udevadm test``
    on an existing device, remove the file, and return the output and the file's path."""
    udevadm = require_command("udevadm", "Debian's udev package")
    if not RULES_D.is_dir() or not os.access(RULES_D, os.W_OK):
        pytest.skip(f"{RULES_D} is missing or not writable (CI runs as root)")
    device = next((d for d in SYS_DEVICES if os.path.exists(d)), None)
    if device is None:
        pytest.skip(f"none of {', '.join(SYS_DEVICES)} exists for udevadm test to work on")
    path = RULES_D / f"99-shoectl-test-{uuid.uuid4().hex}.rules"
    try:
        path.write_text(rules_text, encoding="utf-8")
        proc = subprocess.run([udevadm, "test", "--action=add", device], capture_output=True, text=True, timeout=120)
    finally:
        path.unlink(missing_ok=True)
    return proc.stdout + proc.stderr, path


def _complaints(output: str, path: Path) -> list[str]:
    return [line for line in output.splitlines() if str(path) in line and "invalid" in line.lower()]


def test_udevadm_parses_the_rules_without_complaint() -> None:
    output, path = _udevadm_test_output(checked_in_rules_path().read_text(encoding="utf-8"))
    assert f"Reading rules file: {path}" in output, f"udevadm did not read our file:\n{output}"
    assert _complaints(output, path) == [], output


def test_udevadm_check_would_catch_a_bad_rule() -> None:
    """The check above is only worth something if udevadm reports a broken rule in our file."""
    output, path = _udevadm_test_output('SUBSYSTEM="usb", BOGUS{x}=="1", MODE="0660"\n')
    assert _complaints(output, path), output
