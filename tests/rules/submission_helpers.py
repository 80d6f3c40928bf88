"""Helpers for the Rules Submission tests (tests/rules/test_submission_*.py): the presets, writing a
file, a to_dict round trip, a float hunt, the smallest submission files."""
from __future__ import annotations

import json
from pathlib import Path

from controller.rules.model import WagerKind
from controller.rules.submission import Submission, parse_submission

W = WagerKind
PRESETS = ("minibaccarat", "midibaccarat", "ez-baccarat", "21-baccarat")


def write(tmp_path: Path, text: str | bytes, name: str = "rules.toml") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def roundtrip(s: Submission) -> Submission:
    d = json.loads(json.dumps(s.to_dict()))
    source = d.pop("source")
    return parse_submission(d, source)


def no_floats(value: object) -> bool:
    if isinstance(value, float):
        return False
    if isinstance(value, dict):
        return all(no_floats(v) for v in value.values())
    if isinstance(value, list):
        return all(no_floats(v) for v in value)
    return True


PB = '[submission]\ngame = "punto-banco"\n'
EZ = '[submission]\ngame = "ez-baccarat"\n'
