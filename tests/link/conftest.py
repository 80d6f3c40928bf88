"""The ``rig_factory`` fixture of the DeviceLink tests: ``rig_factory(device=None, start=True,
plugged=True, **link_kwargs)`` makes a ``Rig`` (rig.py) on a scripted device of its own, or on
``device``; every link and device it made is stopped after the test."""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from firmware_bridge.link import DeviceLink
from firmware_bridge.transport import SerialTransport

from .fake_device import FakeDevice
from .rig import TIMING, Rig, Sink, States


@pytest.fixture
def rig_factory(tmp_path: Path) -> Iterator[Callable[..., Rig]]:
    made: list[Rig] = []

    def make(*, device: FakeDevice | None = None, start: bool = True, plugged: bool = True,
             **link_kwargs: Any) -> Rig:
        dev = device or FakeDevice(tmp_path)
        if not dev._thread.is_alive():
            dev.start(plugged=plugged)
        sink, states = Sink(), States()
        link_kwargs.setdefault("timing", TIMING)
        link_kwargs.setdefault("on_event", sink)
        link = DeviceLink(SerialTransport(str(dev.path)), on_state=states, **link_kwargs)
        rig = Rig(dev, link, sink, states)
        made.append(rig)
        if start:
            link.start()
        return rig

    yield make
    for rig in made:
        rig.link.stop()
        rig.device.stop()
