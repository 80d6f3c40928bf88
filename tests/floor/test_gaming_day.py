"""``floor status`` counts the rounds of the casino's gaming day: from its own hour, in its own
time zone (a Pennsylvania casino's day does not start at midnight UTC)."""
from __future__ import annotations

from datetime import datetime, time, timezone
from zoneinfo import ZoneInfo

from controller.floor.reading import gaming_day_start

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
