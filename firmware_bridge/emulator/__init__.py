"""The device side of the protocol: emulated shufflers, shoes and a dealer, with fault injection.

Models (sans-I/O: ``receive_data`` / ``tick`` / ``outgoing``, time from an injected clock):
``EmulatedDevice`` (base), ``EmulatedShuffler``, ``EmulatedShoe``, ``EmulatedShufflerShoe``,
``build_device(profile)``; the scripted ``Dealer``; ``EmulatedTable`` (shuffler + shoe + dealer) with its
``DealtLog``. Serving (threads and real I/O): ``PtyServer``, ``TcpServer``,
``EmulatedUsbBackend`` (a pyusb backend), and ``serve_table``. Faults: ``FaultSpec`` /
``LineFaults``. The user's guide is docs/emulator.md.

Importing this package opens nothing and starts nothing.
"""
from .cards import COVER, DeviceCard, card_count, cut_stack, insert_second_cover, standard_stack
from .clock import Clock, ManualClock
from .dealer import Dealer, DealerAction, parse_prompt
from .device import EmulatedDevice, EmulatorStateError
from .factory import build_device, parse_speed
from .faults import FaultSpec, LineFaults
from .identity import identity_for
from .pty_server import PtyServer
from .serving import TableServer, serve_device, serve_table
from .server import DeviceServer
from .shoe import Delivered, DrawResult, EmulatedShoe
from .shuffler import EmulatedShuffler
from .shuffler_shoe import EmulatedShufflerShoe
from .table import DealtCard, DealtLog, EmulatedTable, read_dealt_log
from .tcp_server import TcpServer
from .usb_backend import EmulatedUsbBackend

__all__ = [
    "COVER", "Clock", "DealerAction", "Dealer", "DealtCard", "DealtLog", "Delivered",
    "DeviceCard", "DeviceServer", "DrawResult", "EmulatedDevice", "EmulatedShoe",
    "EmulatedShuffler", "EmulatedShufflerShoe", "EmulatedUsbBackend", "EmulatorStateError",
    "FaultSpec", "LineFaults", "ManualClock", "PtyServer", "EmulatedTable", "TableServer", "TcpServer",
    "build_device", "card_count", "cut_stack", "identity_for", "insert_second_cover",
    "parse_prompt", "parse_speed", "read_dealt_log", "serve_device", "serve_table",
    "standard_stack",
]
