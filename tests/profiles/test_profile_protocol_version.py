"""A profile whose ``protocol_version`` this shoectl does not speak (an integrator review): it
passed ``profiles check`` as ok and ``run --device`` talked to the device all the same; the key
had no effect, although docs/device-profiles.md says the host must not talk to such a device.
And once `check` and `run` refused it, `profiles list` listed it and `udev generate` gave the
device to group shoectl (a second review): it is a bad file to each of them, as the docs say."""
from __future__ import annotations

from pathlib import Path

from cli_run import run

SHIPPED = Path(__file__).resolve().parents[2] / "device_profiles" / "emulated-shoe.toml"


def version_two(tmp_path: Path) -> Path:
    text = SHIPPED.read_text(encoding="utf-8")
    assert "protocol_version = 1" in text
    path = tmp_path / "site-shoe-v2.toml"
    path.write_text(text.replace("protocol_version = 1", "protocol_version = 2")
                    .replace('name = "emulated-shoe"', 'name = "site-shoe-v2"'), encoding="utf-8")
    return path


def test_profiles_check_refuses_a_protocol_version_this_host_does_not_speak(capsys, tmp_path: Path) -> None:
    path = version_two(tmp_path)
    code, out, err = run(capsys, "profiles", "check", str(path), str(SHIPPED))
    assert code == 2
    assert err == f"{path}: error: device.protocol_version: 2: this shoectl speaks version 1 only\n"
    assert out == f"{SHIPPED}: ok (emulated-shoe: shoe, serial 115200 8N1)\n"


def test_run_refuses_such_a_device_before_anything_is_made(capsys, tmp_path: Path, monkeypatch) -> None:
    version_two(tmp_path)
    monkeypatch.setenv("SHOECTL_PROFILE_PATH", str(tmp_path))
    journal = tmp_path / "j.db"
    code, out, err = run(capsys, "run", "--device", "site-shoe-v2@/nonexistent/ttyUSB0", "--journal", str(journal))
    assert code == 2 and out == ""
    assert err == f"shoectl run: error: {tmp_path / 'site-shoe-v2.toml'}: device.protocol_version: 2: this shoectl speaks version 1 only\n"
    assert not journal.exists()


def test_list_and_udev_generate_fail_on_it_as_on_any_bad_file(capsys, tmp_path: Path, monkeypatch) -> None:
    path = version_two(tmp_path)
    monkeypatch.setenv("SHOECTL_PROFILE_PATH", str(tmp_path))
    for command in (["profiles", "list"], ["udev", "generate"]):
        code, out, err = run(capsys, *command)
        assert (code, out) == (2, ""), command
        assert err == (f"shoectl {' '.join(command)}: error: {path}: device.protocol_version: 2: this shoectl speaks "
                       "version 1 only\n")
