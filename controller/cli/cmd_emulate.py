"""``shoectl emulate``: serve an emulated device, or a whole emulated table, until stopped.

``shoectl emulate --profile NAME [--transport pty|tcp] [--port N] [--link PATH] [--seed S]
[--faults SPEC] [--speed max|N]`` serves one device and prints one JSON line
``{"profile": NAME, "port": PORT}`` (PORT: the pty symlink path, or ``socket://127.0.0.1:N``).
A USB profile is served with the same protocol bytes over the pty or TCP (in-process USB, the
``EmulatedUsbBackend``, exists only inside a Python process). ``shoectl run`` takes a USB profile
only by VID/PID, never at a port, so for each USB profile served a note on standard error names a
serial profile that drives it at its port (``--device emulated-shuffler@PORT``); the JSON line is
the same.

``shoectl emulate --table [--seed S] [--faults SPEC] [--speed max|N] [--dealt-log FILE]
[--dir DIR] [--shuffler-profile NAME | --no-shuffler [--decks N]] [--shoe-profile NAME]`` serves an emulated shuffler and shoe
(with the scripted dealer) over ptys and prints ``{"devices": [{"profile": ..., "port": ...},
...]}`` (shuffler first); every card the shoe delivers is appended to the dealt log
(``POSITION CARD up|down[ misread]``, one per line, flushed per line). A ``--shoe-profile`` of kind
``shuffler-shoe`` (``emulated-autoshoe``, an automatic reshuffling shoe, 681a.5(h)) is one device
that shuffles and deals: it is served alone, and ``--shuffler-profile`` is refused with it.
``--no-shuffler [--decks N]`` serves the shoe alone at a table without a shuffler (681a.5(a)): on
the prompt ``SHUFFLE BY HAND`` the dealer opens a new pack of N (default 8) preshuffled decks; on
``SHUFFLE COLLECTED`` (after a shoe) it shuffles that shoe's collected cards by hand.

Both serve until SIGINT or SIGTERM, then shut down cleanly and exit 0. Errors (one line on
standard error, exit 2, via ``controller.cli.main``): a bad profile (``ProfileError``), a bad
``--faults`` spec (``FaultSpecError``, a ``BridgeError``), bad option combinations or ``--speed``,
a ``--link`` or ``--dir`` in a folder that is not there (never made: ``UsageError``, before
anything is opened), a port that cannot be bound or a link that cannot be made (``OSError``).
A server thread that dies ends the command with exit 1.
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import dataclasses
import os
import select
import sys
from collections.abc import Iterable
from typing import Any

from controller.cli.common import given_options, non_negative_int, print_json, whole_number
from controller.cli.run_options import emulator_speed
from controller.cli.stopping import stop_handler
from controller.errors import UsageError, output_path_argument, path_argument
from controller.fsutil import folder_missing
from controller.rules.cards import MAX_DECKS
from firmware_bridge.emulator.factory import build_device
from firmware_bridge.emulator.faults import FaultSpec
from firmware_bridge.emulator.identity import EMULATOR_FIRMWARE, identity_for
from firmware_bridge.link.identity_check import expected_of, identity_problem
from firmware_bridge.protocol.wire_values import MAX_ID_TEXT
from firmware_bridge.emulator.server import DeviceServer
from firmware_bridge.emulator.serving import TRANSPORTS, serve_device, serve_table
from firmware_bridge.emulator.table import EmulatedTable
from firmware_bridge.profile_data import Profile, UsbTransportSpec
from firmware_bridge.profiles import resolve_profile

POLL_S = 0.2  # how often the main thread checks its servers while it waits for a signal


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "emulate", help="serve an emulated device or table (pty/TCP) with faults",
        description="Serve an emulated device (--profile) or a whole emulated table: shuffler, shoe and the "
                    "dealer who draws the cards (--table), speaking the wire protocol (docs/protocol.md). "
                    "The first line on standard output is JSON naming each port: {\"profile\": NAME, "
                    "\"port\": PORT}, or {\"devices\": [...]} with --table (a pty link, made in a temporary "
                    "folder unless --link or --dir says where; or socket://127.0.0.1:N). A device served alone "
                    "answers commands but deals no card: nothing draws from it; --table does. It serves until "
                    "SIGINT or SIGTERM, then removes its links and exits 0. Faults and models: docs/emulator.md.")
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--profile", type=path_argument, metavar="NAME|FILE", help="the device profile to emulate")
    what.add_argument("--table", action="store_true",
                      help="an emulated shuffler, shoe and dealer over ptys")
    p.add_argument("--transport", choices=TRANSPORTS, default="pty",
                   help="with --profile: pty (default) or tcp on 127.0.0.1")
    p.add_argument("--port", type=whole_number(0, 65535), default=None, metavar="N",
                   help="with --transport tcp: the TCP port (default: a free one)")
    p.add_argument("--link", type=path_argument, metavar="PATH",
                   help="with --transport pty: the symlink to create (default: in a temp dir)")
    p.add_argument("--seed", type=non_negative_int, metavar="S", help="reproducible shuffles and faults")
    p.add_argument("--serial", type=identity_text, metavar="TEXT",
                   help="with --profile: the serial number the device answers with (default: the profile's "
                        "USB serial, else EMU-NAME); another serial is another unit to the table")
    p.add_argument("--firmware", type=identity_text, metavar="TEXT",
                   help=f"with --profile: the firmware version the device answers with (default {EMULATOR_FIRMWARE!r})")
    p.add_argument("--faults", metavar="SPEC",
                   help="e.g. corrupt=0.01,unplug-every=3s,misread-at=12 (docs/emulator.md)")
    p.add_argument("--speed", default="1", metavar="max|N",
                   help="mechanisms N times faster than real time, or max (default 1)")
    p.add_argument("--dealt-log", type=output_path_argument, metavar="FILE",
                   help="with --table: append every card dealt to FILE")
    p.add_argument("--dir", type=path_argument, metavar="DIR", help="with --table: where to put the pty links")
    p.add_argument("--shuffler-profile", default=None, type=path_argument, metavar="NAME|FILE",
                   help="with --table (default emulated-shuffler)")
    p.add_argument("--no-shuffler", action="store_true",
                   help="with --table: no shuffler, only the shoe; the dealer opens a preshuffled pack, then "
                        "shuffles each dealt shoe's cards by hand (681a.5(a), 681a.7(d))")
    p.add_argument("--decks", type=whole_number(1, MAX_DECKS), default=None, metavar="N",
                   help=f"with --no-shuffler: decks in each preshuffled pack, 1 to {MAX_DECKS} (default 8)")
    p.add_argument("--shoe-profile", default=None, type=path_argument, metavar="NAME|FILE",
                   help="with --table (default emulated-shoe); a shuffler-shoe such as emulated-autoshoe "
                        "shuffles and deals alone")
    p.set_defaults(func=run)


def identity_text(text: str) -> str:
    """``--serial`` / ``--firmware``: one of IDENTITY's texts, printable, 1 to ``MAX_ID_TEXT`` bytes of UTF-8."""
    if not text or not text.isprintable():
        raise argparse.ArgumentTypeError("must be printable text, not empty (no control characters)")
    size = len(text.encode("utf-8"))
    if size > MAX_ID_TEXT:
        raise argparse.ArgumentTypeError(f"is {size} bytes of UTF-8; the protocol carries at most {MAX_ID_TEXT}")
    return text


