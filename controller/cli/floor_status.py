"""``shoectl floor status``: one line per table of the floor's store, its open alarms (a run of
alarms at consecutive entries said as one line more than its first), the messages dropped, and
the gaming day it counted (docs/floor.md)."""
from __future__ import annotations

import argparse
from datetime import datetime, timezone
from typing import Any

from controller.cli.cmd_floor import EXIT_OK, open_reader
from controller.cli.common import print_json
from controller.journal.clockwatch import step_size_text


def status(args: argparse.Namespace) -> int:
    """See the module docstring."""
    from controller.journal.errors import JournalContentError
    from controller.floor.reading import (
        dropped_counts, gaming_day_end, gaming_day_start, open_alarms, state_entries, table_status, tables,
    )
    from controller.scoreboard.state import TableView

    now = datetime.now(timezone.utc)
    # no --timezone: the machine's zone at each instant (its offset now would miss a change of offset)
    day_start = gaming_day_start(now, args.gaming_day, args.timezone)
    day_end = gaming_day_end(day_start, args.gaming_day, args.timezone)
    with open_reader(args.db) as conn:
        rows = []
        for name in tables(conn):
            row = table_status(conn, name, day_start, day_end)
            try:  # the state as the scoreboard and the feed's status name it
                row["state"] = TableView.from_entries(state_entries(conn, name), name).state_json("en")["name"]
            except JournalContentError:
                row["state"] = None
            rows.append(row)
        alarms = open_alarms(conn)
        dropped = dropped_counts(conn)
    if args.json:
        print_json({"at": now.isoformat(), "gaming_day_start": day_start.isoformat(),
                    "gaming_day_end": day_end.isoformat(), "tables": rows,
                    "alarms": alarms, "dropped": dropped})
        return EXIT_OK
    for row in rows:
        print(_status_line(row))
    if not rows:
        print("the store holds no table yet")
    for line in alarm_lines(alarms):
        print(line)
    for d in dropped:
        print(f"dropped {d['count']} message(s) on {d['table'] or 'an unknown topic'}: {d['reason']} "
              f"(last: {d['last_detail']})")
    if rows:  # which day "today" is, in which zone (a review of clocks: only --json said it)
        print(f"today: the gaming day from {day_start.isoformat(' ', 'seconds')} to {day_end.isoformat(' ', 'seconds')}")
    return EXIT_OK


# Alarms of one table and kind at consecutive entries beyond this many are said as one line with
# their range (a journal copied and run under a table's id raised one forgery alarm per entry: a
# review counted 3,034 lines in a pit's status); --json keeps each.
ALARM_RUN_SHOWN = 3


def alarm_lines(alarms: list[dict[str, Any]]) -> list[str]:
    """``floor status``'s alarm lines: one per alarm, but a run of more than ``ALARM_RUN_SHOWN``
    alarms of one table and kind at consecutive entries is its first, then one line for the rest."""
    lines: list[str] = []
    i = 0
    while i < len(alarms):
        first = alarms[i]
        j = i + 1
        while (j < len(alarms) and first["seq"] is not None and alarms[j]["seq"] is not None
               and (alarms[j]["table"], alarms[j]["kind"]) == (first["table"], first["kind"])
               and alarms[j]["seq"] == alarms[j - 1]["seq"] + 1):
            j += 1
        shown = alarms[i:j] if j - i <= ALARM_RUN_SHOWN else [first]
        for alarm in shown:
            where = f" entry {alarm['seq']}" if alarm["seq"] is not None else ""
            times = f" ({alarm['count']} times)" if alarm["count"] > 1 else ""
            lines.append(f"alarm {alarm['table']}{where}: {alarm['kind']}{times}: {alarm['detail']}")
        if len(shown) < j - i:
            lines.append(f"alarm {first['table']} entries {alarms[i + 1]['seq']}-{alarms[j - 1]['seq']}: "
                         f"{first['kind']}, {j - i - 1} more alarms like the one above (floor status --json lists each)")
        i = j
    return lines


def _status_line(row: dict[str, Any]) -> str:
    alarms = ", ".join(f"{n} {kind}" for kind, n in row["open_alarms"].items()) or "no alarm"
    behind = "" if row["checked_seq"] == row["last_seq"] else f" (chain checked to {row['checked_seq']})"
    if row["last_delay_seconds"] is None:
        lag = "no entry stored"
    elif row["last_delay_seconds"] < -1:  # stored before its own time: the table's clock is ahead
        lag = (f"last entry's journal time {-row['last_delay_seconds']:.3f} s ahead of this store's clock "
               f"(the table's clock runs ahead), stored {row['last_stored_age_seconds']:.1f} s ago")
    else:
        step = row["last_clock_step"]
        stepped = ("" if step is None else f" (its table's clock stepped {step_size_text(step['step_ms'])} at entry "
                   f"{step['seq']}: a delay may be the step's, not the feed's)")
        lag = (f"last entry stored {row['last_delay_seconds']:.3f} s after its journal time{stepped}, "
               f"{row['last_stored_age_seconds']:.1f} s ago")
    moved = row["rounds_today_clock_steps"]
    counted = ""
    if moved:
        steps = "step at entry" if len(moved) == 1 else "steps at entries"
        at = ", ".join(f"{m['seq']} ({step_size_text(m['step_ms'])})" for m in moved)
        counted = (f" (by journal times, which its clock's {steps} {at} moved: a round within that of the day's "
                   "start or end may be counted in the other day)")
    return (f"{row['table']}: last entry {row['last_seq']}{behind} at {row['last_entry_ts'] or '-'}, "
            f"{row['state'] or 'state unknown'}, shoe {row['shoe'] or '-'}, {row['rounds_today']} rounds today{counted}, "
            f"{alarms}, {lag}, {row['dropped_messages']} dropped")
