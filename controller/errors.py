"""Errors shared by the controller's command-line layer, and ``path_argument``, the argparse type
of every argument that names a file or a folder (``output_path_argument`` for a file written to,
``journal_argument`` and ``journal_to_read_argument`` for a journal)."""
from __future__ import annotations

import argparse
import os
import stat

from shoectl_config.text import safe


class UsageError(ValueError):
    """Bad command-line usage or input that the user can fix; reported as one line, exit 2."""


def path_argument(text: str) -> str:
    """``text``, an argument naming a file or a folder (``type=path_argument``), unless it is
    empty: an unset variable in ``--hmac-key "$KEY"`` is refused (``argument --hmac-key: an empty
    file name``, exit 2), never taken for "not given" nor for the current folder."""
    if not text:
        raise argparse.ArgumentTypeError("an empty file name")
    return text


# The longest name SQLite and shoectl give a file beside a journal adds at most this much to the
# journal's own: the temporary one `run` creates it under, ".NAME.PID.creating" and its
# "-journal" (26 bytes with a 7-digit pid), `migrate`'s ".NAME.migrating-PID-journal" (27);
# fsutil.JOURNAL_SIDE_SUFFIXES lists those kept (".feed-cursor.lock": 17). A little to spare.
_BESIDE_A_JOURNAL = 32


# What a command that only reads a journal looks for or makes beside it: its ".anchors" (8 bytes),
# SQLite's "-wal" and "-shm" of a journal in WAL mode opened while no table has it open.
_BESIDE_A_JOURNAL_READ = 8


def journal_argument(text: str) -> str:
    """``path_argument`` for a journal a command writes or keeps files beside (``run``, ``feed``,
    ``migrate``'s NEW, ``backup``'s COPY): refused when its name leaves no room for those files (a
    name of 250 characters was refused as its anchors file's, a name the user never gave: a review
    of bad inputs). A name ending in ``/`` names a folder: refused, where it would have been
    created as the journal's file (``--journal /srv/table7/`` made a journal named ``table7``: a
    review of an integrator's install)."""
    if text.endswith(os.sep) and not os.path.isdir(text):  # a folder there: "is a directory", in its turn
        raise argparse.ArgumentTypeError(f"{text}: names a folder; give the journal's file name in it "
                                         f"(e.g. {text}journal.db)")
    return _journal_name(text, _BESIDE_A_JOURNAL, "its .anchors, the temporary one it is created as")


def journal_to_read_argument(text: str) -> str:
    """``journal_argument`` for a journal a command only reads (``verify``, ``replay``, ``export``,
    ``audit``, the scoreboard ...): a name another program gave it, longer than ``run`` would take,
    is read all the same, up to the room its anchors file and SQLite's need beside it."""
    return _journal_name(text, _BESIDE_A_JOURNAL_READ, "its .anchors, SQLite's -wal and -shm")


def _journal_name(text: str, beside: int, made: str) -> str:
    text = path_argument(text)
    name = os.path.basename(text.rstrip(os.sep))
    try:
        most = os.pathconf(os.path.dirname(text) or ".", "PC_NAME_MAX")
    except (OSError, ValueError):
        most = 255  # no such folder (said in its turn), or no such limit said: Linux's
    size = len(name.encode(errors="surrogateescape"))
    if size + beside > most:
        raise argparse.ArgumentTypeError(f"{text}: a journal's name may have at most {most - beside} bytes, not "
                                         f"{size}: the files made beside it ({made}) add up to {beside} to it; give "
                                         "a shorter one")
    return text


def file_argument(text: str) -> str:
    """``path_argument`` for a file (not a folder): a name ending in ``/`` names a folder, and is
    refused rather than written as a file of the folder's name."""
    text = path_argument(text)
    if text.endswith(os.sep):
        raise argparse.ArgumentTypeError(f"{text} names a folder (it ends in {os.sep}); give a file's name")
    return text


def new_file_argument(text: str) -> str:
    """``path_argument`` for a file the command writes whole (``-o FILE``): what is there is
    refused unless it is a regular file other than a journal (``replacement_problem``), e.g.
    ``argument -o: t.sock is a socket, not a regular file; give another file``."""
    from controller.fsutil import replacement_problem  # not at the top: every command imports this module

    text = path_argument(text)
    problem = replacement_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text} {problem}; give another file")
    return _takes_new_files(_in_a_folder(text))


