"""USB ids in a device profile's TOML text, as they are written: ``decimal_usb_id(text)``.

Why: ``lsusb`` and ``shoectl devices`` show ids as bare hexadecimal (``ID 1209:0005``), and
``usb_vid = 1209`` copied from there is TOML's decimal 1209 (0x04b9), another vendor's id: the
udev rule made from it matches no device (a review of an integrator's install). The parsed
document no longer says how a number was written, so the text is read again: its strings'
contents and its comments are set aside (a description may say anything), then each USB id key
(``vid``, ``pid``, ``usb_vid``, ``usb_pid``: bare, quoted or dotted, on a line of its own or in
an inline table) is looked at with the number it is given. A hexadecimal (``0x``), octal or
binary one is taken; a decimal one, signed or not, is refused.
"""
from __future__ import annotations

import re

__all__ = ["decimal_usb_id"]

# A string (multi-line first), a comment, or anything else up to the next of them.
# A multi-line string may end with one or two quotes of its own (``'''it''''``): its closing
# takes up to five.
_TOKENS = re.compile(r'"""(?:[^\\]|\\.)*?"{3,5}|\'\'\'.*?\'{3,5}|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[^"\'#]+|["\']',
                     re.DOTALL)
_ESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\U([0-9A-Fa-f]{8})")  # in a quoted key: "v\u0069d" is vid
_KEY_AFTER = re.compile(r"[ \t]*[=.]")  # a string that is a key (or part of a dotted one)
_DECIMAL_ID = re.compile(r"(?:^|[\s{,.])(usb_vid|usb_pid|vid|pid)[ \t]*=[ \t]*([+-]?[0-9][0-9_]*)(?![0-9A-Za-z_.:])",
                         re.MULTILINE)


def _without_values_and_comments(text: str) -> str:
    """``text`` with every string that is a value emptied, every comment gone, and quoted keys
    unquoted (``"vid" = 1209`` is ``vid = 1209``)."""
    out = []
    for found in _TOKENS.finditer(text):
        token = found.group()
        if token.startswith("#"):
            continue
        if token[0] in "\"'" and len(token) > 1:
            is_key = not token.startswith(('"""', "'''")) and _KEY_AFTER.match(text, found.end())
            out.append(_key_text(token) if is_key else '""')
            continue
        out.append(token)
    return "".join(out)


def _key_text(token: str) -> str:
    """A quoted key's name (its \\u and \\U escapes read, a basic string's only)."""
    name = token[1:-1]
    if token[0] == '"':
        name = _ESCAPE.sub(lambda m: chr(int(m.group(1) or m.group(2), 16)), name)
    return name


def decimal_usb_id(text: str) -> tuple[str, str] | None:
    """The first USB id of a profile's TOML ``text`` written as a decimal integer, as
    ``(key, why in words)``; None when every one is written otherwise (``0x1209``)."""
    found = _DECIMAL_ID.search(_without_values_and_comments(text))
    if found is None:
        return None
    name, written = found.groups()
    value = int(written.replace("_", ""))
    digits = written.lstrip("+-")
    as_hex = f"; if lsusb shows {digits}, write 0x{digits}" if re.fullmatch(r"[0-9]{1,4}", digits) else ""
    shown = f"0x{value:04x}" if value >= 0 else str(value)
    return f"transport.{name}", (f"{written} is a decimal number ({shown}): write USB ids in hexadecimal, "
                                 f"as lsusb shows them{as_hex}")
