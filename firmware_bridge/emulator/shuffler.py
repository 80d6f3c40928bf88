"""``EmulatedShuffler``: a batch shuffler that shuffles, counts, and delivers the stack (sans-I/O).

Commands (on top of ``EmulatedDevice``):

- SHUFFLE(decks): NAK INVALID_ARGUMENT above ``deck_capacity``; BUSY while shuffling or
  delivering; WRONG_STATE outside NORMAL mode; JAM / FAULT / DOOR_OPEN as the state says.
  Otherwise ACK; then SHUFFLE_PROGRESS 25, 50, 75 as the shuffle time passes, then
  SHUFFLE_DONE(card_count, expected_count = decks x 52). The stack is ``decks`` fresh decks
  shuffled with ``random.SystemRandom`` (the OS CSPRNG), or ``random.Random(seed)`` when seeded,
  by the shuffle model of fault ``shuffle=`` (``shuffle_models``: uniform by default; riffle:K,
  strip[:K] and stuck:P are the weak shufflers the shuffle audit must catch).
  Faults ``missing-card=N`` / ``extra-card=N`` take N random cards out / put N random extra cards
  in, so the count is wrong. A device without the CARD_COUNT capability reports ``card_count`` 0.
- DELIVER(SHOE): hands the shuffled stack to ``attached_shoe`` (an in-process handoff; the shoe
  then emits SHOE_LOADED). NAK NOT_SUPPORTED when no shoe is attached, WRONG_STATE when nothing
  is shuffled or the shoe still holds cards.
- DELIVER(DEALER): presents the stack for a manual cut: ``deliver_to_dealer(stack)`` if set (the
  table's dealer), else the stack is left in ``output_tray``.

Timing: a shuffle takes ``shuffle_s / speed`` seconds, where ``shuffle_s`` defaults to half the
profile's ``timing.shuffle_ms`` (that value is the longest the host waits, so a healthy shuffler
finishes well within it); a delivery takes ``deliver_s / speed``. ``speed = math.inf`` finishes both
at the next tick.

RESET(MECHANISM) or a power loss abort a running shuffle (the cards stay unshuffled: state IDLE)
or delivery (the stack stays in the shuffler: state SHUFFLED).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from firmware_bridge.protocol import (
    JamLocation,
    Ack,
    Capability,
    Deliver,
    DeliverTarget,
    DeviceState,
    NakCode,
    Shuffle,
    ShuffleDone,
    ShuffleProgress,
)

from .cards import DeviceCard, Item, standard_stack
from .device import EmulatedDevice, EmulatorStateError
from .refusals import Handled
from .shuffle_models import parse_model

__all__ = ["FAULT_DELIVERY_REFUSED", "EmulatedShuffler"]

FAULT_DELIVERY_REFUSED = 0x0201  # FAULT code: the attached shoe would not take the stack
PROGRESS_STEPS = (25, 50, 75)


@dataclass
class _Job:
    kind: str           # "shuffle" or "deliver"
    started: float
    duration: float
    decks: int = 0
    target: DeliverTarget = DeliverTarget.SHOE
    steps_sent: int = 0

    def fraction(self, now: float) -> float:
        if self.duration <= 0:
            return 1.0
        return min(1.0, max(0.0, (now - self.started) / self.duration))

    def next_due(self) -> float:
        """When the job next has something to report: a shuffle's next progress step, or its end."""
        steps_left = self.kind == "shuffle" and self.steps_sent < len(PROGRESS_STEPS)
        percent = PROGRESS_STEPS[self.steps_sent] if steps_left else 100
        return self.started + self.duration * percent / 100


