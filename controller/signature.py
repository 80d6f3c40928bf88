"""The program's signature: one SHA-256 over every file of the installed program, so that a gaming
lab, an integrator or surveillance can tell the exact code that dealt a journal from another
build of the same version number (a release's version does not change between builds: a
packaging review).

The program is the files of its packages (``PACKAGES``: code, device profiles, Rules Submission
presets, odds tables, the scoreboard's page) as this Python imports them, wherever installed,
without Python's caches (``__pycache__``). Each file is hashed alone (SHA-256 of its bytes); the
signature is the SHA-256 of the listing, one line per file in the order of their paths:
``<hex digest>  <path>\\n`` (``sha256sum``'s format, the path from the packages' folder with
``/``), so that ``sha256sum -c`` checks a listing (``shoectl signature --list``) and the listing's
own SHA-256 is the signature. ``controller_started`` journals it; ``shoectl signature`` prints it.
"""
from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PACKAGES", "Signature", "is_signed", "is_this_program", "program_signature", "signature_label"]

PACKAGES = ("controller", "device_profiles", "firmware_bridge", "shoectl_config")
_CACHES = "__pycache__"


@dataclass(frozen=True)
class Signature:
    """``digest`` (``sha256:<hex>``) over ``listing``: (hex digest, path) per file, sorted by path;
    ``root``: the folder the paths are relative to."""

    digest: str
    listing: tuple[tuple[str, str], ...]
    root: Path

    def listing_text(self) -> str:
        return _listing_text(self.listing)


def _listing_text(listing: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> str:
    return "".join(f"{digest}  {path}\n" for digest, path in listing)


def _package_folder(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise OSError(f"the package {name} cannot be found")
    return Path(next(iter(spec.submodule_search_locations)))


def _files(folder: Path) -> list[Path]:
    found = []
    for here, folders, names in os.walk(folder):
        folders[:] = sorted(f for f in folders if f != _CACHES)
        found.extend(Path(here) / n for n in names if not n.endswith((".pyc", ".pyo")))
    return found


@functools.cache
def program_signature() -> Signature:
    """The signature of the program this process runs (computed once: about 10 ms). OSError
    when a file of it cannot be read."""
    folders = {name: _package_folder(name) for name in PACKAGES}
    root = Path(os.path.commonpath([str(f.parent) for f in folders.values()]))
    listing = []
    for folder in folders.values():
        for path in _files(folder):
            listing.append((hashlib.sha256(path.read_bytes()).hexdigest(), path.relative_to(root).as_posix()))
    listing.sort(key=lambda item: item[1])
    digest = hashlib.sha256(_listing_text(listing).encode("utf-8")).hexdigest()
    return Signature(f"sha256:{digest}", tuple(listing), root)


def signature_label() -> str:
    """``program_signature``'s digest, or a phrase that says why it is unknown. Never raises: a
    table must not stop for want of it (as ``controller.version.shoectl_version``)."""
    try:
        return program_signature().digest
    except OSError as exc:
        return f"(signature unknown: {exc.strerror or exc})"


def is_signed(signature: object) -> bool:
    """Whether ``signature`` (a journaled one, or ``signature_label()``) is a known digest, not
    absent nor a phrase saying why it is unknown."""
    return isinstance(signature, str) and signature.startswith("sha256:")


def is_this_program(signature: object) -> bool:
    """Whether ``signature`` (a journaled one) is this program's, known on both sides: two unknown
    signatures are not the same program."""
    return is_signed(signature) and signature == signature_label()
