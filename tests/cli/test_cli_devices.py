"""The command-line contract of `shoectl profiles`, `shoectl udev` and `shoectl devices`.

The commands run in-process through ``controller.cli.main.main``, with the three modules added to
``COMMAND_MODULES`` (main.py lists them once the bridge work is merged). Attached hardware is
simulated at the library boundary: ``serial.tools.list_ports.comports`` and ``usb.core.find``.
"""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import usb.core
from serial.tools import list_ports, list_ports_common

import controller.cli.main as cli_main
from firmware_bridge.profiles import PROFILE_PATH_ENV, ProfileError, builtin_profile_dir
from firmware_bridge.udev import checked_in_rules_path
from cli_run import run

OUR_MODULES = ("controller.cli.cmd_profiles", "controller.cli.cmd_udev", "controller.cli.cmd_devices")


@pytest.fixture(autouse=True)
def _setup(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROFILE_PATH_ENV, raising=False)
    modules = cli_main.COMMAND_MODULES + tuple(m for m in OUR_MODULES if m not in cli_main.COMMAND_MODULES)
    monkeypatch.setattr(cli_main, "COMMAND_MODULES", modules)




def _port(device: str, vid: int | None = None, pid: int | None = None, serial: str | None = None,
          description: str = "n/a") -> list_ports_common.ListPortInfo:
    info = list_ports_common.ListPortInfo(device, skip_link_detection=True)
    info.vid, info.pid, info.serial_number, info.description = vid, pid, serial, description
    if vid is not None:
        info.hwid = info.usb_info()
    return info


class _UnreadableSerial:
    """A pyusb device whose string descriptors cannot be read (no permission)."""

    def __init__(self, vid: int, pid: int) -> None:
        self.idVendor, self.idProduct, self.bus, self.address = vid, pid, 1, 9

    def __getattr__(self, name: str):
        if name in ("serial_number", "manufacturer", "product"):
            raise ValueError("The device has no langid (permission issue, no string descriptors supported or device error)")
        raise AttributeError(name)


class _Denied(_UnreadableSerial):
    """A pyusb device this user may not open: libusb's LIBUSB_ERROR_ACCESS on its strings."""

    def __init__(self, vid: int, pid: int, address: int) -> None:
        super().__init__(vid, pid)
        self.address = address

    def __getattr__(self, name: str):
        if name in ("serial_number", "manufacturer", "product"):
            raise usb.core.USBError("Access denied (insufficient permissions)", errno=13)
        raise AttributeError(name)


def _usb(vid: int, pid: int, serial: str | None = None, address: int = 5) -> SimpleNamespace:
    return SimpleNamespace(idVendor=vid, idProduct=pid, bus=1, address=address, serial_number=serial,
                           manufacturer="Acme Table Devices", product="Test device")


def _attach(monkeypatch: pytest.MonkeyPatch, ports: list, usb_devices: list | None) -> None:
    monkeypatch.setattr(list_ports, "comports", lambda *a, **k: list(ports))

    def find(*args, **kwargs):
        assert kwargs.get("find_all") is True
        if usb_devices is None:
            raise usb.core.NoBackendError("No backend available")
        return iter(usb_devices)

    monkeypatch.setattr(usb.core, "find", find)


# -- devices ----------------------------------------------------------------------------------------


def test_devices_nothing_attached_is_a_normal_answer(capsys, monkeypatch) -> None:
    _attach(monkeypatch, [], [])
    code, out, err = run(capsys, "devices")
    assert (code, err) == (0, "") and out.strip() == "no devices found"


def test_devices_without_a_libusb_backend(capsys, monkeypatch) -> None:
    _attach(monkeypatch, [], None)
    code, out, err = run(capsys, "devices")
    assert code == 0 and err == ""
    assert out.splitlines() == ["USB: no libusb backend (install libusb: apt install libusb-1.0-0)", "no devices found"]
    code, out, _ = run(capsys, "devices", "--json")
    d = json.loads(out)
    assert code == 0 and d["usb"] == {"backend": False, "error": None, "devices": []} and d["serial_ports"] == []


