"""A process with no file descriptor left (EMFILE: a table flooded with control connections) opens
a transport: the failure is a ``TransportError`` in plain words, which the link retries, not an
``OSError`` from importing the device library, which the link logged as a crash with a traceback
(found by ``tests/control/test_limits.py`` in a CI run, the table's first connection falling in
the flood). Each case runs in a process of its own whose descriptor limit is set to the lowest
free descriptor, before the library is imported: a real EMFILE, no mock."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

OPEN_OUT_OF_DESCRIPTORS = textwrap.dedent("""
    import os, resource, sys
    from firmware_bridge.errors import TransportError
    from firmware_bridge.transport import SerialTransport, UsbTransport
    from firmware_bridge.profiles import UsbTransportSpec

    transport = (SerialTransport("/dev/ttyUSB9") if sys.argv[1] == "serial" else
                 UsbTransport(UsbTransportSpec(vid=0x1209, pid=0x0001, manufacturer="m", product="p",
                                               endpoint_in=0x81, endpoint_out=0x01, max_packet=64)))
    assert not {"serial", "usb"} & set(sys.modules), "imported already: the test would prove nothing"
    free = os.open(os.devnull, os.O_RDONLY)  # the lowest free descriptor: the next one a process gets
    os.close(free)
    resource.setrlimit(resource.RLIMIT_NOFILE, (free, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))
    try:
        transport.open()
    except TransportError as exc:
        print(exc)
""")


@pytest.mark.parametrize("kind", ["serial", "usb"])
def test_no_descriptor_left_is_a_transport_error_in_words(kind: str) -> None:
    proc = subprocess.run([sys.executable, "-c", OPEN_OUT_OF_DESCRIPTORS, kind], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stdout.startswith("cannot open ") and proc.stdout.strip().endswith("too many open files"), proc.stdout
