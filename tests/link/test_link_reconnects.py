"""DeviceLink over real parts (a pty opened by pyserial, the real protocol core, a scripted device):
heartbeats, a link marked down and reconnected (unplug and replug, backoff), a device that comes
back as another device or speaks another protocol version refused, and ``stop()`` at any moment.

No test asserts a duration: waits are conditions with a generous deadline that only turns a hang
into a failure.
"""
from __future__ import annotations

import errno
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from firmware_bridge.emulator.factory import build_device
from firmware_bridge.emulator.loopback import LoopbackTransport
from firmware_bridge.errors import CommandInterrupted
from firmware_bridge.link import DeviceLink, LinkState
from firmware_bridge.profiles import Timing
from firmware_bridge.protocol import Capability, Hello, StatusReply, StatusRequest

from .fake_device import FakeDevice, card, default_identity
from .rig import DEADLINE, Rig, connected, wait_for


def test_heartbeat_when_idle(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    wait_for(lambda: rig.device.executed["Heartbeat"] >= 3, "three heartbeats")
    assert rig.link.stats["heartbeats"] >= 2


def test_missed_heartbeat_marks_link_down_then_reconnects(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    rig.device.mute = True
    wait_for(lambda: LinkState.DISCONNECTED in rig.states.states(), "link marked down")
    assert "HEARTBEAT got no reply" in rig.states.reasons()
    rig.device.mute = False
    assert rig.link.wait_connected(DEADLINE)


def test_reconnect_after_unplug_and_replug(rig_factory: Callable[..., Rig]) -> None:
    rig = connected(rig_factory())
    for _ in range(3):
        rig.device.unplug()
        wait_for(lambda: rig.link.state is not LinkState.CONNECTED, "link down after unplug")
        rig.device.plug()
        assert rig.link.wait_connected(DEADLINE)
        assert isinstance(rig.link.request(StatusRequest()), StatusReply)
    assert rig.link.stats["sessions"] >= 4
    # three outages, three times back: the connections count the successes, whatever the tries
    assert rig.link.stats["connections"] == 4 and rig.link.stats["reconnects"] >= 3


class RecordedWaits:
    """The link's reconnect waits (its ``sleep``), recorded, not slept; the ``held``-th and later
    block until ``release`` is set, so the link tries no more meanwhile."""

    def __init__(self, held: int) -> None:
        self.delays: list[float] = []
        self.held = held
        self.release = threading.Event()

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)
        if len(self.delays) >= self.held:
            self.release.wait(DEADLINE)


def test_backoff_doubles_up_to_the_maximum(rig_factory: Callable[..., Rig]) -> None:
    sleep = RecordedWaits(held=7)
    delays, release = sleep.delays, sleep.release
    timing = Timing(response_timeout_ms=200, heartbeat_interval_ms=300, retries=3,
                    reconnect_min_ms=10, reconnect_max_ms=100)
    rig = rig_factory(plugged=False, timing=timing, sleep=sleep)
    wait_for(lambda: len(delays) >= 7, "seven backoff delays")
    assert delays[:7] == [0.01, 0.02, 0.04, 0.08, 0.1, 0.1, 0.1]
    assert rig.link.state is LinkState.DISCONNECTED
    assert "connect failed" in rig.states.reasons()
    release.set()
    rig.link.stop()


def test_a_handshake_the_line_loses_after_the_device_answered_is_tried_again_soon(tmp_path: Path,
                                                                                 rig_factory: Callable[..., Rig]) -> None:
    """The device is there (it answers SYNC), but its HELLO replies are lost on the line: each
    failed connect is the line's, not a device away, so the next one comes after the shortest
    wait instead of doubling up to the maximum (on a line dropping and noisy at once, the links
    backed off to 5 s and a table dealt nothing for minutes). Once the device is away (unplugged:
    nothing answers), the waits double again."""
    sleep = RecordedWaits(held=10)
    delays, release = sleep.delays, sleep.release
    timing = Timing(response_timeout_ms=20, heartbeat_interval_ms=300, retries=2,
                    reconnect_min_ms=10, reconnect_max_ms=100)
    device = FakeDevice(tmp_path).start()
    device.drop_replies[Hello] = 1000  # every HELLO's reply lost, for as long as the device is there
    rig = rig_factory(device=device, timing=timing, sleep=sleep)
    try:
        wait_for(lambda: len(delays) >= 3, "three connects that lost their HELLO")
        device.unplug()
        wait_for(lambda: len(delays) >= 10, "the device away")
    finally:
        release.set()
    away = next(i for i, d in enumerate(delays) if d != 0.01)  # the first wait after nothing answered
    assert away >= 3 and device.received["Sync"] >= 3 and "HELLO got no reply" in rig.states.reasons()
    assert delays[away:away + 4] == [0.02, 0.04, 0.08, 0.1]  # nothing answers: doubling up to the maximum
    rig.link.stop()


def test_stop_during_reconnect_returns_promptly(rig_factory: Callable[..., Rig]) -> None:
    timing = Timing(response_timeout_ms=200, heartbeat_interval_ms=300, retries=3,
                    reconnect_min_ms=600_000, reconnect_max_ms=600_000)
    rig = connected(rig_factory(timing=timing))
    rig.device.unplug()
    wait_for(lambda: rig.link.state is LinkState.DISCONNECTED, "disconnected")
    stopper = threading.Thread(target=rig.link.stop)
    stopper.start()
    stopper.join(DEADLINE)  # the backoff is 10 minutes: returning at all means it was cut short
    assert not stopper.is_alive()
    assert rig.link.state is LinkState.CLOSED
    assert not rig.link.transport.is_open


def test_stop_interrupts_a_waiting_request(rig_factory: Callable[..., Rig]) -> None:
    timing = Timing(response_timeout_ms=600_000, heartbeat_interval_ms=600_000, retries=0,
                    reconnect_min_ms=10, reconnect_max_ms=100)
    rig = connected(rig_factory(timing=timing))
    rig.device.mute = True
    errors: list[BaseException] = []

    def call() -> None:
        try:
            rig.link.request(StatusRequest())
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    caller = threading.Thread(target=call)
    caller.start()
    wait_for(lambda: rig.device.received["StatusRequest"] >= 2, "the request reached the device")
    rig.link.stop()
    caller.join(DEADLINE)
    assert not caller.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], CommandInterrupted)


