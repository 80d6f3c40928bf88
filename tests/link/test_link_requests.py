"""DeviceLink over real parts (a pty opened by pyserial, the real protocol core, a scripted device):
the handshake, and requests and their replies: callers serialized, NAKs, lost and damaged replies
(the command runs once), timeouts, requests refused or interrupted while the link is down.

No test asserts a duration: waits are conditions with a generous deadline that only turns a hang
into a failure.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from firmware_bridge.errors import CommandFailed, CommandInterrupted, CommandTimeout, NotConnected
from firmware_bridge.link import LinkState
from firmware_bridge.profiles import Timing
from firmware_bridge.protocol import Ack, GateLock, NakCode, Shuffle, StatusReply, StatusRequest, Sync

from .rig import DEADLINE, TIMING, Rig, connected, wait_for


def test_handshake(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    dev, link = rig.device, rig.link
    assert link.state is LinkState.CONNECTED
    assert link.identity == dev.identity
    assert link.name == "SN-TEST-1"  # no profile name given: the serial number
    assert isinstance(link.last_status, StatusReply)
    wait_for(lambda: len(rig.states.states()) >= 2, "on_state reports")  # after the change
    assert rig.states.states()[:2] == [LinkState.CONNECTING, LinkState.CONNECTED]
    with dev.lock:
        assert dev.received["Sync"] >= 1 and dev.received["Hello"] >= 1
        assert dev.received["StatusRequest"] >= 1
    link.stop()
    assert link.state is LinkState.CLOSED
    assert rig.states.states()[-1] is LinkState.CLOSED
    link.stop()  # idempotent


def test_request_reply(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    status = rig.link.request(StatusRequest())
    assert isinstance(status, StatusReply)
    assert rig.link.request(Shuffle(decks=8)) == Ack()
    with rig.device.lock:
        assert rig.device.executed["Shuffle"] == 1


def test_concurrent_callers_are_serialized(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    errors: list[BaseException] = []

    def caller() -> None:
        try:
            for _ in range(50):
                assert isinstance(rig.link.request(StatusRequest()), StatusReply)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=caller) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE)
    assert not errors
    with rig.device.lock:
        assert rig.device.executed["StatusRequest"] >= 200


def test_nak_raises_command_failed(rig_factory: Callable[..., Rig]) -> None:
    """A NAK is the command's failure, said in the protocol's words (the table shows that text to
    a floorperson): the command's wire name, the code's name and the device's text."""
    rig = connected(rig_factory())
    rig.device.naks[Shuffle] = (NakCode.DOOR_OPEN, "door open")
    with pytest.raises(CommandFailed) as info:
        rig.link.request(Shuffle(decks=8))
    assert info.value.code == NakCode.DOOR_OPEN and info.value.text == "door open"
    assert isinstance(info.value.command, Shuffle)
    assert str(info.value) == "SHUFFLE refused: DOOR_OPEN: door open"
    assert rig.link.state is LinkState.CONNECTED  # a refusal is not a link problem
    del rig.device.naks[Shuffle]
    assert rig.link.request(Shuffle(decks=8)) == Ack()


def test_a_nak_code_of_the_devices_own_is_a_refusal_not_a_broken_reply(rig_factory: Callable[..., Rig]) -> None:
    """docs/protocol.md section 10: "0x10-0xFE are application errors chosen by the device's
    command handlers". One this table does not list (0x99) was an undecodable reply: the command's
    outcome unknown, and a table waiting on a prompt stalled (a firmware engineer's review). It is
    the device's refusal, named by its number; codes outside that range stay a broken reply."""
    rig = connected(rig_factory())
    rig.device.naks[Shuffle] = (NakCode(0x99), "lever stuck")
    with pytest.raises(CommandFailed) as info:
        rig.link.request(Shuffle(decks=8))
    assert int(info.value.code) == 0x99 and str(info.value) == "SHUFFLE refused: DEVICE_0x99: lever stuck"
    assert rig.link.state is LinkState.CONNECTED
    for code in (0x00, 0x08, 0x0F, 0x100):
        with pytest.raises(ValueError):
            NakCode(code)