def _check_options(args: argparse.Namespace) -> None:
    if args.table:
        bad = [opt for opt, given in (("--transport", args.transport != "pty"),
                                       ("--port", args.port is not None),
                                       ("--link", args.link is not None)) if given]
        if bad:
            raise UsageError(f"{', '.join(bad)}: only with --profile (a table is served on ptys)")
        named = given_options(args, ("--serial", "--firmware"))
        if named:
            raise UsageError(f"{', '.join(named)}: only with --profile (a table's units answer with their own)")
        if args.no_shuffler and args.shuffler_profile is not None:
            raise UsageError("--shuffler-profile: not with --no-shuffler")
        if args.decks is not None and not args.no_shuffler:
            raise UsageError("--decks: only with --no-shuffler (a shuffler is told the decks by the table)")
        if args.dir is not None and not os.path.isdir(args.dir):
            what = "not a directory" if os.path.lexists(args.dir) else "no such folder"
            raise UsageError(f"--dir {args.dir}: {what} (the pty links are made in it)")
    else:
        bad = [*given_options(args, ("--dealt-log", "--dir", "--shuffler-profile", "--shoe-profile", "--decks")),
               *(["--no-shuffler"] if args.no_shuffler else [])]
        if bad:
            raise UsageError(f"{', '.join(bad)}: only with --table")
        if args.port is not None and args.transport != "tcp":
            raise UsageError("--port: only with --transport tcp")
        if args.link is not None and args.transport != "pty":
            raise UsageError("--link: only with --transport pty")
        missing = folder_missing(args.link) if args.link is not None else None
        if missing is not None:
            raise UsageError(f"--link {args.link}: {missing}")


