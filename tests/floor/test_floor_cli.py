"""``shoectl floor verify|status|rounds`` through the real CLI on a real PostgreSQL: `floor rounds`
equals the table's own `journal replay`, verify names the first bad (table, seq) and recomputes
HMAC hashes with the keys file, and a bad or refused database is one line, exit 2, changing
nothing (the backfill's own refusals: test_backfill.py)."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
import time

import psycopg
import pytest

from cli_run import dealt_journal, journal_of_a_clock_stepped_back, preset_with_decks, run
from controller.journal import JournalReader
from controller.scoreboard.state import TableView
from floor.helpers import count
from floor.journals import TableJournal, run_table
from services.postgres import PostgresCluster, free_port


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("table"), rounds=10, seed=11)


def test_floor_rounds_equals_the_tables_own_journal_replay(capsys, floor_db: str, journal: TableJournal) -> None:
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))[0] == 0
    # --wagers and --edges too (a money review: the floor had no --wagers)
    for extra in (["--json"], [], ["--json", "--round", "3"], ["--wagers"], ["--edges", "--round", "2"]):
        code, replayed, _ = run(capsys, "journal", "replay", str(journal.path), *extra)
        assert code == 0 and replayed and ("paid" in replayed) == (extra == ["--wagers"])
        assert run(capsys, "floor", "rounds", "--db", floor_db, "--table", "T1", *extra) == (0, replayed, "")
    shoe = json.loads(run(capsys, "journal", "replay", str(journal.path), "--json")[1].splitlines()[-1])["shoe"]
    code, replayed, _ = run(capsys, "journal", "replay", str(journal.path), "--json", "--shoe", shoe)
    assert run(capsys, "floor", "rounds", "--db", floor_db, "--table", "T1", "--json", "--shoe", shoe) == \
        (0, replayed, "")
    # a selection that finds nothing is one line, exit 2, as in `journal replay`
    assert run(capsys, "floor", "rounds", "--db", floor_db, "--table", "T1", "--shoe", "T1-S0099") == \
        (2, "", "shoectl floor rounds: error: no shoe 'T1-S0099' in the store's table T1\n")


def test_floor_rounds_of_one_shoe_reads_what_its_replay_needs_and_equals_the_journals(capsys, floor_db: str,
                                                                                       tmp_path) -> None:
    """`floor rounds --shoe` asks the server for what a replay of that shoe reads
    (``replay.entries_needed``), on a table of three shoes: each shoe as `journal replay` gives it."""
    two_decks = preset_with_decks(tmp_path / "two-decks.toml", "minibaccarat", 2)
    journal = dealt_journal(tmp_path / "journal.db", "--shoes", "2", "--seed", "4", "--submission", str(two_decks))
    assert run(capsys, "journal", "export", str(journal), "-o", str(tmp_path / "export.jsonl"))[0] == 0
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(tmp_path / "export.jsonl"))[0] == 0
    with JournalReader.open(journal) as reader:
        shoes = [e.payload["shoe"] for e in reader.entries(kinds="shoe_start")]
    assert len(shoes) == 3
    for shoe in shoes:
        code, replayed, _ = run(capsys, "journal", "replay", str(journal), "--json", "--shoe", shoe)
        assert code == 0 and replayed
        assert run(capsys, "floor", "rounds", "--db", floor_db, "--table", "T1", "--json", "--shoe", shoe) == \
            (0, replayed, "")


def test_status_shows_each_table(capsys, floor_db: str, journal: TableJournal) -> None:
    run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))
    last = json.loads(journal.lines[-1])
    status = json.loads(run(capsys, "floor", "status", "--db", floor_db, "--json")[1])
    row = status["tables"][0]
    assert row["table"] == "T1" and row["last_seq"] == row["checked_seq"] == last["seq"]
    latest_shoe = next(e["shoe_id"] for e in map(json.loads, reversed(journal.lines)) if e["shoe_id"])
    assert row["last_entry_ts"] == last["ts"] and row["shoe"] == latest_shoe
    assert row["rounds_today"] == 10 and row["open_alarms"] == {} and row["dropped_messages"] == 0
    with JournalReader.open(journal.path) as reader:  # the state as the scoreboard says it from the whole journal
        assert row["state"] == TableView.from_entries(reader.entries(), "T1").state_json("en")["name"]
    assert row["last_delay_seconds"] > 0 and row["last_stored_age_seconds"] >= 0 and row["last_clock_step"] is None
    code, out, _ = run(capsys, "floor", "status", "--db", floor_db)
    assert code == 0 and out.startswith(f"T1: last entry {last['seq']} at {last['ts']}, ")
    assert "10 rounds today, no alarm" in out and "s after its journal time, " in out and " s ago" in out
    day = f"{status['gaming_day_start'].replace('T', ' ')} to {status['gaming_day_end'].replace('T', ' ')}"
    assert out.splitlines()[-1] == f"today: the gaming day from {day}"


def test_status_counts_the_rounds_of_this_gaming_day_only_and_says_a_clock_ahead(
        capsys, floor_db: str, journal: TableJournal) -> None:
    """Rounds a table stamped with a later day (its clock two days ahead) are not counted today;
    they were, as the count had no end (a review of clocks); the last entry's time ahead of the
    store's clock is said so, not as a negative delay."""
    run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))
    with psycopg.connect(floor_db) as conn:
        seqs = [r[0] for r in conn.execute("SELECT seq FROM entries WHERE kind = 'round_result' ORDER BY seq")]
        conn.execute("UPDATE entries SET ts_at = ts_at + interval '2 days' WHERE seq >= %s", (seqs[6],))
    status = json.loads(run(capsys, "floor", "status", "--db", floor_db, "--json")[1])
    assert status["tables"][0]["rounds_today"] == 6
    code, out, _ = run(capsys, "floor", "status", "--db", floor_db)
    assert code == 0 and "6 rounds today" in out
    assert "s ahead of this store's clock (the table's clock runs ahead)" in out and "-17" not in out


