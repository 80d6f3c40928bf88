"""Journals damaged past what ``journal verify`` can see, read by the commands that read them: a
schema whose text is not UTF-8, and entries rewritten with their hash chain recomputed (a forger
without an HMAC key; ``verify`` says "ok"). Each command says one line naming the entry, exit 2,
and leaves the file byte for byte as it was; a feed cursor past the journal's end is refused."""
from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from cli_run import dealt_journal, run
from tampering import rechain, rewrite, rows, tamper

from controller.journal import JournalReader
from controller.journal.errors import JournalError

SAID = ("Traceback", "Error:", "NoneType", "KeyError", "TypeError", "dict", "str instance")


@pytest.fixture(scope="module")
def dealt(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return dealt_journal(tmp_path_factory.mktemp("dealt") / "j.db", "--rounds", "3", "--seed", "5")


def copy(dealt: Path, tmp_path: Path) -> Path:
    path = tmp_path / "j.db"
    shutil.copyfile(dealt, path)
    return path


def one_line(capsys, *argv: str) -> str:
    """The one line a refusal says; a copy re-hashed after a forgery has no anchor, which every
    reader says first (a surveillance review: only verify did)."""
    code, _, err = run(capsys, *argv)
    lines = [line for line in err.strip().splitlines() if "checked without an anchor" not in line]
    assert code == 2 and len(lines) == 1, err
    assert not any(word in err for word in SAID), err
    return lines[0]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def forge(path: Path, kind: str, change) -> int:
    """Rewrite the first ``kind`` entry's payload with ``change(payload)`` (or its kind, if
    ``change`` is a str) and recompute the chain; returns its seq."""
    entries = rows(path)
    i = next(i for i, r in enumerate(entries) if r[2] == kind)
    r = list(entries[i])
    if isinstance(change, str):
        r[2] = change
    else:
        r[10] = json.dumps(change(json.loads(r[10])), separators=(",", ":"), sort_keys=True)
    entries[i] = tuple(r)
    rewrite(path, rechain(entries))
    return r[0]


def test_a_schema_that_is_not_utf8_text_is_not_a_journal_for_any_reader(capsys, dealt: Path, tmp_path: Path) -> None:
    path = copy(dealt, tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE zz (y)")
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute("UPDATE sqlite_master SET name = CAST(X'7AFF' AS TEXT) WHERE name = 'zz'")
    conn.commit()
    conn.close()
    before = digest(path)
    for argv in (["journal", "verify"], ["journal", "replay"], ["journal", "export"], ["roadmap"]):
        assert "its SQLite schema is damaged (text that is not UTF-8)" in one_line(capsys, *argv, str(path))
    line = one_line(capsys, "run", "--journal", str(path), "--rounds", "1", "--speed", "max", "--display", "lines")
    assert "not a journal" in line
    assert digest(path) == before


def test_an_entrys_text_that_is_not_utf8_is_named_by_every_reader(capsys, dealt: Path, tmp_path: Path) -> None:
    """Text SQLite stored without checking it (written by another tool) used to reach the user as
    sqlite3's own sentence: the entry is named, verify fails on it as on any damaged entry, and a
    reader told not to verify reads the entries after it."""
    path = copy(dealt, tmp_path)
    total = len(rows(path))
    tamper(path, "UPDATE entries SET payload = CAST(X'7B22FF22' AS TEXT) WHERE seq IN (7, 9)")
    before = digest(path)
    code, out, err = run(capsys, "journal", "verify", str(path))
    assert code == 1 and "FAILED at entry 7" in out + err and "payload is not UTF-8 text" in out + err
    for argv in (["journal", "replay"], ["journal", "export"], ["roadmap"]):
        code, out, err = run(capsys, *argv, str(path))
        assert code == 1 and out == "" and "entry 7: its payload is not UTF-8 text" in err, err
        assert err.count("\n") == 1 and not any(word in err for word in SAID), err
    code, out, err = run(capsys, "journal", "export", "--no-verify", str(path))
    exported = [json.loads(line)["seq"] for line in out.splitlines()]
    assert code == 0 and exported == [seq for seq in range(1, total + 1) if seq not in (7, 9)]
    assert "entry 7: its payload is not UTF-8 text" in err and "read all the same" in err
    assert digest(path) == before


def test_a_reader_that_does_not_check_names_the_entry_whose_text_is_not_utf8(dealt: Path, tmp_path: Path) -> None:
    """The readers that follow a journal without its check (the scoreboard, the feed) say which
    entry, in the user's words, instead of sqlite3's sentence."""
    path = copy(dealt, tmp_path)
    tamper(path, "UPDATE entries SET kind = CAST(X'6361FF' AS TEXT) WHERE seq = 12")
    with JournalReader.open(path) as reader:
        with pytest.raises(JournalError) as raised:
            list(reader.entries())
    said = str(raised.value)
    assert said == f"{path}: the journal is damaged: entry 12's kind is not UTF-8 text; run `shoectl journal verify`"


@pytest.mark.parametrize("kind, change, said", [
    ("settlement", lambda p: {}, "(settlement): malformed payload: no field 'net'"),
    ("burn", lambda p: {**p, "card": 5}, "(burn): malformed payload: field 'card' of the wrong kind"),
    ("round_result", lambda p: {**p, "outcome": "dragon"}, "(round_result): malformed payload: field 'outcome'"),
    ("round_result", lambda p: {**p, "banker": "x"}, "(round_result): malformed payload: a field of the wrong kind"),
    ("round_result", "round_result2", "(discard_rack): round 1 of shoe T1-S0001 went to the discard rack without"),
])
def test_entries_forged_with_a_recomputed_chain_are_named_by_replay_and_roadmap(capsys, dealt: Path, tmp_path: Path,
                                                                                kind, change, said) -> None:
    path = copy(dealt, tmp_path)
    seq = forge(path, kind, change)
    assert run(capsys, "journal", "verify", str(path))[0] == 0  # the chain holds: verify cannot tell
    before = digest(path)
    for argv in (["journal", "replay"], ["roadmap"]):
        line = one_line(capsys, *argv, str(path))
        assert said in line and (f"entry {seq} " in line or kind == "round_result" and "entry" in line), line
    assert digest(path) == before


def test_a_meta_schema_version_that_disagrees_with_the_file_is_said_so(capsys, dealt: Path, tmp_path: Path) -> None:
    path = copy(dealt, tmp_path)
    rewrite(path, rows(path), meta={"schema_version": "99"})
    line = one_line(capsys, "journal", "verify", str(path))
    assert "its meta table's schema version is '99', but the file's SQLite header says 2" in line
    assert "version 2 is not supported" not in line


def test_a_feed_cursor_past_the_journals_end_is_refused_before_anything_is_published(capsys, dealt: Path,
                                                                                     tmp_path: Path) -> None:
    """A cursor beyond the last entry would make the feed wait for entries the journal never had,
    and publish none of the new ones until it passed them: the floor would silently miss them."""
    path = copy(dealt, tmp_path)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    meta = dict(conn.execute("SELECT key, value FROM meta"))
    (end,) = conn.execute("SELECT max(seq) FROM entries").fetchone()
    conn.close()
    cursor = tmp_path / "cursor"
    for seq in (end + 1, 10**30):
        cursor.write_text(json.dumps({"format": "shoectl-feed-cursor/1", "table_id": meta["table_id"],
                                      "journal_created": meta["created"], "seq": seq}))
        line = one_line(capsys, "feed", "--journal", str(path), "--cursor", str(cursor), "--broker", "mqtt://127.0.0.1:1")
        assert f"the cursor says the floor has this journal's entries up to {seq}, but the journal ends at entry {end}" in line


def test_a_reader_told_not_to_verify_still_says_a_broken_payload_in_one_line(capsys, dealt: Path, tmp_path: Path) -> None:
    """``--no-verify`` reads a journal whose check fails; a payload nested deeper than JSON's
    reader goes raised RecursionError there."""
    path = copy(dealt, tmp_path)
    conn = sqlite3.connect(path)
    conn.execute("DROP TRIGGER entries_no_update")
    conn.execute("UPDATE entries SET payload = ? WHERE seq = 5", ("[" * 100_000 + "]" * 100_000,))
    conn.commit()
    conn.close()
    for argv in (["journal", "export"], ["journal", "replay"], ["roadmap"]):
        code, _, err = run(capsys, *argv, "--no-verify", str(path))
        last = err.strip().splitlines()[-1]
        assert code == 2 and "entry 5 has a payload that is not JSON, or is nested too deep" in last, err
        assert not any(word in err for word in SAID), err


def test_odds_at_a_journal_point_names_the_journal_when_its_submission_record_is_unusable(capsys, dealt: Path,
                                                                                       tmp_path: Path) -> None:
    """The record's rules were refused in the name of the preset they came from, as if the preset
    was wrong."""
    path = copy(dealt, tmp_path)
    forge(path, "submission", lambda p: {**p, "submission": {**p["submission"], "decks": 1_000_000}})
    line = one_line(capsys, "odds", "--journal", str(path), "--shoe", "T1-S0001", "--round", "1")
    assert line.startswith(f"shoectl odds: error: {path}: the journal's submission record does not hold rules "
                           "that can be used (")
    assert "submission.decks" in line


def test_replay_text_never_prints_a_forged_control_character_raw(capsys, dealt: Path, tmp_path: Path) -> None:
    path = copy(dealt, tmp_path)
    entries = rows(path)
    rewrite(path, rechain([(*r[:4], "T1-\x1b[2J" if r[4] else r[4], *r[5:]) for r in entries]))
    code, out, err = run(capsys, "journal", "replay", str(path))
    assert code == 0 and "\x1b" not in out and "T1-\\x1b[2J" in out, err


def test_a_forged_card_record_is_named_by_odds_and_by_a_resuming_run(capsys, dealt: Path, tmp_path: Path) -> None:
    """It was "unknown card '5'" with no journal or entry (and a traceback from `run` once the
    edge monitor's priming named the entry)."""
    path = copy(dealt, tmp_path)
    seq = forge(path, "card", lambda p: {**p, "card": "5"})
    before = digest(path)
    line = one_line(capsys, "odds", "--journal", str(path), "--shoe", "T1-S0001", "--round", "1")
    assert f"{path}: entry {seq} (card): unknown card '5'" in line
    line = one_line(capsys, "run", "--journal", str(path), "--rounds", "1", "--speed", "max", "--display", "lines")
    assert f"entry {seq} (card): unknown card '5'" in line and line.endswith("the table does not resume from it")
    assert digest(path) == before


def test_a_journal_with_an_input_refused_now_and_taken_then_is_not_resumed(capsys, dealt: Path, tmp_path: Path) -> None:
    """An input that the rules in force refuse, journaled as taken (by an earlier shoectl whose
    rules took it, such as a House Money payout placed in parts, or by a forger): resuming it would
    leave the table in another state than its journal records, silently. Refused in one line naming
    the entry; the journal is left as it was."""
    path = copy(dealt, tmp_path)
    entries = rows(path)
    i = next(i for i, r in enumerate(entries)
             if r[2] == "input.operator" and json.loads(r[10])["command"] == "wager")
    payload = json.loads(entries[i][10])
    payload["args"]["amount"] = 0
    entries[i] = (*entries[i][:10], json.dumps(payload, separators=(",", ":"), sort_keys=True), *entries[i][11:])
    rewrite(path, rechain(entries))
    before = digest(path)
    line = one_line(capsys, "run", "--journal", str(path), "--rounds", "1", "--speed", "max", "--display", "lines")
    assert f"entry {entries[i][0]}: refused now (amount must be a whole number of minor units (cents) from 1" in line
    assert "taken when it was journaled" in line and line.endswith("the table does not resume from it")
    assert digest(path) == before


def test_the_feed_refuses_a_journal_whose_table_id_the_floor_does_not_take(capsys, tmp_path: Path) -> None:
    """A journal made through the API may carry any table id; the floor drops every entry of one
    outside ``shoectl run --table-id``'s rule, so the feed says so before publishing anything."""
    from controller.journal import Journal

    path = tmp_path / "salon.db"
    Journal.open(path, table_id="Salon Privé 7").close()
    line = one_line(capsys, "feed", "--journal", str(path), "--broker", "mqtt://127.0.0.1:1")
    assert "the table id 'Salon Privé 7' is not one the floor takes" in line
    assert not (tmp_path / "salon.db.feed-cursor").exists()


def test_audit_cards_names_the_shoe_of_a_deck_count_no_shoe_holds(capsys, dealt: Path, tmp_path: Path) -> None:
    """It said "decks must be a whole number from 1 to 12, not 1000000000000", naming nothing."""
    path = copy(dealt, tmp_path)
    forge(path, "shoe_start", lambda p: {**p, "decks": 10**12})
    line = one_line(capsys, "audit", "cards", str(path))
    assert line.endswith("no dealt shoe to check (T1-S0001: the journal says 1000000000000 decks; a shoe holds "
                         "1 to 12)"), line


@pytest.mark.parametrize("change, field", [
    (lambda p: {k: v for k, v in p.items() if k != "wagers"}, "no field 'wagers'"),
    (lambda p: {**p, "wagers": "Dragon 7"}, "field 'wagers' of the wrong kind"),
    (lambda p: {**p, "wagers": {"banker": None}}, "field 'wagers' of the wrong kind"),
    (lambda p: {**p, "wagers": {"banker": {"ev": "1/2", "edge": "much"}}}, "field 'wagers' of the wrong kind"),
    # an exponent the text would be printed or the fraction built from digit by digit
    (lambda p: {**p, "wagers": {"banker": {"ev": "1/2", "edge": "1E999999999"}}}, "field 'wagers' of the wrong kind"),
    (lambda p: {**p, "wagers": {"banker": {"ev": "1e999999999", "edge": "0.5"}}}, "field 'wagers' of the wrong kind"),
    (lambda p: {k: v for k, v in p.items() if k != "remaining"}, "no field 'remaining'"),
])
def test_a_forged_edge_record_is_named_by_replay_and_odds(capsys, dealt: Path, tmp_path: Path, change, field) -> None:
    """`journal replay --edges` and `odds --journal` took an edge record's figures as the monitor
    writes them, and a forged one ended in a traceback (KeyError, TypeError)."""
    path = copy(dealt, tmp_path)
    seq = forge(path, "edge", change)
    before = digest(path)
    for argv in (["journal", "replay", "--edges"], ["odds", "--journal"]):
        line = one_line(capsys, *argv, str(path), *(["--shoe", "T1-S0001", "--round", "1"] if argv[0] == "odds" else []))
        assert line.endswith(f"{path}: entry {seq} (edge): malformed payload: {field}"), line
    assert digest(path) == before


@pytest.mark.parametrize("kind, change, field", [
    ("cut", lambda p: {**p, "stack": "416"}, "field 'stack' of the wrong kind"),
    ("cut", lambda p: {**p, "stack": 10**12}, "field 'stack' of the wrong kind"),  # a stack built card by card
    ("shoe_loaded", lambda p: {**p, "cards": -10**30}, "field 'cards' of the wrong kind"),
    ("cover", lambda p: {**p, "from_bottom": True}, "field 'from_bottom' of the wrong kind"),
])
def test_a_forged_count_of_cards_is_named_by_the_audits(capsys, dealt: Path, tmp_path: Path, kind, change,
                                                        field) -> None:
    """A cut's stack as text, a loaded count below zero: tracebacks from the card-set check and the
    stack's rebuilding; a stack of 10**12 cards would have been rebuilt card by card."""
    path = copy(dealt, tmp_path)
    seq = forge(path, kind, change)
    before = digest(path)
    for audit in ("cards", "shuffle"):
        line = one_line(capsys, "audit", audit, str(path))
        assert line.endswith(f"{path}: entry {seq} ({kind}): malformed payload: {field}"), line
    assert digest(path) == before


@pytest.mark.parametrize("payload", ["null", "[]", '"round"', "7"])
def test_a_payload_that_is_not_an_object_fails_verify_and_is_left_out_by_every_reader(capsys, dealt: Path,
                                                                                    tmp_path: Path, payload) -> None:
    """The writer stores JSON objects only, and every reader of a kind takes its fields from one: a
    re-chained `null` verified, then each reader failed in its own traceback. Now verify fails at
    it; a reader told --no-verify leaves it out, as an entry whose text is not UTF-8, and says so;
    a reader that follows the journal unchecked (the scoreboard, the feed) names it."""
    path = copy(dealt, tmp_path)
    entries = rows(path)
    i = next(i for i, r in enumerate(entries) if r[2] == "round_result")
    entries[i] = (*entries[i][:10], payload, *entries[i][11:])
    rewrite(path, rechain(entries))
    seq = entries[i][0]
    before = digest(path)
    code, out, err = run(capsys, "journal", "verify", str(path))
    assert code == 1 and f"FAILED at entry {seq}: entry {seq}: payload is not a JSON object" in out + err
    code, out, err = run(capsys, "journal", "export", str(path), "--no-verify")
    assert code == 0 and [json.loads(line)["seq"] for line in out.splitlines()] == [r[0] for r in entries if r[0] != seq]
    assert "payload is not a JSON object" in err and "read all the same (--no-verify)" in err
    for argv in (["journal", "replay", "--edges"], ["odds", "--journal"], ["roadmap"]):
        code, out, err = run(capsys, *argv, str(path), "--no-verify")
        assert code in (0, 2) and not any(word in err for word in SAID), err
        assert ("read all the same (--no-verify)" in err) if code == 0 else (err.count("\n") == 1), err
    with JournalReader.open(path) as reader, pytest.raises(JournalError) as raised:
        list(reader.entries())
    assert str(raised.value) == f"{path}: entry {seq} has a payload that is not a JSON object; run `shoectl journal verify`"
    assert digest(path) == before


def test_a_payload_nested_too_deeply_is_said_in_words_not_pythons(capsys, dealt: Path, tmp_path: Path) -> None:
    """A review of bad inputs: an entry whose payload is 5,000 nested arrays (its chain recomputed)
    failed verify with Python's "maximum recursion depth exceeded while decoding a JSON array from a
    unicode string"."""
    path = copy(dealt, tmp_path)
    entries = rows(path)
    forged = list(entries[78])
    forged[10] = '{"a":' + "[" * 5000 + "]" * 5000 + "}"
    entries[78] = tuple(forged)
    rewrite(path, rechain(entries))
    code, out, err = run(capsys, "journal", "verify", str(path))
    assert code == 1 and "entry 79: bad payload: nested too deeply to read (78 entries good before it" in out + err
    assert "recursion" not in out + err
