"""``shoectl floor alarms``: the store's alarms, each with its number (open ones; ``--all``: the
closed ones too, with when, by whom and why), and ``--close N --why TEXT``: a person closes them
(docs/floor.md, "Alarms"). Closing is all or nothing: an alarm missing or closed already closes none."""
from __future__ import annotations

import argparse
from typing import Any

from controller.cli.common import positive_int, print_json
from controller.errors import UsageError

WHY_MAX = 500  # characters: a sentence, kept with the alarm


def why_text(text: str) -> str:
    """``--why``: a sentence for the record, printable, not blank, at most ``WHY_MAX`` characters."""
    text = text.strip()
    if not text:
        raise argparse.ArgumentTypeError("must say why the alarm is closed (a sentence, kept with it)")
    if len(text) > WHY_MAX:
        raise argparse.ArgumentTypeError(f"is {len(text)} characters long; at most {WHY_MAX}")
    if not text.isprintable():
        raise argparse.ArgumentTypeError("holds a control character (a new line, a tab, an escape): one line of text")
    return text


def add_arguments(parser: argparse.ArgumentParser, db_help: str) -> None:
    parser.add_argument("--db", required=True, metavar="URL", help=db_help)
    parser.add_argument("--table", metavar="ID", help="only this table's alarms")
    parser.add_argument("--all", action="store_true", help="the closed alarms too: when, by whom and why")
    parser.add_argument("--close", type=positive_int, action="append", metavar="N",
                        help="close alarm N (its number in the list; repeat for more), with --why")
    parser.add_argument("--why", type=why_text, metavar="TEXT",
                        help="with --close: why the alarm is closed (kept with it, as the database role that closed it)")
    parser.add_argument("--json", action="store_true", help='one JSON object: {"alarms": [...]}')


def alarms(args: argparse.Namespace) -> int:
    """See the module docstring."""
    from controller.cli.cmd_floor import open_reader  # noqa: PLC0415 - that module registers this one

    if args.close is None:
        if args.why is not None:
            raise UsageError("--why goes with --close N: the alarm to close")
        with open_reader(args.db) as conn:
            from controller.floor.alarms import alarm_rows

            rows = alarm_rows(conn, args.table, closed=args.all)
        if args.json:
            print_json({"alarms": rows})
        else:
            for row in rows:
                print(alarm_line(row))
            if not rows:
                print(f"no {'' if args.all else 'open '}alarm" + (f" of table {args.table}" if args.table else ""))
        return 0
    if args.why is None:
        raise UsageError("--close needs --why TEXT: why the alarm is closed (it is kept with the alarm)")
    if args.all or args.table is not None:
        raise UsageError("--close names its alarms by number: it takes neither --all nor --table")
    closed = _close(args.db, args.close, args.why)
    if args.json:
        print_json({"alarms": closed})
    else:
        for row in closed:
            print(f"closed {alarm_line(row)}")
    return 0


def _close(url: str, ids: list[int], why: str) -> list[dict[str, Any]]:
    from controller.cli.cmd_floor import open_reader  # noqa: PLC0415 - that module registers this one
    from controller.floor.alarms import AlarmNotOpen, close_by_hand

    with open_reader(url, snapshot=False) as conn:
        try:
            with conn.transaction():
                return close_by_hand(conn, ids, why)
        except AlarmNotOpen as exc:
            raise UsageError(str(exc)) from None


def alarm_line(row: dict[str, Any]) -> str:
    """One alarm: ``alarm 12: T1 entry 305: forgery (3 times, first 2026-...; last ...): detail``,
    and when closed ``; closed 2026-... by ROLE: why`` (by the store itself: no role)."""
    where = f" entry {row['seq']}" if row["seq"] is not None else ""
    seen = _when(row["first_seen"])
    if row["count"] > 1:
        seen = f"{row['count']} times, first {seen}, last {_when(row['last_seen'])}"
    line = f"alarm {row['id']}: {row['table']}{where}: {row['kind']} ({seen}): {row['detail']}"
    if not row["open"]:
        by = f" by {row['closed_by']}" if row["closed_by"] is not None else " by the store"
        line += f"; closed {_when(row['closed_at'])}{by}: {row['closed_why']}"
    return line


def _when(iso: str) -> str:
    from datetime import datetime, timezone

    return datetime.fromisoformat(iso).astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
