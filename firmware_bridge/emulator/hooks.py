"""``DeviceHooks``: what the rest of a table attaches to one emulated device.

- prompt listeners: ``listener(text)`` for every DISPLAY the device carries out (the dealer);
- tick hooks: ``hook(now)`` on every ``tick``, each with ``due()``, when it next has something to
  do (None: nothing until an input; no ``due``: at every poll) — ``EmulatedDevice.next_due``;
- wake listeners: ``listener()`` for every event the device emits, so that a pump asleep until the
  device's next due wakes to send it (an event may come from another thread: the shuffler loading
  the shoe, a test jamming a device).
"""
from __future__ import annotations

from collections.abc import Callable

__all__ = ["DeviceHooks"]

Due = Callable[[], "float | None"]


class DeviceHooks:
    """See the module docstring."""

    def __init__(self) -> None:
        self._prompt_listeners: list[Callable[[str], None]] = []
        self._tick_hooks: list[tuple[Callable[[float], None], Due | None]] = []
        self._wake_listeners: list[Callable[[], None]] = []

    def add_prompt_listener(self, listener: Callable[[str], None]) -> None:
        self._prompt_listeners.append(listener)

    def add_tick_hook(self, hook: Callable[[float], None], due: Due | None = None) -> None:
        self._tick_hooks.append((hook, due))

    def add_wake_listener(self, listener: Callable[[], None]) -> None:
        self._wake_listeners.append(listener)

    def remove_wake_listener(self, listener: Callable[[], None]) -> None:
        self._wake_listeners.remove(listener)

    def prompt_listeners(self) -> tuple[Callable[[str], None], ...]:
        return tuple(self._prompt_listeners)

    def tick(self, now: float) -> None:
        for hook, _ in tuple(self._tick_hooks):
            hook(now)

    def dues(self, now: float) -> list[float | None]:
        """Each tick hook's ``due()`` (``now`` for a hook without one)."""
        return [now if due is None else due() for _, due in self._tick_hooks]

    def wake(self) -> None:
        for listener in tuple(self._wake_listeners):
            listener()
