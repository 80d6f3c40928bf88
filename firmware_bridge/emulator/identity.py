"""What an emulated device says it is: the IDENTITY it answers HELLO with, from its profile.

Contract:
- ``capabilities_of(profile)`` -> the IDENTITY capability bits of the profile's ``capabilities``
  table (card recognition, face-up detection, cover-card sensor, card count after a shuffle,
  automatic reshuffle, batch or continuous shuffler).
- ``identity_for(profile, serial=, firmware=, event_epoch=)`` -> the ``Identity`` message; texts
  longer than the wire allows (``MAX_ID_TEXT`` UTF-8 bytes) are cut, never refused.
- Pure, except that a missing ``event_epoch`` is drawn from the OS (see ``identity_for``).
"""
from __future__ import annotations

import hashlib
import os
from typing import Any

from firmware_bridge.protocol import Capability, Identity, capability_bits
from firmware_bridge.protocol.message_base import clip_text
from firmware_bridge.protocol.wire_values import MAX_ID_TEXT

__all__ = ["EMULATOR_FIRMWARE", "capabilities_of", "identity_for"]

EMULATOR_FIRMWARE = "shoectl-emu 1"


def capabilities_of(profile: Any) -> Capability:
    """The IDENTITY capability bits of a profile's ``capabilities`` table."""
    return capability_bits(profile.capabilities)


def _fitted_serial(text: str) -> str:
    """A default serial longer than IDENTITY carries (32 bytes; a profile's name may be 64
    characters, its USB serial 126), cut and told apart by a digest of the whole: two profiles
    whose names begin alike answered with one serial, one unit to the table (a review)."""
    if len(text.encode("utf-8")) <= MAX_ID_TEXT:
        return text
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    return f"{clip_text(text, MAX_ID_TEXT - len(digest) - 1)}~{digest}"


def identity_for(profile: Any, *, serial: str | None = None, firmware: str = EMULATOR_FIRMWARE,
                 event_epoch: int | None = None) -> Identity:
    """The IDENTITY a device of ``profile`` answers HELLO with.

    ``serial`` defaults to the profile's USB serial number, else ``EMU-<profile name>`` (one longer
    than 32 bytes cut, with ``~`` and 8 hex digits of its digest: ``_fitted_serial``).
    ``event_epoch`` defaults to 32 random bits from the OS: every new emulated device starts its
    event counter at 1, so it must never reuse an epoch (E2), not even in a seeded run.
    """
    if serial is None:
        serial = _fitted_serial(getattr(profile.transport, "serial_number", None) or f"EMU-{profile.name}")
    if event_epoch is None:
        event_epoch = int.from_bytes(os.urandom(4), "little")
    return Identity(
        protocol_version=profile.protocol_version,
        capabilities=capabilities_of(profile),
        deck_capacity=profile.capabilities.deck_capacity,
        event_epoch=event_epoch,
        model=clip_text(profile.model, MAX_ID_TEXT),
        serial=clip_text(serial, MAX_ID_TEXT),
        firmware=clip_text(firmware, MAX_ID_TEXT),
    )
