"""The writer journals its wall clock's steps (``controller.journal.clockwatch``): an NTP step, a
clock set by hand, a restart on a computer whose clock is behind the journal. The times it stores
stay the clock's; the step is said once, where it happened (a review of clocks: an hour's step
back passed every check, and a round was "decided" before it "started")."""
from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from controller.journal import Journal, JournalError, JournalReader, kinds, store, verify

from cli_run import dealt_journal, journal_of_a_clock_stepped_back, run

START = datetime(2026, 12, 6, 11, 0, 0, tzinfo=timezone.utc)


class Clocks:
    """A wall clock and a steady clock that advance together (1 ms a reading of the wall clock),
    and a wall clock that can be stepped without the steady one."""

    def __init__(self, start: datetime = START) -> None:
        self.wall, self.steady = start, 1000.0

    def __call__(self) -> datetime:
        self.wall += timedelta(milliseconds=1)
        self.steady += 0.001
        return self.wall

    def monotonic(self) -> float:
        return self.steady

    def step(self, seconds: float) -> None:
        self.wall += timedelta(seconds=seconds)


def _open(path: Path, clocks: Clocks) -> Journal:
    return Journal.open(path, table_id="T1", clock=clocks, steady=clocks.monotonic)


def _kinds(path: Path) -> list[tuple[str, dict]]:
    with JournalReader.open(path) as r:
        return [(e.kind, e.payload) for e in r.entries()]


def test_a_step_back_is_journaled_before_the_first_entry_stamped_by_the_stepped_clock(tmp_path: Path) -> None:
    clocks = Clocks()
    with _open(tmp_path / "j.db", clocks) as j:
        j.append("a", {"i": 1})
        clocks.step(-3600)
        with capture_logs() as logs:
            entry = j.append("b", {"i": 2})
        j.append("c", {"i": 3})
    assert entry is not None and entry.kind == "b" and entry.seq == 3  # the caller's own entry, after the step's
    stored = _kinds(tmp_path / "j.db")
    assert [k for k, _ in stored] == ["a", kinds.CLOCK_STEP, "b", "c"]
    step = stored[1][1]
    assert step["basis"] == "steady_clock" and -3600_000 <= step["step_ms"] <= -3599_990
    assert kinds.payload_problem(kinds.CLOCK_STEP, step) is None
    [warning] = [e for e in logs if e["log_level"] == "warning"]
    assert warning["entry"] == 2 and warning["step_ms"] == step["step_ms"]
    assert verify(tmp_path / "j.db").ok


def test_a_step_forward_is_journaled_and_a_clock_that_only_ticks_is_not(tmp_path: Path) -> None:
    clocks = Clocks()
    with _open(tmp_path / "j.db", clocks) as j:
        for i in range(50):  # the clocks agree: no step
            j.append("tick", {"i": i})
        clocks.step(0.9)  # within the tolerance (NTP slews such offsets; a reading may wait that long)
        j.append("tick", {"i": 50})
        clocks.step(86_400 * 365 * 56)  # a computer booted at 1970 and set by NTP
        j.append_batch([{"kind": "x", "payload": {}}, {"kind": "y", "payload": {}}])
    stored = _kinds(tmp_path / "j.db")
    assert [k for k, _ in stored].count(kinds.CLOCK_STEP) == 1
    assert [k for k, _ in stored][-3:] == [kinds.CLOCK_STEP, "x", "y"]
    assert stored[-3][1]["step_ms"] >= 86_400_000 * 365 * 56


