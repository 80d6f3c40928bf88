"""Fault injection for byte streams and devices, as data plus a sans-I/O byte transformer.

A ``FaultSpec`` is parsed from ``--faults`` text: comma-separated ``name=value`` items, e.g.
``corrupt=0.01,drop=0.005,dup=0.01,delay=2ms,unplug-every=3s,seed=7``.

Line faults (applied by ``LineFaults.apply`` to each chunk written to the wire):
- ``corrupt=P``   each byte is replaced by a random byte with probability P;
- ``drop=P``      each byte is dropped with probability P;
- ``dup=P``       each chunk (a whole frame, as the emulator writes one frame per chunk) is sent
                  twice with probability P;
- ``delay=T``     each chunk is held back T (``5ms``, ``0.2s``: a duration always has its unit);
                  the server applies it;
- ``both-ways=1`` corrupt, drop and dup act on the host's bytes too (its commands and
                  acknowledgements), as noise on a real line does; 0 (the default): only on
                  the device's.
Device faults (acted on by the emulated devices and servers, not by the byte transformer):
- ``unplug-every=T`` the server unplugs and replugs the device every T (``unplug-for=T``, default
  200ms, how long it stays away);
- ``reset-at=N``   the device loses power after emitting N events (unacknowledged events kept);
- ``jam-at=N``, ``door-open-at=N``: a jam / the door opening after the N-th card delivered;
- ``shuffler-jam-at=N``: the shuffler jams (in its mixer) during its N-th shuffle, which it gives up;
- ``face-up-at=K``: the card at stack position K is face up; ``misread-at=K``: unreadable;
- ``missing-card=N`` / ``extra-card=N``: the shuffler's stack is short / long by N cards;
- ``cover-at=K``: the cover card at stack position K;
- ``refuse-display=WORD``: the first DISPLAY whose prompt starts with WORD (``UNLOAD``) is refused
  (NAK BUSY, "display busy"), as a shoe whose display cannot take a prompt now;
  ``refuse-command=NAME``: the first command NAME (``SHUFFLE``, ``DELIVER``, ``GATE_LOCK``,
  ``GATE_UNLOCK``, ``RESET``, ``DISPLAY``) is refused (NAK BUSY);
- ``shuffle=MODEL``: how the shuffler mixes the stack (``firmware_bridge.emulator.shuffle_models``):
  ``uniform`` (default), ``riffle:K`` (K Gilbert-Shannon-Reeds riffles), ``strip[:K]`` (strip
  passes only), ``stuck:P`` (a uniform shuffle with slot P stuck).
Dealer faults (acted on by the scripted dealer, ``firmware_bridge.emulator.dealer``):
- ``dealer-extra-at=N``: on the N-th DRAW prompt the dealer draws one card too many;
- ``dealer-expose-at=N``: the N-th card the dealer draws (burns included) leaves the shoe face up;
- ``dealer-miss=WORD``: the dealer misses the first prompt starting with WORD (does not act on it).
``seed=S`` makes every random choice reproducible.

``LineFaults`` never raises; ``FaultSpec.parse`` raises ``FaultSpecError`` naming the bad item.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass, field, fields

from firmware_bridge.errors import FaultSpecError
from firmware_bridge.protocol.framing import DELIMITER

from .shuffle_models import parse_model as parse_shuffle_model

_LONGEST_S = 86_400  # a fault's duration: at most a day
# The least a rate or a duration above 0 may be (a choice: no fault anyone means is smaller; 1e-400
# became 0 as a float, a fault asked for and never made: a review of bad inputs).
_LEAST_RATE = 1e-300
_LEAST_S = 1e-6

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$", re.ASCII)
# A person's number here: ASCII digits and a point, as every other option takes them (``float``
# also takes "１", "١٢٣" and "1_0": a configuration review).
_PLAIN_NUMBER = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?", re.ASCII)
_WHOLE = re.compile(r"^-?\d{1,18}$", re.ASCII)
_WORD = re.compile(r"^[A-Z]{1,16}$", re.ASCII)
_MOST = 10**9  # a count or a stack position no table reaches


def _not_zero(text: str) -> bool:
    """Whether a number's text has a digit other than 0 before any exponent (``1e-400``: not 0)."""
    return any(digit in "123456789" for digit in text.lower().split("e")[0])


def plain_number(text: str | float) -> float:
    """``text`` (surrounding blanks allowed) as a float when it is written as ``_PLAIN_NUMBER``
    says; ValueError otherwise. A float is taken as it is."""
    if isinstance(text, str) and not _PLAIN_NUMBER.fullmatch(text.strip()):
        raise ValueError(f"not a number: {text!r}")
    return float(text)


