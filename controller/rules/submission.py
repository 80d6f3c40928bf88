"""The Rules Submission: the casino's rule choices for a table (58 Pa. Code 601a.2), as a TOML file.

Contract:
- ``load_submission(path)`` reads and validates a TOML file; ``parse_submission(data, source)``
  validates an already-parsed mapping; ``load_preset(name)`` loads one of the shipped presets
  (``controller/rules/presets/NAME.toml``, read with ``importlib.resources``);
  ``resolve_submission(spec)`` picks the default, a file or a preset;
  ``submission_in_folder(name, folder)`` picks what an operator may name at a running table: a
  preset, or a file of one folder the house keeps its Rules Submissions in.
- The result is an immutable ``Submission``. It never holds a float: money-like values are
  ``Decimal``, odds are ``Payout``.
- Every problem raises ``SubmissionError(source, key, reason)``: one line naming the file, the
  dotted key (``paytable.tiee``) and the reason. Nothing else escapes from these functions (bad
  bytes, bad TOML, bad types and values are all reported as ``SubmissionError``).
- No I/O at import time.

The values are in ``submission_data``, the limits, defaults and checks in ``submission_parser``
(the names callers use are re-exported here), the file reading in ``shoectl_config``. Every key,
its default and the clause it serves are documented in ``docs/rules-submission.md``.
"""
from __future__ import annotations

import errno
import functools
import importlib.resources
import os
from collections.abc import Mapping
from typing import Any

from shoectl_config.documents import parse_toml, read_toml_file
from shoectl_config.text import safe as _safe

from .errors import SubmissionError
from .submission_data import HouseMoneyOptions, Submission, TwentyOneOptions
from .submission_parser import MAX_DECKS, MIN_DECKS, SubmissionParser

__all__ = [
    "DEFAULT_PRESET",
    "HouseMoneyOptions",
    "MAX_DECKS",
    "MIN_DECKS",
    "Submission",
    "TwentyOneOptions",
    "default_submission",
    "load_preset",
    "load_submission",
    "parse_submission",
    "preset_named",
    "preset_names",
    "submission_from_document",
    "resolve_submission",
    "submission_in_folder",
]

DEFAULT_PRESET = "minibaccarat"
MAX_FILE_BYTES = 1 << 20  # a Rules Submission is a few hundred bytes; refuse anything absurd

# Reading ------------------------------------------------------------------------------------


def load_submission(path: str | os.PathLike[str]) -> Submission:
    """Read, parse and validate a Rules Submission TOML file."""
    shown, data, _ = read_toml_file(path, MAX_FILE_BYTES, SubmissionError)
    return SubmissionParser(data, shown).parse()


def parse_submission(data: Mapping[str, Any], source: str) -> Submission:
    """Validate an already-parsed Rules Submission (e.g. the dict ``tomllib`` returns)."""
    return SubmissionParser(data, _safe(str(source))).parse()


def submission_from_document(doc: Mapping[str, Any], default_source: str = "journal") -> Submission:
    """The ``Submission`` a ``Submission.to_dict()`` document holds (a journal's ``submission``
    record): its ``source`` as the source, the rest parsed as a Rules Submission (SubmissionError)."""
    rules = {k: v for k, v in doc.items() if k != "source"}
    return parse_submission(rules, str(doc.get("source", default_source)))


def preset_names() -> list[str]:
    """The names of the shipped presets, sorted."""
    return sorted(
        entry.name[: -len(".toml")]
        for entry in _presets_dir().iterdir()
        if entry.name.endswith(".toml") and entry.is_file()
    )


def load_preset(name: str) -> Submission:
    """Load a shipped preset by name (``preset_names()``); its source is ``preset:NAME``."""
    return _load_preset_cached(str(name))


def default_submission() -> Submission:
    """The default Rules Submission: the ``DEFAULT_PRESET`` preset."""
    return load_preset(DEFAULT_PRESET)