def test_a_writer_started_behind_its_journals_last_entry_says_so_at_its_first_entry(tmp_path: Path) -> None:
    clocks = Clocks()
    with _open(tmp_path / "j.db", clocks) as j:
        j.append("before the restart", {})
    last_ts = _last_ts(tmp_path / "j.db")
    behind = Clocks(START - timedelta(days=1))  # the computer restarted with its clock a day behind
    with _open(tmp_path / "j.db", behind) as j:
        j.append("after the restart", {})
        j.append("later", {})
    stored = _kinds(tmp_path / "j.db")
    assert [k for k, _ in stored] == ["before the restart", kinds.CLOCK_STEP, "after the restart", "later"]
    assert stored[1][1]["basis"] == "last_entry" and stored[1][1]["expected"] == last_ts
    assert stored[1][1]["step_ms"] <= -86_400_000 + 10
    # Which clock was wrong, this one or the one that wrote the entries before, a writer that was
    # not running cannot tell: the words say both (a review of clocks: a clock set right at the
    # restart was said to be the wrong one, and the wrong times were left unremarked)
    from controller.journal.clockwatch import clock_step_text

    said = clock_step_text(stored[1][1])
    assert said.startswith("the table's clock is ") and " behind the journal's last entry (" in said, said
    assert said.endswith("at this start: either the times from here on are at least that far back, or the entries "
                         "before were stamped ahead"), said


def test_a_writer_started_ahead_of_its_journal_journals_nothing_of_it(tmp_path: Path) -> None:
    """A table stopped overnight and started again: time passed, no step."""
    with _open(tmp_path / "j.db", Clocks()) as j:
        j.append("evening", {})
    with _open(tmp_path / "j.db", Clocks(START + timedelta(hours=14))) as j:
        j.append("morning", {})
    assert [k for k, _ in _kinds(tmp_path / "j.db")] == ["evening", "morning"]


def test_a_step_whose_transaction_failed_is_journaled_by_the_next(tmp_path: Path, mocker) -> None:
    clocks = Clocks()
    j = _open(tmp_path / "j.db", clocks)
    j.append("a", {})
    clocks.step(-600)
    real = j._conn
    failing = mocker.MagicMock(wraps=real)
    failing.executemany.side_effect = sqlite3.OperationalError("disk I/O error")
    failing.in_transaction = True
    j._conn = failing
    with pytest.raises(JournalError):
        j.append("b", {})
    j._conn = real
    j.append("b", {})
    j.close()
    assert [k for k, _ in _kinds(tmp_path / "j.db")] == ["a", kinds.CLOCK_STEP, "b"]


def test_a_journal_written_with_its_own_clock_and_no_steady_one_is_not_watched(tmp_path: Path) -> None:
    """A caller that gives the clock (a test's, a tool's) decides its times; only ``steady`` turns
    the watch on for it."""
    clocks = Clocks()
    with Journal.open(tmp_path / "j.db", table_id="T1", clock=clocks) as j:
        j.append("a", {})
        clocks.step(-3600)
        j.append("b", {})
    assert [k for k, _ in _kinds(tmp_path / "j.db")] == ["a", "b"]


def _last_ts(path: Path) -> str:
    with JournalReader.open(path) as r:
        return list(r.entries())[-1].ts


