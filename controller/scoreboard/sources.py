"""Where the scoreboard's tables come from: ``TableSource`` and one implementation per source.

A source feeds ``Channel``s (``controller.scoreboard.sse``): one per table (``table(id)``: the
whole state the one-table page renders, ``TableView.to_json(lang)``) and ``floor`` (the floor
page: every table with its state, last result and big road). It works on a thread of its own and
hands each new snapshot to the event loop (``loop.call_soon_threadsafe``); the pages are pushed
to, never polled. ``start(loop)`` begins feeding, ``close()`` stops the thread and closes the
channels (which ends every open event stream). A source that cannot go on at all (the broker
refuses its credentials) calls ``give_up(why)``: the server stops and its caller says ``why``.

- ``JournalSource``: one table, from its journal, followed read-only with
  ``controller.journal.tail.JournalTail`` (the same checks as ``shoectl journal verify``). Every
  entry goes through ``TableView.apply``; a snapshot is published whenever the source has caught
  up with what the journal holds (a journal of a thousand entries read at start is one state, not
  a thousand), and, once following, at every completed round too (so the last round of a shoe is
  shown even when the next shoe's first entries were journaled in the same instant). The thread
  looks for new entries every ``POLL_S`` (50 ms): a read of the SQLite file's WAL index that
  finds nothing costs microseconds, and it keeps the journal's writer unaware of its readers.
  A journal that fails its check (a broken chain, an entry no table wrote) or cannot be read any
  more (SQLite finds it damaged, it is not a journal any more) stops the following: the state up
  to the last good entry is published once more, carrying why (``journal_problem``, from
  ``problem_of``), and nothing after it. That last snapshot's version (the event stream's ``id``,
  the ETag) is the last good entry's seq plus one: a state of its own, after every state before
  it, while its ``version`` field stays the entry it shows. A read that fails otherwise (a lock,
  the disk) is tried again every ``_RETRY_S``. Every ``RUNNING_S`` it looks whether the table's
  program is running (it holds the journal's writer lock: ``controller.journal.files``) and tells
  the table's channel (``Channel.set_running``; ``/healthz`` lists the tables that are not).
- ``MqttFloorSource``: every table of the floor, from the retained ``status`` and ``roads`` topics
  of the floor feed (docs/floor.md), through ``controller.floor.broker``.
"""
from __future__ import annotations

import asyncio
import itertools
import json
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog

from controller.scoreboard.sse import Channel, Snapshot

if TYPE_CHECKING:
    from controller.scoreboard.state import JournalProblem, TableView

__all__ = ["LANGS", "POLL_S", "RUNNING_S", "JournalSource", "TableSource", "compact_json", "floor_row", "problem_of",
           "snapshot_of"]

LANGS = ("en", "zh")
POLL_S = 0.05       # how often a journal is looked at for new entries (10 ms measured no better: docs/scoreboard.md)
_BATCH = 1000       # entries read at one time
_RETRY_S = 2.0      # after a read that failed (the disk, a lock held too long): try again
RUNNING_S = 1.0     # how often a journal's table is looked at: is its program running

log = structlog.get_logger()


