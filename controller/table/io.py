"""What goes into the table core and what comes out of it. Immutable data only.

Inputs are device events (from a link, after they are journaled) and operator commands (from the
console or the automated dealer). Outputs are device commands to send, records to journal, and
notices for the display. The core never performs I/O itself; the runner does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.roles import Role


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data for the journal: ints, strings, booleans and None as they are,
    mappings and sequences recursively, an IntEnum as its int, anything else as its text."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "value") and isinstance(value.value, int):  # IntEnum
        return int(value.value)
    return str(value)


DEVICE_ROLES = ("shuffler", "shoe")  # the roles a device plays at a table (a shuffler-shoe plays the shoe's)


@dataclass(frozen=True)
class DeviceInput:
    """A device event. ``device_role`` is the role the device plays at this table (shuffler, shoe)."""

    device_role: str
    event: Any  # a firmware_bridge.protocol DeviceEvent


@dataclass(frozen=True)
class DeviceStatus:
    """The runner's report on a link: ``up`` after a (re)connect handshake, down when lost.
    ``serial`` and ``epoch`` (with ``up``): the identity of the device now in that role, from its
    IDENTITY; a different one than before means the device lost what it held. ``device_role``: the
    role the device plays at this table (shuffler, shoe). ``stalled`` (with ``up``): the link is up
    but holds the device's events behind some that never came however often it asked (``reason``
    says which): a device fault, until a floorperson gives them up (``GiveUpMissingEvents``).
    ``stall_ended`` (with ``up``): after such a report, the link delivers the device's events again
    (the missing ones came after all, or a new event epoch replaced them): the fault ends."""

    device_role: str
    up: bool
    reason: str = ""
    serial: str = ""
    epoch: int | None = None
    stalled: bool = False
    stall_ended: bool = False


@dataclass(frozen=True)
class GiveUpMissingEvents:
    """Not a device command: the table's decision that the events the device in ``device_role``
    never sent again are lost (docs/protocol.md E7), so that the events behind them come through.
    The runner's sender for that device carries it out (the link's ``accept_stalled_gap``: the
    gap stalled then, none that opened since), in order with the device's commands."""

    device_role: str


@dataclass(frozen=True)
class CommandFailed:
    """The runner's report that a device command did not go through: ``refused`` when the device
    answered with a NAK (it did not carry it out), otherwise its outcome is unknown (no reply:
    the link went down or timed out). ``command`` is the command's wire name (``SHUFFLE``);
    ``device_role`` the role of the device it was for (shuffler, shoe); ``code`` the NAK's code
    name (``WRONG_STATE``) when refused. ``resent``: the command was one a restart sent again
    (``SendCommand.resent``), so the device may have carried out the first one before the process
    stopped. ``prompt``: for a DISPLAY, the text it was to show (a refused one that is still the
    dealer's step holds the table: ``command_failures.command_failed``). ``answered``: the outcome
    is unknown though the link stayed up (the device answered with a reply that is not the
    command's, or could not be read): no reconnect's resume sends it again."""

    device_role: str
    command: str
    reason: str
    refused: bool
    code: str | None = None
    resent: bool = False
    prompt: str | None = None
    answered: bool = False


@dataclass(frozen=True)
class OperatorInput:
    command: str
    args: dict[str, Any] = field(default_factory=dict)
    operator: str = "auto"
    role: Role = Role.DEALER


@dataclass(frozen=True)
class SendCommand:
    """A command for the device in ``device_role`` (shuffler, shoe). ``resent``: a restart sends
    it again (``TableCore.resume_outputs``), not knowing whether the device had it before the
    process stopped; a failure of it says so (``CommandFailed.resent``). ``shoe`` / ``round``: the
    shoe and round in play when it was sent, for the log line of its failure (not compared)."""

    device_role: str
    message: Any  # a firmware_bridge.protocol Command
    resent: bool = False
    shoe: str | None = field(default=None, compare=False)
    round: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class TableRecord:
    """A journal entry the core asks for (kind, payload, and the shoe/round it belongs to).
    ``shown``: the payload as the control socket's event streams may show it, when that is less
    than the journal holds (a card dealt face down, before its hand is turned over: 629a.8(c));
    never journaled."""

    kind: str
    payload: dict[str, Any]
    shoe: str | None = None
    round: int | None = None
    shown: dict[str, Any] | None = field(default=None, compare=False)


FAULT_LEVEL = "fault"  # a notice's level for a fault (not the record kind of the same name)


@dataclass(frozen=True)
class Notice:
    """Something the dealer, the floorperson or the display should see; ``surveillance``: for
    surveillance's eyes only (the table's own output and log, and the control socket's streams
    of surveillance: ``controller.table.subscribers``), never a dealer's console."""

    level: str  # info | warning | fault
    text: str
    surveillance: bool = False


Output = SendCommand | GiveUpMissingEvents | TableRecord | Notice
