"""What ``shoectl floor backfill`` and the readers make of input a person may well give them, on a
real PostgreSQL through the real CLI: an export whose lines end in CRLF holds the same entries as
the original (never a second body, never a forgery alarm); a table id no table can have is refused
and control characters are never printed raw; a payload the journal never stores and a database
that cannot be reached are said in the user's words, on one line, exit 2, nothing stored."""
from __future__ import annotations

import json
import re
from pathlib import Path

import psycopg
import pytest

from cli_run import run
from controller import table_ids
from controller.cli import run_options
from controller.floor import message
from floor.helpers import count, stored_lines
from floor.journals import TableJournal, run_table
from services.postgres import free_port

PYTHON_WORDS = re.compile(r"\b(dict|NoneType|float|str|Errno|repr)\b|\[Errno|payload\[")


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("table"), rounds=3, seed=17)


def crlf_export(journal: TableJournal, tmp_path: Path) -> Path:
    crlf = tmp_path / "crlf.jsonl"
    crlf.write_bytes("".join(journal.lines).replace("\n", "\r\n").encode())
    return crlf


def assert_no_alarm_and_verified(capsys, db: str) -> None:
    status = json.loads(run(capsys, "floor", "status", "--db", db, "--json")[1])
    assert status["alarms"] == [] and status["tables"][0]["open_alarms"] == {}, status["alarms"][:3]
    assert count(db, "SELECT count(*) FROM rejected_entries") == 0
    assert run(capsys, "floor", "verify", "--db", db)[0] == 0


@pytest.mark.parametrize("crlf_first", [True, False])
def test_a_crlf_export_holds_the_same_entries_as_the_original(capsys, floor_db: str, journal: TableJournal,
                                                              tmp_path: Path, crlf_first: bool) -> None:
    """Before: each line was stored with its CR, and the genuine file then gave N "refused (second
    bodies)" and N forgery alarms. The end of line is no part of the entry."""
    n = len(journal.lines)
    files = [crlf_export(journal, tmp_path), journal.export_file]
    if not crlf_first:
        files.reverse()
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(files[0]))
    assert code == 0 and f"{n} entries: {n} stored, 0 already stored" in out, err
    assert stored_lines(floor_db) == journal.lines  # byte for byte the export, CR or not
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(files[1]))
    assert code == 0 and f"{n} entries: 0 stored, {n} already stored, 0 refused (second bodies)" in out, out
    assert_no_alarm_and_verified(capsys, floor_db)


def test_lines_stored_with_their_cr_by_an_older_version_are_no_second_bodies(capsys, floor_db: str,
                                                                             journal: TableJournal) -> None:
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))[0] == 0
    with psycopg.connect(floor_db) as conn:  # what an older backfill of a CRLF file stored
        conn.execute("UPDATE entries SET line = line || E'\\r'")
    n = len(journal.lines)
    code, out, _ = run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))
    assert code == 0 and f"0 stored, {n} already stored, 0 refused" in out, out
    assert_no_alarm_and_verified(capsys, floor_db)


def test_the_floors_table_id_rule_is_shoectl_runs() -> None:
    """One rule for a table id (controller/table_ids.py), taken by the floor's ingest and by
    ``shoectl run --table-id`` alike: neither keeps a copy of its own that could drift."""
    assert message.TABLE_ID is table_ids.TABLE_ID and run_options.TABLE_ID is table_ids.TABLE_ID


@pytest.mark.parametrize("table_id", ["../../x", "\x1b[2J", "T1 x", "T" * 33, "-T1", "T1\u200e"])
def test_a_table_id_no_table_can_have_is_refused_and_never_printed_raw(capsys, floor_db: str, journal: TableJournal,
                                                                        tmp_path: Path, table_id: str) -> None:
    bad = tmp_path / "bad-id.jsonl"
    bad.write_text("".join(journal.lines[:3]) + json.dumps(json.loads(journal.lines[3]) | {"table_id": table_id})
                   + "\n", encoding="utf-8")
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(bad))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "line 4: table_id " in err and "is not a table id (1-32 letters, digits" in err, err
    assert "\x1b" not in err and (table_id != "\x1b[2J" or "'\\x1b[2J'" in err), err
    assert count(floor_db) == 0