def resolve_submission(spec: str | os.PathLike[str] | None) -> Submission:
    """``None`` -> the default; an existing file -> that file; ``preset:NAME`` or a preset name ->
    that preset; anything else -> ``SubmissionError``."""
    if spec is None:
        return default_submission()
    text = os.fspath(spec)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if not text:
        raise SubmissionError('""', "", f"empty; give a file or a preset: {', '.join(preset_names())}")
    if _named_file(text):
        return load_submission(text)
    preset = preset_named(text)
    if preset is not None:
        return preset
    if text.startswith("preset:"):
        raise SubmissionError(_safe(text), "", f"unknown preset; presets: {', '.join(preset_names())}")
    if text.lower().endswith(".toml") or os.sep in text or (os.altsep and os.altsep in text):
        raise SubmissionError(_safe(text), "", "file not found")
    raise SubmissionError(
        _safe(text), "", f"neither an existing file nor a preset; presets: {', '.join(preset_names())}"
    )


def _named_file(text: str) -> bool:
    """Whether ``text`` names something in the file system, readable or not (a link that loops, a
    folder it may not look into): the file's own reason is then said, as ``rules check`` says it,
    never "not found" or a preset of the same name dealt instead (a configuration review)."""
    try:
        os.lstat(text)
    except FileNotFoundError:
        return False
    except OSError as exc:  # ENOTDIR: a part of it is a file; EACCES: a folder not to be looked into
        return exc.errno != errno.ENOTDIR
    except ValueError:  # a NUL in it: no file has such a name
        return False
    return True


def submission_in_folder(name: str | None, folder: str | os.PathLike[str] | None) -> Submission:
    """What an operator names at a running table (``set_submission``): ``None`` -> the default; a
    preset's name (or ``preset:NAME``) -> that preset; the name of a file in ``folder`` (``NAME``
    or ``NAME.toml``; ``None``: no folder) -> that file. Anything else (a path, a name with a
    folder in it, a hidden file) is a ``SubmissionError`` that names the folder and what it holds,
    never whether something exists elsewhere: the table's account may read files the operator must
    not learn about."""
    if name is None:
        return default_submission()
    preset = preset_named(name)
    if preset is not None:
        return preset
    files = _folder_files(folder)  # only a name listed there is read: never a path of the operator's
    for candidate in (name, f"{name}.toml"):
        if candidate in files:
            return load_submission(os.path.join(os.fspath(folder), candidate))  # type: ignore[arg-type]
    if folder is None:
        where = "the table has no submissions folder"
    else:
        held = ", ".join(map(_safe, sorted(files))) or "no .toml file"
        where = f"the table's submissions folder {_safe(os.fspath(folder))} holds {held}"
    raise SubmissionError(_safe(name), "", f"neither a preset nor a file of the table's; presets: "
                                           f"{', '.join(preset_names())}; {where}")


def preset_named(text: str) -> Submission | None:
    """The shipped preset ``text`` names (``NAME`` or ``preset:NAME``), or None."""
    name = text[len("preset:"):] if text.startswith("preset:") else text
    return load_preset(name) if name in preset_names() else None


def _folder_files(folder: str | os.PathLike[str] | None) -> set[str]:
    """The names of the regular ``.toml`` files in ``folder`` (none if it is ``None`` or cannot be
    read). A symbolic link is not one: it could lead anywhere the table's account may read."""
    if folder is None:
        return set()
    try:
        with os.scandir(folder) as entries:
            return {e.name for e in entries
                    if e.name.endswith(".toml") and not e.name.startswith(".") and e.is_file(follow_symlinks=False)}
    except OSError:
        return set()


# Internals ----------------------------------------------------------------------------------


def _presets_dir() -> Any:
    return importlib.resources.files(__package__) / "presets"


@functools.lru_cache(maxsize=None)
def _load_preset_cached(name: str) -> Submission:
    source = f"preset:{name}"
    if name not in preset_names():
        raise SubmissionError(_safe(source), "", f"unknown preset; presets: {', '.join(preset_names())}")
    raw = (_presets_dir() / f"{name}.toml").read_bytes()
    return SubmissionParser(parse_toml(raw, source, SubmissionError), source).parse()
