"""Helpers shared by the command modules: submission resolution, JSON output, game names, whole
lines written by several threads, lines fitted to a terminal's width."""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from controller.errors import UsageError
from controller.rules.model import Game
from controller.rules.submission import resolve_submission
from shoectl_config.text import quoted

GAME_PRESET = {Game.PUNTO_BANCO: "minibaccarat", Game.EZ_BACCARAT: "ez-baccarat", Game.TWENTYONE: "21-baccarat"}
GAME_CHOICES = [g.value for g in Game]


def game_name(text: str | None) -> str | None:
    """``--game``'s text as a game's name (case and spaces aside), or None when not given;
    ``UsageError`` for a game there is not."""
    if text is None:
        return None
    name = text.strip().lower()
    if name not in GAME_CHOICES:
        raise UsageError(f"unknown game {quoted(text)}; games: {', '.join(GAME_CHOICES)}")
    return name


def submission_for(game: str | None, spec: str | None) -> Any:
    """The Rules Submission from ``--submission`` (a file or preset name), else the preset for
    ``--game`` (checked by ``game_name``), else the default. ``--game`` and ``--submission``
    together must agree."""
    game = game_name(game)
    if spec is None and game is not None:
        spec = GAME_PRESET[Game(game)]
    sub = resolve_submission(spec)
    if game is not None and sub.game is not Game(game):
        raise UsageError(f"--game {game} does not match the submission {sub.source}, which plays {sub.game.value}")
    return sub


INT64_MAX = 2**63 - 1  # SQLite's largest integer: a count or a seq compared with the journal


