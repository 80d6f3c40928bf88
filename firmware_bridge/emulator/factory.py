"""``build_device``: the emulated device model for a profile, chosen by its ``kind``.

``kind`` ``shuffler`` -> ``EmulatedShuffler``, ``shoe`` -> ``EmulatedShoe``, ``shuffler-shoe`` ->
``EmulatedShufflerShoe``. ``profile`` is a ``Profile`` or a profile name (``get_profile``, which
raises ``ProfileError``, a ``ValueError``, for an unknown or invalid one). Keyword arguments go to
the model's constructor (``clock``, ``faults``, ``seed``, ``speed``, ...).
"""
from __future__ import annotations

from typing import Any

from firmware_bridge.profiles import Profile, get_profile

from .device import EmulatedDevice
from .faults import plain_number
from .shoe import EmulatedShoe
from .shuffler import EmulatedShuffler
from .shuffler_shoe import EmulatedShufflerShoe

__all__ = ["MODELS", "build_device", "parse_speed", "resolve"]

MODELS: dict[str, type[EmulatedDevice]] = {
    "shuffler": EmulatedShuffler,
    "shoe": EmulatedShoe,
    "shuffler-shoe": EmulatedShufflerShoe,
}


def resolve(profile: Profile | str) -> Profile:
    """A ``Profile`` as is, or the profile of that name."""
    return get_profile(profile) if isinstance(profile, str) else profile


def build_device(profile: Profile | str, **kwargs: Any) -> EmulatedDevice:
    prof = resolve(profile)
    return MODELS[prof.kind](prof, **kwargs)


def parse_speed(text: str | float) -> float:
    """``"max"`` -> ``math.inf``; ``"10"`` / ``10`` -> 10.0. Raises ``ValueError`` unless > 0."""
    if isinstance(text, str) and text.strip().lower() == "max":
        return float("inf")
    value = plain_number(text)
    if not value > 0:
        raise ValueError(f"speed must be a positive number or 'max', got {text!r}")
    return value