def test_devices_match_profiles_by_usb_identity(capsys, monkeypatch) -> None:
    ports = [
        _port("/dev/ttyUSB0", 0x1209, 0x0003, "A1", "USB-serial adapter"),  # acme-readershoe-s's adapter
        _port("/dev/ttyS0"),                                              # a plain UART: no USB identity
    ]
    devices = [
        _usb(0x1209, 0x0002, address=4),                          # acme-batchshuffler-x (any serial)
        _usb(0x1209, 0x0001, "SHOECTL-EMU-0001", address=5),      # emulated-usb-shuffler
        _usb(0x1209, 0x0001, "OTHER", address=6),                 # wrong serial number: no match
        _UnreadableSerial(0x1209, 0x0001),                        # serial unreadable: no match
        _usb(0x1209, 0x0003, "A1", address=7),                    # the adapter itself on the bus
        _Denied(0x1209, 0x0002, address=10),                      # acme-batchshuffler-x, not this user's to open
        _Denied(0x1d6b, 0x0002, address=1),                       # a root hub: not this user's, nor the rules' business
    ]
    _attach(monkeypatch, ports, devices)
    code, out, err = run(capsys, "devices", "--json")
    assert code == 0 and err == ""
    d = json.loads(out)
    by_port = {p["device"]: p for p in d["serial_ports"]}
    assert by_port["/dev/ttyUSB0"]["profiles"] == ["acme-readershoe-s"]
    assert (by_port["/dev/ttyUSB0"]["vid"], by_port["/dev/ttyUSB0"]["pid"]) == (0x1209, 0x0003)
    assert by_port["/dev/ttyS0"]["profiles"] == [] and by_port["/dev/ttyS0"]["vid"] is None
    by_addr = {u["address"]: u for u in d["usb"]["devices"]}
    assert d["usb"]["backend"] is True
    assert by_addr[4]["profiles"] == ["acme-batchshuffler-x"]
    assert by_addr[5]["profiles"] == ["emulated-usb-shuffler"]
    assert by_addr[6]["profiles"] == []
    assert by_addr[9]["profiles"] == [] and by_addr[9]["serial_number"] is None
    assert by_addr[7]["profiles"] == ["acme-readershoe-s"]
    assert d["profile_error"] is None
    # why a device was not taken, and one this user may not open (an integrator review: only
    # "no matching profile" was said, and a device matched but closed to this user looked taken)
    assert by_addr[6]["near"] == by_addr[9]["near"] == [{"profile": "emulated-usb-shuffler",
                                                         "serial_number": "SHOECTL-EMU-0001"}]
    assert by_addr[5]["near"] == [] and by_addr[5]["access"] is None
    assert by_addr[1]["profiles"] == by_addr[1]["near"] == [] and by_addr[1]["access"] is None
    assert by_addr[10]["profiles"] == ["acme-batchshuffler-x"] and by_addr[10]["access"].startswith(
        "permission denied (is this user in group shoectl? a udev rule gives the device to it: docs/udev.md)")

    code, out, err = run(capsys, "devices")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "Serial ports:" and "USB devices:" in lines
    assert any("/dev/ttyUSB0" in ln and "1209:0003" in ln and ln.endswith("profile: acme-readershoe-s") for ln in lines)
    assert any("/dev/ttyS0" in ln and ln.endswith("no matching profile") for ln in lines)
    assert any("1209:0001 serial SHOECTL-EMU-0001" in ln and ln.endswith("profile: emulated-usb-shuffler") for ln in lines)
    assert any("(no name readable)" in ln for ln in lines)
    assert any("serial OTHER" in ln and ln.endswith("-> no matching profile (emulated-usb-shuffler has these IDs and "
                                                    "names serial SHOECTL-EMU-0001)") for ln in lines)
    assert any(ln.endswith("(emulated-usb-shuffler has these IDs and names serial SHOECTL-EMU-0001; its serial number "
                           "cannot be read)") for ln in lines)
    assert any("address 10 " in ln and "-> profile: acme-batchshuffler-x; permission denied (is this user in group "
               "shoectl?" in ln for ln in lines)


def test_devices_with_a_broken_profile_still_lists_the_devices(capsys, monkeypatch, tmp_path: Path) -> None:
    (tmp_path / "broken.toml").write_text("[device]\nvendor = 1\n", encoding="utf-8")
    monkeypatch.setenv(PROFILE_PATH_ENV, str(tmp_path))
    _attach(monkeypatch, [_port("/dev/ttyUSB0", 0x1209, 0x0003)], [])
    code, out, err = run(capsys, "devices")
    assert code == 2
    assert "/dev/ttyUSB0" in out and "no matching profile" in out
    assert err.count("\n") == 1 and "broken.toml" in err and "profiles not matched" in err