class EmulatedShuffler(EmulatedDevice):
    """A batch shuffler. Extra args: ``shuffle_s`` (seconds at speed 1, default half the
    profile's shuffle time) and ``deliver_s`` (seconds at speed 1, default 1.0).

    Attributes for the table and tests: ``attached_shoe``, ``deliver_to_dealer``, ``shuffled`` (the
    shuffled stack while SHUFFLED), ``output_tray`` (stacks delivered to nobody), ``shuffles``.
    """

    def __init__(self, profile: Any, *, shuffle_s: float | None = None, deliver_s: float = 1.0,
                 **kwargs: Any) -> None:
        super().__init__(profile, **kwargs)
        self.shuffle_s = profile.timing.shuffle_s / 2 if shuffle_s is None else float(shuffle_s)
        self.deliver_s = float(deliver_s)
        self.attached_shoe: Any = None  # an EmulatedShoe; typed loosely to avoid a cycle
        self.deliver_to_dealer: Callable[[list[Item]], None] | None = None
        self.shuffled: list[Item] | None = None
        self.output_tray: list[list[Item]] = []
        self.shuffles = 0
        self.shuffles_begun = 0  # SHUFFLE commands taken (``shuffler-jam-at`` counts them)
        self._job: _Job | None = None

    # --- state ---------------------------------------------------------------------------------

    def _activity_state(self) -> DeviceState:
        if self._job is not None:
            return DeviceState.SHUFFLING if self._job.kind == "shuffle" else DeviceState.DELIVERING
        if self.shuffled is not None:
            return DeviceState.SHUFFLED
        return super()._activity_state()

    def _busy(self) -> bool:
        return self._job is not None or super()._busy()

    # --- commands ------------------------------------------------------------------------------

    def _cmd_shuffle(self, command: Shuffle) -> Handled:
        refusal = self._refusal()
        if refusal is not None:
            return refusal, None
        capacity = self.identity.deck_capacity
        if command.decks > capacity:
            return self._nak(NakCode.INVALID_ARGUMENT,
                             f"{command.decks} decks: this shuffler holds {capacity}"), None
        self.shuffled = None
        self._job = _Job("shuffle", self.clock(), self.shuffle_s / self.speed, decks=command.decks)
        self.shuffles_begun += 1
        return Ack(), None

    def _cmd_deliver(self, command: Deliver) -> Handled:
        shoe = self.attached_shoe
        if command.target == DeliverTarget.SHOE and shoe is None:
            return self._nak(NakCode.NOT_SUPPORTED, "no shoe attached"), None
        refusal = self._refusal()
        if refusal is not None:
            return refusal, None
        if self.shuffled is None:
            return self._nak(NakCode.WRONG_STATE, "nothing shuffled to deliver"), None
        if command.target == DeliverTarget.SHOE:
            if shoe.stack:
                return self._nak(NakCode.SHOE_NOT_EMPTY, "the shoe still holds cards"), None
        self._job = _Job("deliver", self.clock(), self.deliver_s / self.speed,
                         target=DeliverTarget(command.target))
        return Ack(), None

    # --- time ----------------------------------------------------------------------------------

    def _tick(self, now: float) -> None:
        job = self._job
        if job is not None:
            if job.kind == "shuffle":
                self._advance_shuffle(job, now)
            elif job.fraction(now) >= 1.0:
                self._finish_delivery(job)
        super()._tick(now)

    def _mechanism_due(self, now: float) -> float | None:
        return self._job.next_due() if self._job is not None else super()._mechanism_due(now)

    def _advance_shuffle(self, job: _Job, now: float) -> None:
        fraction = job.fraction(now)
        if self.shuffles_begun == self.faults.shuffler_jam_at and fraction >= 0.5:
            self._abort_job()  # the shuffle is given up: RESET(MECHANISM), then SHUFFLE again
            self.jam(JamLocation.MIXER)
            return
        while job.steps_sent < len(PROGRESS_STEPS) and fraction * 100 >= PROGRESS_STEPS[job.steps_sent]:
            self.emit(ShuffleProgress(percent=PROGRESS_STEPS[job.steps_sent]))
            job.steps_sent += 1
        if fraction < 1.0:
            return
        self._job = None
        self.shuffled = self.shuffled_stack(job.decks)
        self.shuffles += 1
        counted = len(self.shuffled) if self.identity.capabilities & Capability.CARD_COUNT else 0
        self.emit(ShuffleDone(card_count=min(counted, 0xFFFF), expected_count=job.decks * 52))

    def _finish_delivery(self, job: _Job) -> None:
        self._job = None
        stack, self.shuffled = self.shuffled or [], None
        if job.target == DeliverTarget.SHOE:
            try:
                self.attached_shoe.load(stack)
            except EmulatorStateError as exc:
                self.output_tray.append(stack)
                self.fault(FAULT_DELIVERY_REFUSED, f"shoe refused the stack: {exc}")
        elif self.deliver_to_dealer is not None:
            self.deliver_to_dealer(stack)
        else:
            self.output_tray.append(stack)

    # --- the shuffle itself --------------------------------------------------------------------

    def shuffled_stack(self, decks: int) -> list[Item]:
        """``decks`` decks shuffled by the ``shuffle=`` fault's model (uniform by default) with the
        device's generator, with the missing/extra-card faults applied."""
        rng = self.rng
        stack: list[Item] = parse_model(self.faults.shuffle).shuffle(standard_stack(decks), rng)
        for _ in range(min(self.faults.missing_card, len(stack))):
            del stack[rng.randrange(len(stack))]
        for _ in range(self.faults.extra_card):
            card = DeviceCard(rng.randint(1, 13), rng.randrange(4))
            stack.insert(rng.randint(0, len(stack)), card)
        return stack

    # --- resets --------------------------------------------------------------------------------

    def _abort_job(self) -> None:
        job, self._job = self._job, None
        if job is not None and job.kind == "shuffle":
            self.shuffled = None

    def _reset_mechanism(self) -> None:
        self._abort_job()
        super()._reset_mechanism()

    def _on_power_loss(self) -> None:
        self._abort_job()
        super()._on_power_loss()