def test_status_says_a_tables_clock_step_beside_the_delay_it_moves(capsys, floor_db: str, tmp_path: Path) -> None:
    """The delay is the store's commit less the journal's time, which a table's clock step moves:
    an entry stored in milliseconds by a table whose clock stepped back an hour read as an hour
    late, while the store held the step and alarmed on it (a review of clocks). The status names
    the table's last step beside the figure."""
    from controller.journal import kinds
    from controller.journal.clockwatch import step_size_text

    journal = journal_of_a_clock_stepped_back(tmp_path)
    with JournalReader.open(journal) as reader:
        [step] = list(reader.entries(kinds=kinds.CLOCK_STEP))
    assert run(capsys, "journal", "export", str(journal), "-o", str(tmp_path / "export.jsonl"))[0] == 0
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(tmp_path / "export.jsonl"))[0] == 0
    row = json.loads(run(capsys, "floor", "status", "--db", floor_db, "--json")[1])["tables"][0]
    assert row["last_clock_step"] == {"seq": step.seq, "step_ms": step.payload["step_ms"]}
    assert row["last_delay_seconds"] > 3500  # the step's hour, not the feed's
    code, out, _ = run(capsys, "floor", "status", "--db", floor_db)
    assert code == 0 and (f" s after its journal time (its table's clock stepped {step_size_text(step.payload['step_ms'])} "
                          f"at entry {step.seq}: a delay may be the step's, not the feed's), ") in out, out
    # a forged step that is no whole number ("--5" passed a check of its own, then int() raised:
    # a re-reading of the change) is no step
    with psycopg.connect(floor_db) as conn:
        conn.execute("UPDATE entries SET payload = jsonb_set(payload, '{step_ms}', '\"--5\"') WHERE kind = 'clock_step'")
    row = json.loads(run(capsys, "floor", "status", "--db", floor_db, "--json")[1])["tables"][0]
    assert row["last_clock_step"] is None


def test_status_says_the_rounds_of_the_day_are_counted_by_times_a_clock_step_moved(
        capsys, floor_db: str, tmp_path: Path) -> None:
    """Rounds are counted in the gaming day their journal times fall in, which a clock step moves:
    a table whose clock stepped back an hour, minutes after the day's start, had every round dealt
    since counted in the day before, "7 rounds today" where 19 were dealt, without a word (a review
    of clocks). Which side of the step was right no one can tell; the count says which steps it
    read across."""
    from controller.journal import kinds
    from controller.journal.clockwatch import step_size_text

    journal = journal_of_a_clock_stepped_back(tmp_path)
    with JournalReader.open(journal) as reader:
        [step] = list(reader.entries(kinds=kinds.CLOCK_STEP))
    assert run(capsys, "journal", "export", str(journal), "-o", str(tmp_path / "export.jsonl"))[0] == 0
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(tmp_path / "export.jsonl"))[0] == 0
    start = (datetime.now(timezone.utc) - timedelta(minutes=30)).strftime("%H:%M")
    day = ("--gaming-day", start, "--timezone", "UTC")
    row = json.loads(run(capsys, "floor", "status", "--db", floor_db, *day, "--json")[1])["tables"][0]
    assert row["rounds_today_clock_steps"] == [{"seq": step.seq, "step_ms": step.payload["step_ms"]}]
    code, out, _ = run(capsys, "floor", "status", "--db", floor_db, *day)
    assert code == 0 and (f" rounds today (by journal times, which its clock's step at entry {step.seq} "
                          f"({step_size_text(step.payload['step_ms'])}) moved: a round within that of the day's "
                          "start or end may be counted in the other day), ") in out, out
    with psycopg.connect(floor_db) as conn:  # a step days before the day moves none of its rounds
        conn.execute("UPDATE entries SET ts_at = ts_at - interval '3 days' WHERE kind = 'clock_step'")
    row = json.loads(run(capsys, "floor", "status", "--db", floor_db, *day, "--json")[1])["tables"][0]
    assert row["rounds_today_clock_steps"] == [] and row["last_clock_step"] is not None
    assert "by journal times" not in run(capsys, "floor", "status", "--db", floor_db, *day)[1]
    with psycopg.connect(floor_db) as conn:  # unless it is a step of days (a clock reset): named whatever its size
        conn.execute("UPDATE entries SET payload = jsonb_set(payload, '{step_ms}', '-345600000') "
                     "WHERE kind = 'clock_step'")
    row = json.loads(run(capsys, "floor", "status", "--db", floor_db, *day, "--json")[1])["tables"][0]
    assert row["rounds_today_clock_steps"] == [{"seq": step.seq, "step_ms": -345_600_000}]
    with psycopg.connect(floor_db) as conn:  # a step of millennia (a wild clock) left datetime's range
        conn.execute("UPDATE entries SET payload = jsonb_set(payload, '{step_ms}', '-95000000000000') "
                     "WHERE kind = 'clock_step'")
    code, out, err = run(capsys, "floor", "status", "--db", floor_db, *day, "--json")
    assert code == 0, err
    assert json.loads(out)["tables"][0]["rounds_today_clock_steps"] == [{"seq": step.seq, "step_ms": -95_000_000_000_000}]


