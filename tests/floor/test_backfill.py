"""``shoectl floor backfill`` through the real CLI on a real PostgreSQL: a `journal export` file
goes through the collector's own path (a gap closed, duplicates harmless), and a file that is not
one — or is missing, or a directory — is refused on one line, exit 2, with nothing stored."""
from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from cli_run import run
from floor.helpers import count
from floor.journals import TableJournal, forge_next, run_table


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> TableJournal:
    return run_table(tmp_path_factory.mktemp("table"), rounds=6, seed=13)


def test_a_backfill_closes_a_gap_and_a_second_one_changes_nothing(capsys, floor_db: str, journal: TableJournal,
                                                                   tmp_path: Path) -> None:
    part = tmp_path / "part.jsonl"
    part.write_text("".join(journal.lines[:40] + journal.lines[55:]), encoding="utf-8")
    code, out, _ = run(capsys, "floor", "backfill", "--db", floor_db, str(part))
    assert code == 0 and "T1 checked to 40" in out
    code, out, _ = run(capsys, "floor", "status", "--db", floor_db)
    assert "1 gap" in out and "alarm T1 entry 41: gap: entries 41-55 are missing (entry 56 arrived)" in out
    code, out, err = run(capsys, "floor", "verify", "--db", floor_db)
    assert code == 1 and "T1: FAILED at entry 41" in out and "table T1, seq 41" in err
    code, out, _ = run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))
    assert code == 0 and f"{len(journal.lines) - 40 - (len(journal.lines) - 55)} stored" in out
    assert f"T1 checked to {len(journal.lines)}" in out
    status = json.loads(run(capsys, "floor", "status", "--db", floor_db, "--json")[1])
    assert status["alarms"] == [] and status["tables"][0]["open_alarms"] == {}
    assert run(capsys, "floor", "verify", "--db", floor_db)[0] == 0
    code, out, _ = run(capsys, "floor", "backfill", "--db", floor_db, str(journal.export_file))
    assert code == 0 and f"0 stored, {len(journal.lines)} already stored" in out


@pytest.mark.parametrize("content, says", [
    (b"not json\n", "line 2: not one JSON object"),
    (b'{"seq": 1}\n', "line 2: no ts, kind"),
    (b"", "no journal entries"),
    (b"\xff\xfe\n", "line 2: not UTF-8"),
])
def test_a_bad_export_file_is_refused_whole_and_nothing_is_stored(capsys, floor_db: str, journal: TableJournal,
                                                                   tmp_path: Path, content: bytes, says: str) -> None:
    first = tmp_path / "first.jsonl"
    first.write_text("".join(journal.lines[:5]), encoding="utf-8")
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(first))[0] == 0
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(journal.lines[5].encode() + content if content else content)
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(bad))
    assert code == 2 and out == "" and says in err and err.count("\n") == 1
    assert count(floor_db) == 5


def test_an_entry_with_a_table_id_no_table_can_have_is_refused(capsys, floor_db: str, journal: TableJournal,
                                                               tmp_path: Path) -> None:
    """A table id keys the store's indexes: one longer than any table's (at most 32 characters) is
    not an entry, whatever its length (a long one would exceed what an index row may hold); it is
    shown cut short."""
    bad = tmp_path / "long-id.jsonl"
    bad.write_text(json.dumps(json.loads(journal.lines[0]) | {"table_id": "T" * 3000}) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(bad))
    assert code == 2 and f"line 1: table_id '{'T' * 40}' is not a table id (1-32 letters" in err
    assert err.count("\n") == 1 and len(err) < 300


def test_a_missing_or_unusable_file_or_keys_file_is_one_line(capsys, floor_db: str, journal: TableJournal,
                                                            tmp_path: Path) -> None:
    code, _, err = run(capsys, "floor", "backfill", "--db", floor_db, str(tmp_path / "none.jsonl"))
    assert code == 2 and "no such file" in err
    code, _, err = run(capsys, "floor", "backfill", "--db", floor_db, str(tmp_path))
    assert code == 2 and err.count("\n") == 1
    keys = tmp_path / "keys.toml"
    keys.write_text('[keys]\nT1 = "missing.key"\n')
    code, _, err = run(capsys, "floor", "verify", "--db", floor_db, "--keys", str(keys))
    assert code == 2 and "keys.T1" in err and "not found" in err and err.count("\n") == 1


