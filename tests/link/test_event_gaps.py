"""A gap in the device's event counters that never closes (issue 9 item 16): a device that sends
only every other counter made the host's set of out-of-order counters grow without limit. Now
the memory is bounded (the link's sequencer, the one judge of what is new, holds a window) and a
gap that outlasts the resend requests is a fault the link reports."""
from __future__ import annotations

import threading
import tracemalloc
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from firmware_bridge.link import EventSequencer
from firmware_bridge.link.sequencer import BUFFERED, DUPLICATE, NOISY_STALL_FACTOR, OVERFLOW, QUEUED
from firmware_bridge.protocol import (
    NEED_DATA,
    DeviceConnection,
    EventReceived,
    HostConnection,
    encode_message,
)

from .fake_device import FakeDevice, card
from .rig import Rig, connected, wait_for


def numbered(counter: int):  # noqa: ANN201 - a CardRead
    return replace(card(counter), counter=counter)


def feed(conn: HostConnection, sequencer: EventSequencer, counters: range) -> dict[str, int]:
    """Each counter's frame through the host connection (it decodes) and the sequencer (it
    judges); returns how many of each verdict."""
    verdicts: dict[str, int] = {}
    for counter in counters:
        conn.receive_data(encode_message(numbered(counter), counter & 0xFF))
        while (ev := conn.next_event()) is not NEED_DATA:
            assert type(ev) is EventReceived
            verdict = sequencer.offer(ev.event)
            verdicts[verdict] = verdicts.get(verdict, 0) + 1
    return verdicts


# --- through the protocol core ---------------------------------------------------------------

def test_every_other_counter_costs_bounded_memory() -> None:
    """Every odd counter missing: once the window past the first missing counter is full, more
    such events cost nothing (before: about 56 bytes each, for ever: +68 MB in 300,000 events)."""
    conn, sequencer = HostConnection(), EventSequencer((1, 0), max_buffered=1000)
    feed(conn, sequencer, range(2, 1002, 2))  # the window is full from here on
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        verdicts = feed(conn, sequencer, range(1002, 41_002, 2))
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert verdicts == {OVERFLOW: 20_000}
    assert grown < 50_000, f"{grown} bytes for 20,000 events that are not held"


def test_the_default_window_holds_what_a_device_may_hold() -> None:
    """A device reports at most 65,535 unacknowledged events (a u16): the default window holds
    them all behind a gap, and not many more."""
    conn, sequencer = HostConnection(), EventSequencer((1, 0))
    counters = range(2, 0xFFFF + 2002, 2)
    verdicts = feed(conn, sequencer, counters)
    held = 0xFFFF // 2  # the even counters up to 65,534
    assert sequencer.max_buffered == 0xFFFF
    assert verdicts[BUFFERED] == held and verdicts[OVERFLOW] == len(counters) - held
    # the odd counters behind the held ones, and the range past the window (known to exist)
    assert sequencer.queued == 0 and len(sequencer.missing()) == held + 1


def test_an_event_beyond_the_window_is_not_held_and_counts_when_it_comes_again() -> None:
    conn, sequencer = HostConnection(), EventSequencer((1, 0), max_buffered=4)
    assert feed(conn, sequencer, range(2, 5)) == {BUFFERED: 3}  # 2..4, 1 missing
    assert feed(conn, sequencer, range(5, 6)) == {OVERFLOW: 1}
    assert sequencer.known_highest == 5 and sequencer.missing() == [(1, 1), (5, 5)]
    assert feed(conn, sequencer, range(1, 2)) == {QUEUED: 1}  # the gap closes
    assert sequencer.queued == 4
    while (ready := sequencer.peek()) is not None:  # the consumer takes them
        sequencer.commit(ready)
    assert feed(conn, sequencer, range(5, 6)) == {QUEUED: 1}  # resent: now an ordinary new event
    assert sequencer.queued == 5 and feed(conn, sequencer, range(3, 4)) == {DUPLICATE: 1}


# --- the link's sequencer --------------------------------------------------------------------