# The commands the fault refuse-command may refuse: those a table sends for its procedure.
REFUSABLE_COMMANDS = ("SHUFFLE", "DELIVER", "GATE_LOCK", "GATE_UNLOCK", "RESET", "DISPLAY")


class _NoUnit(ValueError):
    """A duration written as a bare number; ``args[0]`` is the number as written."""


def parse_duration(text: str) -> float:
    """``"5ms"`` -> 0.005, ``"2s"`` -> 2.0 seconds. A bare number (``"5"``) is refused: read
    as seconds it would make ``delay=5`` a five-second hold, where ``5ms`` was likely meant."""
    m = _DURATION.match(text)
    if not m:
        raise FaultSpecError(f"not a duration: {text!r} (use e.g. 5ms or 2s)")
    if m.group(2) is None:
        raise _NoUnit(m.group(1))
    value = float(m.group(1))
    return value / 1000 if m.group(2) == "ms" else value


@dataclass(frozen=True)
class FaultSpec:
    corrupt: float = 0.0
    drop: float = 0.0
    dup: float = 0.0
    delay: float = 0.0
    unplug_every: float = 0.0
    unplug_for: float = 0.2
    reset_at: int = 0
    jam_at: int = 0
    door_open_at: int = 0
    shuffler_jam_at: int = 0
    face_up_at: int = -1
    misread_at: int = -1
    missing_card: int = 0
    extra_card: int = 0
    cover_at: int = -1
    dealer_extra_at: int = 0
    dealer_expose_at: int = 0
    dealer_miss: str = ""
    shuffle: str = "uniform"
    refuse_display: str = ""
    refuse_command: str = ""
    both_ways: int = 0
    seed: int | None = None

    _RATES = ("corrupt", "drop", "dup")
    _DURATIONS = ("delay", "unplug_every", "unplug_for")
    _COUNTS = ("reset_at", "jam_at", "door_open_at", "shuffler_jam_at", "missing_card", "extra_card",
               "dealer_extra_at", "dealer_expose_at")
    _POSITIONS = ("face_up_at", "misread_at", "cover_at")  # a card's place in the stack, from 1
    _SWITCHES = ("both_ways",)
    _WORDS = ("refuse_display", "dealer_miss")  # a prompt's first word

    @classmethod
    def parse(cls, text: str | None) -> FaultSpec:
        """The spec in ``text`` (``None`` or blank: no faults); ``FaultSpecError`` (one line naming
        the item) for a bad one. A duration carries its unit: ``delay=5`` is refused, ``5ms`` and
        ``5s`` are taken."""
        if text is None or not text.strip():
            return cls()
        known = {f.name for f in fields(cls)}
        names = ", ".join(sorted(n.replace("_", "-") for n in known))
        values: dict[str, object] = {}
        for item in text.split(","):
            item = item.strip()
            if not item:
                raise FaultSpecError(f"faults {text.strip()!r}: an empty item between commas")
            if "=" not in item:
                raise FaultSpecError(f"fault {item!r}: expected name=value (known: {names})")
            name, value = (p.strip() for p in item.split("=", 1))
            key = name.replace("-", "_")
            if key not in known:
                raise FaultSpecError(f"unknown fault {name!r} (known: {names})")
            if key in values:  # the last one would win without a word
                raise FaultSpecError(f"fault {name} is given twice in {text.strip()!r}")
            if key == "shuffle":
                values[key] = parse_shuffle_model(value).spec  # FaultSpecError names the bad text
                continue
            try:
                values[key] = cls._value(key, value)
            except _NoUnit as exc:
                number = exc.args[0]
                raise FaultSpecError(f"fault {name}={value!r}: give a unit ({number}ms or {number}s)") from None
            except (ValueError, FaultSpecError):
                raise FaultSpecError(f"fault {name}={value!r}: expected {cls._expected(key)}") from None
        return cls(**values)  # type: ignore[arg-type]

    @classmethod
    def _value(cls, key: str, value: str) -> object:
        """``value`` for fault ``key``; ValueError (or FaultSpecError) when it is not one."""
        if key in cls._RATES:
            rate = plain_number(value)
            if not 0.0 <= rate <= 1.0:
                raise ValueError
            if 0.0 < rate < _LEAST_RATE or (rate == 0.0 and _not_zero(value)):
                raise ValueError  # 1e-400: a rate too small to be one, taken as 0 (a review of bad inputs)
            return rate
        if key in cls._DURATIONS:
            seconds = parse_duration(value)
            if key != "delay" and not seconds:  # an unplug of no length, or every 0 s: leave it out
                raise ValueError
            if seconds > _LONGEST_S:  # 10^47 s was taken (a review of bad inputs): nothing an emulator waits for
                raise ValueError
            if 0 < seconds < _LEAST_S or (seconds == 0 and _not_zero(value)):  # a delay too short to be one
                raise ValueError
            return seconds
        if key in cls._WORDS:
            if not _WORD.match(value):
                raise ValueError
            return value
        if key == "refuse_command":
            if value not in REFUSABLE_COMMANDS:
                raise ValueError
            return value
        if not _WHOLE.match(value):
            raise ValueError
        whole = int(value)
        least = 0 if key in cls._COUNTS else 1 if key in cls._POSITIONS else None
        if least is not None and not least <= whole <= _MOST:
            raise ValueError
        if key in cls._SWITCHES and whole not in (0, 1):
            raise ValueError
        return whole

    @classmethod
    def _expected(cls, key: str) -> str:
        """What fault ``key`` takes, for the message that refuses another value."""
        if key in cls._RATES:
            return "a probability from 0 to 1 (above 0: at least 1e-300)"
        if key in cls._DURATIONS:
            if key == "delay":  # the one duration that may be none
                return "a duration and at most a day, in ms or s (e.g. 500ms, 2s; 0, or at least 0.001ms)"
            return "a duration above 0 and at most a day, in ms or s (e.g. 500ms, 2s; at least 0.001ms)"
        if key in cls._POSITIONS:
            return f"a stack position from 1 to {_MOST}"
        if key in cls._COUNTS:
            return f"a whole number from 0 to {_MOST}"
        if key in cls._SWITCHES:
            return "0 or 1"
        if key in cls._WORDS:
            return "a prompt's first word in capitals (e.g. UNLOAD)"
        if key == "refuse_command":
            return "one of " + ", ".join(REFUSABLE_COMMANDS)
        return "a whole number"

    @property
    def line_faults(self) -> bool:
        return bool(self.corrupt or self.drop or self.dup or self.delay)

    def host_line(self) -> LineFaults | None:
        """The faults for the host's bytes (``both-ways=1``), on a random stream of their own;
        None when they pass untouched."""
        return LineFaults.from_spec(self, stream=1) if self.both_ways else None

    def __str__(self) -> str:
        default = FaultSpec()
        items = [f"{f.name.replace('_', '-')}={getattr(self, f.name)}" for f in fields(self)
                 if getattr(self, f.name) != getattr(default, f.name)]
        return ",".join(items) or "none"