# -- profiles -------------------------------------------------------------------------------------


def test_profiles_list(capsys) -> None:
    code, out, err = run(capsys, "profiles", "list")
    assert code == 0 and err == ""
    names = [line.split()[0] for line in out.splitlines()]
    assert names == sorted(names) and {"emulated-shoe", "emulated-shuffler", "acme-readershoe-s"} <= set(names)
    shoe = next(line for line in out.splitlines() if line.startswith("acme-readershoe-s "))
    assert " shoe " in shoe and "ReaderShoe S" in shoe and "serial 38400 8E1" in shoe and "adapter 1209:0003" in shoe


def test_profiles_list_json(capsys) -> None:
    code, out, _ = run(capsys, "profiles", "list", "--json")
    items = json.loads(out)
    assert code == 0 and isinstance(items, list)
    usb = next(i for i in items if i["name"] == "emulated-usb-shuffler")
    assert usb == {
        "name": "emulated-usb-shuffler", "kind": "shuffler", "vendor": "shoectl", "model": "Emulated USB batch shuffler",
        "transport": "usb", "summary": "usb 1209:0001 serial SHOECTL-EMU-0001 bulk out 0x01 in 0x81",
        "source": str(builtin_profile_dir() / "emulated-usb-shuffler.toml"),
    }


def test_profiles_show(capsys) -> None:
    code, out, _ = run(capsys, "profiles", "show", "emulated-usb-shuffler", "--json")
    d = json.loads(out)
    assert code == 0 and d["name"] == "emulated-usb-shuffler"
    assert set(d) == {"name", "source", "device", "transport", "capabilities", "timing"}
    assert d["transport"]["vid"] == 0x1209 and d["transport"]["endpoint_in"] == 0x81
    assert d["timing"]["response_timeout_ms"] == 250
    code, out, _ = run(capsys, "profiles", "show", "acme-readershoe-s")
    assert code == 0
    assert "  usb_vid = 0x1209" in out and '  parity = "E"' in out and "  rtscts = true" in out and "[timing]" in out


def test_profiles_show_a_file(capsys, tmp_path: Path) -> None:
    path = tmp_path / "my-shoe.toml"
    path.write_text((builtin_profile_dir() / "emulated-shoe.toml").read_text(encoding="utf-8"), encoding="utf-8")
    code, out, _ = run(capsys, "profiles", "show", str(path), "--json")
    assert code == 0 and json.loads(out)["name"] == "my-shoe"


def test_profiles_show_unknown_raises_profile_error() -> None:
    """The module raises ProfileError (a ValueError); main.py turns it into one line, exit 2."""
    from controller.cli import cmd_profiles

    with pytest.raises(ProfileError, match="unknown profile; available: "):
        cmd_profiles.run(SimpleNamespace(func=cmd_profiles.run_show, profile="no-such-device", json=False))


def test_main_reports_a_profile_error_in_one_line(capsys) -> None:
    code, out, err = run(capsys, "profiles", "show", "no-such-device")
    assert code == 2 and out == ""
    assert err.startswith("shoectl profiles show: error: profile 'no-such-device': unknown profile") and err.count("\n") == 1


def test_profiles_check_all_and_files(capsys, tmp_path: Path) -> None:
    code, out, err = run(capsys, "profiles", "check")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert len(lines) == len(list(builtin_profile_dir().glob("*.toml")))
    assert all(": ok (" in line for line in lines)

    good = tmp_path / "good.toml"
    good.write_text((builtin_profile_dir() / "emulated-shoe.toml").read_text(encoding="utf-8"), encoding="utf-8")
    bad = tmp_path / "bad.toml"
    bad.write_text("[device]\nvendor = \"v\"\nmodel = \"m\"\nkind = \"shoe\"\n[transport]\ntype = \"usb\"\nvid = true\npid = 1\n",
                   encoding="utf-8")
    code, out, err = run(capsys, "profiles", "check", str(good), str(bad))
    assert code == 2
    assert out.splitlines() == [f"{good}: ok (good: shoe, serial 115200 8N1)"]  # errors on stderr, as rules check's
    assert err.splitlines() == [f"{bad}: error: transport.vid: expected an integer, got a boolean (true)"]