def test_a_table_whose_clock_steps_back_mid_shoe_journals_it_and_every_reader_shows_it(
        tmp_path: Path, capsys) -> None:
    """`shoectl run` on the emulator, its wall clock stepped back an hour after 100 readings (the
    steady clock left alone, as an NTP step leaves it): one clock_step, in the round it happened
    in; verify and the decisions' audit hold; replay says it in words where it happened."""
    journal = journal_of_a_clock_stepped_back(tmp_path, shoes=2)
    with JournalReader.open(journal) as r:
        entries = list(r.entries())
    [step] = [e for e in entries if e.kind == kinds.CLOCK_STEP]
    before, after = entries[step.seq - 2], entries[step.seq]
    assert step.payload["basis"] == "steady_clock" and -3_600_500 < step.payload["step_ms"] < -3_599_500
    assert after.ts < before.ts and step.shoe_id == after.shoe_id and step.round_no == after.round_no
    assert verify(journal).ok
    code, out, err = run(capsys, "audit", "decisions", str(journal))
    assert code == 0, err
    later = next(e.round_no for e in entries[step.seq:] if e.kind == kinds.ROUND_START)
    # The step came between rounds: the whole replay says it before the first round it re-stamps,
    # and among its shoe's events, which come after the shoe's rounds (a review of clocks: round
    # `later` read an hour before the round before it, twelve rounds ahead of the step's words).
    for reading in ((), ("--shoe", step.shoe_id)):
        code, out, err = run(capsys, "journal", "replay", str(journal), *reading)
        assert code == 0, err
        lines = out.splitlines()
        said = [i for i, line in enumerate(lines) if f"entry {step.seq}:" in line]
        assert len(said) == 2 and all(lines[i].endswith("the times from here on are the stepped clock's")
                                      for i in said)
        assert lines[said[0] - 1] == "  the times below are a stepped clock's, stepped earlier in the journal:"
        assert lines[said[0] + 1].startswith(f"  T1-S0001 round {later} (")
        assert lines[said[1] - 1].startswith("shoe T1-S0001") or lines[said[1] - 1].startswith("      entry ")
    # A reading of one later round shows its times with the step before them (a review of clocks:
    # `--round` and `--shoe` showed a stepped clock's times without a word of the step).
    code, out, err = run(capsys, "journal", "replay", str(journal), "--round", str(later))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "  the times below are a stepped clock's, stepped earlier in the journal:"
    assert lines[1].startswith(f"      entry {step.seq}: the table's clock stepped back 1 h 0 min") and \
        lines[2].startswith(f"  T1-S0001 round {later} (")
    assert sum(f"entry {step.seq}:" in line for line in lines) == 1
    assert step.shoe_id == "T1-S0001"
    code, out, err = run(capsys, "journal", "replay", str(journal), "--shoe", "T1-S0002")  # the shoe after
    assert code == 0 and out.startswith("  the times below are a stepped clock's, stepped earlier in the journal:\n"
                                        f"      entry {step.seq}: the table's clock stepped back 1 h 0 min"), out[:300]
    code, out, err = run(capsys, "journal", "replay", str(journal), "--round", str(later), "--json")
    assert code == 0, err
    first, *rest = [json.loads(line) for line in out.splitlines()]  # the round in each shoe
    assert [e["seq"] for e in first["clock_steps_before"]] == [step.seq] and first["round"] == later
    assert all("clock_steps_before" not in doc for doc in rest)  # said once
    # The round before: decided before the step, its times are the clock's own, though the step came
    # while it was held (a review of the day's changes: it was said to be a stepped clock's).
    code, out, err = run(capsys, "journal", "replay", str(journal), "--round", str(later - 1), "--json")
    before, after = [json.loads(line) for line in out.splitlines()]
    assert (before["shoe"], after["shoe"]) == ("T1-S0001", "T1-S0002")
    assert "clock_steps_before" not in before and [e["seq"] for e in after["clock_steps_before"]] == [step.seq]


def test_a_writer_whose_clock_was_never_set_warns_and_journals_the_step_when_it_is(tmp_path: Path) -> None:
    """A table computer without a battery-backed clock starts in 1970 until NTP sets it."""
    clocks = Clocks(datetime(1970, 1, 1, 0, 0, 5, tzinfo=timezone.utc))
    with capture_logs() as logs:
        j = _open(tmp_path / "j.db", clocks)
    [warning] = [e for e in logs if e["log_level"] == "warning"]
    assert "never set" in warning["event"] and warning["clock"].startswith("1970-01-01T00:00:05")
    with j:
        j.append("a", {})
        clocks.wall = START  # NTP
        j.append("b", {})
    stored = _kinds(tmp_path / "j.db")
    assert [k for k, _ in stored] == ["a", kinds.CLOCK_STEP, "b"] and stored[1][1]["step_ms"] > 86_400_000 * 365 * 56