def test_the_readers_escape_control_characters_a_store_already_holds(capsys, floor_db: str,
                                                                     journal: TableJournal) -> None:
    """A store written before table ids were checked may hold ``\\x1b[2J`` as a table id; status
    and verify show it escaped, never as the escape that would clear the terminal."""
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))[0] == 0
    with psycopg.connect(floor_db) as conn:
        for table in ("entries", "chain_positions"):
            conn.execute(f"UPDATE {table} SET table_id = E'\\x1b[2J'")
        conn.execute("UPDATE entries SET shoe_id = E'S\\x1b[31m' WHERE shoe_id IS NOT NULL")
        conn.execute("INSERT INTO floor_alarms (table_id, seq, kind, detail) VALUES (E'\\x1b[2J', 2, 'gap', E'\\x07')")
        conn.execute("INSERT INTO dropped_messages (table_id, reason, count, last_detail) "
                     "VALUES (E'\\x1b[2J', 'bad_field', 1, E'd\\x1b[0m')")
    outputs = [run(capsys, "floor", "status", "--db", floor_db), run(capsys, "floor", "verify", "--db", floor_db)]
    for code, out, err in outputs:
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", out + err), (out + err)[:300]
    status = outputs[0][1]
    assert status.startswith("\\x1b[2J: last entry") and "shoe S\\x1b[31m" in status
    assert "alarm \\x1b[2J entry 2: gap: \\x07" in status and "on \\x1b[2J: bad_field (last: d\\x1b[0m)" in status
    assert outputs[1][1].startswith("\\x1b[2J: FAILED") and "table \\x1b[2J, seq" in outputs[1][2]


def test_a_topics_table_id_recorded_for_a_dropped_message_is_escaped_and_bounded() -> None:
    assert message.shown_table("T1") == "T1" and message.shown_table("") == ""
    assert message.shown_table("\x1b[2J") == "\\x1b[2J"
    assert len(message.shown_table("\U0010ffff" * 1000)) <= message.MAX_ID_CHARS


def payload_cases(kind: str) -> list[tuple[object, str]]:
    which = f"entry 4 ({kind}): "
    return [
        (None, which + "its payload is not a JSON object (it is null)"),
        ("x", which + "its payload is not a JSON object (it is a text)"),
        ([1.5], which + "its payload is not a JSON object (it is a list)"),
        ({"x": 1.5}, which + "payload field x is a fractional number (1.5); amounts are whole minor units"),
        ({"bets": [{"amount": 1}, {"amount": 2.25}]},
         which + "payload field bets[1].amount is a fractional number (2.25); amounts are whole minor units"),
        ({"odd key": {"y": float("nan")}}, which + "payload field ['odd key'].y is NaN, not a number the journal stores"),
        ({"x": "\ud800"}, which + "payload field x holds text that is not valid Unicode"),
    ]


@pytest.mark.parametrize("case", range(7))
def test_a_payload_the_journal_never_stores_is_said_in_the_users_words(capsys, floor_db: str, journal: TableJournal,
                                                                        tmp_path: Path, case: int) -> None:
    """Before: ``the payload must be a dict (a JSON object), got NoneType``, ``payload['x'] is a
    float (1.5): ... write money ... as int ... or str``."""
    entry = json.loads(journal.lines[3])
    payload, says = payload_cases(entry["kind"])[case]
    bad = tmp_path / "bad-payload.jsonl"
    bad.write_text("".join(journal.lines[:3]) + json.dumps(entry | {"payload": payload}) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(bad))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert f"line 4: {says}; nothing was stored" in err, err
    assert not PYTHON_WORDS.search(err), err
    assert count(floor_db) == 0


