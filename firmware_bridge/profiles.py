"""Device profiles: what a device model is (identity, transport, capabilities, timing), as TOML data.

One file per device model, ``NAME.toml``; the file stem is the profile name. Every key is
documented in ``docs/device-profiles.md``. This module finds and reads the files; the values are
in ``profile_data``, their checking in ``profile_parser`` (both re-exported here), the file
reading and the checks' vocabulary in ``shoectl_config``.

Contract:
- ``load_profile(path)`` reads and validates one file; ``parse_profile(data, source, name)``
  validates an already-parsed mapping. The result is an immutable ``Profile``.
- ``profile_dirs()`` is the search path: the directories in ``$SHOECTL_PROFILE_PATH``
  (``os.pathsep``-separated, searched first, so a site can override a shipped profile by name),
  then the built-in profiles (``device_profiles/``, an installed data package).
  ``profile_files()`` lists the ``*.toml`` files in it (names starting with ``.`` are ignored:
  editor lock and backup files).
- ``list_profiles()`` loads the first file of each name, sorted by name, and raises on the first
  bad file: nothing is skipped silently. ``check_profiles(paths)`` loads every file and returns
  one ``ProfileCheck`` per file instead of raising. ``get_profile(name)`` loads one profile by
  name; ``resolve_profile(spec)`` takes a name or a file path.
- Every problem raises ``ProfileError(source, key, reason)`` (a ``ValueError``): one line naming
  the file, the dotted key (``transport.endpoint_in``) and the reason. Nothing else escapes from
  these functions: bad bytes, bad TOML, bad types and values, unreadable files and unknown names
  are all ``ProfileError``.
- No I/O at import time; nothing is cached (a profile edited on disk is seen on the next call).
"""
from __future__ import annotations

import importlib.resources
import os
from collections.abc import Iterable
from pathlib import Path

from shoectl_config.documents import parse_toml
from shoectl_config.files import read_regular_file
from shoectl_config.text import quoted
from shoectl_config.text import safe as _safe

from .profile_data import (
    Capabilities, Profile, ProfileCheck, ProfileError, SerialTransportSpec, Timing, UsbIdentity, UsbTransportSpec,
)
from .profile_parser import KINDS, NAME_RE, ProfileParser, parse_profile
from .profile_usb_ids import decimal_usb_id

__all__ = [
    "Capabilities",
    "KINDS",
    "PROFILE_PATH_ENV",
    "Profile",
    "ProfileCheck",
    "ProfileError",
    "SerialTransportSpec",
    "Timing",
    "UsbIdentity",
    "UsbTransportSpec",
    "builtin_profile_dir",
    "check_profiles",
    "get_profile",
    "list_profiles",
    "load_profile",
    "parse_profile",
    "profile_dirs",
    "profile_files",
    "profile_names",
    "resolve_profile",
]

PROFILE_PATH_ENV = "SHOECTL_PROFILE_PATH"
MAX_FILE_BYTES = 64 * 1024  # a profile is about a kilobyte


# Search path --------------------------------------------------------------------------------


def builtin_profile_dir() -> Path:
    """The built-in profiles: the ``device_profiles`` data package (the repository's
    ``device_profiles/``, shipped in the wheel), found through the import system so that a
    checkout and an installed copy behave alike. pip installs packages as files, so this is a
    real directory."""
    return Path(str(importlib.resources.files("device_profiles")))


def profile_dirs() -> list[Path]:
    """The search path: ``$SHOECTL_PROFILE_PATH`` entries (empty entries ignored) first, then
    the built-in directory; duplicates removed. Directories are not checked here."""
    dirs: list[Path] = []
    for entry in os.environ.get(PROFILE_PATH_ENV, "").split(os.pathsep):
        if entry.strip():
            dirs.append(Path(entry))
    dirs.append(builtin_profile_dir())
    out: list[Path] = []
    seen: set[str] = set()
    for d in dirs:
        key = os.path.normcase(os.path.abspath(d))
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def profile_files() -> list[tuple[Path, Path | None]]:
    """Every ``*.toml`` file in the search path, in search order (directories in order, files
    sorted by name), each with the earlier file of the same name that shadows it, or ``None``.

    Raises ``ProfileError`` for a directory of the search path that does not exist or cannot be
    read (a mistyped ``SHOECTL_PROFILE_PATH`` is reported, not ignored).
    """
    out: list[tuple[Path, Path | None]] = []
    first: dict[str, Path] = {}
    for d in profile_dirs():
        for path in _toml_files(d):
            out.append((path, first.get(path.stem)))
            first.setdefault(path.stem, path)
    return out


def profile_names() -> list[str]:
    """The names of the profiles in the search path, sorted (files are not parsed)."""
    return sorted({path.stem for path, _ in profile_files()})