def test_status_shows_a_silent_table_aging_while_its_last_delay_stays(capsys, floor_db: str,
                                                                      journal: TableJournal) -> None:
    """A feed or collector that stopped: the last entry's delay (journal time to store commit) is
    what it was, and its age (store commit to now) grows, so the silence shows."""
    run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))
    before = json.loads(run(capsys, "floor", "status", "--db", floor_db, "--json")[1])["tables"][0]
    time.sleep(1.2)
    after = json.loads(run(capsys, "floor", "status", "--db", floor_db, "--json")[1])["tables"][0]
    assert after["last_delay_seconds"] == before["last_delay_seconds"]
    assert after["last_stored_age_seconds"] >= before["last_stored_age_seconds"] + 1.0


def test_verify_names_the_first_bad_entry_of_a_store_edited_behind_its_back(capsys, floor_db: str,
                                                                            journal: TableJournal) -> None:
    run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--table", "T1")
    assert code == 0 and out.startswith(f"T1: OK: {len(journal.lines)} entries")
    with psycopg.connect(floor_db) as conn:
        conn.execute("UPDATE entries SET line = replace(line, '\"ts\":\"2', '\"ts\":\"1') WHERE seq = 2")
    code, out, err = run(capsys, "floor", "verify", "--db", floor_db, "--json")
    assert code == 1 and json.loads(out)["first_bad_seq"] == 2
    assert err == "shoectl floor verify: first bad entry: table T1, seq 2\n"


def test_verify_given_the_journals_end_fails_a_store_that_lacks_its_last_entries(capsys, floor_db: str,
                                                                                journal: TableJournal,
                                                                                tmp_path: Path) -> None:
    """A review of the floor's exactly-once: a broker that crashed holding a table's last entries
    (acknowledged to the feed, never delivered) left a store whose chain verifies: nothing after
    them opens a gap, and `floor verify` said OK. Given the journal's end as `journal verify`
    prints it where the journal is, it says what the store lacks."""
    head = tmp_path / "first.jsonl"
    head.write_text("".join(journal.lines[:50]))
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(head))[0] == 0
    code, out, _ = run(capsys, "journal", "verify", str(journal.path))
    assert code == 0
    entries, last_hash = (int(out.split("ok: ")[1].split(" entries")[0]), out.split("last hash ")[1].split()[0])
    assert entries == len(journal.lines)
    code, out, err = run(capsys, "floor", "verify", "--db", floor_db, "--expect", f"T1={entries}:{last_hash}")
    assert code == 1 and out == (f"T1: FAILED: the store ends at entry 50, the journal at entry {entries}: entries "
                                 f"51-{entries} are missing (shoectl floor backfill takes them from the journal)\n")
    assert err == "shoectl floor verify: the store lacks the end of the journal of T1\n"
    fiftieth = json.loads(journal.lines[49])["hash"]
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--expect", f"T1=50:{fiftieth}")
    assert code == 0 and out.endswith("(links and hashes checked); the journal's end is stored\n")
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--expect", f"T1=40:{fiftieth}", "--json")
    assert code == 1 and json.loads(out)["journal_end"]["problem"].startswith("entry 40 is stored with another hash")
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--expect", f"T9=3:{fiftieth}")
    assert code == 1 and "T9: FAILED: no entry of it is stored, the journal ends at entry 3\n" in out
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))[0] == 0  # backfilled
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--expect", f"T1={entries}:{last_hash}")
    assert code == 0, out
    code, out, err = run(capsys, "floor", "verify", "--db", floor_db, "--table", "T1", "--expect", f"T2=3:{last_hash}")
    assert code == 2 and out == "" and err == ("shoectl floor verify: error: --expect names table 'T2', and --table "
                                               "'T1' leaves it out\n"), err
    for bad in ("T1", "T1=x:y", f"T1=0:{last_hash}", f"T1=5:{last_hash[:10]}"):
        code, out, err = run(capsys, "floor", "verify", "--db", floor_db, "--expect", bad)
        assert code == 2 and out == "" and err.count("\n") == 1 and "give TABLE=SEQ:HASH" in err, err