def test_a_serial_number_other_than_the_pinned_one_is_refused(rig_factory: Callable[..., Rig]) -> None:
    """A link given its device's serial (a profile's USB serial number) talks to no other unit."""
    rig = connected(rig_factory(expected_serial="SN-TEST-1"))
    rig.device.unplug()
    rig.device.plug(identity=default_identity(serial="SN-OTHER"))
    wait_for(lambda: "refused" in rig.states.reasons(), "the other device refused")
    assert rig.link.state is not LinkState.CONNECTED
    assert rig.link.identity is not None and rig.link.identity.serial == "SN-TEST-1"
    rig.device.unplug()
    rig.device.plug(identity=default_identity(serial="SN-TEST-1"))
    assert rig.link.wait_connected(DEADLINE)


def test_another_unit_on_the_port_is_taken_and_said(rig_factory: Callable[..., Rig]) -> None:
    """A device review: a unit swapped under a running table (docs/emulator.md, `--serial`) was
    refused for ever ("device serial 'UNIT-B' is not this link's device 'UNIT-A'"), the table held
    in its fault until the controller was restarted, which took the new unit and journaled the
    replacement. A link not given a serial takes the unit of its profile's kind that answers, and
    its connect says another unit answers: the table journals `device_replaced`, as at a restart."""
    rig = connected(rig_factory())
    rig.device.unplug()
    rig.device.plug(identity=default_identity(serial="SN-OTHER"))
    wait_for(lambda: "another unit answers (serial SN-OTHER; the events stored last came from SN-TEST-1)"
             in rig.states.reasons(), "the other unit said")
    assert rig.link.wait_connected(DEADLINE)
    assert rig.link.identity is not None and rig.link.identity.serial == "SN-OTHER"
    assert "refused" not in rig.states.reasons()