def list_profiles() -> list[Profile]:
    """Load the profiles of the search path (the first file of each name), sorted by name.

    Raises ``ProfileError`` on the first bad file or directory: a broken profile is never
    skipped silently. Use ``check_profiles()`` to see every problem at once.
    """
    profiles = [load_profile(path) for path, shadow in profile_files() if shadow is None]
    return sorted(profiles, key=lambda p: p.name)


def check_profiles(paths: Iterable[str | os.PathLike[str]] | None = None) -> list[ProfileCheck]:
    """Check the given files, or (``None``) every file of the search path, shadowed ones too.

    Never raises ``ProfileError``: each file gives one ``ProfileCheck``; a directory of the
    search path that cannot be read gives a failed check naming the directory.
    """
    results: list[ProfileCheck] = []
    if paths is None:
        try:
            entries = profile_files()
        except ProfileError as exc:
            return [ProfileCheck(path=exc.source, error=exc)]
        items: list[tuple[str | os.PathLike[str], Path | None]] = list(entries)
    else:
        items = [(p, None) for p in paths]
    for path, shadow in items:
        shown = _safe(_fspath(path))
        try:
            profile = load_profile(path)
        except ProfileError as exc:
            results.append(ProfileCheck(path=shown, error=exc, shadowed_by=_opt_str(shadow)))
        else:
            results.append(ProfileCheck(path=shown, profile=profile, shadowed_by=_opt_str(shadow)))
    return results


def get_profile(name: str) -> Profile:
    """Load the profile called ``name`` from the first directory of the search path that has it.

    Only that file is read, so another broken profile does not stop this one. Raises
    ``ProfileError`` for an unknown name (listing the available ones) or a bad file.
    """
    text = name if isinstance(name, str) else repr(name)
    if isinstance(name, str) and NAME_RE.fullmatch(name):
        for d in profile_dirs():
            path = d / f"{name}.toml"
            if path.is_file():
                return load_profile(path)
    try:
        available = ", ".join(profile_names()) or "none"
    except ProfileError as exc:
        available = f"none readable ({exc})"
    searched = ", ".join(str(d) for d in profile_dirs())
    raise ProfileError(
        f"profile {quoted(text)}", "", f"unknown profile; available: {available} (searched {searched})"
    )


def resolve_profile(spec: str | os.PathLike[str]) -> Profile:
    """A profile from a name (``get_profile``) or, if ``spec`` names an existing file, ends in
    ``.toml`` or contains a path separator, from that file (``load_profile``)."""
    text = _fspath(spec)
    if os.path.isfile(text) or text.endswith(".toml") or os.sep in text or (os.altsep and os.altsep in text):
        return load_profile(text)
    return get_profile(text)


# Reading ------------------------------------------------------------------------------------


def load_profile(path: str | os.PathLike[str]) -> Profile:
    """Read, parse and validate one profile file; its name is the file stem."""
    try:
        source = _fspath(path)
    except TypeError:
        raise ProfileError(_safe(repr(path)), "", "not a file path") from None
    if not source.endswith(".toml"):
        if not os.path.lexists(source):
            why = "file not found"  # as for NAME.toml: said before the name
        elif os.path.isdir(source):
            why = "a folder: a profile file is named NAME.toml"
        else:
            why = "not a profile file: a profile file is named NAME.toml"
        raise ProfileError(_safe(source), "", why)
    shown, raw, _ = read_regular_file(source, MAX_FILE_BYTES, ProfileError)
    profile = ProfileParser(parse_toml(raw, shown, ProfileError), shown, Path(source).stem).parse()
    decimal = decimal_usb_id(raw.decode("utf-8").removeprefix("\ufeff"))  # the parse proved it UTF-8 TOML
    if decimal is not None:
        raise ProfileError(shown, *decimal)
    return profile


def _toml_files(d: Path) -> list[Path]:
    shown = _safe(str(d))
    try:
        entries = sorted(os.scandir(d), key=lambda e: e.name)
    except FileNotFoundError:
        raise ProfileError(shown, "", f"profile directory not found (search path: ${PROFILE_PATH_ENV} "
                           "entries, then the built-in device_profiles/)") from None
    except NotADirectoryError:
        raise ProfileError(shown, "", "not a directory (profile search path)") from None
    except OSError as exc:
        raise ProfileError(shown, "", f"cannot read the profile directory: {_safe(exc.strerror or str(exc))}") from None
    except ValueError as exc:  # embedded NUL in the path
        raise ProfileError(shown, "", f"cannot read the profile directory: {_safe(str(exc))}") from None
    return [d / e.name for e in entries if e.name.endswith(".toml") and not e.name.startswith(".")]


# Helpers ------------------------------------------------------------------------------------


def _fspath(path: object) -> str:
    text = os.fspath(path)  # type: ignore[arg-type]
    return os.fsdecode(text) if isinstance(text, bytes) else text


def _opt_str(path: Path | None) -> str | None:
    return None if path is None else _safe(str(path))
