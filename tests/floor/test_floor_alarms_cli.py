"""``shoectl floor alarms`` on a real PostgreSQL: the store's alarms listed with their numbers,
and closed by a person with why, all or none, keeping the database role that closed them (a
review of the floor: an alarm other than a gap stayed open for ever unless closed in SQL)."""
from __future__ import annotations

import json

import pytest

from cli_run import run
from floor.helpers import count
from floor.journals import TableJournal, run_table
from services.postgres import SERVER_ACCOUNT


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("table"), rounds=3, seed=12)


def _alarmed_store(capsys, floor_db: str, journal: TableJournal, tmp_path) -> dict[str, int]:
    """The journal backfilled without entries 5-7 (a gap alarm), then a second body of entry 2
    (a forgery alarm): each alarm's number by kind."""
    holed = tmp_path / "holed.jsonl"
    holed.write_text("".join(journal.lines[:4] + journal.lines[7:]), encoding="utf-8")
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(holed))[0] == 0
    forged = tmp_path / "forged.jsonl"
    entry = json.loads(journal.lines[1])
    entry["ts"] = entry["ts"][:-2] + ("1Z" if entry["ts"][-2] != "1" else "2Z")
    forged.write_text(json.dumps(entry, separators=(",", ":")) + "\n", encoding="utf-8")
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(forged))[0] == 0
    code, out, _ = run(capsys, "floor", "alarms", "--db", floor_db, "--json")
    assert code == 0
    return {a["kind"]: a["id"] for a in json.loads(out)["alarms"]}


def test_a_person_closes_an_alarm_with_why_and_the_record_keeps_who(capsys, floor_db: str,
                                                                      journal: TableJournal, tmp_path) -> None:
    ids = _alarmed_store(capsys, floor_db, journal, tmp_path)
    assert set(ids) == {"gap", "forgery"}
    code, out, err = run(capsys, "floor", "alarms", "--db", floor_db)
    assert (code, err) == (0, "") and len(out.splitlines()) == 2
    assert out.startswith(f"alarm {ids['gap']}: T1 entry 5: gap (") and "entries 5-7 are missing" in out
    assert f"alarm {ids['forgery']}: T1 entry 2: forgery (" in out

    why = "checked with surveillance: a test publisher on the floor's network"
    code, out, err = run(capsys, "floor", "alarms", "--db", floor_db, "--close", str(ids["forgery"]), "--why", why)
    assert (code, err) == (0, "")
    assert out.startswith(f"closed alarm {ids['forgery']}: T1 entry 2: forgery (")
    assert out.endswith(f" by {SERVER_ACCOUNT}: {why}\n")
    assert count(floor_db, f"SELECT count(*) FROM floor_alarms WHERE id = {ids['forgery']} AND NOT open "
                           f"AND closed_by = '{SERVER_ACCOUNT}' AND closed_at IS NOT NULL") == 1

    # the open list and the status no longer hold it; --all does, with when, by whom and why
    assert f"alarm {ids['forgery']}:" not in run(capsys, "floor", "alarms", "--db", floor_db)[1]
    assert "forgery" not in run(capsys, "floor", "status", "--db", floor_db)[1]
    everything = run(capsys, "floor", "alarms", "--db", floor_db, "--all", "--json")[1]
    closed = [a for a in json.loads(everything)["alarms"] if a["id"] == ids["forgery"]]
    assert closed[0]["open"] is False and closed[0]["closed_why"] == why and closed[0]["closed_by"] == SERVER_ACCOUNT

    # the gap closes by itself once filled: --all says the store closed it, and why
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))[0] == 0
    code, out, _ = run(capsys, "floor", "alarms", "--db", floor_db)
    assert (code, out) == (0, "no open alarm\n")
    lines = run(capsys, "floor", "alarms", "--db", floor_db, "--all", "--table", "T1")[1].splitlines()
    assert len(lines) == 2 and " by the store: filled: the chain verifies through entry " in lines[0]


def test_a_refused_close_closes_nothing_and_is_one_line(capsys, floor_db: str, journal: TableJournal,
                                                        tmp_path) -> None:
    ids = _alarmed_store(capsys, floor_db, journal, tmp_path)
    open_alarms = "SELECT count(*) FROM floor_alarms WHERE open"
    forgery = str(ids["forgery"])
    for argv, says in (
            (["--close", forgery, "--close", "999", "--why", "dealt with"], "no alarm 999 in the store"),
            (["--close", forgery], "--close needs --why TEXT"),
            (["--close", forgery, "--why", "   "], "must say why the alarm is closed"),
            (["--close", forgery, "--why", "two\nlines"], "holds a control character"),
            (["--close", forgery, "--why", "x" * 501], "is 501 characters long; at most 500"),
            (["--close", "0", "--why", "dealt with"], "--close"),
            (["--close", forgery, "--all", "--why", "dealt with"], "takes neither --all nor --table"),
            (["--why", "dealt with"], "--why goes with --close N")):
        code, out, err = run(capsys, "floor", "alarms", "--db", floor_db, *argv)
        assert (code, out) == (2, "") and err.count("\n") == 1 and says in err, (argv, err)
        assert "Traceback" not in err and count(floor_db, open_alarms) == 2
    assert run(capsys, "floor", "alarms", "--db", floor_db, "--close", forgery, "--why", "dealt with")[0] == 0
    code, out, err = run(capsys, "floor", "alarms", "--db", floor_db, "--close", forgery, "--why", "again")
    assert (code, out) == (2, "") and f"alarm {forgery} is closed already" in err
    assert count(floor_db, "SELECT count(*) FROM floor_alarms WHERE closed_why = 'again'") == 0