@pytest.mark.parametrize("host, says", [
    ("no-such-host.invalid", "cannot reach the database at no-such-host.invalid: "),
    ("127.0.0.1:CLOSED", "the connection was refused (is the server running there?)"),
])
def test_a_database_that_cannot_be_reached_is_said_in_words(capsys, journal: TableJournal, host: str,
                                                           says: str) -> None:
    """Before: ``failed to resolve host 'h': [Errno -2] Name or service not known``. (A host that
    does not resolve is said so; where no name server answers, that is said instead.)"""
    host = host.replace("CLOSED", str(free_port()))
    for argv in (["status"], ["backfill", str(journal.export_file)]):
        code, out, err = run(capsys, "floor", *argv, "--db", f"postgresql://u@{host}/x")
        assert code == 2 and out == "" and err.count("\n") == 1 and says in err, err
        assert not PYTHON_WORDS.search(err) and "Is the server" not in err, err


def test_a_password_the_server_asks_for_and_none_found_is_said_in_words(capsys, postgres_cluster, floor_db: str,
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    """Before: ``fe_sendauth: no password supplied`` (libpq's name for it)."""
    monkeypatch.setenv("PGPASSFILE", str(tmp_path / "none"))
    dbname = floor_db.rsplit("/", 1)[1]
    postgres_cluster.add_role("nopass", "its-password", dbname)
    code, out, err = run(capsys, "floor", "status", "--db", postgres_cluster.url(dbname, user="nopass"))
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert "the server asks for a password and none was found" in err and "fe_sendauth" not in err, err


def test_a_store_an_earlier_shoectl_wrote_with_a_table_id_the_rule_refuses_is_still_read(
        capsys, floor_db: str, tmp_path: Path) -> None:
    """Before table ids were checked, a journal made through the API with any id ("Salon Privé 7")
    was stored as it was; the readers (verify, status, rounds) read such a store, where the rule
    now refuses the id on the way in (backfill, the collector)."""
    from controller.floor.store import FloorStore
    from controller.journal import Journal, Record

    path = tmp_path / "salon.db"
    with Journal.open(path, table_id="Salon Privé 7") as j:
        j.append_batch([Record("shoe_start", {"decks": 8, "shoe": "S1"}, shoe="S1")])
    export = tmp_path / "salon.jsonl"
    code, out, _ = run(capsys, "journal", "export", str(path))
    export.write_text(out)
    assert "is not a table id" in run(capsys, "floor", "backfill", "--db", floor_db, str(export))[2]
    store = FloorStore.open(floor_db)
    try:  # what an earlier shoectl's backfill stored
        store.add([message.parse_entry(line, stored=True) for line in out.splitlines()])
    finally:
        store.close()
    for argv in (["verify"], ["status"], ["rounds", "--table", "Salon Privé 7"]):
        code, out, err = run(capsys, "floor", *argv, "--db", floor_db)
        assert "Traceback" not in err and code in (0, 2), err
        assert code == 0 or "no " in err, (argv, err)
    assert "Salon Privé 7: OK: 1 entries" in run(capsys, "floor", "verify", "--db", floor_db)[1]


def _doctored(line: str, case: str) -> str:
    """``line`` changed so that its hash still fits (a review, 2026-12-03)."""
    body = line.rstrip("\n")
    if case == "key twice":  # json.loads keeps the last "kind": a reader that keeps the first sees void_round
        kind = json.loads(body)["kind"]
        return body.replace(f'"kind":"{kind}"', f'"kind":"void_round","kind":"{kind}"', 1) + "\n"
    if case == "key of no entry":
        return body[:-1] + ',"note":"not covered by any hash"}\n'
    if case == "spaced":
        return json.dumps(json.loads(body), ensure_ascii=False) + "\n"
    if case == "schema_version true":
        return body.replace('"schema_version":2', '"schema_version":true') + "\n"
    raise AssertionError(case)


@pytest.mark.parametrize("case, says", [
    ("key twice", "key 'kind' is given twice; refused: a reader may take either"),
    ("key of no entry", "key 'note' is not a journal entry's; refused: no hash covers it"),
    # it said "refused: only that line is stored; nothing was stored" (a review: which was it?)
    ("spaced", "not written as a journal writes it (key order, spacing or escapes); refused: the floor stores an "
               "entry only as its journal wrote it; nothing was stored"),
    ("schema_version true", "schema_version is neither 1 nor 2"),
])
def test_a_line_that_is_not_the_journals_own_is_refused_though_its_hash_fits(capsys, floor_db: str,
                                                                              journal: TableJournal, tmp_path: Path,
                                                                              case: str, says: str) -> None:
    """A line whose every field checks and whose hash fits, but that is not the line the journal
    wrote: stored, it was what the store gave back for that entry, verified, and the table's own
    line was then refused as a second body (a forgery alarm on the genuine entry). ``true`` for
    ``schema_version`` passed as 1 and failed in the database, in its words."""
    assert '"schema_version":2' in journal.lines[1]
    bad = tmp_path / "doctored.jsonl"
    bad.write_text(journal.lines[0] + _doctored(journal.lines[1], case), encoding="utf-8")
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(bad))
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert "line 2: " in err and says in err and "nothing was stored" in err, err
    assert count(floor_db) == 0
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))
    assert code == 0 and stored_lines(floor_db) == journal.lines
    assert_no_alarm_and_verified(capsys, floor_db)