def test_a_journal_database_given_by_mistake_is_named_as_such(capsys, floor_db: str, journal: TableJournal) -> None:
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(journal.path))
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "not a journal export (this looks like a journal database: use shoectl journal export FILE)" in err
    assert count(floor_db) == 0


def warm_up(capsys, db: str, journal: TableJournal, tmp_path: Path) -> None:
    """A first backfill (5 entries), so that every module is imported before memory is traced."""
    first = tmp_path / "warm-up.jsonl"
    first.write_text("".join(journal.lines[:5]), encoding="utf-8")
    assert run(capsys, "floor", "backfill", "--db", db, str(first))[0] == 0


def test_a_line_longer_than_the_limit_is_refused_without_being_read_whole(
        capsys, floor_db: str, journal: TableJournal, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file of one line without a newline (a stray binary, say) is read in bounded pieces: its
    first piece over the limit refuses the file; the rest is never read."""
    big = tmp_path / "no-newline.jsonl"
    big.write_bytes(journal.lines[0].encode() + b"x" * (8 * 1024 * 1024))
    warm_up(capsys, floor_db, journal, tmp_path)
    tracemalloc.start()
    try:
        code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(big))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 2 and "line 2: longer than the limit of 1048576 bytes" in err and err.count("\n") == 1
    assert peak < 4 * 1024 * 1024, peak  # the 8 MiB line was never held whole
    assert count(floor_db) == 5  # the warm-up's


def synthetic_export(path: Path, first_line: str, entries: int) -> Path:
    """An export of ``entries`` entries: ``first_line`` (entry 1) and copies of it chained on
    (seq + 1, prev_hash the previous hash, the SHA-256 recomputed): a well-formed journal."""
    line = first_line
    with path.open("w", encoding="utf-8") as out:
        for _ in range(entries):
            out.write(line)
            line = forge_next(line, seq_delta=1, prev_hash=json.loads(line)["hash"])
    return path


def test_memory_does_not_grow_with_the_file(capsys, floor_db: str, postgres_cluster, journal: TableJournal,
                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The file is streamed in batches within one transaction: the peak of Python memory for a
    file four times larger is about the same (the old reader held every entry, ~2.4 kB each)."""
    monkeypatch.setattr("controller.floor.backfill.BATCH", 100)
    warm_up(capsys, floor_db, journal, tmp_path)
    peaks = []
    for entries in (500, 2000):
        export = synthetic_export(tmp_path / f"{entries}.jsonl", journal.lines[0], entries)
        name = postgres_cluster.create_database()
        tracemalloc.start()
        try:
            code, out, err = run(capsys, "floor", "backfill", "--db", postgres_cluster.url(name), str(export))
            peaks.append(tracemalloc.get_traced_memory()[1])
        finally:
            tracemalloc.stop()
            postgres_cluster.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        assert code == 0 and f"{entries} stored" in out and f"T1 checked to {entries}" in out, err
    assert peaks[1] < peaks[0] * 1.5, peaks


def test_a_bad_line_late_in_a_file_stores_nothing_of_the_batches_before_it(capsys, floor_db: str,
                                                                           journal: TableJournal, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("controller.floor.backfill.BATCH", 10)
    bad = tmp_path / "late-bad.jsonl"
    bad.write_text("".join(journal.lines[:55]) + "not json\n", encoding="utf-8")
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(bad))
    assert code == 2 and "line 56: not one JSON object; nothing was stored" in err
    assert count(floor_db) == 0 and count(floor_db, "SELECT count(*) FROM chain_positions") == 0


def test_an_entry_the_chain_check_sets_aside_is_not_counted_as_stored(capsys, floor_db: str, journal: TableJournal,
                                                                      tmp_path: Path) -> None:
    """A forged hash on entry 3: the chain check moves it out (alarmed) and entries 4-5 wait
    behind the gap; the summary says 4 stored and 1 set aside, not 5 stored."""
    forged = json.loads(journal.lines[2]) | {"hash": "ab" * 32}
    bad = tmp_path / "forged.jsonl"
    bad.write_text("".join(journal.lines[:2]) + json.dumps(forged, ensure_ascii=False, separators=(",", ":")) + "\n"
                   + "".join(journal.lines[3:5]),
                   encoding="utf-8")
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(bad))
    assert code == 0 and err == ""
    assert out.startswith(f"{bad}: 5 entries: 4 stored, 1 set aside by the chain check (T1 entry 3: bad_hash; "
                          "kept in rejected_entries, alarmed), 0 already stored, 0 refused (second bodies); "
                          "T1 checked to 2"), out
    assert count(floor_db) == 4 and count(floor_db, "SELECT count(*) FROM rejected_entries") == 1