def test_unsupported_protocol_version_is_refused(tmp_path: Path,
                                                 rig_factory: Callable[..., Rig]) -> None:
    device = FakeDevice(tmp_path, identity=default_identity(version=2))
    rig = rig_factory(device=device)
    wait_for(lambda: "protocol version 2" in rig.states.reasons(), "version refused")
    assert rig.link.state is not LinkState.CONNECTED
    rig.link.stop()


def test_stop_from_the_event_callback(rig_factory: Callable[..., Rig]) -> None:
    links: list[DeviceLink] = []
    rig = connected(rig_factory(on_event=lambda event: links[0].stop()))  # the consumer stops it
    links.append(rig.link)
    rig.device.emit(card(0))
    wait_for(lambda: rig.link.state is LinkState.CLOSED, "closed by its own callback")
    rig.link.stop()  # and from outside: nothing left to do
    assert not rig.link.transport.is_open
    with pytest.raises(RuntimeError):
        rig.link.start()


class OutOfDescriptors(LoopbackTransport):
    """A device whose first ``failures`` opens find the process with no descriptor left: a bare
    ``OSError`` (EMFILE), as an import or a pipe made while opening would raise it."""

    def __init__(self, device, failures: int) -> None:  # noqa: ANN001 - an emulated device
        super().__init__(device)
        self.failures = failures

    def open(self) -> None:
        if self.failures:
            self.failures -= 1
            raise OSError(errno.EMFILE, "Too many open files", "/lib/python3/site-packages/serial/__init__.py")
        super().open()


def test_no_descriptor_left_while_connecting_is_a_connect_failure_in_words_and_retried() -> None:
    """Not a crash: the link logged ``connect crashed`` with a traceback (a CI run of the control
    socket's descriptor flood). It says why in words, backs off and connects once it can."""
    device = build_device("emulated-shoe", speed=float("inf"))
    reasons: list[str] = []
    timing = Timing(response_timeout_ms=200, heartbeat_interval_ms=600_000, retries=3,
                    reconnect_min_ms=10, reconnect_max_ms=50)
    link = DeviceLink(OutOfDescriptors(device, failures=2), timing=timing, profile_name="emulated-shoe",
                      on_state=lambda state, reason: reasons.append(reason or ""))
    link.start()
    try:
        assert link.wait_connected(DEADLINE)
        assert isinstance(link.request(StatusRequest()), StatusReply)
    finally:
        link.stop()
    failed = [r for r in reasons if r.startswith("connect ")]
    assert failed == ["connect failed: too many open files"] * 2, reasons


@pytest.mark.parametrize("kind, words", [("shuffler", "does not shuffle: this link's profile is a shuffler"),
                                         ("shoe", None)])
def test_a_device_of_another_kind_is_refused_at_the_handshake(rig_factory: Callable[..., Rig], kind: str,
                                                              words: str | None) -> None:
    """A shoe and a shuffler plugged into each other's ports (an integrator review): both were
    accepted; a fresh table's every SHUFFLE was refused NOT_SUPPORTED until it closed, and a
    resumed one took the shuffler for a replaced shoe and gave up the shoe in play. The link knows
    its profile's kind: a device that does not shuffle on a shuffler's link (or one that shuffles
    on a shoe's) is refused, and its reason names the device and says what to check; its epoch is
    not taken either. The scripted device here is a shoe (it reads cards, it does not shuffle)."""
    rig = rig_factory(expected_kind=kind)
    if words is None:
        assert rig.link.wait_connected(DEADLINE)
        return
    wait_for(lambda: words in rig.states.reasons(), "the shoe refused on a shuffler's link")
    reason = next(r for r in rig.states.reasons().splitlines() if words in r)
    assert "(model 'FAKE-SHOE', serial 'SN-TEST-1')" in reason and "check which device is on this port" in reason
    assert rig.link.state is not LinkState.CONNECTED and rig.link.identity is None
    rig.link.stop()


