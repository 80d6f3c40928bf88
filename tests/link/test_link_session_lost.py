"""A device that restarted answers every command NAK NOT_SYNCED until a new handshake: that is not
its answer to the command (it did not look at it, and an earlier transmission may have run before
the restart), so the link reports the command's outcome as unknown (``CommandInterrupted``, never
``CommandFailed``), starts a new session, and the next command goes through (docs/link.md)."""
from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

import pytest

from firmware_bridge.emulator.factory import build_device
from firmware_bridge.emulator.loopback import LoopbackTransport
from firmware_bridge.errors import CommandFailed, CommandInterrupted, CommandOutcomeUnknown, NotConnected
from firmware_bridge.link import DeviceLink
from firmware_bridge.profiles import Timing
from firmware_bridge.protocol import HOST_LOSS_TIMEOUT_S, StatusReply, StatusRequest

from .consumer import Consumer, wait_until

QUIET = Timing(response_timeout_ms=200, heartbeat_interval_ms=600_000, retries=3,
               reconnect_min_ms=10, reconnect_max_ms=200)  # no heartbeat gets the NAK first


def test_a_command_to_a_device_that_lost_its_session_has_an_unknown_outcome_and_the_link_reconnects() -> None:
    device = build_device("emulated-shoe", speed=float("inf"), host_loss_timeout=None)
    link = DeviceLink(LoopbackTransport(device), timing=QUIET, profile_name="emulated-shoe", on_event=Consumer())
    link.start()
    try:
        assert link.wait_connected(60)
        assert isinstance(link.request(StatusRequest()), StatusReply)
        with device.lock:
            device.power_cycle()  # a new protocol core: NAK NOT_SYNCED until SYNC
        with pytest.raises(CommandInterrupted) as raised:
            link.request(StatusRequest())
        assert not isinstance(raised.value, CommandFailed) and isinstance(raised.value, CommandOutcomeUnknown)
        assert "lost its session" in str(raised.value) and "outcome unknown" in str(raised.value)
        assert wait_until(lambda: device.connection.synced, 60)  # the link's new session
        assert link.wait_connected(60)
        assert isinstance(link.request(StatusRequest()), StatusReply)
    finally:
        link.stop()


@contextlib.contextmanager
def _paused_link() -> Iterator[tuple[DeviceLink, list[float]]]:
    """A connected link to an emulated shoe, and the seconds its host stood still (``paused[0]``,
    added to the link's clock)."""
    device = build_device("emulated-shoe", speed=float("inf"), host_loss_timeout=None)
    paused = [0.0]
    link = DeviceLink(LoopbackTransport(device), timing=QUIET, profile_name="emulated-shoe", on_event=Consumer(),
                      clock=lambda: time.monotonic() + paused[0])
    link.start()
    try:
        assert link.wait_connected(60)
        assert isinstance(link.request(StatusRequest()), StatusReply)
        yield link, paused
    finally:
        link.stop()


def test_a_session_quiet_longer_than_the_devices_host_loss_timeout_is_started_again() -> None:
    """A device review: ``shoectl run`` paused for 7 s (SIGSTOP) came back to a shoe that had taken
    its host for gone and locked its gate, on a session nothing on the wire said was over: the
    table waited at DRAW for ever. A command due after a silence longer than the host-loss timeout
    (docs/protocol.md section 8) is not sent on that session: it is lost, with the reason, and the
    link's handshake starts a new one (the table's resume then unlocks the gate again)."""
    with _paused_link() as (link, paused):
        paused[0] += HOST_LOSS_TIMEOUT_S + 1  # this host stood still, the device's clock went on
        with pytest.raises(NotConnected, match=r"sent the device nothing for 6\.\d s, about its host-loss "
                                               r"timeout \(5 s\) or more.*STATUS not sent"):
            link.request(StatusRequest())
        assert wait_until(lambda: link.stats["reconnects"] == 1 and link.wait_connected(0.01), 60)  # a new session
        assert isinstance(link.request(StatusRequest()), StatusReply)


def test_a_session_at_the_host_loss_timeout_is_started_again_too() -> None:
    """A review: at exactly 5 s the device had given up its host (it goes by >=, from its receipt of
    a command) and the link kept the session. A silence within half a second of it is taken for it."""
    with _paused_link() as (link, paused):
        paused[0] += HOST_LOSS_TIMEOUT_S - 0.4
        with pytest.raises(NotConnected, match="about its host-loss timeout"):
            link.request(StatusRequest())


def test_a_session_quiet_for_less_than_the_host_loss_timeout_goes_on() -> None:
    with _paused_link() as (link, paused):
        paused[0] += HOST_LOSS_TIMEOUT_S - 1
        assert isinstance(link.request(StatusRequest()), StatusReply)
        assert link.stats["reconnects"] == 0


def test_a_retransmission_as_late_as_the_host_loss_timeout_does_not_go_on_that_session() -> None:
    """A review: the rule was checked only as a command began; its retransmissions, spaced by a
    reply timeout a profile may set to a minute, went on the session the device had given up. A
    retry due that late ends the session instead: the command's outcome is unknown, not resent."""
    import threading

    with _paused_link() as (link, paused):
        device = link.transport.device
        result: list[object] = []
        hearing = device.receive_data
        device.receive_data = lambda data: None  # the line is dead: the command waits for its reply
        try:
            worker = threading.Thread(target=lambda: result.append(_outcome(link)))
            worker.start()
            time.sleep(0.05)
            paused[0] += HOST_LOSS_TIMEOUT_S + 1  # and this host stood still before the retry
            worker.join(30)
        finally:
            device.receive_data = hearing
        assert len(result) == 1 and isinstance(result[0], CommandInterrupted), result
        assert "about its host-loss timeout" in str(result[0]) and "not resent" in str(result[0])


def _outcome(link: DeviceLink) -> object:
    try:
        return link.request(StatusRequest())
    except Exception as exc:  # noqa: BLE001 - the outcome is what the test looks at
        return exc
