"""Pushing states to browsers: channels of whole states and Server-Sent Events.

A ``Channel`` holds the latest ``Snapshot`` of one thing the pages show (one table, or the floor)
and the ``Subscription`` of every connected browser. ``publish(snapshot)`` replaces the latest
state and queues it for every subscriber; ``subscribe()`` starts a subscription whose first item
is the whole current state, so a browser that connects or reconnects never misses what is on the
table now. Every item is a whole state, never a difference, so a subscriber may skip any of them:
a subscription keeps at most ``QUEUE_LIMIT`` states and drops the oldest when a slow client falls
behind (memory per client is bounded; the client still gets the newest state).

Channels live on the event loop's thread: ``publish``, ``subscribe`` and ``close`` are called
there (a source on another thread hands its snapshots over with ``loop.call_soon_threadsafe``).
``event_stream(channel, lang)`` is the body of an SSE response: one ``event: state`` message
per state, ``id`` its version, ``data`` the state as JSON in the subscriber's language, and a
comment line every ``KEEPALIVE_S`` so that proxies and the browser see a live connection. It ends
when the channel is closed (the server stopping), once the states queued before were sent.

Whether the table is running (``Channel.set_running``: True, False, or None when the source cannot
tell) is not part of a state, which is the journal's up to an entry: it goes out as an ``event:
table`` message, ``{"running": ...}``, after the state on connect when it is known and at every
change; a subscription keeps only the newest, never dropped for a slow client.
"""
from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

__all__ = ["Channel", "KEEPALIVE_S", "QUEUE_LIMIT", "Running", "Snapshot", "Subscription", "event_stream"]

QUEUE_LIMIT = 16      # states queued for one client before the oldest is dropped
KEEPALIVE_S = 15.0    # an SSE comment when nothing changed for this long


@dataclass(frozen=True)
class Snapshot:
    """One state as the pages get it: its ``version`` (grows with every change) and the state as
    JSON text in each language (``{"en": "...", "zh": "..."}``), made once for every client."""

    version: int
    documents: dict[str, str] = field(default_factory=dict)

    def document(self, lang: str) -> str:
        return self.documents.get(lang) or next(iter(self.documents.values()), "{}")


@dataclass(frozen=True)
class Running:
    """Whether the table of a channel is running (None: not known), as its own SSE message."""

    running: bool | None


class Subscription:
    """One client's queue of states: bounded, oldest dropped first; ``dropped`` counts them. The
    table's running, when it changed, goes out once the states queued are out (the newest only)."""

    def __init__(self, limit: int = QUEUE_LIMIT) -> None:
        self._queue: deque[Snapshot] = deque(maxlen=limit)
        self._running: Running | None = None  # changed, not yet sent
        self._ready = asyncio.Event()
        self.closed = False
        self.dropped = 0

    def put_running(self, running: Running) -> None:
        self._running = running
        self._ready.set()

    def put(self, snapshot: Snapshot) -> None:
        if len(self._queue) == self._queue.maxlen:
            self.dropped += 1
        self._queue.append(snapshot)
        self._ready.set()

    def close(self) -> None:
        self.closed = True
        self._ready.set()

    def __len__(self) -> int:
        return len(self._queue)

    async def next(self, timeout: float) -> Snapshot | Running | None:
        """The next queued state (or the table's running, changed); None after ``timeout`` seconds
        without one, or once closed."""
        if not self._queue and self._running is None and not self.closed:
            self._ready.clear()
            try:
                await asyncio.wait_for(self._ready.wait(), timeout)
            except asyncio.TimeoutError:
                return None
        if self._queue:
            return self._queue.popleft()
        running, self._running = self._running, None
        return running


class Channel:
    """The latest state of one page and its subscribers (see the module docstring)."""

    def __init__(self, snapshot: Snapshot | None = None) -> None:
        self.latest = snapshot
        self.running: bool | None = None  # the table's, when the source can tell
        self._subscribers: set[Subscription] = set()
        self.closed = False

    def set_running(self, running: bool | None) -> None:
        """The table is running (True), is not (False), or the source cannot tell (None)."""
        if running == self.running:
            return
        self.running = running
        for sub in self._subscribers:
            sub.put_running(Running(running))

    def publish(self, snapshot: Snapshot) -> None:
        self.latest = snapshot
        for sub in self._subscribers:
            sub.put(snapshot)

    def subscribe(self, limit: int = QUEUE_LIMIT) -> Subscription:
        sub = Subscription(limit)
        if self.closed:
            sub.close()
            return sub
        if self.latest is not None:
            sub.put(self.latest)
        if self.running is not None:
            sub.put_running(Running(self.running))
        self._subscribers.add(sub)
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        self._subscribers.discard(sub)

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    def close(self) -> None:
        self.closed = True
        for sub in self._subscribers:
            sub.close()
        self._subscribers.clear()


def sse_message(snapshot: Snapshot, lang: str) -> str:
    """One SSE message: ``id`` the version, ``event: state``, the JSON on one ``data`` line."""
    data = snapshot.document(lang).replace("\r", "").replace("\n", " ")  # one line: JSON allows it
    return f"id: {snapshot.version}\nevent: state\ndata: {data}\n\n"


async def event_stream(channel: Channel, lang: str, keepalive_s: float = KEEPALIVE_S) -> AsyncIterator[str]:
    """The SSE body for one client: ``retry`` first (the browser reconnects after 1 s), then each
    state. It subscribes when it is first iterated (nothing is queued for a response that is never
    sent) and unsubscribes when the client goes or the channel closes."""
    sub = channel.subscribe()
    try:
        yield "retry: 1000\n\n"
        while True:
            snapshot = await sub.next(keepalive_s)
            if isinstance(snapshot, Running):
                yield f"event: table\ndata: {json.dumps({'running': snapshot.running})}\n\n"
            elif snapshot is not None:
                yield sse_message(snapshot, lang)
            elif sub.closed:
                break  # closed and every queued state sent
            else:
                yield ": keepalive\n\n"
    finally:
        channel.unsubscribe(sub)
