"""structlog, configured once for the process: JSON lines to a rotating file, readable lines on
standard error. A line carries the table, shoe, round and device ids that apply to it: the
table's for the whole process, on every thread (``configure_logging``), the others from structlog's
context variables or the logger's own (the runner binds shoe and round per input; the links bind
their device). An id without a value is left out (no ``shoe=None`` on a feed's or a collector's
line).

Levels: ``error`` only for what a person must act on (the table stopped by a failure, a journal
anchor not recorded, events a device lost); ``warning`` for what went wrong and was mended, or
may want a look; ``info`` for the expected events of a run (a link up, a handshake, a stop asked
for, the reader of the output gone); ``debug`` for the detail. A normal run writes nothing above
``info`` (tests/test_run_log_levels.py).

``configure_logging(level, file, table)`` may be called again (tests): it replaces the handlers.
Given ``stderr`` (a ``QueuedOutput``: ``shoectl run``), the lines for standard error go through it,
so a reader of standard error that pauses (``2>&1 | less``, a terminal stopped with Ctrl-S) never
holds the thread that logs (the table's); past its limit lines are counted and the next one
written says how many were not.
``file_only_logger()``: a logger whose lines go to the log file only, for what the program has
just said on standard error in its own words (the collector's broker unreachable at start).
``reopen_log_files()`` (SIGHUP, ``controller.cli.stopping``) opens the log file again at its path
after logrotate renamed it. Nothing is configured at import time. A traceback (a thread that failed) is Python's plain one:
structlog's default, when rich is installed, prints every frame's local variables, which may
hold what a log must not (an operator's request, a device's bytes).
"""
from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import stat
import sys
from collections.abc import Callable
from typing import Any

import structlog

from controller.queued_output import QueuedOutput

IDS = ("table", "shoe", "round", "device")
_HANDLER_TAG = "_shoectl_handler"
_FILE_ONLY = "shoectl.file_only"  # the stdlib logger of file_only_logger()
_process_ids: dict[str, Any] = {}  # ids of the whole process (the table), set by configure_logging


def _ensure_ids(logger: Any, method: str, event: dict[str, Any]) -> dict[str, Any]:
    for key in IDS:
        if event.get(key) is None:  # context variables are per thread: the links' threads have none
            event[key] = _process_ids.get(key)
        if event[key] is None:  # not applicable here (a context variable bound to None, or none bound)
            del event[key]
    return event


class _QueuedHandler(logging.Handler):
    """Writes each formatted line through a ``QueuedOutput``; see the module docstring."""

    def __init__(self, out: QueuedOutput) -> None:
        super().__init__()
        self.out = out

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record) + "\n"
        except Exception:  # noqa: BLE001 - logging's own contract: a bad record is reported, not raised
            self.handleError(record)
            return
        self.out.line(text, "log lines not written: standard error was not read")


class _LogFile(logging.handlers.RotatingFileHandler):
    """The log file. A line it cannot write (a full disk) is said once on standard error, in one
    line (``say``), not as logging's traceback for every line; said again only after a line was
    written since. Before, a full disk put a 20-line traceback on standard error per log line."""

    def __init__(self, path: str, *, say: Callable[[str], None], **options: Any) -> None:
        from controller.fsutil import refuse_foreign_append_target

        refuse_foreign_append_target(path)  # appended to with this process's rights: not another user's
        # never rotated through a link: ``/dev/stderr`` to a file had the link itself renamed (a review)
        self._through_link = os.path.islink(path)
        self._here: os.stat_result | None = None  # the path's file, looked at once a line (``emit``)
        super().__init__(path, **options)
        self._say = say
        self._failing = False   # said, and not written since
        self._failed_now = False
        self._said_gone: str | None = None  # what was said of the file gone from its path
        self._retry_at = 0  # after a failed rotation, the size at which it is tried again

    def _open(self) -> Any:
        """The file, created for its owner and group only (operator ids are in it; under umask 022
        it was for everyone), as the journal beside it."""
        from controller.fsutil import TABLE_FILE_MODE, tighten_to

        def opener(path: str, flags: int) -> int:
            fd = os.open(path, flags, TABLE_FILE_MODE)
            tighten_to(fd)  # one an earlier shoectl made group-writable
            return fd

        stream = open(self.baseFilename, self.mode, encoding=self.encoding, errors=self.errors,  # noqa: SIM115
                      opener=opener)
        opened = os.fstat(stream.fileno())
        self._opened = (opened.st_dev, opened.st_ino)  # the file this handler writes
        return stream

    def emit(self, record: logging.LogRecord) -> None:
        self._failed_now = False
        self._follow_the_path()
        super().emit(record)
        if not self._failed_now:
            self._failing = False

    def _follow_the_path(self) -> None:
        """The file at the path, not one deleted or moved away under the table (a cleanup, a
        logrotate without a SIGHUP): its lines went to a file no longer there, unseen, until a
        SIGHUP (a review of logs). One ``stat`` a line, as ``WatchedFileHandler``; made again, it
        is said on standard error."""
        if self.stream is None:
            return
        try:
            self._here = here = os.stat(self.baseFilename)
        except FileNotFoundError:
            self._here = here = None
        except OSError:
            return
        if here is not None and (here.st_dev, here.st_ino) == self._opened:
            self._said_gone = None
            return
        problem = self.reopen()
        said = "made again at its path" if problem is None else f"not made again ({problem}): its lines go on to the one gone"
        if said != self._said_gone:  # once, not per line (a refused one is looked at again each line)
            self._said_gone = said
            self._say(f"shoectl: the log file {self.baseFilename} was deleted or moved while the table ran: {said}\n")

    def shouldRollover(self, record: logging.LogRecord) -> bool:  # noqa: N802 - logging's name
        """The size rotation (``RotatingFileHandler``'s, on the path's file ``emit`` looked at), but
        never of a file that is not a regular one, nor through a link, nor again before the file
        grew by another ``maxBytes`` since a rotation failed."""
        here = self._here
        if self.maxBytes <= 0 or self._through_link or (here is not None and not stat.S_ISREG(here.st_mode)):
            return False
        if self.stream is None:
            self.stream = self._open()
        self.stream.seek(0, 2)
        size = self.stream.tell()
        return size >= self._retry_at and size + len(self.format(record)) + 1 >= self.maxBytes

    def doRollover(self) -> None:  # noqa: N802 - logging's name
        """The built-in rotation; when it fails (the folder takes no rename, a file in the way), the
        lines go on to the file open now, said once, and it is tried again once the file grew by
        another ``maxBytes``: every line was lost to the rename tried again for each (a review of logs)."""
        try:
            super().doRollover()
            self._retry_at = 0
        except OSError as exc:
            if self.stream is None:
                self.stream = self._open()
            first = not self._retry_at
            self._retry_at = self.stream.tell() + self.maxBytes
            if first:
                self._say(f"shoectl: the log file {self.baseFilename} cannot be rotated ({exc.strerror or exc}): its "
                          "lines go on to it; tried again as it grows\n")

    def close(self) -> None:
        try:
            super().close()
        except OSError:  # the lines left in its buffer cannot be written either: said already
            pass

    def reopen(self) -> str | None:
        """Write on at the file now at the path (logrotate renamed the old one); why not, or None.
        Refused, the lines go on to the file open before."""
        from controller.fsutil import foreign_append_target

        problem = foreign_append_target(self.baseFilename)
        if problem is not None:
            return problem
        self.acquire()
        try:
            try:
                stream = self._open()
            except OSError as exc:
                return exc.strerror or str(exc)
            old, self.stream = self.stream, stream
            self._through_link = os.path.islink(self.baseFilename)
            if old is not None:
                with contextlib.suppress(OSError):
                    old.close()
        finally:
            self.release()
        return None

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        self._failed_now = True
        if self._failing:
            return
        self._failing = True
        problem = sys.exc_info()[1]
        why = getattr(problem, "strerror", None) or str(problem) or "failed"
        self._say(f"shoectl: the log file {self.baseFilename} cannot be written: {why}; "
                  "its lines are lost until it can be\n")