def test_verify_tells_entries_that_have_not_arrived_from_entries_deleted_from_the_store(
        capsys, floor_db: str, journal: TableJournal, tmp_path: Path) -> None:
    """A collector of a --share group that is down holds its share of every table's entries: the
    store has gaps under open gap alarms (docs/floor.md, --share). `floor verify` said "entries
    21-25 are missing (the next entry is 26): deleted?", the journal file's words for a tampered
    file, and sent a floorperson after a forger (a review of the floor's wording). It says which:
    not arrived yet under the open alarm, or gone from the store with no alarm to stand for them."""
    part = tmp_path / "part.jsonl"
    part.write_text("".join(journal.lines[:20] + journal.lines[25:]), encoding="utf-8")
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(part))[0] == 0
    code, out, err = run(capsys, "floor", "verify", "--db", floor_db, "--table", "T1")
    with psycopg.connect(floor_db) as conn:
        (alarm,) = conn.execute("SELECT id FROM floor_alarms WHERE table_id = 'T1' AND kind = 'gap' AND open").fetchone()
    assert code == 1 and err == "shoectl floor verify: first bad entry: table T1, seq 21\n"
    assert out == (f"T1: FAILED at entry 21: entries 21-25 are missing from the store (entry 26 is stored): not "
                   f"arrived, gap alarm {alarm} is open (a --share member down holds them until it connects again; a "
                   "broker that lost them never sends them: shoectl floor backfill takes them from the journal)\n"), out
    assert "deleted" not in out
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))[0] == 0
    with psycopg.connect(floor_db) as conn:  # deleted behind the store's back: no alarm stands for them
        conn.execute("DELETE FROM entries WHERE table_id = 'T1' AND seq BETWEEN 30 AND 31")
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--table", "T1", "--json")
    assert code == 1 and json.loads(out)["reason"] == ("entries 30-31 are missing from the store (entry 32 is "
                                                       "stored), and no open gap alarm stands for them: deleted "
                                                       "from the store?")


def test_verify_says_an_entry_that_arrived_edited_and_was_refused_not_that_it_has_not_arrived(
        capsys, floor_db: str, journal: TableJournal, tmp_path: Path) -> None:
    """A review of the mend above: an edited body of entry 21 (its hash no longer its own) is
    refused and kept aside, under a bad_hash alarm beside the gap alarm its gap opens; verify said
    "not arrived yet ... a collector of a --share group down", and sent a floorperson after a
    collector, not an edit."""
    lines = list(journal.lines)
    line = json.loads(lines[20])
    line["ts"] = line["ts"][:-2] + ("2Z" if line["ts"].endswith("1Z") else "1Z")  # a microsecond moved
    lines[20] = json.dumps(line, separators=(",", ":")) + "\n"
    part = tmp_path / "edited.jsonl"
    part.write_text("".join(lines), encoding="utf-8")
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(part))[0] == 0
    with psycopg.connect(floor_db) as conn:
        (alarm,) = conn.execute("SELECT id FROM floor_alarms WHERE table_id = 'T1' AND open AND seq = 21 "
                                "AND kind <> 'gap'").fetchone()
    code, out, err = run(capsys, "floor", "verify", "--db", floor_db, "--table", "T1")
    assert code == 1 and "seq 21" in err
    assert "not arrived" not in out and "--share" not in out, out
    assert out.startswith("T1: FAILED at entry 21: entry 21 is missing from the store (entry 22 is stored): a body "
                          f"of entry 21 arrived and was refused, kept aside (bad_hash alarm {alarm} is open): an "
                          "edited or forged entry, or one of another journal, or of an earlier copy of this one written on"), out
    # the table's own body, arriving after it, is stored; deleted since, the refusal explains nothing
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))[0] == 0
    assert run(capsys, "floor", "verify", "--db", floor_db, "--table", "T1")[0] == 0
    with psycopg.connect(floor_db) as conn:
        conn.execute("DELETE FROM entries WHERE table_id = 'T1' AND seq BETWEEN 21 AND 22")
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--table", "T1", "--json")
    assert code == 1 and json.loads(out)["reason"].endswith("and no open gap alarm stands for them: deleted from "
                                                            "the store?"), out


def test_verify_says_entries_deleted_after_a_forged_body_was_refused_are_deleted(
        capsys, floor_db: str, journal: TableJournal, tmp_path: Path) -> None:
    """A second body of a stored entry (a forgery, kept aside under its alarm) says nothing of why
    the table's own is missing later: deleted from the store behind its back, it read "arrived
    and was refused", hiding the deletion (a review of the mend above)."""
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))[0] == 0
    lines = list(journal.lines)
    line = json.loads(lines[29])
    line["ts"] = line["ts"][:-2] + ("2Z" if line["ts"].endswith("1Z") else "1Z")
    lines[29] = json.dumps(line, separators=(",", ":")) + "\n"
    forged = tmp_path / "forged.jsonl"
    forged.write_text("".join(lines), encoding="utf-8")
    run(capsys, "floor", "backfill", "--db", floor_db, str(forged))
    with psycopg.connect(floor_db) as conn:
        assert ("forgery",) in conn.execute("SELECT kind FROM floor_alarms WHERE table_id = 'T1' AND seq = 30").fetchall()
        conn.execute("DELETE FROM entries WHERE table_id = 'T1' AND seq BETWEEN 30 AND 31")
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--table", "T1", "--json")
    assert code == 1 and json.loads(out)["reason"] == ("entries 30-31 are missing from the store (entry 32 is "
                                                       "stored), and no open gap alarm stands for them: deleted "
                                                       "from the store?"), out


