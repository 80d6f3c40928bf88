"""Whether the device answering on a link is one the link may talk to: the rules the handshake
and the reader apply to an IDENTITY, in one place, and the one rule a profile must meet first.

- ``identity_problem(identity, bound_serial=..., expected_kind=..., expected_capabilities=...,
  expected_decks=...)``: None when the device may be
  talked to; otherwise why not, in one line. Refused: a protocol version this host does not speak;
  an empty (or blank) serial; a serial other than the one the link is bound to; a device of another kind than the link's
  profile (``expected_kind``: ``shoe``, ``shuffler``, ``shuffler-shoe``), told by whether it
  shuffles (its IDENTITY's shuffler bits: a shoe has none, a shuffler or a shoe that shuffles has
  one). Before, a shoe and a shuffler plugged into each other's ports were both accepted: a fresh
  table's every SHUFFLE was refused NOT_SUPPORTED until the table closed, and a resumed one took
  the shuffler for a replaced shoe and gave up the shoe in play (an integrator review). Then a
  device without every capability the profile declares (``expected_capabilities``: its IDENTITY
  bits, ``capability_bits``; a device may have more), or holding fewer decks than the profile's
  ``deck_capacity`` (``expected_decks``): the table relies on what the profile says (a shoe's card
  reading, its cover card sensor; a batch shuffler's one stored batch, 681a.5(g)(2); the decks
  ``shoectl run`` checked against the Rules Submission), and IDENTITY's were logged, not checked
  (a firmware review).
- ``profile_problem(profile)``: None, or why a link cannot be made for ``profile`` at all (its
  ``protocol_version`` is not the one this host speaks; ``profiles check`` says it too).
"""
from __future__ import annotations

from typing import Any

from firmware_bridge.protocol import PROTOCOL_VERSION, Capability, Identity, capability_bits
from firmware_bridge.protocol.wire_values import capability_words

__all__ = ["expected_of", "identity_problem", "profile_problem"]

SHUFFLES = Capability.BATCH_SHUFFLER | Capability.CONTINUOUS_SHUFFLER


def identity_problem(identity: Identity, *, bound_serial: str | None, expected_kind: str | None,
                     expected_capabilities: Capability = Capability(0), expected_decks: int = 0) -> str | None:
    """See the module docstring."""
    if identity.protocol_version != PROTOCOL_VERSION:
        return f"device speaks protocol version {identity.protocol_version}, this host speaks {PROTOCOL_VERSION}"
    if not identity.serial.strip():
        # Every event is stored under its device's serial: a unit without one stopped the table at
        # its first event, with a traceback (a firmware review).
        return (f"the device answering (model {identity.model!r}) gives no serial number in its IDENTITY: events "
                "are journaled under their device's serial; give the unit one (docs/protocol.md 9.15)")
    if bound_serial is not None and identity.serial != bound_serial:
        return f"device serial {identity.serial!r} is not this link's device {bound_serial!r}: refused"
    device = f"the device answering (model {identity.model!r}, serial {identity.serial!r})"
    if expected_kind is not None:
        shuffles = bool(identity.capabilities & SHUFFLES)
        if shuffles != (expected_kind != "shoe"):
            does = "shuffles" if shuffles else "does not shuffle"
            return f"{device} {does}: this link's profile is a {expected_kind}; check which device is on this port"
    missing = expected_capabilities & ~Capability(identity.capabilities)
    if missing:
        lacks = ", ".join(capability_words(missing))
        return (f"{device} lacks what this link's profile declares ({lacks}): check which device is on this "
                "port, or the profile's [capabilities]")
    if identity.deck_capacity < expected_decks:
        return (f"{device} holds {identity.deck_capacity} decks; this link's profile declares {expected_decks} "
                "(deck_capacity): check which device is on this port, or the profile")
    return None


def expected_of(profile: Any) -> dict[str, Any]:
    """What a link for ``profile`` holds its device to: ``identity_problem``'s ``expected_kind``,
    ``expected_capabilities`` and ``expected_decks``, from the profile's kind and ``[capabilities]``."""
    return {"expected_kind": profile.kind, "expected_capabilities": capability_bits(profile.capabilities),
            "expected_decks": profile.capabilities.deck_capacity}


def profile_problem(profile: Any) -> str | None:
    """See the module docstring."""
    if profile.protocol_version != PROTOCOL_VERSION:
        return (f"profile {profile.name}: protocol_version {profile.protocol_version}: this shoectl speaks "
                f"version {PROTOCOL_VERSION} only")
    return None
