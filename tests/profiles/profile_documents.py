"""Profile documents the profile tests share (no tests here): ``SHIPPED`` (the shipped profile
files), ``EXPECTED_NAMES``, ``dump_toml`` (a tiny TOML writer), ``SERIAL_BASE`` and ``USB_BASE``
(valid documents), ``with_change`` (a copy with one dotted key changed or deleted) and ``write``
(a file in a directory)."""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from firmware_bridge.profiles import builtin_profile_dir

SHIPPED = sorted(builtin_profile_dir().glob("*.toml"))
EXPECTED_NAMES = {
    "emulated-shuffler", "emulated-shoe", "emulated-usb-shuffler", "acme-batchshuffler-x", "acme-readershoe-s",
}


USB_ID_KEYS = ("usb_vid", "usb_pid", "vid", "pid")


# A tiny TOML writer for the flat sections of a profile (tomllib reads, it does not write).
def dump_toml(data: dict[str, dict[str, Any]]) -> str:
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v, ensure_ascii=False)  # a JSON string is a TOML basic string
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        raise TypeError(type(v))

    def entry(k: str, v: Any) -> str:
        if k in USB_ID_KEYS and type(v) is int and v >= 0:
            return f"{k} = 0x{v:04x}"  # as a profile writes USB ids: a decimal one is refused
        return f"{k} = {value(v)}"

    out = []
    for section, table in data.items():
        out.append(f"[{section}]")
        out += [entry(k, v) for k, v in table.items()]
        out.append("")
    return "\n".join(out)


SERIAL_BASE: dict[str, dict[str, Any]] = {
    "device": {"vendor": "Test Vendor", "model": "Shoe 1", "kind": "shoe", "protocol_version": 1},
    "transport": {"type": "serial", "baudrate": 9600, "parity": "E", "usb_vid": 0x1209, "usb_pid": 0x0003},
    "capabilities": {"card_recognition": True, "cover_card_sensor": True, "shuffler": "none"},
    "timing": {"retries": 2},
}
USB_BASE: dict[str, dict[str, Any]] = {
    "device": {"vendor": "Test Vendor", "model": "Shuffler 1", "kind": "shuffler"},
    "transport": {"type": "usb", "vid": 0x1209, "pid": 0x0002, "endpoint_out": 0x02, "endpoint_in": 0x82},
    "capabilities": {"shuffler": "batch", "card_count_after_shuffle": True},
}


def with_change(base: dict, dotted: str, new: Any = None, *, delete: bool = False) -> dict:
    data = copy.deepcopy(base)
    parts = dotted.split(".")
    table = data
    for p in parts[:-1]:
        table = table.setdefault(p, {})
    if delete:
        del table[parts[-1]]
    else:
        table[parts[-1]] = new
    return data


def write(tmp_path: Path, text: str | bytes, name: str = "bad-device.toml") -> Path:
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path