def test_verify_says_a_gap_not_arrived_while_a_new_journal_of_the_table_is_kept_aside(
        capsys, floor_db: str, journal: TableJournal, tmp_path: Path) -> None:
    """A new journal's bodies, kept aside under its new_journal alarm, said nothing of the gap of
    the stored one: verify read them as the gap's entries refused (a review of the mend above)."""
    part = tmp_path / "part.jsonl"
    part.write_text("".join(journal.lines[:20] + journal.lines[25:]), encoding="utf-8")
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(part))[0] == 0
    other = run_table(tmp_path / "new", rounds=10, seed=12)
    run(capsys, "floor", "backfill", "--db", floor_db, str(other.export_file))
    with psycopg.connect(floor_db) as conn:
        (gap,) = conn.execute("SELECT id FROM floor_alarms WHERE table_id = 'T1' AND kind = 'gap' AND open").fetchone()
        assert conn.execute("SELECT count(*) FROM rejected_entries WHERE seq BETWEEN 21 AND 25").fetchone()[0] > 0
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--table", "T1")
    assert code == 1 and f"not arrived, gap alarm {gap} is open" in out, out


def test_a_refused_body_the_tables_own_followed_says_nothing_of_a_later_deletion(
        capsys, floor_db: str, tmp_path: Path) -> None:
    """A body refused under bad_hash, the table's own stored after it (the chain checked through
    the entry; with the key, a forged second body is bad_hash too): deleted later, the entries
    read "arrived and was refused" and hid the deletion (a review of the mend above)."""
    from floor.journals import forge_next

    keyed = run_table(tmp_path / "hmac", table_id="T3", rounds=3, hmac=True)
    keys = tmp_path / "hmac" / "keys.toml"
    keys.write_text(f'[keys]\nT3 = "{keyed.key_file.name}"\n')
    assert run(capsys, "floor", "backfill", "--db", floor_db, "--keys", str(keys), str(keyed.export_file))[0] == 0
    forged = tmp_path / "forged.jsonl"
    forged.write_text(forge_next(keyed.lines[9], operator="mallory"), encoding="utf-8")
    run(capsys, "floor", "backfill", "--db", floor_db, "--keys", str(keys), str(forged))
    with psycopg.connect(floor_db) as conn:
        assert ("bad_hash", 10) in conn.execute("SELECT kind, seq FROM floor_alarms WHERE table_id = 'T3' "
                                                "AND open").fetchall()
        conn.execute("DELETE FROM entries WHERE table_id = 'T3' AND seq BETWEEN 10 AND 11")
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--keys", str(keys), "--table", "T3", "--json")
    assert code == 1 and json.loads(out)["reason"] == ("entries 10-11 are missing from the store (entry 12 is "
                                                       "stored), and no open gap alarm stands for them: deleted "
                                                       "from the store?"), out


def test_a_step_journaled_exactly_its_size_before_the_days_start_is_named(capsys, floor_db: str,
                                                                          tmp_path: Path) -> None:
    """"Within its own size" of the day, the bound included: compared as floats of milliseconds, a
    step of 2,007 ms journaled 2,007 ms before the day's start was left out (a review of the
    mend above)."""
    journal = journal_of_a_clock_stepped_back(tmp_path)
    assert run(capsys, "journal", "export", str(journal), "-o", str(tmp_path / "export.jsonl"))[0] == 0
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(tmp_path / "export.jsonl"))[0] == 0
    start = (datetime.now(timezone.utc) - timedelta(minutes=30)).strftime("%H:%M")
    day = ("--gaming-day", start, "--timezone", "UTC")
    day_start = datetime.fromisoformat(json.loads(run(capsys, "floor", "status", "--db", floor_db, *day,
                                                      "--json")[1])["gaming_day_start"])
    with psycopg.connect(floor_db) as conn:
        conn.execute("UPDATE entries SET ts_at = %s, payload = jsonb_set(payload, '{step_ms}', '2007') "
                     "WHERE kind = 'clock_step'", (day_start - timedelta(milliseconds=2007),))
    row = json.loads(run(capsys, "floor", "status", "--db", floor_db, *day, "--json")[1])["tables"][0]
    assert [s["step_ms"] for s in row["rounds_today_clock_steps"]] == [2007], row


