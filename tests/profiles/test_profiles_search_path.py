"""Device profiles: the search path. Directories named in the environment come first, a site
profile shadows a shipped one, a bad file is never skipped, unknown names list the available
profiles; resolving a name or a file; checking given files."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from firmware_bridge.profiles import (
    PROFILE_PATH_ENV,
    ProfileError,
    builtin_profile_dir,
    check_profiles,
    get_profile,
    list_profiles,
    profile_dirs,
    resolve_profile,
)

from .profile_documents import EXPECTED_NAMES, SERIAL_BASE, SHIPPED, USB_BASE, dump_toml, with_change, write


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