@dataclass
class LineFaults:
    """Applies the line faults of a ``FaultSpec`` to chunks of bytes (sans-I/O, seeded)."""

    spec: FaultSpec
    rng: random.Random = field(default_factory=random.Random)
    corrupted: int = 0
    dropped: int = 0
    duplicated: int = 0

    @classmethod
    def from_spec(cls, spec: FaultSpec, stream: int = 0) -> LineFaults:
        """``stream`` separates the random sequences of several lines with the same seed."""
        seed = None if spec.seed is None else spec.seed * 1_000_003 + stream
        return cls(spec, random.Random(seed))

    def schedule(self, frames: list[bytes], due: float) -> list[tuple[float, bytes]]:
        """``(due, chunk)`` for every chunk the frames become on the wire (see ``apply``)."""
        return [(due, chunk) for frame in frames for chunk in self.apply(frame)]

    def apply_received(self, data: bytes) -> bytes:
        """The faults applied to bytes as one read from the host returned them, frame by frame
        (split after each delimiter; the last piece may be a partial frame): a duplicated frame
        repeats right after itself. A read may hold several frames, and a line never repeats a
        frame after the ones that followed it (that would replay a command the host is done with)."""
        pieces = data.split(DELIMITER)
        frames = [piece + DELIMITER for piece in pieces[:-1]]
        if pieces[-1]:
            frames.append(pieces[-1])
        return b"".join(chunk for frame in frames for chunk in self.apply(frame))

    def apply(self, chunk: bytes) -> list[bytes]:
        """The chunks to put on the wire in place of ``chunk`` (zero, one or two of them)."""
        s = self.spec
        if not (s.corrupt or s.drop or s.dup):
            return [chunk]
        rnd = self.rng.random
        if s.corrupt or s.drop:
            out = bytearray()
            for b in chunk:
                if s.drop and rnd() < s.drop:
                    self.dropped += 1
                    continue
                if s.corrupt and rnd() < s.corrupt:
                    b = self.rng.randrange(256)
                    self.corrupted += 1
                out.append(b)
            chunk = bytes(out)
        if s.dup and rnd() < s.dup:
            self.duplicated += 1
            return [chunk, chunk]
        return [chunk] if chunk else []