def test_an_entry_nested_too_deeply_is_refused_in_words_at_every_depth(journal: TableJournal) -> None:
    """A review found a payload nested about 987 deep parse as JSON and then stop the collector
    (a RecursionError when the line was written again to compare it), at every restart while the
    broker held the message; ``floor backfill`` ended in a traceback. At every depth the line is
    now read as an entry, or refused as one, in words (the chain check judges what is read)."""
    line = journal.lines[0].rstrip("\n")  # "a" sorts before every key of the payload: the line stays canonical
    refusals = set()
    for depth in range(900, 1200, 3):
        deep = line.replace('"payload":{', '"payload":{"a":' + "[" * depth + "]" * depth + ",", 1)
        try:
            message.parse_entry(deep)
        except message.NotAnEntry as exc:
            refusals.add(exc.detail)
    assert refusals == {"a payload nested too deeply to be a journal entry's",
                        "JSON nested too deeply to be a journal entry"}, refusals


def test_backfill_refuses_a_deeply_nested_line_in_one_line(capsys, floor_db: str, journal: TableJournal,
                                                          tmp_path: Path) -> None:
    deep = tmp_path / "deep.jsonl"
    line = journal.lines[0].rstrip("\n")
    deep.write_text(line.replace('"payload":{', '"payload":{"a":' + "[" * 990 + "]" * 990 + ",", 1) + "\n")
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(deep))
    assert code == 2 and err.count("\n") == 1 and "line 1:" in err and "nothing was stored" in err, err
    assert count(floor_db, "SELECT count(*) FROM entries") == 0


def test_a_stored_line_larger_than_a_message_may_be_is_read_back() -> None:
    """A review found a collector run with ``--max-message-bytes`` above the default store an
    entry that its own chain check, and every reader (``floor verify``, ``status``, ``rounds``), then
    refused to read back as too large: the collector retried for ever and the readers ended in a
    traceback. A line from the store was taken under the collector's own limit."""
    big = json.dumps({"blob": "x" * (message.MAX_MESSAGE_BYTES + 10)})
    with pytest.raises(message.NotAnEntry) as refused:
        message.parse_entry(big)
    assert refused.value.reason == "too_large"
    with pytest.raises(message.NotAnEntry) as refused:  # read back: it is not refused for its size
        message.parse_entry(big, stored=True)
    assert refused.value.reason == "bad_field"


def test_a_stored_row_that_is_no_entry_is_said_in_one_line_by_the_readers(capsys, floor_db: str,
                                                                         journal: TableJournal) -> None:
    """A row changed in the database by hand into something no journal writes: the readers say so
    on one line, exit 2 (a review found a traceback)."""
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))
    assert code == 0, err
    with psycopg.connect(floor_db) as conn:
        conn.execute("UPDATE entries SET line = 'not an entry' WHERE seq = 2")
    for argv in (["verify"], ["rounds", "--table", "T1"]):
        code, out, err = run(capsys, "floor", *argv, "--db", floor_db)
        assert (code, err.count("\n")) == (2, 1), err
        assert "a row stored in the database is not a journal entry: not one JSON object" in err, err
