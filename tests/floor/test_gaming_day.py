"""``floor status`` counts the rounds of the casino's gaming day: from its own hour, in its own
time zone (a Pennsylvania casino's day does not start at midnight UTC), across the changes of
daylight saving time too: a start hour the clocks go back over starts the day at its first
occurrence, one they skip starts it when they go forward; without ``--timezone``, the machine's
zone is followed instant by instant (its offset at the moment of asking was used: a floor review)."""
from __future__ import annotations

import json
import os
import time as clock
from collections.abc import Iterator
from datetime import datetime, time, timezone
from zoneinfo import ZoneInfo

import pytest

from cli_run import run
from controller.cli import floor_status
from controller.floor.reading import gaming_day_start
from controller.floor.store import FloorStore

NEW_YORK = ZoneInfo("America/New_York")


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


def test_before_the_hour_the_gaming_day_is_yesterdays() -> None:
    # 04:00 UTC on 1 December is 23:00 EST on 30 November: the day began at 06:00 EST (11:00 UTC) that day.
    assert gaming_day_start(utc(2026, 12, 1, 4, 0), time(6, 0), NEW_YORK) == utc(2026, 11, 30, 11, 0)
    # 11:30 UTC is 06:30 EST: a new gaming day began half an hour ago.
    assert gaming_day_start(utc(2026, 12, 1, 11, 30), time(6, 0), NEW_YORK) == utc(2026, 12, 1, 11, 0)


def test_at_the_hour_exactly_a_new_day_begins() -> None:
    assert gaming_day_start(utc(2026, 12, 1, 11, 0), time(6, 0), NEW_YORK) == utc(2026, 12, 1, 11, 0)
    assert gaming_day_start(utc(2026, 12, 1, 10, 59), time(6, 0), NEW_YORK) == utc(2026, 11, 30, 11, 0)


def test_the_day_follows_daylight_saving_time() -> None:
    # 06:00 EDT is 10:00 UTC in summer: the hour is the casino's wall clock, not a fixed offset.
    assert gaming_day_start(utc(2026, 7, 1, 12, 0), time(6, 0), NEW_YORK) == utc(2026, 7, 1, 10, 0)
    # The Sunday clocks go back (1 November 2026), the 06:00 start is EST already.
    assert gaming_day_start(utc(2026, 11, 1, 12, 0), time(6, 0), NEW_YORK) == utc(2026, 11, 1, 11, 0)


def test_midnight_utc_is_the_old_count() -> None:
    assert gaming_day_start(utc(2026, 12, 1, 4, 0), time(0, 0), timezone.utc) == utc(2026, 12, 1, 0, 0)


# (now, the gaming day's start time, the day's start expected), in New York
DAYLIGHT_SAVING_CASES = [
    # the morning after the clocks went forward (2026-03-08, 02:00 EST -> 03:00 EDT, at 07:00 UTC):
    # 05:30 EDT, before 06:00: the day began at 06:00 EST the day before
    (utc(2026, 3, 8, 9, 30), time(6, 0), utc(2026, 3, 7, 11, 0)),
    (utc(2026, 3, 8, 10, 0), time(6, 0), utc(2026, 3, 8, 10, 0)),  # 06:00 EDT
    # a start time the clocks skip (02:30): the day starts when they go forward
    (utc(2026, 3, 8, 6, 59, 59), time(2, 30), utc(2026, 3, 7, 7, 30)),
    (utc(2026, 3, 8, 7, 0), time(2, 30), utc(2026, 3, 8, 7, 0)),
    (utc(2026, 3, 8, 7, 30), time(2, 30), utc(2026, 3, 8, 7, 0)),
    # a start time the clocks go back over (2026-11-01, 02:00 EDT -> 01:00 EST, at 06:00 UTC):
    # its first occurrence, 01:30 EDT, and its second starts no other day
    (utc(2026, 11, 1, 5, 29), time(1, 30), utc(2026, 10, 31, 5, 30)),
    (utc(2026, 11, 1, 5, 30), time(1, 30), utc(2026, 11, 1, 5, 30)),
    (utc(2026, 11, 1, 6, 15), time(1, 30), utc(2026, 11, 1, 5, 30)),  # 01:15 EST, the repeated hour
    (utc(2026, 11, 1, 6, 45), time(1, 30), utc(2026, 11, 1, 5, 30)),  # 01:45 EST: 01:30 again
    (utc(2026, 11, 2, 6, 29), time(1, 30), utc(2026, 11, 1, 5, 30)),
    (utc(2026, 11, 2, 6, 30), time(1, 30), utc(2026, 11, 2, 6, 30)),  # 01:30 EST the next day
]


@pytest.mark.parametrize(("now", "starts_at", "expected"), DAYLIGHT_SAVING_CASES)
def test_the_day_starts_once_across_a_change_of_daylight_saving_time(now: datetime, starts_at: time,
                                                                      expected: datetime) -> None:
    start = gaming_day_start(now, starts_at, NEW_YORK)
    assert start == expected and start <= now
    assert start.utcoffset() == start.astimezone(NEW_YORK).utcoffset()  # given in the casino's zone


@pytest.fixture
def new_york_machine() -> Iterator[None]:
    """This process's local zone is New York (``TZ``), as a machine's would be."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    clock.tzset()
    try:
        yield
    finally:
        if before is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = before
        clock.tzset()


@pytest.mark.parametrize(("now", "starts_at", "expected"), DAYLIGHT_SAVING_CASES)
def test_without_a_zone_the_machines_is_followed_instant_by_instant(new_york_machine: None, now: datetime,
                                                                     starts_at: time, expected: datetime) -> None:
    assert gaming_day_start(now, starts_at) == expected


def test_floor_status_follows_the_machines_daylight_saving_time(capsys, floor_db: str, store: FloorStore,
                                                                 new_york_machine: None,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Before: without ``--timezone`` the machine's offset at the moment of asking (EDT, -04:00, on
    the morning after the clocks went forward) was taken for the day before too: the day began at
    10:00 UTC instead of 11:00 (06:00 EST)."""

    class Then(datetime):
        @classmethod
        def now(cls, tz=None):  # noqa: ANN001, ANN206 - datetime.now's own signature
            return datetime(2026, 3, 8, 9, 30, tzinfo=timezone.utc).astimezone(tz)

    monkeypatch.setattr(floor_status, "datetime", Then)
    code, out, err = run(capsys, "floor", "status", "--db", floor_db, "--json")
    assert code == 0, err
    start = datetime.fromisoformat(json.loads(out)["gaming_day_start"])
    assert start == utc(2026, 3, 7, 11, 0) and start.utcoffset().total_seconds() == -5 * 3600
