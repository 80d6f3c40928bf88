"""The devices of a ``shoectl run`` table: ``parse_devices`` reads ``--device PROFILE[@PORT]``
into roles, ``table_capabilities`` says what their profiles mean for the table's procedure
(``TableCore``'s options)."""
from __future__ import annotations

import os
import stat
from typing import Any

from controller.errors import UsageError
from controller.table.journaling import BUILT_IN_DEVICES
from shoectl_config.text import is_unicode_text, quoted

ROLE_OF_KIND = {"shuffler": "shuffler", "shoe": "shoe", "shuffler-shoe": "shoe"}  # a shuffler-shoe shuffles too


def parse_devices(specs: list[str]) -> dict[str, tuple[Any, str]]:
    """``--device PROFILE[@PORT]`` values as ``{role: (profile, port or None)}``, the role from
    the profile's kind (``ROLE_OF_KIND``); ``UsageError`` in the operator's words for a spec, a
    profile or a combination the table cannot run with."""
    from firmware_bridge.profiles import resolve_profile

    out: dict[str, tuple[Any, str]] = {}
    roles_by_port: dict[str, str] = {}
    for spec in specs:
        name, sep, port = spec.partition("@")
        if not name or (sep and not port):
            raise UsageError(f"--device {quoted(spec)}: expected PROFILE@PORT (serial) or PROFILE (USB, found by VID/PID)")
        if not is_unicode_text(port) or not port.isprintable():  # it is said in notices and journaled
            raise UsageError(f"--device {quoted(spec)}: the port is not a printable UTF-8 path")
        profile = resolve_profile(name)
        is_usb = getattr(profile.transport, "type", None) == "usb"
        if is_usb and port:
            raise UsageError(f"--device {quoted(spec)}: {name} is a USB device, found by VID/PID: give no port")
        if not is_usb and not port:
            raise UsageError(f"--device {quoted(spec)}: {name} is a serial device: give its port (PROFILE@PORT)")
        if port and (what := _never_a_port(port)) is not None:  # waited for, it never would be one
            raise UsageError(f"--device {quoted(spec)}: {port} is {what}")
        role = ROLE_OF_KIND.get(profile.kind)
        if role is None:
            raise UsageError(f"--device {quoted(spec)}: a {profile.kind} is not supported by the table runner yet")
        if role in out:
            raise UsageError(f"--device {quoted(spec)}: a {role} is already attached")
        if port and (holder := roles_by_port.setdefault(_same_port(port), role)) != role:
            # Two links on one port: the second waits for ever on a port "in use by another program", itself.
            raise UsageError(f"--device {quoted(spec)}: {port} is already the {holder}'s port: give each device its own")
        out[role] = (profile, port or None)
    built_in = "shoe" in out and out["shoe"][0].kind == "shuffler-shoe"
    if built_in and "shuffler" in out:
        raise UsageError(f"--device: the shoe {out['shoe'][0].name} has its shuffler built in: attach no other shuffler")
    if specs and "shoe" not in out:
        raise UsageError("attach a shoe (--device PROFILE@PORT): with a shuffler, or alone at a table without one")
    return out


def _never_a_port(port: str) -> str | None:
    """Why ``port`` names something that never becomes a serial port (a folder, a regular file, a
    disk, a pipe, a socket, a character device that is no terminal such as /dev/null), in words;
    None for a terminal, a pyserial URL, nothing there yet (a port is waited for: a review saw
    `--device P@em`, an emulator's folder, waited for "not a serial port" for ever) or a device
    this process may not open now (busy, no permission: the link says so and retries)."""
    if "://" in port:
        return None
    try:
        mode = os.stat(port).st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return ("a folder, not a port: name the port in it (an emulator's folder holds one link per "
                "device, e.g. shoe and shuffler)")
    if stat.S_ISREG(mode):
        return "a regular file, not a port"
    if stat.S_ISBLK(mode):
        return "a disk, not a port"
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        return "a pipe or a socket file, not a port (a network port is written socket://HOST:PORT)"
    if stat.S_ISCHR(mode) and _opens_as_no_terminal(port):
        return "a character device that is no terminal, not a serial port"
    return None


def _opens_as_no_terminal(path: str) -> bool:
    """Whether the character device ``path`` opens and is no terminal. Opened without blocking and
    without becoming the controlling terminal, and closed at once; a device that does not open now
    (busy, no permission, gone) is not judged: the link will try it."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return False
    try:
        return not os.isatty(fd)
    finally:
        os.close(fd)


def _same_port(port: str) -> str:
    """``port`` as it compares with another: a path (a symlink such as /dev/shoectl/NAME, a
    relative path) as the file it names; a URL (``socket://``, ``rfc2217://``) as written."""
    return port if "://" in port else os.path.realpath(port)


def table_capabilities(profiles: list[Any]) -> dict[str, Any]:
    """What the attached devices' profiles say about the table's procedure, as ``TableCore``
    options: an automatic reshuffling shoe (681a.5(h): no manual cut) and its approval's reference, whether a shuffler is
    there at all (681a.5(a): otherwise the dealer shuffles by hand), whether it keeps one batch
    of shuffled cards in store (a batch shuffler, not a continuous one: 681a.5(g)(2)), and whether
    it is built into the shoe (kind ``shuffler-shoe``: one device takes both roles' commands), and
    the most decks every one holds (``deck_capacity``). No profiles: the built-in emulated shuffler
    (a batch shuffler) and shoe."""
    if not profiles:
        return dict(BUILT_IN_DEVICES)
    shufflers = [p.capabilities.shuffler for p in profiles if p.capabilities.shuffler != "none"]
    automatic = [p for p in profiles if p.capabilities.automatic_reshuffle]
    return {"automatic_shoe": bool(automatic), "approval": automatic[0].capabilities.approval if automatic else None,
            "shuffler": bool(shufflers),
            "shuffler_keeps_one_batch": bool(shufflers) and all(s == "batch" for s in shufflers),
            "shuffler_in_shoe": any(p.kind == "shuffler-shoe" for p in profiles),
            "deck_capacity": min(p.capabilities.deck_capacity for p in profiles)}


def capacity_problem(profiles: list[Any], decks: int) -> str | None:
    """Why the attached devices cannot hold the ``decks`` the table's Rules Submission deals (a
    profile's ``deck_capacity`` under them), in one line, or None. Said at the start: a 6-deck
    shuffler on an 8-deck table opened, then faulted three times at its first shuffle and stayed
    closed, sending the floorperson to the device rather than the configuration (an integrator
    review)."""
    for p in profiles:
        if (held := p.capabilities.deck_capacity) < decks:
            return (f"--device {p.name}: it holds {held} deck{'' if held == 1 else 's'} (its profile's deck_capacity), "
                    f"and the table's Rules Submission deals {decks}: attach a device that holds them, or play "
                    "rules of fewer decks")
    return None