def group_name(text: str) -> str:
    """An argparse type: a group's name, not empty (an unset variable in ``--control-group "$G"``
    would otherwise be taken for "not given" and the default group used)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty group name")
    return text


def whole_number(minimum: int, maximum: int = INT64_MAX) -> Callable[[str], int]:
    """An argparse type: a whole number from ``minimum`` to ``maximum``, in ASCII digits."""
    bound = len(str(max(abs(minimum), abs(maximum))))

    def parse(text: str) -> int:
        digits = text[1:] if text[:1] in "+-" else text
        if not (digits.isascii() and digits.isdigit()):
            raise argparse.ArgumentTypeError(f"not a whole number: {quoted(text[:40])}")
        if len(digits.lstrip("0")) > bound:  # out of range: never parse thousands of digits
            n = -(10**bound) if text.startswith("-") else 10**bound
        else:
            n = int(text)
        if n < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, not {text[:40]}")
        if n > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}, not {text[:40]}")
        return n
    return parse


positive_int = whole_number(1)
non_negative_int = whole_number(0)


def json_line(obj: Any) -> str:
    """``obj`` as one line of compact JSON, newline included (every command's JSON output)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False) + "\n"


def point_at_devnull(fd: int) -> None:
    """Descriptor ``fd`` (standard output, its reader gone) writes into ``/dev/null`` from now on:
    what a buffer still holds is flushed there at exit, so no "Exception ignored ...
    BrokenPipeError" and no exit status 120."""
    with contextlib.suppress(OSError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
        os.close(devnull)


def print_json(obj: Any, *, stream=None) -> None:
    (stream or sys.stdout).write(json_line(obj))


_LINE_LOCK = threading.Lock()


def write_line(text: str, *, error: bool = False) -> None:
    """``text`` and a newline on standard output (standard error with ``error``) in one write,
    flushed, under one lock for the process. For lines that several threads write at the same
    moments (``shoectl run``'s two links reporting outages; the console's table events beside a
    command's answer): ``print`` writes a text and its newline apart, so two could run into one
    line. The stream is looked up at each call (a test or a prompt may have replaced it)."""
    with _LINE_LOCK:
        out = sys.stderr if error else sys.stdout
        out.write(text + "\n")
        out.flush()


def terminal_columns() -> int:
    """The width of the terminal on standard output, asked of the terminal itself (a ``COLUMNS``
    in the environment may be stale, or another terminal's); ``shutil``'s answer (``COLUMNS``, or
    80) where standard output is no terminal."""
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or shutil.get_terminal_size().columns
    except (AttributeError, ValueError, OSError):  # no stream, a closed one, or not a terminal
        return shutil.get_terminal_size().columns


def fitted(text: str, width: int) -> str:
    """``text`` with each of its lines longer than ``width`` columns broken between words, or after
    a ``|`` of a usage's choices (``kind=player|banker|...``), each continuation indented two
    columns past its line's own indent (under the text after an event's ``* ``); a word longer
    than a whole line is cut. The terminal would otherwise break the line wherever its edge falls,
    mid-word (an 80-column console: reviews of the floor's terminals)."""
    lines = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
            continue
        lead = line[:len(line) - len(line.lstrip(" "))]
        lines.extend(_wrapped(line, max(width, len(lead) + 10), lead))
    return "\n".join(lines)


_PIECE = re.compile(r" +|[^ |]+\|?|\|")  # spaces, or a word up to and with its "|"


def _wrapped(line: str, width: int, lead: str) -> list[str]:
    """``line`` (``lead`` its own indent) in lines of ``width``, continuations under ``lead + "  "``."""
    indent = lead + "  "
    out, current = [], lead
    for piece in _PIECE.findall(line[len(lead):]):
        if piece.isspace():
            current += piece
            continue
        if len(current) + len(piece) > width and current.strip():
            out.append(current.rstrip())
            current = indent
        while len(current) + len(piece) > width:  # longer than a whole line: cut
            room = width - len(current)
            out.append(current + piece[:room])
            piece, current = piece[room:], indent
        current += piece
    out.append(current.rstrip())
    return out


def same_terminal(*streams: Any) -> bool:
    """Whether ``streams`` are all the same terminal (``2>/dev/pts/5`` is another one)."""
    try:
        stats = [os.fstat(stream.fileno()) for stream in streams if stream.isatty()]
    except (AttributeError, OSError, ValueError):
        return False
    return len(stats) == len(streams) and all(os.path.samestat(stats[0], st) for st in stats[1:])


def for_the_reader(text: str) -> str:
    """``text`` as standard output's reader sees it best: fitted to the terminal's width when it is
    a terminal (``fitted``), whole lines for a pipe or a file (a program reads them)."""
    try:
        tty = sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced by an object that cannot tell, or closed
        tty = False
    return fitted(text, terminal_columns()) if tty else text


def stderr_line(text: str) -> None:
    """``write_line(text, error=True)``: one whole line on standard error."""
    write_line(text, error=True)


def percent(x: float, places: int = 4) -> str:
    return f"{x * 100:.{places}f}%"


def given_options(args: argparse.Namespace, flags: Iterable[str]) -> list[str]:
    """The ``flags`` (``--tls-ca``, ...) given on the command line: those whose value is not
    ``None`` (their default), for refusing options that do nothing without another one."""
    return [flag for flag in flags if getattr(args, flag[2:].replace("-", "_")) is not None]


def write_output(data: str | bytes, output: str) -> None:
    """``data`` written whole to the file ``output`` (``-o FILE``): through ``atomic_writer``,
    which looks again at what is there (``replacement_problem``) and replaces it only once every
    byte is on disk. An OSError names the file."""
    from controller.fsutil import atomic_writer  # noqa: PLC0415 - only for a command that writes a file

    binary = isinstance(data, bytes)
    with atomic_writer(output, mode=0o644 & ~current_umask(), binary=binary) as fh:
        fh.write(data)


def current_umask() -> int:
    """The process's umask (read by setting it, and set back at once)."""
    import os  # noqa: PLC0415

    mask = os.umask(0)
    os.umask(mask)
    return mask


def not_root_over_another_users_journal(journal: Path, what: str, command: str) -> None:
    """UsageError for root running the ``what`` (table, feed) of a journal another user owns (the
    service's): the files it makes beside the journal (log, lock, cursor) would be root's, and the
    service, started again, stopped on them ("journal.log: Permission denied", exit 2, not
    restarted: a security review)."""
    from shoectl_config.files import user_name

    if os.geteuid() != 0:
        return
    try:
        owner = journal.stat().st_uid
    except FileNotFoundError:  # a journal still to be made, or one the reader says is missing
        return
    if owner == 0:
        return
    name = user_name(owner)
    raise UsageError(f"--journal {journal}: belongs to {name}; run its {what} as that user (e.g. runuser -u {name} "
                     f"-- {command} ...), not as root: files root made beside it would keep the {what} out")
