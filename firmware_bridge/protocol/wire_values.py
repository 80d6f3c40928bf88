"""The named numbers of the wire protocol: message type bytes, their kinds, field values, limits.

Contract:
- ``MessageType`` is the type byte of every message; ``kind_of(type byte)`` gives its
  ``MessageKind`` from the top two bits (00 command, 01 reply, 10 event; ``None`` for the reserved
  11 range).
- The enumerations (``Capability``, ``ButtonId``, ``DeliverTarget``, ``ResetKind``, ``DeviceMode``,
  ``DeviceState``, ``JamLocation``, ``Suit``) are the values of the message fields of that name, as
  docs/protocol.md tabulates them; ``MAX_TEXT``, ``MAX_ID_TEXT``, ``CARD_UNREADABLE`` and
  ``UNKNOWN_POSITION`` are the limits and markers of the text and card fields; ``HOST_LOSS_TIMEOUT_S`` is section 8's time
  without a command after which a device considers its host gone (a shoe locks its gate).
- Data only: no I/O, nothing to set up.
"""
from __future__ import annotations

from enum import Enum, IntEnum, IntFlag
from typing import Any

HOST_LOSS_TIMEOUT_S = 5.0  # docs/protocol.md section 8: a device with no command this long lost its host

__all__ = [
    "CARD_UNREADABLE",
    "HOST_LOSS_TIMEOUT_S",
    "UNKNOWN_POSITION",
    "MAX_ID_TEXT",
    "MAX_TEXT",
    "ButtonId",
    "Capability",
    "DeliverTarget",
    "DeviceMode",
    "DeviceState",
    "JamLocation",
    "MessageKind",
    "MessageType",
    "ResetKind",
    "Suit",
    "kind_of",
]

MAX_TEXT = 64       # UTF-8 bytes in DISPLAY, NAK and FAULT texts
MAX_ID_TEXT = 32    # UTF-8 bytes in each IDENTITY string
CARD_UNREADABLE = 0xFF  # rank and suit value of a card the reader could not recognise
UNKNOWN_POSITION = 0  # a CARD_READ's or COVER_CARD's position from a shoe that does not know it


class MessageType(IntEnum):
    """The message type byte. Bits 7-6: 00 command, 01 reply, 10 event, 11 reserved."""

    HELLO = 0x01
    SYNC = 0x02
    HEARTBEAT = 0x03
    RESET = 0x04
    STATUS = 0x10
    SHUFFLE = 0x11
    DELIVER = 0x12
    GATE_LOCK = 0x13
    GATE_UNLOCK = 0x14
    DISPLAY = 0x15
    SET_MODE = 0x16
    EVENT_ACK = 0x17
    RESEND_EVENTS = 0x18
    ACK = 0x40
    NAK = 0x41
    IDENTITY = 0x42
    HEARTBEAT_REPLY = 0x43
    STATUS_REPLY = 0x44
    CARD_READ = 0x80
    COVER_CARD = 0x81
    BUTTON = 0x82
    SHUFFLE_PROGRESS = 0x83
    SHUFFLE_DONE = 0x84
    SHOE_LOADED = 0x85
    SHOE_EMPTY = 0x86
    DOOR = 0x87
    JAM = 0x88
    FAULT = 0x89


class MessageKind(Enum):
    COMMAND = "command"
    REPLY = "reply"
    EVENT = "event"


_KIND_BY_TOP_BITS = (MessageKind.COMMAND, MessageKind.REPLY, MessageKind.EVENT, None)


def kind_of(msg_type: int) -> MessageKind | None:
    """The kind a type byte belongs to by its top two bits (``None`` for the reserved range)."""
    return _KIND_BY_TOP_BITS[(msg_type >> 6) & 3]


class Suit(IntEnum):
    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3


class Capability(IntFlag):
    """IDENTITY capability bits (u16). Unassigned bits are reserved: send 0, ignore."""

    CARD_RECOGNITION = 1 << 0     # reads rank and suit of every card dealt
    FACE_UP_DETECTION = 1 << 1    # reports a card that leaves the shoe face up
    COVER_CARD_SENSOR = 1 << 2    # detects the cover (cut) card
    CARD_COUNT = 1 << 3           # counts the cards after each shuffle (SHUFFLE_DONE counts)
    AUTO_RESHUFFLE = 1 << 4       # automatic reshuffle and count, no cut (58 Pa. Code 681a.5(h))
    BATCH_SHUFFLER = 1 << 5
    CONTINUOUS_SHUFFLER = 1 << 6


# Each IDENTITY capability bit, and the entry of a device profile's ``[capabilities]`` table that
# declares it (docs/device-profiles.md): the key, and the value that means the bit is set. The
# one place both sides read: the emulator answers with these bits, the host holds a device to them.
PROFILE_CAPABILITIES: tuple[tuple[Capability, str, object], ...] = (
    (Capability.CARD_RECOGNITION, "card_recognition", True),
    (Capability.FACE_UP_DETECTION, "face_up_detection", True),
    (Capability.COVER_CARD_SENSOR, "cover_card_sensor", True),
    (Capability.CARD_COUNT, "card_count_after_shuffle", True),
    (Capability.AUTO_RESHUFFLE, "automatic_reshuffle", True),
    (Capability.BATCH_SHUFFLER, "shuffler", "batch"),
    (Capability.CONTINUOUS_SHUFFLER, "shuffler", "continuous"),
)


def capability_bits(capabilities: Any) -> Capability:
    """The IDENTITY capability bits a device with a profile's ``capabilities`` (its
    ``[capabilities]`` table) answers HELLO with (``PROFILE_CAPABILITIES``)."""
    bits = Capability(0)
    for flag, key, value in PROFILE_CAPABILITIES:
        if getattr(capabilities, key) == value:
            bits |= flag
    return bits


def capability_words(bits: Capability) -> list[str]:
    """``bits`` as a profile's ``[capabilities]`` declares them (``card_recognition``,
    ``shuffler = "batch"``), in the table's order."""
    return [key if value is True else f'{key} = "{value}"' for flag, key, value in PROFILE_CAPABILITIES if flag in bits]


class ButtonId(IntEnum):
    REVEAL = 0       # dealer reveals the squeezed cards (Midibaccarat)
    CONFIRM = 1
    CANCEL = 2
    CALL_FLOOR = 3   # dealer calls the floorperson


class DeliverTarget(IntEnum):
    SHOE = 0     # hand the shuffled stack to the attached shoe
    DEALER = 1   # present the stack to the dealer (manual cut)


class ResetKind(IntEnum):
    MECHANISM = 0  # clear faults and re-home the mechanism; the protocol session is kept
    REBOOT = 1     # restart the device after the reply; the host must SYNC again


class DeviceMode(IntEnum):
    NORMAL = 0
    MAINTENANCE = 1
    DIAGNOSTIC = 2


class DeviceState(IntEnum):
    BOOTING = 0
    IDLE = 1         # no stack in process
    SHUFFLING = 2
    SHUFFLED = 3     # a shuffled stack is ready to deliver
    DELIVERING = 4
    LOADED = 5       # the shoe holds cards; dealing
    FAULT = 6
    MAINTENANCE = 7


class JamLocation(IntEnum):
    UNKNOWN = 0
    INPUT = 1
    MIXER = 2
    ELEVATOR = 3
    OUTPUT = 4
    SHOE_EXIT = 5