def test_a_step_between_the_open_and_the_first_write_is_journaled(tmp_path: Path) -> None:
    """The first transaction is checked against the clocks as they were at the open (a review: a
    step back there was never journaled, and a clock behind at the open but set right before the
    first write was journaled as behind)."""
    with _open(tmp_path / "j.db", Clocks(START - timedelta(days=3))) as j:
        j.append("days ago", {})
    clocks = Clocks()
    j = _open(tmp_path / "j.db", clocks)
    clocks.step(-3600)  # after the open, before the first write
    with j:
        j.append("a", {})
    stored = _kinds(tmp_path / "j.db")
    assert [k for k, _ in stored] == ["days ago", kinds.CLOCK_STEP, "a"]
    assert stored[1][1]["basis"] == "steady_clock" and -3_600_010 < stored[1][1]["step_ms"] <= -3_599_990

    behind = Clocks(START - timedelta(days=1))
    j = _open(tmp_path / "j.db", behind)
    behind.wall = datetime.now(timezone.utc) if behind.wall > START else START + timedelta(hours=2)  # set right
    with j:
        j.append("b", {})
    stored = _kinds(tmp_path / "j.db")
    assert [k for k, _ in stored][3:] == [kinds.CLOCK_STEP, "b"]
    assert stored[3][1]["basis"] == "steady_clock" and stored[3][1]["step_ms"] > 86_000_000  # set forward, not behind


def test_a_step_before_the_first_shoe_is_replayed_with_the_first_shoe_and_published_on_the_event_stream(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    """A table computer that starts in 1970 and is set by NTP at once: the step falls before the
    first shoe, in entries of no shoe, which replay skipped (a review); it is said among the first
    shoe's events. The control socket's event stream publishes every step once, with its entry's
    time, before any record journaled after it."""
    from controller.table.subscribers import Subscribers

    readings = 0

    def booted_in_1970() -> datetime:
        nonlocal readings
        readings += 1
        now = datetime.now(timezone.utc)
        # the journal's creation, the watch at the open, the first transaction: then NTP
        return datetime(1970, 1, 1, 0, 0, 5, tzinfo=timezone.utc) if readings <= 3 else now

    published: list[dict] = []
    real_publish = Subscribers.publish
    monkeypatch.setattr(Subscribers, "__bool__", lambda self: True)  # as if a console watched
    monkeypatch.setattr(Subscribers, "publish", lambda self, event, **audience: (published.append(event),
                                                                                   real_publish(self, event, **audience)))
    monkeypatch.setattr(store, "utc_now", booted_in_1970)
    journal = dealt_journal(tmp_path / "table.db", "--rounds", "2", "--seed", "5", "--no-edge-monitor")
    monkeypatch.undo()
    with JournalReader.open(journal) as r:
        entries = list(r.entries())
    [step] = [e for e in entries if e.kind == kinds.CLOCK_STEP]
    assert step.shoe_id is None and step.payload["step_ms"] > 86_400_000 * 365 * 56
    code, out, err = run(capsys, "journal", "replay", str(journal))
    assert code == 0, err
    assert f"entry {step.seq}: the table's clock stepped forward 20" in out  # 20,000-odd days
    code, out, err = run(capsys, "journal", "replay", str(journal), "--json")
    first_shoe = [json.loads(line) for line in out.splitlines() if json.loads(line)["type"] == "shoe"][0]
    assert first_shoe["events"][0]["kind"] == kinds.CLOCK_STEP
    steps = [e for e in published if e["type"] == kinds.CLOCK_STEP]
    assert len(steps) == 1 and steps[0]["step_ms"] == step.payload["step_ms"]
    assert steps[0]["ts"] == step.ts  # its own entry's time
    assert all(e["ts"] < step.ts for e in published[:published.index(steps[0])] if "ts" in e)  # before any later record


def test_ctl_watch_and_the_console_say_a_clock_step_in_words() -> None:
    from controller.cli.cmd_ctl import event_text

    assert event_text({"type": "clock_step", "ts": "2026-12-06T10:19:36.847270Z", "shoe": "T1-S0001", "round": 42,
                       "step_ms": -3_600_001, "expected": "2026-12-06T11:19:36.847198Z", "basis": "steady_clock"}) == (
        "the table's clock stepped back 1 h 0 min 0.0 s (it should have said 2026-12-06 11:19:36 UTC): "
        "the times from here on are the stepped clock's")
