"""A key written outside its section, in a device profile or a Rules Submission, is named as such:
"a key before any [section]; it belongs in [device]" for one before any header, "unknown key (it
belongs in [transport])" for one under the wrong header (docs/configuration.md: "unknown keys,
with a hint when a key belongs elsewhere"). The hint comes from the file type's own sections and
keys (shoectl_config.parser), so every loader gets it."""
from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import run

from firmware_bridge.profiles import builtin_profile_dir
from shoectl_config.errors import ConfigError
from shoectl_config.parser import DocumentParser

SECTIONS = {"a": ("x", "y"), "b": ("z", "y"), "c": ("w",)}


def reason(data: object, section: str | None = None, known: tuple[str, ...] = (), **hints: str) -> str:
    parser = DocumentParser(data, "f.toml")
    with pytest.raises(ConfigError) as info:
        parser.document(SECTIONS)
        if section is not None:
            parser.section(section, known or SECTIONS[section], hints or None)
    return f"{info.value.key}: {info.value.reason}"


def test_a_key_before_any_section_is_named_with_its_section() -> None:
    assert reason({"x": 1}) == "x: a key before any [section]; it belongs in [a]"
    assert reason({"y": 1}) == "y: a key before any [section]; it belongs in [a] or [b]"
    # a table named as a key of a section: an inline table before any header, or a header such as
    # [game] for the Rules Submission's game key (an integrator review was told "a key before any
    # [section]" of a header)
    assert reason({"z": {"min": 1}}) == "z: not a section of this file; z is a key of [b]"
    assert reason({"q": 1}) == "q: a key before any [section]; known sections: a, b, c"
    assert reason({"q": {}}) == "q: unknown section; known sections: a, b, c"


def test_a_key_under_another_section_gets_a_hint() -> None:
    assert reason({"a": {"z": 1}}, "a") == "a.z: unknown key (it belongs in [b]); known keys: x, y"
    assert reason({"a": {"q": 1}}, "a") == "a.q: unknown key; known keys: x, y"
    assert reason({"a": {"z": 1}}, "a", z=" (see [b])") == "a.z: unknown key (see [b]); known keys: x, y"
    # a key of the section itself, refused in this file (a serial transport's usb keys): no hint
    assert reason({"b": {"y": 1}}, "b", ("z",)) == "b.y: unknown key; known keys: z"


def test_keys_of_a_required_section_whose_header_was_left_out() -> None:
    parser = DocumentParser({"a": {"x": 1, "w": 2}}, "f.toml")
    with pytest.raises(ConfigError, match=r"^f\.toml: a\.w: unknown key \(it belongs in \[c\]\)"):
        parser.document(SECTIONS, required=("a", "c"))
    with pytest.raises(ConfigError, match=r"^f\.toml: b: required section \[b\] is missing$"):
        DocumentParser({"a": {"x": 1}}, "f.toml").document(SECTIONS, required=("b",))


def profile(tmp_path: Path, edit) -> Path:
    text = (builtin_profile_dir() / "emulated-shoe.toml").read_text(encoding="utf-8")
    path = tmp_path / "my-shoe.toml"
    path.write_text(edit(text), encoding="utf-8")
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("[device]\n", ""), "vendor: a key before any [section]; it belongs in [device]"),
    (lambda t: t.replace('kind = "shoe"\n', 'kind = "shoe"\nbaudrate = 9600\n'),
     "device.baudrate: unknown key (it belongs in [transport]); known keys: vendor"),
    (lambda t: t.replace("[transport]\n", ""), "device.type: unknown key (it belongs in [transport])"),
    (lambda t: t.replace("[timing]\n", ""), "capabilities.response_timeout_ms: unknown key (it belongs in [timing])"),
], ids=["device-header", "baudrate-in-device", "transport-header", "timing-header"])
def test_profiles_check_names_the_section_of_a_misplaced_key(capsys, tmp_path: Path, edit, message: str) -> None:
    path = profile(tmp_path, edit)
    code, out, err = run(capsys, "profiles", "check", str(path))
    assert code == 2 and "Traceback" not in out + err
    assert out == "" and err.startswith(f"{path}: error: {message}") and err.count("\n") == 1


def submission(capsys, tmp_path: Path, edit) -> Path:
    code, out, _ = run(capsys, "rules", "show")
    assert code == 0
    path = tmp_path / "casino.toml"
    path.write_text(edit(out), encoding="utf-8")
    return path


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("[commission]\n", ""),
     "paytable.rate: unknown key (it belongs in [commission]); known keys: player, banker, tie"),
    (lambda t: t.replace("[submission]\n", ""), "name: a key before any [section]; it belongs in [submission]"),
    (lambda t: t.replace("[irregularities]\n", ""),
     "commission.unauthorized_third_card: unknown key (it belongs in [irregularities])"),
], ids=["commission-header", "submission-header", "irregularities-header"])
def test_rules_check_names_the_section_of_a_misplaced_key(capsys, tmp_path: Path, edit, message: str) -> None:
    path = submission(capsys, tmp_path, edit)
    code, out, err = run(capsys, "rules", "check", str(path))
    assert code == 2 and out == ""
    assert f"{path}: {message}" in err and err.count("\n") == 1 and "Traceback" not in err