def _takes_new_files(text: str) -> str:
    """``text`` unless its folder takes no new file (the new contents are written beside it
    first, then renamed over it): said before any work, not once a long simulation has been run
    for a chart that cannot be written (``simulate --plot /proc/x.png``). Tried, not guessed from
    the permission bits, which say yes to root on a read-only file system or in ``/proc``."""
    from controller.fsutil import new_file_refused, not_replaceable_here  # not at the top: every command imports this module

    # a symbolic link's file is replaced where the link points (fsutil.atomic_writer): tried there
    # (a link from a read-only folder into a writable one was refused: a review of this change)
    folder = os.path.dirname(os.path.realpath(text) if os.path.islink(text) else text) or "."
    refused = new_file_refused(folder)
    if refused is not None:
        if os.path.lexists(text):  # atomic_writer's words for it
            raise argparse.ArgumentTypeError(f"{text}: {not_replaceable_here(folder)}")
        raise argparse.ArgumentTypeError(f"{text}: cannot be created: its folder {folder} takes no new files "
                                         f"({refused.strerror or refused})")
    return text


def _in_a_folder(text: str) -> str:
    """``text`` unless the folder it names a file in is not there (said before any work, in
    words, not as the system's "No such file or directory" once the output is opened)."""
    folder = os.path.dirname(text) or "."
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"{text}: no such folder {folder}")
    return text


def output_path_argument(text: str) -> str:
    """``path_argument`` for a file the command appends to (a log, the dealt log): an existing
    FIFO or socket is refused (``argument --log-file: ... is a FIFO``), since opening one to write
    waits for a reader that may never come, before the command can even be stopped; so is a
    journal or a file it keeps beside it, by what it holds (``journal_file_kind``: another table's
    journal would take the lines in, and still verify) or by its name (``side_file_problem``: a
    live journal's ``-shm`` holds no mark of its own)."""
    from controller.fsutil import journal_file_kind, side_file_problem  # not at the top: every command imports this module

    text = path_argument(text)
    try:
        mode: int | None = os.stat(text).st_mode
    except (OSError, ValueError):
        mode = None  # not there yet (it is created), or a name the open will refuse in its words
    if mode is not None and stat.S_ISDIR(mode):
        raise argparse.ArgumentTypeError(f"{text} is a directory, not a regular file; give another file")
    if mode is not None and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        kind = "a FIFO (a named pipe)" if stat.S_ISFIFO(mode) else "a socket"
        raise argparse.ArgumentTypeError(f"{text} is {kind}; give a regular file")
    what = (journal_file_kind(text) if mode is not None and stat.S_ISREG(mode) else None) or side_file_problem(text)
    if what:
        raise argparse.ArgumentTypeError(f"{text} is {what}, not a file to append to; give another file")
    if mode is not None:
        # Opened as it will be (no journal's, checked above: closing a descriptor of a file SQLite
        # holds would release its locks): a file the system will not let be appended to (/proc's)
        # was "error: Invalid argument" once the journal had been made (a review of bad inputs).
        try:
            open(text, "ab", buffering=0).close()  # noqa: SIM115 - opened to be closed: a check
        except OSError as exc:
            raise argparse.ArgumentTypeError(f"{text} cannot be appended to: {exc.strerror or exc}") from None
    return text if mode is not None else _in_a_folder(text)


def in_words(exc: BaseException) -> str:
    """``exc`` as one line in a person's words: an OSError as the system says it, with the file it
    names (``j.db.feed-cursor: Operation not permitted``), without Python's ``[Errno 1] ...:
    'path'`` dressing; anything else as its message."""
    text = str(exc) or "failed, and gave no reason"
    if isinstance(exc, FileNotFoundError) and exc.filename is None and not _current_folder_exists():
        # os.getcwd's failure, met wherever a relative path is resolved: it names no file (a review
        # of environments: "error: No such file or directory" from a folder deleted under the shell)
        return "the current folder no longer exists (deleted or moved away): change to one that does and start again"
    if isinstance(exc, OSError) and exc.strerror and text.startswith("[Errno"):
        text = exc.strerror if exc.filename is None else f"{os.fsdecode(exc.filename)}: {exc.strerror}"
    elif isinstance(exc, OSError) and exc.filename and str(exc.filename) not in text:
        text = f"{exc.filename}: {text}"
    # One line, every character kept: a line break escaped as verify escapes it (``safe``), spaces as
    # they are (joined or collapsed, a name with two spaces or a line break named another file: a
    # review of environments)
    return safe(text.strip()) or "failed, and gave no reason"


def _current_folder_exists() -> bool:
    try:
        os.getcwd()
    except FileNotFoundError:
        return False
    return True
