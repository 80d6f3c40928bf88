"""The floor's input side at its edges: parse_entry's column ranges and size limit, the topics,
backfill's blank lines, and a second entry 1 that names no genesis hash (a forgery, not a new
journal). A mutation review found each of these surviving the tests before."""
from __future__ import annotations

import json

import pytest

from cli_run import run
from controller.floor.message import NotAnEntry, parse_entry
from controller.floor.store import FloorStore
from controller.floor.topics import journal_topic, table_of
from floor.journals import TableJournal, forge_next, items, run_table


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("table"), rounds=2)


def _changed(line: str, **changes: object) -> str:
    obj = json.loads(line)
    obj.update(changes)
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize("column, value", [
    ("seq", 0),                        # "seq is not a whole number from 1"
    ("seq", 2**63),                    # beyond PostgreSQL's bigint
    ("device_counter", 2**63),
    ("hash", "a" * 63),                # "64 lowercase hex digits"
    ("prev_hash", "a" * 65),
    ("ts", "yesterday"),               # "ts is not a journal timestamp"
    ("operator", "op\x00erator"),      # "a NUL character in a column PostgreSQL cannot store"
])
def test_a_column_out_of_its_range_is_bad_field(journal: TableJournal, column: str, value: object) -> None:
    """message.py: "a column missing or of the wrong type ... a NUL character in a column PostgreSQL
    cannot store" is not an entry (``bad_field``), dropped and counted, never stored."""
    with pytest.raises(NotAnEntry) as info:
        parse_entry(_changed(journal.lines[1], **{column: value}))
    assert info.value.reason == "bad_field"


def test_the_size_limit_is_exact(journal: TableJournal) -> None:
    """docs/floor.md: "larger than --max-message-bytes" is dropped: one byte over is too large, the
    limit itself is not."""
    line = journal.lines[1].encode()
    assert parse_entry(line, max_bytes=len(line)).seq == 2
    with pytest.raises(NotAnEntry) as info:
        parse_entry(line, max_bytes=len(line) - 1)
    assert info.value.reason == "too_large"


def test_topics_name_only_table_ids_and_read_back_only_theirs() -> None:
    """topics.py: ``table_topic`` raises ValueError "for a table id MQTT would misread"; ``table_of``
    gives "the table id of shoectl/v1/tables/<id>/<leaf>, None for any other topic"."""
    for bad in ("", "T#1", "T+1", "T/1", "T\x001"):
        with pytest.raises(ValueError):
            journal_topic(bad)
    assert table_of("shoectl/v1/tables/T1/journal") == "T1"
    for other in ("shoectl/v1/tables//journal", "shoectl/v1/tables/T1/x/journal", "other/v1/tables/T1/journal",
                  "shoectl/v1/tables/T1/status", "x/shoectl/v1/tables/T1/journal",
                  "shoectl/v2/tables/T1/journal"):  # "a change of a message's meaning is a new version"
        assert table_of(other) is None, other


def test_blank_lines_are_skipped_and_a_file_of_blank_lines_is_refused(capsys, floor_db: str, journal: TableJournal,
                                                                       tmp_path) -> None:
    """backfill.py skips a line holding only white space (``if not body.strip(): continue``) and
    refuses a file with no entry: "no journal entries in the file" (exit 2, nothing stored)."""
    blank = tmp_path / "blank.jsonl"
    blank.write_text("\n \r\n\n")
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(blank))
    assert code == 2 and "no journal entries in the file" in err, (code, out, err)
    spaced = tmp_path / "spaced.jsonl"
    spaced.write_text("".join(journal.lines[:3]) + "\n" + "".join(journal.lines[3:]) + "\r\n")
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(spaced))
    assert code == 0, err
    assert out.startswith(f"{spaced}: {len(journal.lines)} entries: {len(journal.lines)} stored"), out


def test_a_second_entry_1_that_names_no_genesis_hash_is_a_forgery_not_a_new_journal(store: FloorStore,
                                                                                    journal: TableJournal) -> None:
    """docs/floor.md, A table's new journal: a new entry 1 "names the genesis hash" (every journal's
    entry 1 does). A second body of entry 1 that names anything else is no journal's first entry: a
    second body, ``forgery``, not a ``new_journal`` to be counted and forgotten."""
    store.add(items(journal.lines))
    forged = forge_next(journal.lines[0], prev_hash="f" * 64, operator="mallory")
    result = store.add(items([forged]))
    assert result.new_journal == 0 and result.refused == 1
    kinds = [k for (k,) in store.conn.execute("SELECT kind FROM floor_alarms WHERE open ORDER BY id").fetchall()]
    store.conn.commit()
    assert kinds == ["forgery"]