@pytest.mark.parametrize("url, says", [
    ("mysql://root@127.0.0.1/x", "--db must be a PostgreSQL URL"),
    ("postgresql://u@127.0.0.1:1/x?bogus=1", "not a valid PostgreSQL URL"),
    # libpq's keyword form, a password in it: it was echoed as given (a review of logs)
    ("host=127.0.0.1 password=pgsecret dbname=floor", "got 'host=127.0.0.1 password=*** dbname=floor'"),
])
def test_a_bad_db_url_is_one_line_exit_2(capsys, url: str, says: str, journal: TableJournal) -> None:
    for argv in (["status"], ["verify"], ["rounds", "--table", "T1"], ["backfill", str(journal.export_file)]):
        code, out, err = run(capsys, "floor", *argv, "--db", url)
        assert code == 2 and out == "" and says in err and err.count("\n") == 1, (argv, err)
        assert "pgsecret" not in err


def test_a_database_that_refuses_is_one_line_exit_2_and_the_password_never_shown(
        capsys, monkeypatch, tmp_path: Path, postgres_cluster: PostgresCluster, floor_db: str,
        journal: TableJournal) -> None:
    closed = f"postgresql://postgres@127.0.0.1:{free_port()}/x"
    code, _, err = run(capsys, "floor", "backfill", "--db", closed, str(journal.export_file))
    assert code == 2 and "cannot reach the database at 127.0.0.1:" in err and "connection was refused" in err
    assert err.count("\n") == 1
    dbname = floor_db.rsplit("/", 1)[1]
    postgres_cluster.add_role("floorman", "right-password", dbname)
    url = postgres_cluster.url(dbname, user="floorman")
    monkeypatch.setenv("PGPASSFILE", str(postgres_cluster.password_file(tmp_path / "wrong", dbname, "floorman",
                                                                         "wrong-password")))
    code, _, err = run(capsys, "floor", "backfill", "--db", url, str(journal.export_file))
    assert code == 2 and "password authentication failed" in err and "wrong-password" not in err
    assert count(floor_db, "SELECT count(*) FROM pg_tables WHERE tablename = 'entries'") == 0
    monkeypatch.setenv("PGPASSFILE", str(postgres_cluster.password_file(tmp_path / "right", dbname, "floorman",
                                                                         "right-password")))
    assert run(capsys, "floor", "backfill", "--db", url, str(journal.export_file))[0] == 0


@pytest.mark.parametrize("url", ["postgresql://floorman:right-password@127.0.0.1/x",
                                 "postgresql://floorman@127.0.0.1/x?sslmode=prefer&password=right-password"])
def test_a_password_on_the_command_line_is_refused_and_never_shown(capsys, url: str) -> None:
    """A password in --db is in the process list for every user of the host, and in the shell's
    history: the help said never to give one there, and it was taken."""
    code, out, err = run(capsys, "floor", "status", "--db", url)
    assert (code, out) == (2, "") and err.count("\n") == 1 and "right-password" not in err
    assert "holds a password: put it in ~/.pgpass or the file PGPASSFILE names" in err


@pytest.mark.parametrize("port", ["abc", "99999", "0"])
def test_a_port_that_is_not_one_is_said_in_the_users_words(capsys, port: str) -> None:
    """A review of bad inputs read libpq's own text (`invalid integer value "abc" for connection
    option "port"`, `invalid port number`), where a broker URL's port is said in shoectl's."""
    code, out, err = run(capsys, "floor", "verify", "--db", f"postgresql://floorman@127.0.0.1:{port}/floor")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert err.endswith(f": the port must be a number from 1 to 65535, not '{port}'\n"), err


def test_a_database_that_refuses_to_be_written_is_one_line_exit_2(
        capsys, monkeypatch, tmp_path: Path, postgres_cluster: PostgresCluster, floor_db: str,
        journal: TableJournal) -> None:
    """A read-only server (a standby, say) or a user without the right to create the schema
    refuses the store: said on one line in words, without the SQL, no traceback, nothing stored."""
    read_only = floor_db + "?options=-c%20default_transaction_read_only%3Don"
    dbname = floor_db.rsplit("/", 1)[1]
    postgres_cluster.add_role("reader", "reader-password", dbname)
    postgres_cluster.sql('REVOKE CREATE ON SCHEMA public FROM "reader", PUBLIC', dbname)
    monkeypatch.setenv("PGPASSFILE", str(postgres_cluster.password_file(tmp_path / "pgpass", dbname, "reader",
                                                                         "reader-password")))
    no_create = postgres_cluster.url(dbname, user="reader")
    for url, says in ((read_only, "the database is read-only"),
                      (no_create, "this database user may not create the floor store (permission denied for schema "
                                  "public): let the database's owner run it once")):
        code, out, err = run(capsys, "floor", "backfill", "--db", url, str(journal.export_file))
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert says in err and "LINE" not in err and "CREATE" not in err, err
    assert count(floor_db, "SELECT count(*) FROM pg_tables WHERE tablename = 'entries'") == 0
    # Created by the owner, the store is written by a user that may read and write its tables but
    # not create in the schema (a review: it was refused, "may not write the floor store").
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))[0] == 0
    postgres_cluster.sql('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "reader"', dbname)
    postgres_cluster.sql('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO "reader"', dbname)
    code, out, err = run(capsys, "floor", "backfill", "--db", no_create, str(journal.export_file))
    assert code == 0 and err == "", err
    code, out, err = run(capsys, "floor", "verify", "--db", no_create)
    assert code == 0, err


