"""The link's pure parts, no device and no threads: ``EventSequencer`` (order, duplicates, gaps,
epoch changes, overflow), ``Backoff``, and a ``DeviceLink`` built from a device profile."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from firmware_bridge.link import Backoff, DeviceLink, EventSequencer, LinkState
from firmware_bridge.link.sequencer import BUFFERED, DUPLICATE, OVERFLOW, QUEUED
from firmware_bridge.profiles import parse_profile
from firmware_bridge.transport import SerialTransport

from .fake_device import card


def test_sequencer_orders_and_deduplicates() -> None:
    seq = EventSequencer(profile_name="d")
    with pytest.raises(RuntimeError):
        seq.offer(card(0))
    seq.set_epoch(1)
    ev = [replace(card(i), counter=i + 1) for i in range(6)]
    assert seq.offer(ev[0]) == QUEUED
    assert seq.offer(ev[2]) == BUFFERED
    assert seq.gap and seq.missing() == [(2, 2)]
    assert seq.offer(ev[2]) == DUPLICATE
    assert seq.offer(ev[1]) == QUEUED  # releases 3
    assert not seq.gap and seq.queued == 3
    assert seq.offer(ev[0]) == DUPLICATE
    seq.note_highest(6)
    assert seq.missing() == [(4, 6)]
    delivered = []
    while (head := seq.peek()) is not None:
        delivered.append(head.counter)
        seq.commit(head)
    assert delivered == [1, 2, 3] and seq.last_delivered == (1, 3)
    assert seq.delivered_in_epoch() == 3
    assert seq.offer(ev[4]) == BUFFERED
    assert seq.accept_gap() == 2  # 4 and 6 given up; 5 delivered
    assert [seq.peek().counter] == [5]  # type: ignore[union-attr]


def test_sequencer_epoch_change_and_overflow() -> None:
    seq = EventSequencer((1, 10), max_buffered=2)
    assert seq.epoch == 1 and seq.queued == 10
    r = replace
    assert seq.offer(r(card(0), counter=5)) == DUPLICATE
    assert seq.offer(r(card(0), counter=11)) == QUEUED
    assert seq.offer(r(card(0), counter=13)) == BUFFERED
    assert not seq.full  # events behind a gap never fill it: only a resend can close the gap
    assert seq.offer(r(card(0), counter=14)) == OVERFLOW  # too far past the gap
    assert seq.set_epoch(2) == [(12, 12), (14, 14)]  # lost with the old epoch
    assert seq.peek() is not None and seq.peek().epoch == 1  # type: ignore[union-attr]
    seq.commit(seq.peek())  # type: ignore[arg-type]
    assert seq.delivered_in_epoch() == 0  # the last delivered belongs to the old epoch
    assert seq.offer(r(card(0), counter=1)) == QUEUED
    with pytest.raises(ValueError):
        EventSequencer((1, -1))


def test_backoff() -> None:
    b = Backoff(0.1, 0.5)
    assert [b.next() for _ in range(5)] == [0.1, 0.2, 0.4, 0.5, 0.5]
    b.reset()
    assert b.next() == 0.1
    with pytest.raises(ValueError):
        Backoff(1.0, 0.5)


def test_link_from_profile(tmp_path: Path) -> None:
    profile = parse_profile({"device": {"vendor": "v", "model": "m", "kind": "shoe",
                                        "protocol_version": 1},
                             "transport": {"type": "serial"},
                             "timing": {"response_timeout_ms": 300, "retries": 2}},
                            "test.toml", "table-7-shoe")
    link = DeviceLink.from_profile(profile, str(tmp_path / "tty"))
    assert link.name == "table-7-shoe"
    assert link.reply_timeout == 0.3 and link.attempts == 3
    assert isinstance(link.transport, SerialTransport)
    assert link.state is LinkState.DISCONNECTED
    link.stop()
    assert link.state is LinkState.CLOSED
