"""The device senders of a running table: one thread per device role sends the core's device
commands through its link, in order (``link.request`` may block for a reply, a retry or a
reconnect; the owner never waits for a device). A command that fails while the table runs becomes
a ``CommandFailed`` input, which the core decides on after it is journaled."""
from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

from controller.journal import kinds
from controller.table.io import CommandFailed, GiveUpMissingEvents, SendCommand
from firmware_bridge.errors import BridgeError, UnreadableReply
from firmware_bridge.errors import CommandFailed as DeviceRefused
from firmware_bridge.protocol import messages as m

__all__ = ["DeviceSenders"]

# An idle sender waits for a command this long at most before it looks at ``stopping`` again;
# ``join`` wakes it at once (``_WAKE``), so this bounds only a stop that is never joined.
IDLE_WAKE = 1.0
_WAKE = object()


class DeviceSenders:
    """``start(role, link)`` a sender per device; ``send(SendCommand)`` from the owner thread;
    ``join`` after ``stopping`` is set. ``failed(CommandFailed)`` is called on a sender thread,
    with the command's ``resent``."""

    def __init__(self, stopping: threading.Event, failed: Callable[[CommandFailed], None], log: Any,
                 note: Callable[[str, dict[str, Any]], None] | None = None) -> None:
        self._stopping = stopping
        self._failed = failed
        self._note = note  # journals a record on the owner thread (``TableRunner.note``)
        self._log = log
        self._outboxes: dict[str, queue.SimpleQueue[Any]] = {}
        self._threads: list[threading.Thread] = []

    def start(self, role: str, link: Any) -> None:
        box: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._outboxes[role] = box
        thread = threading.Thread(target=self._send_loop, args=(role, link, box), name=f"shoectl-send-{role}",
                                  daemon=True)
        thread.start()
        self._threads.append(thread)

    def send(self, command: SendCommand | GiveUpMissingEvents) -> bool:
        """Queue ``command`` for the device in its role; False (and a warning for a command) if
        there is none (without a link there is nothing to give up)."""
        box = self._outboxes.get(command.device_role)
        if box is None:
            if isinstance(command, SendCommand):
                self._log.warning("no device for command", role=command.device_role,
                                  command=m.wire_name(command.message))
            return False
        box.put(command)
        return True

    def join(self, timeout: float) -> None:
        """Wake every sender (``stopping`` is set) and wait for each up to ``timeout``."""
        for box in self._outboxes.values():
            box.put(_WAKE)
        for thread in self._threads:
            thread.join(timeout=timeout)

    def _send_loop(self, role: str, link: Any, box: queue.SimpleQueue[Any]) -> None:
        while not self._stopping.is_set():
            try:
                command = box.get(timeout=IDLE_WAKE)
            except queue.Empty:
                continue
            if command is _WAKE:
                continue
            if isinstance(command, GiveUpMissingEvents):  # the table's decision, not a device command
                try:
                    given = link.accept_stalled_gap()
                except Exception as exc:  # noqa: BLE001 - a defect: said; the sender lives on for the commands
                    self._log.error("giving up the missing events failed by a defect of this program", role=role,
                                    error=f"{type(exc).__name__}: {exc}")
                    continue
                if given is not None and self._note is not None:  # the irregularity recorded (E7)
                    serial, epoch, first, last = given
                    self._note(kinds.EVENTS_GIVEN_UP, {"device_role": role, "device_serial": serial, "epoch": epoch,
                                                       "first": first, "last": last})
                continue
            msg = command.message
            while not self._stopping.is_set():
                if link.wait_connected(timeout=0.5):
                    try:
                        link.request(msg)
                    except BridgeError as exc:
                        name = m.wire_name(msg)  # only for a failure: a sent command needs none
                        stopping = self._stopping.is_set()  # the link was closed under it: expected, info
                        if not stopping:  # the core decides what a failed command means (journaled first)
                            code = exc.code_name if isinstance(exc, DeviceRefused) else None
                            self._failed(_failure(role, command, str(exc), code, answered=_answered(exc)))
                        (self._log.info if stopping else self._log.warning)(  # device: as the link's lines say it (a review of logs)
                            "command failed", role=role, device=link.name, command=name, error=str(exc),
                            **_in_play(command))
                    except Exception as exc:  # noqa: BLE001 - a defect: the sender lives on, the core hears of it
                        # Uncaught, it ended this thread: the role's later commands were queued for
                        # nobody, and the table waited for a device never told (a review of the threads).
                        name = m.wire_name(msg)
                        self._log.error("command failed by a defect of this program", role=role, device=link.name,
                                        command=name, error=f"{type(exc).__name__}: {exc}", **_in_play(command))
                        self._failed(_failure(role, command, f"{name}: a defect of this program while sending it "
                                              "(the table's log says which); its outcome is unknown", None))
                    break


def _in_play(command: SendCommand) -> dict[str, Any]:
    """The shoe and round a failed command was sent in, for its log line (a review of logs: a
    person reading it could not tell which round it held); none is left out, not said None."""
    return {key: value for key, value in (("shoe", command.shoe), ("round", command.round)) if value is not None}


def _answered(exc: BridgeError) -> bool:
    """Whether a failure left the link up with the command's outcome unknown: a reply that is not
    the command's, or cannot be read (docs/link.md's outcomes: ``LinkError``, "connected"). Not a
    refusal, a command not sent, nor one whose link was lost (the reconnect's resume sends again)."""
    return isinstance(exc, UnreadableReply)


def _failure(role: str, command: Any, reason: str, code: str | None, *, answered: bool = False) -> CommandFailed:
    """The failure of ``command``'s message sent to ``role``: ``code`` the device's refusal, if one."""
    msg = command.message
    return CommandFailed(role, m.wire_name(msg), reason, code is not None, code, command.resent,
                         msg.text if isinstance(msg, m.Display) else None, answered)