def test_a_store_of_an_older_version_is_upgraded_by_its_owner_only_and_said_so(
        capsys, monkeypatch, tmp_path: Path, postgres_cluster: PostgresCluster, floor_db: str,
        journal: TableJournal) -> None:
    """An upgrade indexes and alters the tables: only their owner may. A review: a user that may
    write the tables and create in the schema was told to get the right to create, which it had.
    It is told that only the owner may, and the owner's run upgrades it."""
    from controller.floor.schema import migrate
    from controller.floor.store import connect

    conn = connect(floor_db)
    migrate(conn, target=2)
    conn.close()
    dbname = floor_db.rsplit("/", 1)[1]
    postgres_cluster.add_role("collector", "collector-password", dbname)  # may create in the schema
    postgres_cluster.sql('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO "collector"', dbname)
    postgres_cluster.sql('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO "collector"', dbname)
    monkeypatch.setenv("PGPASSFILE", str(postgres_cluster.password_file(tmp_path / "pgpass", dbname, "collector",
                                                                         "collector-password")))
    code, out, err = run(capsys, "floor", "backfill", "--db", postgres_cluster.url(dbname, user="collector"),
                         str(journal.export_file))
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert "may not upgrade the floor store from schema version 2 (must be owner of table" in err
    assert "only the owner of its tables may: run `shoectl floor backfill` or `floor collect` once as that user" in err
    assert count(floor_db, "SELECT max(version) FROM schema_version") == 2
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))[0] == 0  # the owner
    assert count(floor_db, "SELECT max(version) FROM schema_version") == 4


def test_the_owner_of_the_tables_upgrades_without_the_right_to_create_in_the_schema(
        capsys, monkeypatch, tmp_path: Path, postgres_cluster: PostgresCluster, floor_db: str,
        journal: TableJournal) -> None:
    """A review of the change: an upgrade ran `CREATE TABLE IF NOT EXISTS schema_version` first,
    and the owner of every table, without CREATE on the schema, was refused and told that only the
    owner may. An upgrade's steps are the tables' owner's: it upgrades."""
    from controller.floor.schema import migrate
    from controller.floor.store import connect

    dbname = floor_db.rsplit("/", 1)[1]
    postgres_cluster.add_role("keeper", "keeper-password", dbname)
    monkeypatch.setenv("PGPASSFILE", str(postgres_cluster.password_file(tmp_path / "pgpass", dbname, "keeper",
                                                                         "keeper-password")))
    url = postgres_cluster.url(dbname, user="keeper")
    conn = connect(url)
    migrate(conn, target=2)  # created by keeper: its tables
    conn.close()
    postgres_cluster.sql('REVOKE CREATE ON SCHEMA public FROM "keeper", PUBLIC', dbname)
    code, out, err = run(capsys, "floor", "backfill", "--db", url, str(journal.export_file))
    assert code == 0, err
    assert count(floor_db, "SELECT max(version) FROM schema_version") == 4


def test_reading_a_database_without_a_store_says_so(capsys, floor_db: str) -> None:
    code, out, err = run(capsys, "floor", "status", "--db", floor_db)
    assert code == 2 and "holds no floor store yet" in err and out == ""


def test_a_keys_file_lets_verify_recompute_hmac_hashes(capsys, floor_db: str, tmp_path_factory) -> None:
    keyed = run_table(tmp_path_factory.mktemp("hmac"), table_id="T3", rounds=2, hmac=True)
    keys = keyed.path.parent / "keys.toml"
    keys.write_text(f'[keys]\nT3 = "{keyed.key_file.name}"\n')
    assert run(capsys, "floor", "backfill", "--db", floor_db, "--keys", str(keys), str(keyed.export_file))[0] == 0
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--keys", str(keys))
    assert code == 0 and "(links and hashes checked)" in out
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db)
    assert code == 0 and "without its key: hashes not recomputed" in out


def test_status_counts_the_rounds_of_the_gaming_day_given(capsys, floor_db: str, journal: TableJournal) -> None:
    """The gaming day starts at ``--gaming-day`` in ``--timezone``: one that starts in a minute
    began 23 h 59 min ago and holds every round just dealt; a bad hour or zone is a usage error."""
    run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))
    soon = (datetime.now(timezone.utc) + timedelta(minutes=1)).strftime("%H:%M")
    code, out, _ = run(capsys, "floor", "status", "--db", floor_db, "--json", "--timezone", "UTC",
                       "--gaming-day", soon)
    status = json.loads(out)
    assert code == 0 and status["tables"][0]["rounds_today"] == 10
    started = datetime.fromisoformat(status["gaming_day_start"])
    assert timedelta(hours=23, minutes=58) < datetime.now(timezone.utc) - started <= timedelta(hours=24)
    for bad in (["--gaming-day", "25:00"], ["--gaming-day", " 06:00"], ["--gaming-day", "06:5"],
                ["--gaming-day", "\u0660\u0666:\u0660\u0660"], ["--timezone", "Nowhere/Else"]):
        code, out, err = run(capsys, "floor", "status", "--db", floor_db, *bad)
        assert (code, out) == (2, "") and err.count("\n") == 1 and "Traceback" not in err