class TableSource(ABC):
    """The tables a scoreboard shows (see the module docstring)."""

    def __init__(self) -> None:
        self.floor = Channel()
        self._tables: dict[str, Channel] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.fatal: str | None = None  # why the source cannot go on at all (one line, the user's words)
        self.on_fatal: Callable[[], None] | None = None  # the server's: end serving (``give_up``)

    def table_ids(self) -> list[str]:
        return sorted(self._tables)

    def table(self, table_id: str) -> Channel | None:
        return self._tables.get(table_id)

    @abstractmethod
    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Begin feeding the channels; called on the event loop's thread."""

    @abstractmethod
    def close(self) -> None:
        """Stop; idempotent. Closes every channel."""

    def give_up(self, why: str) -> None:
        """The source cannot go on (``why``, one line in the user's words): ``fatal`` says so and
        ``on_fatal`` ends the serving, whose caller then reports it (``ScoreboardServer.serve``).
        Called from any thread."""
        self.fatal = why
        if self.on_fatal is not None:
            self.on_fatal()

    def _publish(self, channel: Channel, snapshot: Snapshot) -> None:
        """Hand ``snapshot`` to the event loop's thread (or publish at once before there is one)."""
        self._on_loop(channel.publish, snapshot)

    def _on_loop(self, call: Callable[..., None], *args: Any) -> None:
        """``call(*args)`` on the event loop's thread, where the channels live (at once before there
        is a loop)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            call(*args)
            return
        try:
            loop.call_soon_threadsafe(call, *args)
        except RuntimeError:  # the loop closed meanwhile: nobody is left to show it to
            pass

    def _close_channels(self) -> None:
        def close() -> None:
            self.floor.close()
            for ch in self._tables.values():
                ch.close()
        loop = self._loop
        if loop is not None and not loop.is_closed() and loop.is_running():
            try:
                loop.call_soon_threadsafe(close)
                return
            except RuntimeError:
                pass
        close()


def compact_json(doc: Any) -> str:
    """``doc`` as the pages get it: compact JSON, UTF-8 text as it is."""
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def snapshot_of(version: int, documents: dict[str, Any]) -> Snapshot:
    """A ``Snapshot`` of one JSON document per language."""
    return Snapshot(version, {lang: compact_json(doc) for lang, doc in documents.items()})


def floor_row(state: dict[str, Any]) -> dict[str, Any]:
    """What the floor page shows of one table, from its whole state (``TableView.to_json``):
    ``{"table", "shoe", "state", "last_result", "big_road", "big_road_placed", "version",
    "online", "journal_problem"}`` (``big_road_placed``: its cells' places,
    ``state["placed"]["big_road"]``; ``journal_problem``: the state's, null while followed)."""
    last = state.get("last_round") or {}
    return {"table": state.get("table"), "shoe": state.get("shoe"), "state": state.get("state"),
            "last_result": last.get("outcome"), "big_road": (state.get("roads") or {}).get("big_road", []),
            "big_road_placed": (state.get("placed") or {}).get("big_road", []),
            "version": state.get("version"), "online": state.get("online", True),
            "journal_problem": state.get("journal_problem")}


class EntryNotShown(Exception):
    """An entry the table's view could not take: a defect of this program, not of the journal.
    The board stops before it, as at a failed check, rather than skip it and show a state that
    lacks it as live; the cause is logged with its traceback."""

    def __init__(self, seq: int) -> None:
        super().__init__(f"entry {seq} could not be shown: a defect of this program (its traceback is in the log)")
        self.seq = seq


def problem_of(exc: BaseException, path: Path | str) -> JournalProblem:
    """The ``state.JournalProblem`` of an error that stopped the following of the journal at
    ``path``: a ``JournalIntegrityError`` or ``JournalContentError`` is a check that failed, at
    the entry it names (``seq``, ``reason``); ``EntryNotShown`` an entry this program failed to
    show; any other (``NotAJournalError``) a journal that cannot be read any more. The reason never holds the journal's path (a public page does not
    show where the server keeps its files)."""
    from controller.journal.errors import JournalContentError, JournalIntegrityError
    from controller.scoreboard.state import JournalProblem

    text = " ".join(str(exc).split())
    prefix = f"{path}: "
    if text.startswith(prefix):
        text = text[len(prefix):]
    if isinstance(exc, (JournalIntegrityError, JournalContentError)):
        reason = exc.reason or text
        if exc.seq is not None:  # the check's words may name the entry again
            reason = reason.removeprefix(f"entry {exc.seq}: ")
        return JournalProblem("failed_check", exc.seq, reason)
    if isinstance(exc, EntryNotShown):
        return JournalProblem("not_shown", exc.seq, "")
    return JournalProblem("unreadable", None, text.removeprefix("cannot read the journal: "))


class JournalSource(TableSource):
    """One table from its journal (see the module docstring). ``open`` checks the journal at once:
    JournalError (one line) when it is missing, not a journal or cannot be followed. The follower
    is opened again on the source's thread (an SQLite connection serves the thread that made it)."""

    def __init__(self, path: Path, table_id: str, *, hmac_key: bytes | None = None) -> None:
        super().__init__()
        self.path = path
        self.table_id = table_id
        self._hmac_key = hmac_key
        self._tail: Any = None
        self._view: Any = None
        self._tables[table_id] = Channel()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.failure: str | None = None  # why the journal is not followed any more (a broken chain)
        self.running: bool | None = None  # whether the table's program runs (None: not known yet, or cannot tell)
        self._next_look = 0.0
        # The version last handed to the channels, on the source's thread: a channel's ``latest``
        # is set on the event loop's thread later, so it cannot tell whether a state went out.
        self._published: int | None = None

    @classmethod
    def open(cls, path: str | Path, *, hmac_key: bytes | None = None) -> JournalSource:
        from controller.journal.tail import JournalTail

        with JournalTail.open(path, hmac_key=hmac_key) as tail:
            return cls(Path(path), tail.table_id, hmac_key=hmac_key)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._thread = threading.Thread(target=self._follow, name=f"scoreboard-{self.table_id}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5.0)
        self._close_channels()

    def catch_up(self) -> bool:
        """Read and apply every entry the journal holds now and publish the state if anything
        changed (or there was no state yet); True when something was read. Called on one thread
        only (the source's)."""
        if self._tail is None:
            from controller.journal.tail import JournalTail
            from controller.scoreboard.state import TableView

            self._tail = JournalTail.open(self.path, hmac_key=self._hmac_key)
            self._view = TableView(self.table_id)
        read = False
        while True:
            entries = self._tail.poll(_BATCH)
            for entry in entries:
                last_round = self._view.last_round
                self._take(entry)
                if (self._published is not None and self._view.last_round is not last_round
                        and (self._view.last_round or {}).get("kind") == "normal"):
                    # every round on the roads is shown, even one the next shoe follows at once; a
                    # void or simulated one (on no road) only in the state its batch ends in: shown at
                    # once, a void the next shoe followed said "Place your bets" at a table shuffling
                    # for that shoe (a review of the scoreboard)
                    self._publish_state()
            read = read or bool(entries)
            if len(entries) < _BATCH:
                break
        self._publish_state()  # the first state, or what the last round left unpublished
        return read

    def _take(self, entry: Any) -> None:
        """``entry`` into the view; ``EntryNotShown`` when the view fails on it for any other
        reason than the entry's content (the rest of its batch is not taken either)."""
        try:
            self._view.apply(entry)
        except Exception as exc:
            from controller.journal.errors import JournalContentError  # only on a failure: not per entry

            if isinstance(exc, JournalContentError):
                raise
            raise EntryNotShown(entry.seq) from exc

    def _publish_state(self) -> None:
        """Publish the view's state unless that version went out already (a client would get it
        twice: each version is one state, sent once). A state carrying a ``journal_problem`` is
        the version after the last good entry (see the module docstring)."""
        version = self._view.version + (self._view.journal_problem is not None)
        if version == self._published:
            return
        self._published = version
        docs = {lang: self._view.to_json(lang) for lang in LANGS}
        self._publish(self._tables[self.table_id], snapshot_of(version, docs))
        self._publish(self.floor, snapshot_of(version, {lang: {"tables": [floor_row(doc)], "labels": doc.get("labels", {})}
                                                       for lang, doc in docs.items()}))

    def _stop_following(self, exc: BaseException) -> None:
        """The journal failed its check or cannot be read any more (``exc``): ``failure`` says
        why (``/healthz``), and the state up to the last good entry is published once more,
        marked with the ``journal_problem``, so that no page shows it as live."""
        from controller.journal.errors import JournalContentError
        from controller.scoreboard.state import TableView

        self.failure = " ".join(str(exc).split())
        at = getattr(exc, "seq", None)
        if isinstance(exc, (EntryNotShown, JournalContentError)) and at is not None:
            # The view may have taken part of that entry before it failed: shown as of the entry
            # before, it must hold exactly the entries before (a review of this change).
            self._view = self._view_before(at) or self._view
        if self._view is None:  # it failed before the first entry: the empty table, marked
            self._view = TableView(self.table_id)
        self._view.journal_problem = problem_of(exc, self.path)
        self._publish_state()
        log.error("scoreboard stopped following the journal", reason=str(exc),
                  exc_info=exc.__cause__ if isinstance(exc, EntryNotShown) else None)

    def _view_before(self, seq: int) -> TableView | None:
        """The view of the journal's entries before ``seq``, read and checked again; None when
        they cannot be read."""
        from controller.journal.tail import JournalTail
        from controller.scoreboard.state import TableView

        try:
            with JournalTail.open(self.path, hmac_key=self._hmac_key) as tail:
                entries = (entry for batch in iter(lambda: tail.poll(_BATCH), []) for entry in batch)
                return TableView.from_entries(itertools.takewhile(lambda e: e.seq < seq, entries), self.table_id)
        except Exception:  # noqa: BLE001 - the view as it is then: the failure is said either way
            return None

    def _look_at_the_table(self) -> None:
        """Every ``RUNNING_S``: whether the table's program is running (it holds its journal's
        writer lock), handed to the table's channel (``Channel.set_running``: the page says so when
        it is not). A journal followed alone cannot tell a stopped table from a quiet one: a board
        invited bets at a table killed minutes before (a review of the scoreboard)."""
        from controller.journal.files import writer_running

        now = time.monotonic()
        if now < self._next_look:
            return
        self._next_look = now + RUNNING_S
        running = writer_running(self.path)
        if running == self.running:
            return
        self.running = running
        self._on_loop(self._tables[self.table_id].set_running, running)

    def _follow(self) -> None:
        from controller.journal.errors import JournalContentError, JournalIntegrityError, NotAJournalError

        try:
            while not self._stop.is_set():
                self._look_at_the_table()  # before the first state: a page is told both at once
                try:
                    read = self.catch_up()
                except (JournalIntegrityError, JournalContentError, NotAJournalError, EntryNotShown) as exc:
                    # The chain broke, an entry no table wrote, a file SQLite finds damaged, an
                    # entry this program cannot show: what follows is what the journal cannot
                    # prove (or does not say, or the board would show without what comes before
                    # it); it is not shown, and trying again would not change it.
                    self._stop_following(exc)
                    return
                except Exception as exc:  # noqa: BLE001 - a read that failed (disk, lock): try again
                    log.warning("scoreboard could not read the journal", reason=" ".join(str(exc).split()))
                    self._stop.wait(_RETRY_S)
                    continue
                if not read:
                    self._stop.wait(POLL_S)
            if self.failure is None:
                self.catch_up()  # stopping: what the journal holds now is the last state shown
        except Exception as exc:  # noqa: BLE001 - the last look failed: the state before it stays
            log.warning("scoreboard could not read the journal", reason=" ".join(str(exc).split()))
        finally:
            if self._tail is not None:
                self._tail.close()