# Faults a device served alone (``--profile``) can never show: the dealer's (no dealer comes with
# it), a shoe's card faults (nothing draws from or loads a shoe served alone), a shuffler's on a
# device that does not shuffle (a review: each was taken without a word and never acted).
_DEALER_FAULTS = ("dealer_extra_at", "dealer_expose_at", "dealer_miss")
_SHOE_CARD_FAULTS = ("face_up_at", "misread_at", "cover_at", "jam_at", "door_open_at")
_SHUFFLER_FAULTS = ("missing_card", "extra_card", "shuffler_jam_at")


def _check_faults_alone(faults: FaultSpec, profile: Profile) -> None:
    """``UsageError`` naming the faults in ``faults`` a device of ``profile`` served alone never shows."""
    default = FaultSpec()

    def given(names: tuple[str, ...]) -> str:  # those of ``names`` given, as --faults spells them
        return ", ".join(n.replace("_", "-") for n in names if getattr(faults, n) != getattr(default, n))

    if unused := given(_DEALER_FAULTS + _SHOE_CARD_FAULTS):
        raise UsageError(f"--faults {unused}: a device served alone deals no card (no dealer draws from it); "
                         "give them with --table")
    if profile.kind == "shoe" and (unused := given(_SHUFFLER_FAULTS)):
        raise UsageError(f"--faults {unused}: act on a shuffler; {profile.name} is a shoe")


def run(args: argparse.Namespace) -> int:
    _check_options(args)
    faults = FaultSpec.parse(args.faults)
    if faults.seed is None and args.seed is not None:
        faults = dataclasses.replace(faults, seed=args.seed)
    try:
        speed = emulator_speed(args.speed)
    except argparse.ArgumentTypeError as exc:
        raise UsageError(f"--speed: {exc}") from None
    if args.table:
        return _serve_table(args, faults, speed)
    return _serve_one(args, faults, speed)


def _serve_one(args: argparse.Namespace, faults: FaultSpec, speed: float) -> int:
    profile = resolve_profile(args.profile)
    _check_faults_alone(faults, profile)
    device = build_device(profile, faults=faults, seed=args.seed, speed=speed, serial=args.serial,
                          firmware=args.firmware or EMULATOR_FIRMWARE)
    try:
        server = serve_device(device, args.transport, port=args.port or 0, link=args.link)
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
        raise UsageError(f"--port {args.port}: the port is in use (another emulator or program listens there); "
                         "give another, or none for a free one") from None
    try:
        _usb_note(profile, server.port)
        return _wait([server], {"profile": profile.name, "port": server.port}, server.close)
    finally:
        server.close()