def configure_logging(level: str = "warning", file: str | None = None, table: str | None = None,
                      max_bytes: int = 10 * 1024 * 1024, backups: int = 5,
                      stderr: QueuedOutput | None = None) -> None:
    shared = [
        structlog.contextvars.merge_contextvars,
        _ensure_ids,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=False,
    )
    root = logging.getLogger()
    for h in [h for h in root.handlers if getattr(h, _HANDLER_TAG, False)]:
        root.removeHandler(h)
        h.close()
    console = logging.StreamHandler() if stderr is None else _QueuedHandler(stderr)
    console.setLevel(level.upper())
    console.setFormatter(structlog.stdlib.ProcessorFormatter(
        processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, structlog.dev.ConsoleRenderer(colors=False, exception_formatter=structlog.dev.plain_traceback)],
        foreign_pre_chain=shared))
    console.addFilter(lambda record: record.name != _FILE_ONLY)
    setattr(console, _HANDLER_TAG, True)
    root.addHandler(console)
    if file:
        say = (lambda text: stderr.write(text, always=True)) if stderr is not None else _stderr_line
        fh = _LogFile(file, say=say, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
        fh.setLevel(logging.DEBUG if level == "debug" else logging.INFO)
        fh.setFormatter(structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                        structlog.processors.format_exc_info,  # the traceback as text, without locals
                        structlog.processors.JSONRenderer()],
            foreign_pre_chain=shared))
        setattr(fh, _HANDLER_TAG, True)
        root.addHandler(fh)
    root.setLevel(logging.DEBUG)
    logging.getLogger("transitions").setLevel(logging.WARNING)  # its per-callback chatter is not ours
    # A scoreboard client's malformed request is answered 400 and is the client's affair: uvicorn's
    # warning per request let any client that can reach the port flood the logs (and rotate them away).
    logging.getLogger("uvicorn.error").setLevel(logging.ERROR)
    structlog.contextvars.clear_contextvars()
    _process_ids.clear()
    _process_ids["table"] = table


def file_only_logger() -> Any:
    """A structlog logger whose lines reach the log file (``--log-file``), never standard error."""
    return structlog.get_logger(_FILE_ONLY)


def reopen_log_files() -> None:
    """On SIGHUP (logrotate's ``postrotate``): the log file is opened again at its path, so that
    lines go to the new file, not the renamed one; said at info, or at warning if it cannot be."""
    log = structlog.get_logger()
    for handler in [h for h in logging.getLogger().handlers if isinstance(h, _LogFile)]:
        problem = handler.reopen()
        if problem is None:
            log.info("log file reopened (SIGHUP)", file=handler.baseFilename)
        else:
            log.warning("log file not reopened; its lines go on to the file open before", file=handler.baseFilename,
                        error=problem)


def _stderr_line(text: str) -> None:
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError):  # standard error itself cannot be written: nothing left to tell
        pass