def test_the_sequencer_holds_a_window_behind_a_gap_and_a_bounded_ready_queue() -> None:
    seq = EventSequencer((1, 0), max_buffered=4)  # counters up to 0 + 4 are held
    assert [seq.offer(numbered(c)) for c in (2, 3, 4, 5)] == [BUFFERED] * 3 + [OVERFLOW]
    assert seq.buffered_count == 3 and not seq.full  # behind a gap: only a resend can help
    assert seq.offer(numbered(1)) == QUEUED  # the gap closes even with the window full
    assert seq.ready_count == 4 and seq.full  # the consumer is behind: the next ones wait
    assert seq.offer(numbered(5)) == OVERFLOW and seq.offer(numbered(3)) == DUPLICATE


def test_a_gap_is_stalled_after_the_resend_requests_it_outlasts() -> None:
    seq = EventSequencer((1, 0), stall_resends=3)
    seq.offer(numbered(2))
    assert [seq.resend_requested() for _ in range(5)] == [False, False, False, True, False]  # once
    assert seq.stalled and seq.missing() == [(1, 1)]
    seq.offer(numbered(1))  # it came after all: no longer stalled
    assert not seq.stalled and not seq.gap and not seq.resend_requested()
    seq.offer(numbered(4))
    assert [seq.resend_requested() for _ in range(4)] == [False, False, False, True]  # a new gap, a new report
    assert seq.accept_gap() == 1 and not seq.stalled
    assert seq.missing(limit=1) == [] and seq.queued == 4


def test_requests_after_damaged_frames_count_less_against_the_device() -> None:
    """On a noisy line the resent events may be the frames that came damaged: a healthy shoe at
    3 % of its bytes damaged was declared at fault after 8 requests (a review). A request after
    which frames came damaged counts only towards NOISY_STALL_FACTOR times the limit, and the
    stall then says the line may be at fault; requests on a clean line count in full."""
    seq = EventSequencer((1, 0), stall_resends=3)
    seq.offer(numbered(2))
    # a frame damaged after every request but the gap's first (nothing before it to judge by)
    noisy = [seq.resend_requested(damaged_frames=n) for n in range(3 * NOISY_STALL_FACTOR)]
    assert not any(noisy) and not seq.stalled
    assert seq.resend_requested(damaged_frames=3 * NOISY_STALL_FACTOR) and seq.stalled
    assert seq.stall_words() == (f"events 1 never arrived although the device was asked {3 * NOISY_STALL_FACTOR} "
                                 "times to resend them: a device fault, or a line that damages frames (it damaged "
                                 "some after these requests)")
    seq.offer(numbered(1))
    seq.offer(numbered(4))  # a new gap: the count starts again
    # damage before the new gap's first request is not held against it; two noisy, then clean
    assert [seq.resend_requested(damaged_frames=d) for d in (40, 41, 42, 42, 42, 42)] == \
        [False, False, False, False, False, True]  # the clean requests alone outlast the limit
    assert seq.stall_words().startswith("events 3 never arrived although the device was asked 5 times")
    assert seq.stall_words().endswith("a line that damages frames (it damaged some after these requests)")


def test_a_gap_no_resend_request_covered_yet_is_unasked() -> None:
    """One RESEND_EVENTS covers every gap known when it is made (the device resends all it holds
    unacknowledged): a gap opened after it is new and is asked about at once; one it covered is
    asked about again only after a while."""
    seq = EventSequencer((1, 0))
    assert not seq.unasked_gap  # no gap
    seq.offer(numbered(2))
    assert seq.unasked_gap  # 1 is missing and nobody asked
    seq.asking()  # as the link does: noted before the request is sent
    seq.resend_requested()
    assert not seq.unasked_gap  # asked: the resent 1 may be on its way
    seq.offer(numbered(4))
    assert seq.missing() == [(1, 1), (3, 3)] and not seq.unasked_gap  # 1 still missing: asked for with it
    seq.offer(numbered(1))
    assert seq.queued == 2 and seq.unasked_gap  # all that was known when asked came; 3 was not known: new
    seq.asking()  # as the link does: noted before the request is sent
    seq.resend_requested()
    assert not seq.unasked_gap
    seq.offer(numbered(3))
    seq.offer(numbered(6))
    assert seq.queued == 4 and seq.missing() == [(5, 5)] and seq.unasked_gap  # 5 is new
    seq.set_epoch(2)
    seq.offer(numbered(2))
    assert seq.unasked_gap  # a new epoch: nothing of it was asked for


# --- through the link ------------------------------------------------------------------------