def _serve_table(args: argparse.Namespace, faults: FaultSpec, speed: float) -> int:
    shoe = resolve_profile(args.shoe_profile or "emulated-shoe")
    shuffler = resolve_profile(args.shuffler_profile or "emulated-shuffler")
    if shoe.kind == "shuffler-shoe" and (args.shuffler_profile is not None or args.no_shuffler):
        option = "--no-shuffler" if args.no_shuffler else "--shuffler-profile"
        raise UsageError(f"{option}: the shoe {shoe.name} has its shuffler built in (a shuffler-shoe)")
    for option, profile, kinds in (("--shoe-profile", shoe, ("shoe", "shuffler-shoe")),
                                   ("--shuffler-profile", shuffler, ("shuffler",))):
        if profile.kind not in kinds:
            raise UsageError(f"{option} {profile.name}: a {profile.kind}, not a {' or a '.join(kinds)}")
    table = EmulatedTable(shuffler_profile=None if args.no_shuffler else shuffler, shoe_profile=shoe, seed=args.seed,
                          speed=speed, faults=faults, dealt_log=args.dealt_log,
                          **({"decks": args.decks} if args.decks is not None else {}))  # else the table's default
    try:
        served = serve_table(table, directory=args.dir)
    except BaseException:
        table.close()
        raise
    try:
        profiles = {p.name: p for p in (shoe, shuffler)}
        for entry in served.devices():
            _usb_note(profiles[entry["profile"]], entry["port"])
        return _wait(served.servers.values(), {"devices": served.devices()}, served.close)
    finally:
        served.close()


# The shipped serial profile of each kind of device: over a pty, ``shoectl run`` drives a device
# through a serial profile, and a USB profile is found by VID/PID only.
_SERIAL_OF_KIND = {"shoe": "emulated-shoe", "shuffler": "emulated-shuffler", "shuffler-shoe": "emulated-autoshoe"}


def _usb_note(profile: Profile, port: str) -> None:
    """For a USB ``profile`` served at ``port``, one line on standard error saying how
    ``shoectl run`` reaches it there; nothing for a serial profile. The shipped serial profile of
    its kind is named only if the link would take the device (it has every capability that
    profile declares, and its decks: ``identity_check``); a copy of the profile always would."""
    if not isinstance(profile.transport, UsbTransportSpec):
        return
    serial = resolve_profile(_SERIAL_OF_KIND[profile.kind])
    takes = identity_problem(identity_for(profile), bound_serial=None, **expected_of(serial)) is None
    shipped = f"--device {serial.name}@{port}, or " if takes else ""
    print(f"shoectl emulate: note: {profile.name} is a USB profile, which shoectl run finds by VID/PID only; "
          f"to drive it at this port: {shipped}a copy of {profile.name} with a serial [transport] (docs/emulator.md)",
          file=sys.stderr)


def _wait(servers: Iterable[DeviceServer], ready: dict[str, Any], close: Any) -> int:
    """Print the ``ready`` line, then block until SIGINT/SIGTERM (0) or a server thread dies (1),
    then ``close()`` the servers. The signals are caught before the line is printed (a stop sent as
    soon as it is read is a clean stop, not a kill) and until the servers are closed (a second
    signal while they closed, as ``timeout`` sends to the whole group, killed the emulator with
    143: a review)."""
    servers = list(servers)
    # The handler only writes a byte to a pipe the main thread waits on. (It once set a
    # threading.Event the main thread was waiting on: a signal that landed while the wait held the
    # event's lock blocked the handler on that lock for ever, and the emulator never stopped.)
    wake, signalled = os.pipe()
    os.set_blocking(signalled, False)

    def on_signal(signum: int, frame: Any) -> None:
        with contextlib.suppress(BlockingIOError):  # a stop is already waiting to be read
            os.write(signalled, b"\0")

    try:
        with stop_handler(on_signal, ignore_after=True):
            print_json(ready)
            sys.stdout.flush()
            try:
                while not select.select([wake], [], [], POLL_S)[0]:
                    for server in servers:
                        if server.error is not None:
                            print(f"shoectl emulate: error: {server.device.name}: server stopped: "
                                  f"{server.error}", file=sys.stderr)
                            return 1
            finally:
                close()
        return 0
    finally:
        os.close(wake)
        os.close(signalled)
