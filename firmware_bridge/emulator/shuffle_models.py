"""How the emulated shuffler mixes a stack: good and deliberately weak shuffle models.

A model is a small frozen object with ``shuffle(stack, rng) -> list`` (a new list; ``stack`` is not
modified) and ``spec`` (its ``--faults`` text). ``parse_model(text)`` builds one from that text and
raises ``FaultSpecError`` (one line, naming the text) for anything else.

| spec | model |
|---|---|
| ``uniform`` (default; ``csprng`` is an alias) | a uniform random permutation (``rng.shuffle``: Fisher-Yates). With the device's ``random.SystemRandom`` it is the OS CSPRNG. |
| ``riffle:K`` (``riffle`` = ``riffle:1``), 1 <= K <= 64 | K riffle shuffles under the Gilbert-Shannon-Reeds model: cut at Binomial(n, 1/2), then drop cards from the two packets with probability proportional to their sizes. Bayer and Diaconis (1992): about (3/2) log2 n riffles mix n cards, so a few riffles of a 416-card stack are weak. |
| ``strip:K`` (``strip`` = ``strip:1``), 1 <= K <= 64 | K strip passes and nothing else: packets of 1-52 cards (uniform) are taken off the top and piled, so the packet order is reversed and each packet keeps its order. |
| ``stuck:P`` (P >= 1) | a uniform shuffle whose slot P (1-based stack position) is stuck: the card that went in at position P comes out at position P. A P beyond the stack leaves the shuffle uniform. |

All randomness comes from ``rng`` (a ``random.Random``): with a seeded generator every model is
reproducible. ``uniform`` consumes the generator exactly as ``rng.shuffle`` does, so seeded runs
with the default model are unchanged from before the models existed.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from firmware_bridge.errors import FaultSpecError

__all__ = ["MAX_PASSES", "Riffle", "ShuffleModel", "Strip", "Stuck", "UNIFORM", "Uniform", "parse_model"]

T = TypeVar("T")
MAX_PASSES = 64
STRIP_MAX_PACKET = 52


class ShuffleModel(Protocol):
    """What the shuffler needs from a model."""

    @property
    def spec(self) -> str: ...

    def shuffle(self, stack: Sequence[T], rng: random.Random) -> list[T]: ...


@dataclass(frozen=True)
class Uniform:
    """A uniform random permutation (Fisher-Yates through ``rng.shuffle``)."""

    @property
    def spec(self) -> str:
        return "uniform"

    def shuffle(self, stack: Sequence[T], rng: random.Random) -> list[T]:
        out = list(stack)
        rng.shuffle(out)
        return out


@dataclass(frozen=True)
class Riffle:
    """``passes`` Gilbert-Shannon-Reeds riffle shuffles."""

    passes: int = 1

    @property
    def spec(self) -> str:
        return f"riffle:{self.passes}"

    def shuffle(self, stack: Sequence[T], rng: random.Random) -> list[T]:
        out = list(stack)
        for _ in range(self.passes):
            out = gsr_riffle(out, rng)
        return out


def gsr_riffle(stack: Sequence[T], rng: random.Random) -> list[T]:
    """One GSR riffle: the top packet has Binomial(n, 1/2) cards; while both packets hold cards,
    the next card falls from a packet with probability proportional to the cards left in it."""
    n = len(stack)
    if n < 2:
        return list(stack)
    cut = bin(rng.getrandbits(n)).count("1")
    left, right = stack[:cut], stack[cut:]
    i = j = 0
    a, b = len(left), len(right)
    out: list[T] = []
    append = out.append
    rand = rng.random
    while i < a and j < b:
        if rand() * ((a - i) + (b - j)) < a - i:
            append(left[i])
            i += 1
        else:
            append(right[j])
            j += 1
    out.extend(left[i:])
    out.extend(right[j:])
    return out


@dataclass(frozen=True)
class Strip:
    """``passes`` strip passes: packets off the top are piled (packet order reversed)."""

    passes: int = 1

    @property
    def spec(self) -> str:
        return f"strip:{self.passes}"

    def shuffle(self, stack: Sequence[T], rng: random.Random) -> list[T]:
        out = list(stack)
        for _ in range(self.passes):
            packets: list[list[T]] = []
            i = 0
            while i < len(out):
                size = rng.randint(1, STRIP_MAX_PACKET)
                packets.append(out[i:i + size])
                i += size
            out = [card for packet in reversed(packets) for card in packet]
        return out


@dataclass(frozen=True)
class Stuck:
    """A uniform shuffle with slot ``slot`` (1-based) stuck: that card stays where it went in."""

    slot: int

    @property
    def spec(self) -> str:
        return f"stuck:{self.slot}"

    def shuffle(self, stack: Sequence[T], rng: random.Random) -> list[T]:
        out = list(stack)
        if not 1 <= self.slot <= len(out):
            rng.shuffle(out)
            return out
        kept = out.pop(self.slot - 1)
        rng.shuffle(out)
        out.insert(self.slot - 1, kept)
        return out


UNIFORM = Uniform()


def parse_model(text: str) -> ShuffleModel:
    """``"uniform"``, ``"riffle:2"``, ``"strip"``, ``"stuck:17"``, ... -> a model.

    Raises ``FaultSpecError`` with a one-line message for an unknown name or a bad parameter.
    """
    raw = str(text).strip().lower()
    name, sep, arg = raw.partition(":")
    name = name.strip()
    arg = arg.strip()
    if name in ("uniform", "csprng") and not sep:
        return UNIFORM
    if name in ("riffle", "strip"):
        passes = _int_arg(text, arg, default=1 if not sep else None, low=1, high=MAX_PASSES)
        return Riffle(passes) if name == "riffle" else Strip(passes)
    if name == "stuck" and sep:
        return Stuck(_int_arg(text, arg, default=None, low=1, high=None))
    raise FaultSpecError(
        f"shuffle model {text!r}: expected uniform, riffle[:K], strip[:K] (1 <= K <= {MAX_PASSES}) or stuck:P (P >= 1)")


def _int_arg(text: str, arg: str, *, default: int | None, low: int, high: int | None) -> int:
    if not arg and default is not None:
        return default
    value = int(arg) if arg.isascii() and arg.isdigit() else None
    if value is None or value < low or (high is not None and value > high):
        bound = f"{low} to {high}" if high is not None else f"at least {low}"
        raise FaultSpecError(f"shuffle model {text!r}: the number after ':' must be a whole number {bound}")
    return value