# -- udev -----------------------------------------------------------------------------------------


def test_udev_generate_and_check(capsys, tmp_path: Path) -> None:
    code, out, err = run(capsys, "udev", "generate")
    assert code == 0 and err == ""
    assert out == checked_in_rules_path().read_text(encoding="utf-8")

    code, out, _ = run(capsys, "udev", "check")
    assert code == 0 and out.strip().endswith("up to date")

    target = tmp_path / "99-shoectl.rules"
    code, _, err = run(capsys, "udev", "generate", "-o", str(target))
    assert code == 0 and target.read_text(encoding="utf-8") == checked_in_rules_path().read_text(encoding="utf-8")
    assert [p.name for p in tmp_path.iterdir()] == ["99-shoectl.rules"]  # no temporary file left behind

    target.write_text(target.read_text(encoding="utf-8").replace('MODE="0660"', 'MODE="0666"', 1), encoding="utf-8")
    code, out, _ = run(capsys, "udev", "check", str(target))
    assert code == 1
    assert '-SUBSYSTEM' in out and 'MODE="0666"' in out and "differs from the generated rules" in out

    code, out, _ = run(capsys, "udev", "check", str(tmp_path / "missing.rules"))
    assert code == 1 and "missing" in out


def test_udev_check_does_not_advise_dropping_the_rules_of_profiles_it_cannot_find(capsys, monkeypatch,
                                                                                 tmp_path: Path) -> None:
    """An integrator review: rules generated with the site's profiles (SHOECTL_PROFILE_PATH), checked
    without them (the upgrade's `udev check || udev generate`), were said to differ, with the
    advice to generate them again, which dropped the site's devices' rules."""
    site = tmp_path / "profiles"
    site.mkdir()
    (site / "shufflex-sx9.toml").write_text(
        '[device]\nvendor = "Shufflex"\nmodel = "SX-9"\nkind = "shuffler"\nprotocol_version = 1\n'
        '[transport]\ntype = "usb"\nvid = 0x1209\npid = 0x000a\nserial_number = "SX9-0042"\nendpoint_out = 0x01\n'
        'endpoint_in = 0x81\n[capabilities]\nshuffler = "batch"\ncard_count_after_shuffle = true\n', encoding="utf-8")
    rules = tmp_path / "99-shoectl.rules"
    monkeypatch.setenv(PROFILE_PATH_ENV, str(site))
    assert run(capsys, "udev", "generate", "-o", str(rules))[0] == 0
    monkeypatch.delenv(PROFILE_PATH_ENV)
    code, out, _ = run(capsys, "udev", "check", str(rules))
    assert code == 1 and out.splitlines()[-1] == (
        f"{rules}: differs from the generated rules, and gives devices of profiles not found here (shufflex-sx9): "
        "find them first (SHOECTL_PROFILE_PATH, as the service's environment file gives it), then run: shoectl "
        f"udev generate -o {rules}")
    monkeypatch.setenv(PROFILE_PATH_ENV, str(site))
    assert run(capsys, "udev", "check", str(rules))[:2] == (0, f"{rules}: up to date\n")


def test_udev_test_profiles_only_with_the_flag(capsys, tmp_path: Path) -> None:
    code, production, _ = run(capsys, "udev", "generate")
    assert code == 0 and "shoectl/emulated-usb-shuffler" not in production
    code, with_tests, _ = run(capsys, "udev", "generate", "--include-test-profiles")
    assert code == 0 and 'SYMLINK+="shoectl/emulated-usb-shuffler"' in with_tests
    # check compares with the same choice of profiles
    code, out, _ = run(capsys, "udev", "check", "--include-test-profiles")
    assert code == 1 and "+SUBSYSTEM" in out and "emulated-usb-shuffler" in out
    target = tmp_path / "99-shoectl.rules"
    target.write_text(with_tests, encoding="utf-8")
    code, out, _ = run(capsys, "udev", "check", "--include-test-profiles", str(target))
    assert code == 0 and out.strip().endswith("up to date")