def test_a_run_of_alarms_at_consecutive_entries_is_one_line_more_than_its_first() -> None:
    """A journal copied and run under a table's id raises a forgery alarm at every entry: a
    review counted 3,034 alarm lines in one status. A run of one table's and kind's alarms is its
    first and one line for the rest; short runs, other kinds and gaps stay line by line."""
    from controller.cli.floor_status import alarm_lines

    def alarm(seq, kind="forgery", table="T1"):
        return {"table": table, "seq": seq, "kind": kind, "detail": f"entry {seq} differs", "count": 1}

    alarms = [alarm(s) for s in range(1, 3035)] + [alarm(5, "gap"), alarm(7, "gap"), alarm(None, "new_journal"),
                                                   alarm(1, table="T2"), alarm(2, table="T2")]
    assert alarm_lines(alarms) == [
        "alarm T1 entry 1: forgery: entry 1 differs",
        "alarm T1 entries 2-3034: forgery, 3033 more alarms like the one above (floor status --json lists each)",
        "alarm T1 entry 5: gap: entry 5 differs", "alarm T1 entry 7: gap: entry 7 differs",
        "alarm T1: new_journal: entry None differs",
        "alarm T2 entry 1: forgery: entry 1 differs", "alarm T2 entry 2: forgery: entry 2 differs"]


@pytest.mark.parametrize(("command", "default"), [
    (("floor", "collect"), "shoectl-collector"), (("feed",), "shoectl-feed-TABLE"), (("run",), "shoectl-feed-TABLE"),
    (("scoreboard",), "shoectl-scoreboard-HOST-PID-N")])
def test_each_commands_help_names_the_client_id_it_uses_without_one(capsys, command: tuple[str, ...],
                                                                     default: str) -> None:
    """``--client-id``'s help said "default: one made from the command and the table" for every
    command, where the collector's is the fixed ``shoectl-collector`` (a review of the docs): each
    says its own, as docs/floor.md and the broker's log show it."""
    from controller.floor.collector import DEFAULT_CLIENT_ID

    assert DEFAULT_CLIENT_ID == "shoectl-collector"
    code, out, _ = run(capsys, *command, "--help")
    assert code == 0
    flat = " ".join(out.split()).replace("- ", "-")  # argparse wraps the help at hyphens
    assert f"--client-id ID the MQTT client id (default: {default}" in flat, flat


def test_verify_calls_a_table_with_nothing_stored_no_journal(capsys, floor_db: str) -> None:
    """A table the store knows only by what was dropped for it (junk published on its topic) was
    listed "T2: OK: 0 entries, last 0:000... (links (an HMAC journal without its key: hashes not
    recomputed) checked)": no journal of it is stored, SHA-256 or HMAC (a review of the floor under
    faults). Said as what it is; nothing in the store is wrong, so the exit stays 0."""
    from controller.floor.store import FloorStore

    store = FloorStore.open(floor_db, {})
    try:
        store.add([], [("T2", "not_json", "not one JSON object")])
    finally:
        store.close()
    code, out, err = run(capsys, "floor", "verify", "--db", floor_db)
    assert (code, err) == (0, "")
    assert out == ("T2: no entry of it is stored (what arrived for it was dropped or refused: shoectl floor status "
                   "counts it)\n"), out
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--json")
    assert code == 0 and json.loads(out) | {"table": "T2", "ok": True, "entries": 0} == json.loads(out)


@pytest.mark.parametrize("deleted", ["every entry", "the last ten"])
def test_verify_fails_a_table_whose_stored_entries_were_deleted_from_its_end(capsys, floor_db: str,
                                                                          journal: TableJournal, deleted: str) -> None:
    """Entries the store checked its chain through and that are gone since, at the end of the
    table's chain (all of them, or its last ten): "no entry of it is stored (what arrived for it was
    dropped or refused ...)", exit 0, or "OK" for the entries left (a review of this mend's first
    form). The store's chain position says it held them: a failure, as a deletion in the middle is."""
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))[0] == 0
    last = len(journal.lines)
    first = 1 if deleted == "every entry" else last - 9
    with psycopg.connect(floor_db) as conn:
        conn.execute("DELETE FROM entries WHERE table_id = 'T1' AND seq >= %s", (first,))
    code, out, err = run(capsys, "floor", "verify", "--db", floor_db)
    assert (code, err) == (1, f"shoectl floor verify: first bad entry: table T1, seq {first}\n")
    assert out == (f"T1: FAILED at entry {first}: entries {first}-{last} are missing from the store, which had "
                   f"checked its chain through entry {last}: deleted from the store?\n"), out
    code, out, _ = run(capsys, "floor", "verify", "--db", floor_db, "--json")
    assert code == 1 and json.loads(out)["ok"] is False and json.loads(out)["first_bad_seq"] == first
