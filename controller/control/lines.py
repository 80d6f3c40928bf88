"""The devices' lines, as the control socket's ``status`` reply gives them (``"links"``) and
``shoectl ctl status`` prints them: for a technician who asks whether a shoe or a shuffler is
on a noisy cable or a loose connector, before it costs the table its pace.

``line_report(links)`` reads each ``DeviceLink``'s public state (any thread may: its counters are
copied under the link's lock): role -> ``{"state", "device", "commands", "sent_again",
"no_reply", "frames_damaged", "reconnects", "reply_wait_ms"}``, counted since the table started:
``sent_again`` counts every retransmission, ``no_reply`` those made because an attempt's wait
ended without a reply (the others followed a damaged frame at once); ``reconnects`` the times
the link came back after it was lost (not its tries to: a device away for a minute is tried
every few seconds). ``line_text(report)`` is
the same for a person, one line per device.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["line_report", "line_text"]


def line_report(links: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Each device's line (see the module docstring), by device role."""
    report: dict[str, dict[str, Any]] = {}
    for role, link in sorted(links.items()):
        stats = link.stats
        identity = link.identity
        report[role] = {
            "state": link.state.value,
            "device": identity.serial if identity is not None else None,
            "commands": stats["commands"],
            "sent_again": stats["retransmissions"],
            # not ``timeouts``: that counts the last wait of a command given up too, which is not sent again
            "no_reply": stats["retransmissions"] - stats["early_retransmissions"],
            "frames_damaged": stats["frames_dropped"],
            # the times the link came back (as the journal's input.status records), not its tries
            "reconnects": max(stats["connections"] - 1, 0),
            "reply_wait_ms": round(link.retransmit_timeout * 1000, 1),
        }
    return report


def line_text(report: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """One line per device: its state, then what its line cost since the table started."""
    width = max((len(role) for role in report), default=0)
    lines = []
    for role, line in report.items():
        commands, again = line["commands"], line["sent_again"]
        # per 100 commands, not a share: a command may be sent again more than once (a review read "118.2 %")
        share = [f"{100 * again / commands:.1f} per 100 commands"] if commands else []
        why = [f"{line['no_reply']:,} of them after no reply"] if again else []
        detail = f" ({', '.join(share + why)})" if share or why else ""
        device = f" {line['device']}" if line["device"] else ""
        lines.append(f"{role.ljust(width)}  {line['state']}{device}: {commands:,} commands, {again:,} sent again"
                     f"{detail}, {line['frames_damaged']:,} damaged frames, {line['reconnects']:,} reconnects; "
                     f"replies awaited {line['reply_wait_ms']:g} ms")
    return lines