def test_a_device_that_lost_every_other_event_is_a_reported_fault(tmp_path: Path,
                                                                 rig_factory: Callable[..., Rig]) -> None:  # noqa: F811
    """The device holds only the even counters (it lost the odd ones it had to keep). The link
    asks for them, then reports the gap as a device fault, once, and keeps the session; nothing
    is delivered out of order; the host's decision (accept_gap) lets the rest through."""
    device = FakeDevice(tmp_path)
    evens = [numbered(c) for c in range(2, 2001, 2)]
    device.conn = DeviceConnection(device.identity, next_event_counter=2001, unacknowledged=evens,
                                   max_unacknowledged=4096)
    rig = connected(rig_factory(device=device))
    wait_for(lambda: "never arrived although the device was asked" in rig.states.reasons(), "the fault report")
    reasons = [r for r in rig.states.reasons().splitlines() if "never arrived" in r]
    assert reasons == [reasons[0]] and reasons[0].startswith("events 1, 3, 5, 7, 9, 11, 13, 15, ... never arrived")
    assert rig.link.stats["gaps_stalled"] == 1 and len(rig.sink) == 0
    assert rig.link.stats["events_buffered"] == len(evens)
    assert rig.link.state.value == "connected"
    assert rig.link.accept_gap() == 1000
    wait_for(lambda: len(rig.sink) >= len(evens), "the even events, in order")
    assert rig.sink.messages() == evens
    wait_for(lambda: device.unacknowledged() == 0, "all acknowledged")


def test_a_gap_seen_while_a_resend_request_waits_for_its_reply_is_still_unasked() -> None:
    """The request covers what was known when it was sent (``asking``); a gap that opened while
    its reply was awaited is new, asked about at once. The reply's bookkeeping once noted the
    request again, as if it had covered that gap too (a review of the link's changes)."""
    seq = EventSequencer((1, 0))
    seq.offer(numbered(2))
    seq.asking()  # RESEND_EVENTS sent: 1 is covered
    seq.offer(numbered(4))  # meanwhile: 3 is missing, which the request did not know of
    seq.resend_requested()  # its ACK
    seq.offer(numbered(1))
    assert seq.missing() == [(3, 3)] and seq.unasked_gap


def test_a_stalled_gap_is_given_up_as_it_is_at_that_moment_while_resent_events_arrive() -> None:
    """A review of the link's threads: ``accept_stalled_gap`` looked at the stalled gap and gave it
    up under two holds of the link's lock, and the reader could file resent events between them.
    Counters 2..5 arrived in that window: the link reported 2..10 given up (the journal's
    ``events_given_up``) while 2..5 were delivered too. Now the gap is looked at and given up
    under one hold: what the report names is exactly what never comes through."""
    from firmware_bridge.emulator.factory import build_device
    from firmware_bridge.emulator.loopback import LoopbackTransport
    from firmware_bridge.link import DeviceLink

    link = DeviceLink(LoopbackTransport(build_device("emulated-shoe", speed=float("inf"))),
                      profile_name="emulated-shoe", auto_ack=False)  # not started: this test is its threads
    seq = link._sequencer  # the link's own sequencer, driven as its reader and supervisor drive it
    with link._lock:
        seq.set_epoch(1, "SN1")
        seq.offer(numbered(1))
        seq.offer(numbered(11))  # 2..10 missing
        while not seq.resend_requested():
            pass
    looked_at = seq.missing
    reader = threading.Thread(target=lambda: _resent_under_the_lock(link, range(2, 6)))

    def missing_while_the_reader_files(limit=None):  # the look: the reader wants the lock from now on
        reader.start()
        reader.join(0.2)
        return looked_at(limit)

    giving_up = link.accept_gap

    def reader_first(up_to=None):  # were the act a call of its own, the reader's chance to file first
        reader.join(0.2)
        return giving_up(up_to)

    seq.missing = missing_while_the_reader_files
    link.accept_gap = reader_first
    given = link.accept_stalled_gap()
    reader.join(5)
    assert not reader.is_alive()
    serial, epoch, first, last = given
    delivered = []
    while (event := seq.peek()) is not None:
        delivered.append(event.counter)
        seq.commit(event)
    assert (serial, epoch) == ("SN1", 1)
    assert not set(range(first, last + 1)) & set(delivered), (given, delivered)
    assert delivered == [1, 11]


def _resent_under_the_lock(link, counters: range) -> None:
    with link._lock:
        for counter in counters:
            link._sequencer.offer(numbered(counter))