def test_lost_reply_is_retransmitted_and_executed_once(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    dev = rig.device
    dev.drop_replies[Shuffle] = 1  # the device executes SHUFFLE but its ACK never arrives
    assert rig.link.request(Shuffle(decks=6)) == Ack()
    with dev.lock:
        assert dev.executed["Shuffle"] == 1      # executed once
        assert dev.received["Shuffle"] >= 2      # ... though it arrived (at least) twice
        assert dev.replayed >= 1                 # the retransmission got the replayed reply
    assert rig.link.stats["retransmissions"] >= 1


def test_requests_are_refused_while_not_connected(rig_factory: Callable[..., Rig]) -> None:
    rig = rig_factory(plugged=False)
    with pytest.raises(NotConnected):
        rig.link.request(StatusRequest())
    with pytest.raises(ValueError):
        rig.link.request(Sync())  # the link's own command
    rig.link.stop()


def test_all_attempts_time_out(rig_factory: Callable[..., Rig]) -> None:
    quiet = Timing(response_timeout_ms=200, heartbeat_interval_ms=600_000, retries=3,
                   reconnect_min_ms=10, reconnect_max_ms=200)  # no heartbeat gets there first
    rig = connected(rig_factory(timing=quiet))
    assert rig.link.retransmit_timeout < 0.2  # the handshake timed the device's answers
    rig.device.mute = True  # the device hears but never answers
    with pytest.raises(CommandTimeout) as info:
        rig.link.request(StatusRequest(), timeout=0.05)  # a caller's wait: that long, each attempt
    assert info.value.attempts == TIMING.retries + 1
    wait_for(lambda: LinkState.DISCONNECTED in rig.states.states(), "link marked down")
    rig.device.mute = False
    assert rig.link.wait_connected(DEADLINE)
    for _ in range(20):
        rig.link.request(StatusRequest())  # answered at once: the wait learnt is short
    learnt = rig.link.retransmit_timeout
    rig.device.mute = True
    with pytest.raises(CommandTimeout) as info:
        rig.link.request(Shuffle(decks=8))
    # The attempts come sooner (each waits twice the last, up to the reply timeout), and the
    # patience is still four reply timeouts (800 ms), so there are more: about 20, 40, 80, 160,
    # 200 and 200 ms.
    waits = [min(0.2, learnt * 2 ** i) for i in range(20)]
    expected = next(n for n in range(TIMING.retries + 1, 20) if sum(waits[:n]) >= 0.8 - 1e-9)
    assert info.value.attempts == expected > TIMING.retries + 1
    assert isinstance(info.value, TimeoutError)
    wait_for(lambda: LinkState.DISCONNECTED in rig.states.states(), "link marked down")
    rig.device.mute = False
    assert rig.link.wait_connected(DEADLINE)


def test_command_in_flight_at_unplug_fails_and_is_not_resent(
        rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    dev = rig.device

    def pull_the_plug(command: Any) -> None:
        if isinstance(command, Shuffle):
            dev._unplug()  # executed, but the cable is gone before the ACK
        return None

    dev.on_command = pull_the_plug
    with pytest.raises(CommandInterrupted) as info:
        rig.link.request(Shuffle(decks=8))
    assert isinstance(info.value, ConnectionError)
    dev.on_command = None
    dev.plug()
    assert rig.link.wait_connected(DEADLINE)
    heartbeats = dev.executed["Heartbeat"]
    wait_for(lambda: dev.executed["Heartbeat"] >= heartbeats + 2, "heartbeats after reconnect")
    with dev.lock:
        assert dev.executed["Shuffle"] == 1  # never run a second time by the link


def test_a_damaged_reply_is_asked_for_again_at_once_and_the_command_runs_once(
        rig_factory: Callable[..., Rig]) -> None:
    """The reply to SHUFFLE arrives damaged and the reply timeout is longer than this test may
    wait: the damaged frame makes the link send the same bytes again at once, the device replays
    its reply (docs/protocol.md D3) and does not shuffle twice."""
    rig = connected(rig_factory())
    rig.device.damage_replies[Shuffle] = 1
    result: list[object] = []
    caller = threading.Thread(target=lambda: result.append(rig.link.request(Shuffle(decks=8), timeout=3600)),
                              daemon=True)
    caller.start()
    wait_for(lambda: bool(result), "the reply")
    assert result == [Ack()]
    assert rig.device.executed["Shuffle"] == 1 and rig.device.replayed == 1
    assert rig.link.stats["early_retransmissions"] == 1 and rig.link.stats["timeouts"] == 0


def test_an_early_retransmission_counts_as_the_hosts_last_write(rig_factory: Callable[..., Rig]) -> None:
    """The device heard the host when the command was sent again after a damaged reply: that write
    is the host's last one, from which the heartbeat and the host-loss check count the link quiet
    (once left out, a retransmission's session looked quiet since the first attempt)."""
    quiet = Timing(response_timeout_ms=200, heartbeat_interval_ms=600_000, retries=3,
                   reconnect_min_ms=10, reconnect_max_ms=200)  # no heartbeat writes in between
    rig = connected(rig_factory(timing=quiet))
    rig.device.damage_replies[Shuffle] = 1
    executed_at: list[float] = []
    rig.device.on_command = lambda command: executed_at.append(time.monotonic()) if isinstance(command, Shuffle) else None
    assert rig.link.request(Shuffle(decks=8), timeout=3600) == Ack()
    assert rig.link.stats["early_retransmissions"] == 1 and len(executed_at) == 1
    channel = rig.link._commands  # the write's stamp is the channel's and its session's
    assert channel.last_tx > executed_at[0]  # written after the device had run it: the retransmission
    assert channel.session is not None and channel.session.last_tx == channel.last_tx
    rig.link.stop()


def test_gate_lock_is_a_plain_request(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    assert rig.link.request(GateLock()) == Ack()


def test_a_command_sent_again_whose_reply_came_within_the_protocols_time_is_not_counted_late(
        rig_factory: Callable[..., Rig]) -> None:
    """The link asks again after its learnt wait (here a caller's 30 ms); a device that answered
    within the protocol's 100 ms kept its rule: the resend counts in ``resent_in_time``, which
    the line's quality report leaves out (a firmware engineer's review: a device answering one
    command in ten in 90 ms was reported "replies late or lost")."""
    import time

    rig = connected(rig_factory())
    dev = rig.device

    def slow(command):  # the device's own thread: its answer, 40 ms late
        time.sleep(0.04)
        return None

    dev.on_command = slow
    before = dict(rig.link.stats)
    started = time.monotonic()
    assert rig.link.request(Shuffle(decks=6), timeout=0.03) == Ack()
    elapsed = time.monotonic() - started
    resent = rig.link.stats["retransmissions"] - before["retransmissions"]
    in_time = rig.link.stats["resent_in_time"] - before["resent_in_time"]
    assert resent >= 1
    # (on a machine so loaded that the reply came after 100 ms, the device was late by the clock)
    assert in_time == (resent if elapsed < 0.095 else in_time) and (in_time == 0 or elapsed < 0.1)


def test_a_reply_of_another_type_is_an_unreadable_reply_and_the_link_stays_up(
        rig_factory: Callable[..., Rig]) -> None:
    """docs/link.md: a reply of the wrong type leaves the command's outcome unknown and the link
    connected: said as ``UnreadableReply`` (the table then holds in a fault, for nothing would
    send the command again: a firmware review), not as the link lost."""
    from firmware_bridge.errors import UnreadableReply
    from firmware_bridge.protocol import DeviceMode, DeviceState, encode_message

    rig = connected(rig_factory())
    dev = rig.device
    wrong = StatusReply(state=DeviceState.IDLE, mode=DeviceMode.NORMAL, door_open=False, jam=False, gate_locked=False,
                        cards_in_shoe=0, pending_events=0, last_acked_event=0)

    def answer_with_a_status(command: Any) -> None:
        if isinstance(command, GateLock):  # a firmware's bug: its STATUS_REPLY under the command's seq
            dev._write(encode_message(wrong, dev.conn._awaiting[0]))
        return None  # then the ACK, which the host takes as a stale reply

    dev.on_command = answer_with_a_status
    with pytest.raises(UnreadableReply, match="protocol violation in the reply to GATE_LOCK"):
        rig.link.request(GateLock())
    dev.on_command = None
    assert rig.link.state is LinkState.CONNECTED
    rig.link.request(GateLock())  # the link goes on