def test_status_gives_the_round_of_a_table_betting_between_rounds(capsys, floor_db: str, journal: TableJournal,
                                                                  tmp_path: Path) -> None:
    """A floor operator's review: ``floor status --json`` gave ``"round": null`` for a table
    betting in the middle of a shoe (the last entry, a wager, has no round); the feed's status and
    the scoreboard give the round in play or the last one of the shoe."""
    docs = [json.loads(line) for line in journal.lines]
    i = max(k for k, d in enumerate(docs) if d["round_no"] is None and d["shoe_id"] is not None
            and any(e["kind"] == "round_result" and e["shoe_id"] == d["shoe_id"] for e in docs[:k]))
    part = tmp_path / "betting.jsonl"
    part.write_text("".join(journal.lines[:i + 1]), encoding="utf-8")
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(part))[0] == 0
    [table] = json.loads(run(capsys, "floor", "status", "--db", floor_db, "--json")[1])["tables"]
    shoe = docs[i]["shoe_id"]
    assert table["round"] == max(d["round_no"] or 0 for d in docs[:i + 1] if d["shoe_id"] == shoe) > 0


def test_status_gives_the_round_in_play_when_the_last_round_s_edge_record_comes_after_its_start(
        capsys, floor_db: str, journal: TableJournal, tmp_path: Path) -> None:
    """The edge monitor journals a round's figures once they are computed, which may be after the
    next round began; its entry names the round it follows. `floor status` gave that round (the last
    entry with a round), not the round in play (found by a fresh clone's CI, once)."""
    docs = [json.loads(line) for line in journal.lines]
    edge = next(k for k, d in enumerate(docs) if d["kind"] == "edge" and d["round_no"])
    start = next(k for k, d in enumerate(docs) if d["kind"] == "round_start" and d["round_no"] > docs[edge]["round_no"])
    if start < edge:  # the journal has it already: the edge record came after the next round's start
        lines = journal.lines[:edge + 1]
    else:  # its figures, late: after the next round's start
        lines = journal.lines[:start + 1] + [forge_next(journal.lines[edge], prev_hash=docs[start]["hash"],
                                                        seq_delta=docs[start]["seq"] + 1 - docs[edge]["seq"],
                                                        ts=docs[start]["ts"])]
    part = tmp_path / "late-edge.jsonl"
    part.write_text("".join(lines), encoding="utf-8")
    assert run(capsys, "floor", "backfill", "--db", floor_db, str(part))[0] == 0
    [table] = json.loads(run(capsys, "floor", "status", "--db", floor_db, "--json")[1])["tables"]
    begun = max(json.loads(line)["round_no"] for line in lines if json.loads(line)["kind"] == "round_start")
    assert json.loads(lines[-1])["kind"] == "edge" and json.loads(lines[-1])["round_no"] < begun
    assert table["round"] == begun


def test_the_summary_names_the_first_five_set_aside_and_counts_the_rest(capsys, floor_db: str, journal: TableJournal,
                                                                      tmp_path: Path, monkeypatch) -> None:
    """Seven tables, each an entry 1 in a plain SHA-256 chain and an entry 2 that does not follow
    it, in batches of two: all seven entries 2 are set aside and alarmed, and the one summary line
    names the first five (across batches, never more) and counts the other two, so a file of
    thousands of forgeries is still one readable line."""
    monkeypatch.setattr("controller.floor.backfill.BATCH", 2)
    lines = [forge_next(journal.lines[k], table_id=f"T{n}") for n in range(2, 9) for k in (0, 1)]
    bad = tmp_path / "forged.jsonl"
    bad.write_text("".join(lines), encoding="utf-8")
    code, out, err = run(capsys, "floor", "backfill", "--db", floor_db, str(bad))
    assert code == 0 and err == "", err
    named = ", ".join(f"T{n} entry 2: chain_break" for n in range(2, 7))
    assert out.startswith(f"{bad}: 14 entries: 7 stored, 7 set aside by the chain check ({named}, and 2 more; "
                          "kept in rejected_entries, alarmed), 0 already stored"), out
    assert count(floor_db, "SELECT count(*) FROM rejected_entries") == 7