@pytest.mark.parametrize("serial", ["", "   "])
def test_a_device_without_a_serial_is_refused_at_the_handshake(rig_factory: Callable[..., Rig], tmp_path,
                                                              serial: str) -> None:
    """A firmware review: IDENTITY's serial is text(32), and an unprovisioned unit sent it empty;
    the handshake accepted it, and the table stopped with a traceback at its first event (every
    event is journaled under its device's serial). The unit is refused at the handshake, in words,
    and nothing of it is taken."""
    from .fake_device import FakeDevice, default_identity

    rig = rig_factory(device=FakeDevice(tmp_path, identity=default_identity(serial=serial)))
    words = "gives no serial number in its IDENTITY"
    wait_for(lambda: words in rig.states.reasons(), "the unit without a serial refused")
    reason = next(r for r in rig.states.reasons().splitlines() if words in r)
    assert "(model 'FAKE-SHOE')" in reason and "give the unit one" in reason
    assert rig.link.state is not LinkState.CONNECTED and rig.link.identity is None
    assert len(rig.sink) == 0
    rig.link.stop()


@pytest.mark.parametrize("link_kwargs, words", [
    ({"expected_capabilities": Capability.CARD_RECOGNITION | Capability.COVER_CARD_SENSOR},
     "lacks what this link's profile declares (cover_card_sensor)"),
    ({"expected_decks": 10}, "holds 8 decks; this link's profile declares 10 (deck_capacity)"),
])
def test_a_device_without_what_its_profile_declares_is_refused_at_the_handshake(
        rig_factory: Callable[..., Rig], link_kwargs: dict, words: str) -> None:
    """A firmware review: IDENTITY's capabilities and deck capacity were logged, never checked
    against the profile the host holds the device to; a shoe without a cover card sensor on a
    profile declaring one would never end its shoe at the cover card (681a.7(d)). Such a device is
    refused at the handshake, naming what it lacks and what to check; nothing of it is taken. The
    scripted device reads cards and detects face-up cards, holding 8 decks."""
    rig = rig_factory(expected_kind="shoe", **link_kwargs)
    wait_for(lambda: words in rig.states.reasons(), "the device refused")
    reason = next(r for r in rig.states.reasons().splitlines() if words in r)
    assert "(model 'FAKE-SHOE', serial 'SN-TEST-1')" in reason and "check which device is on this port" in reason
    assert rig.link.state is not LinkState.CONNECTED and rig.link.identity is None and len(rig.sink) == 0
    rig.link.stop()


def test_a_device_with_more_than_its_profile_declares_is_taken(rig_factory: Callable[..., Rig]) -> None:
    """The profile is what the table relies on: a device may do more (face-up detection here,
    8 decks where the profile says 6)."""
    rig = rig_factory(expected_kind="shoe", expected_capabilities=Capability.CARD_RECOGNITION, expected_decks=6)
    assert rig.link.wait_connected(DEADLINE)


def test_every_shipped_profiles_emulated_device_passes_its_own_links_check() -> None:
    """What ``DeviceLink.from_profile`` holds a device to (the profile's kind, capability bits and
    decks) is what the emulator of that profile answers HELLO with."""
    from firmware_bridge.emulator import identity_for
    from firmware_bridge.link.identity_check import identity_problem
    from firmware_bridge.profiles import builtin_profile_dir, load_profile
    from firmware_bridge.protocol import capability_bits

    paths = sorted(builtin_profile_dir().glob("*.toml"))
    assert len(paths) >= 7
    for name in paths:
        profile = load_profile(name)
        assert identity_problem(identity_for(profile), bound_serial=None, expected_kind=profile.kind,
                                expected_capabilities=capability_bits(profile.capabilities),
                                expected_decks=profile.capabilities.deck_capacity) is None, name
