"""A real schema-version-1 journal (tests/data/journal-v1.sql, written by `shoectl run` before
version 2; see tests/data/README.md): every reader reads it, the table recovers from it, the writer
does not continue it, and `journal migrate` copies it into a new version-2 journal with its chain
and anchors unchanged (docs/journal.md, "Schema versions")."""
from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import os
from pathlib import Path

import pytest

from controller.journal import Journal, JournalError, JournalReader, kinds, verify
from controller.journal.anchors import AnchorFile, anchors_path
from controller.journal.errors import JournalContentError
from controller.journal.vocabulary import current_payload
from controller.rules.submission import load_preset
from controller.table.core import TableCore
from controller.table.io import DeviceInput, OperatorInput, TableRecord
from controller.table.journaling import input_from
from controller.table.runner import TableRunner
from firmware_bridge.protocol import messages as m

from cli_run import run
from tampering import tamper
from .reader_commands import READERS

DATA = Path(__file__).resolve().parent.parent / "data"
V1_SQL = DATA / "journal-v1.sql"          # the journal's SQL text (sqlite3 .dump), kept as text
V1_ANCHORS = DATA / "journal-v1.anchors"
V1_ENTRIES = 2934
SHOECTL = [sys.executable, "-m", "controller.cli.main"]


def _copy(directory: Path) -> Path:
    """The version-1 journal rebuilt in ``directory`` from its SQL text (the same rows, hashes and
    user_version, in WAL mode as its writer left it), with its anchors beside it."""
    path = directory / "old.db"
    conn = sqlite3.connect(path)
    try:
        conn.executescript(V1_SQL.read_text(encoding="utf-8"))
        conn.execute("PRAGMA journal_mode = WAL")
    finally:
        conn.close()
    shutil.copy(V1_ANCHORS, anchors_path(path))
    return path


@pytest.fixture
def v1(tmp_path: Path) -> Path:
    """A private copy, to change or to migrate."""
    return _copy(tmp_path)


@pytest.fixture(scope="module")
def v1_read(tmp_path_factory) -> Path:
    """A copy only read, shared by the module."""
    return _copy(tmp_path_factory.mktemp("v1"))


def _files(path: Path) -> tuple[bytes, bytes]:
    """The journal's and its anchors file's bytes (readers may create -wal/-shm files beside it)."""
    return path.read_bytes(), anchors_path(path).read_bytes()


def test_the_data_file_is_a_version_1_journal(v1_read: Path) -> None:
    with JournalReader.open(v1_read) as r:
        assert (r.schema_version, r.meta["schema_version"], r.last_seq) == (1, "1", V1_ENTRIES)
        first_event = next(r.entries(kinds=[kinds.INPUT_DEVICE]))
    assert first_event.schema_version == 1 and first_event.payload["event"] == "ShuffleProgress"
    assert "role" in first_event.payload and first_event.device_serial == "EMU-emulated-shuffler"


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_reads_a_version_1_journal(reader: str, v1: Path, capsys) -> None:
    code, out, err = run(capsys, *READERS[reader], str(v1))
    assert (code, err) == (0, "") and out


def test_verify_and_export_of_a_version_1_journal(v1: Path, capsys) -> None:
    code, out, _ = run(capsys, "journal", "verify", str(v1), "--json")
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["entries"] == V1_ENTRIES and report["anchors"] == 1
    code, out, _ = run(capsys, "journal", "export", str(v1))
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(lines) == V1_ENTRIES and {d["schema_version"] for d in lines} == {1}
    card = next(d for d in lines if d["kind"] == kinds.INPUT_DEVICE and d["payload"]["event"] == "CardRead")
    assert card["device_serial"] == "EMU-emulated-shoe" and card["payload"]["role"] == "shoe"  # as stored


def test_replay_audit_and_roadmap_of_a_version_1_journal(v1: Path, capsys) -> None:
    code, out, _ = run(capsys, "journal", "replay", str(v1), "--json")
    docs = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and sum(d["type"] == "round" for d in docs) == 82
    # each card's device event, from a CARD_READ named by its version-1 class name (CardRead)
    cards = [c for d in docs if d["type"] == "round" for c in d["cards"]]
    assert cards and all(c["device_event"] is not None for c in cards if c["position"] is not None)
    code, out, _ = run(capsys, "audit", "cards", str(v1), "--json")
    audit = json.loads(out)
    assert code == 0 and audit["shoes"][0]["read"] == 402 and audit["ok"]  # CARD_READs found by their v1 name
    code, out, _ = run(capsys, "roadmap", str(v1), "--shoe", "T1-S0001", "--json")
    assert code == 0 and len(json.loads(out)["bead_plate"]) == 82


def test_every_entry_of_a_version_1_journal_reads_in_version_2_words(v1_read: Path) -> None:
    """The v1 inputs in v2's words, and every record, fit the registry of kinds."""
    with JournalReader.open(v1_read) as r:
        problems = [(e.seq, kinds.payload_problem(e.kind, current_payload(e))) for e in r.entries()]
    assert [p for p in problems if p[1] is not None] == []


def test_the_docs_name_every_kind_whose_role_version_1_spelled_otherwise(v1_read: Path) -> None:
    """docs/journal.md's "Schema versions" row is the upgrade contract a consumer maps version 1
    by: every kind whose ``role`` the reader renames is named there beside its new key (a review
    found ``operator`` and ``device_replaced`` left out)."""
    import re

    from controller.journal.vocabulary import _V1_ROLE

    doc = (Path(__file__).resolve().parents[2] / "docs" / "journal.md").read_text(encoding="utf-8")
    row = next(line for line in doc.splitlines() if line.startswith("| 1 |"))
    said = {}
    for match in re.finditer(r"((?:`[a-z_.]+`(?:, | and )?)+) (?:say )?`role` for `(\w+)`", row):
        for kind in re.findall(r"`([a-z_.]+)`", match.group(1)):
            said[kind] = match.group(2)
    assert said == _V1_ROLE
    with JournalReader.open(v1_read) as r:
        held = {e.kind for e in r.entries() if "role" in e.payload}
    assert {kinds.OPERATOR, kinds.INPUT_OPERATOR, kinds.INPUT_DEVICE} <= held <= set(_V1_ROLE)


@pytest.mark.reg("681a.7(l)")
def test_the_v1_inputs_rebuild_every_record_of_the_v1_journal(v1_read: Path) -> None:
    """681a.7(l): "in a manner that permits the reconstruction of each hand". Recovery feeds the
    journaled inputs to a fresh core: fed the version-1 inputs one by one, the core makes again, in
    order, exactly the records the version-1 journal holds."""
    core = TableCore(load_preset("minibaccarat"), table_id="T1")
    made, stored = [], []
    with JournalReader.open(v1_read) as r:
        for e in r.entries():
            inp = input_from(e)
            if inp is None:  # in version 2's words, should a record's words change with the schema
                stored.append([e.kind, current_payload(e), e.shoe_id, e.round_no])
            else:
                made += [[o.kind, without_keys_added_since(o.kind, o.payload), o.shoe, o.round]
                         for o in core.handle(inp) if isinstance(o, TableRecord)]
    assert len(stored) == 2012 and json.loads(json.dumps(made)) == stored


def without_keys_added_since(kind: str, payload: dict) -> dict:
    """A record made now without the optional keys version 2 gained after the version-1 journal
    was written (``kinds.ADDED_IN_VERSION_2``): the same otherwise."""
    added = kinds.ADDED_IN_VERSION_2.get(kind, ())
    assert all(key in kinds.KINDS[kind].optional for key in added)
    return {k: v for k, v in payload.items() if k not in added}


def test_a_v1_input_comes_back_as_the_input_a_v2_entry_gives(v1_read: Path) -> None:
    with JournalReader.open(v1_read) as r:
        inputs = [input_from(e) for e in r.entries(kinds=kinds.INPUT_KINDS)]
    cards = [i.event for i in inputs if isinstance(i, DeviceInput) and isinstance(i.event, m.CardRead)]
    assert len(cards) == 402 and {i.device_role for i in inputs if isinstance(i, DeviceInput)} == {"shuffler", "shoe"}
    assert {i.role.name for i in inputs if isinstance(i, OperatorInput)} == {"DEALER", "FLOORPERSON"}


# --- the writer: refuses, or migrates into a new file -------------------------------------------------


def test_the_writer_refuses_a_version_1_journal_and_changes_nothing(v1: Path) -> None:
    before = _files(v1)
    with pytest.raises(JournalError) as caught:
        Journal.open(v1, table_id="T1")
    message = str(caught.value)
    assert "\n" not in message and "schema-version-1 journal" in message
    assert f"shoectl journal migrate {v1} NEW" in message
    assert _files(v1) == before


def test_run_refuses_a_version_1_journal_in_one_line(v1: Path) -> None:
    """Refused before anything is made beside it (its lock, the log and the control socket's lock
    were made first)."""
    before, names = _files(v1), sorted(p.name for p in v1.parent.iterdir())
    done = subprocess.run([*SHOECTL, "run", "--journal", str(v1), "--table-id", "T1", "--rounds", "1", "--speed",
                           "max", "--display", "lines"], capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"shoectl run: error: {v1}: a schema-version-1")
    assert "Traceback" not in done.stderr and _files(v1) == before
    assert sorted(p.name for p in v1.parent.iterdir()) == names


def test_migrate_copies_the_chain_and_the_anchors_into_a_new_file(v1: Path, capsys) -> None:
    before = _files(v1)
    new = v1.with_name("new.db")
    code, out, err = run(capsys, "journal", "migrate", str(v1), str(new))
    assert (code, err) == (0, "") and out == (f"{new}: {V1_ENTRIES} entries of {v1} migrated to schema version 2 "
                                              f"(chain and anchors unchanged; {v1} left as it was)\n")
    assert _files(v1) == before
    assert anchors_path(new).read_bytes() == anchors_path(v1).read_bytes()
    report = verify(new)
    assert report.ok and report.anchors == 1 and report.entries == V1_ENTRIES
    with JournalReader.open(v1) as r_old, JournalReader.open(new) as r_new:
        assert r_new.schema_version == 2 and r_new.meta["migrated_entries"] == str(V1_ENTRIES)
        assert r_new.meta["created"] == r_old.meta["created"]
        assert list(r_old.entries()) == list(r_new.entries())  # same columns, payloads, hashes; schema_version 1


def test_migrate_s_anchors_go_to_a_new_file_never_through_a_link_planted_under_its_temporary_name(
        v1: Path, capsys) -> None:
    """A security review: the migrated anchors were written to `.NEW.anchors.migrating-PID`, a name
    anyone can guess, opened to be truncated and following links: root's migrate into a shared folder
    wrote them over a file of another account's choosing."""
    victim = v1.with_name("victim")
    victim.write_text("keep\n")
    new = v1.with_name("new.db")
    planted = new.with_name(f".{new.name}.anchors.migrating-{os.getpid()}")  # this process's own pid
    planted.symlink_to(victim)
    code, out, err = run(capsys, "journal", "migrate", str(v1), str(new))
    assert (code, err) == (0, ""), err
    assert victim.read_text() == "keep\n" and not planted.is_symlink()
    assert anchors_path(new).read_bytes() == anchors_path(v1).read_bytes()


@pytest.mark.parametrize("side", [".anchors", "-wal"])
def test_migrate_never_writes_the_new_journal_over_a_file_beside_the_old(v1: Path, capsys, side: str) -> None:
    """NEW naming the old journal's anchors (or its -wal) replaced them with a database: the old
    journal, "never changed", then failed to verify."""
    before = _files(v1)
    target = Path(f"{v1}{side}")
    code, out, err = run(capsys, "journal", "migrate", str(v1), str(target))
    assert (code, out) == (2, "")
    assert err == (f"shoectl journal migrate: error: {target}: that is the journal {v1} or a file beside it; "
                   "give another file for the new journal\n")
    assert _files(v1) == before and verify(v1).ok


@pytest.mark.parametrize("reader", [r for r in READERS if r != "verify"])
def test_every_reader_reads_the_migrated_journal_as_the_old_one(reader: str, v1: Path, capsys) -> None:
    new = v1.with_name("new.db")
    assert run(capsys, "journal", "migrate", str(v1), str(new))[0] == 0
    code, out, err = run(capsys, *READERS[reader], str(new))
    assert (code, out.replace(str(new), "PATH"), err) == run(capsys, *READERS[reader], str(v1))[:1] + (
        run(capsys, *READERS[reader], str(v1))[1].replace(str(v1), "PATH"), "")


def test_a_migrated_journal_is_resumed_by_the_table(v1: Path, capsys) -> None:
    """Recovery reads the version-1 inputs of the migrated journal; the table appends version-2
    entries after them."""
    new = v1.with_name("new.db")
    assert run(capsys, "journal", "migrate", str(v1), str(new))[0] == 0
    with Journal.open(new, table_id="T1") as journal:
        core = TableCore(load_preset("minibaccarat"), table_id="T1")
        runner = TableRunner(core, journal)
        assert runner.recover_from_journal() == V1_ENTRIES - 2012
        assert runner.last_delivered_for("shoe")[0] == "EMU-emulated-shoe"
        assert core.shoe.id == "T1-S0002" and core.state == "shuffling"
    done = subprocess.run([*SHOECTL, "run", "--journal", str(new), "--table-id", "T1", "--rounds", "2", "--speed",
                           "max", "--seed", "5", "--display", "lines"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert f"resumed from {new}: {V1_ENTRIES - 2012} inputs replayed" in done.stdout
    assert verify(new).ok
    with JournalReader.open(new) as r:
        later = list(r.entries(since_seq=V1_ENTRIES))
    assert later and {e.schema_version for e in later} == {2}
    events = [e.payload for e in later if e.kind == kinds.INPUT_DEVICE]
    assert events and all("device_role" in p and p["event"].isupper() for p in events)
    assert len(AnchorFile.beside(new).read().anchors) > 2  # the table anchors the migrated journal too


def test_migrate_never_writes_over_a_file(v1: Path, capsys) -> None:
    new = v1.with_name("new.db")
    new.write_bytes(b"someone's file")
    code, out, err = run(capsys, "journal", "migrate", str(v1), str(new))
    assert (code, out) == (2, "") and err.count("\n") == 1 and "already exists" in err
    assert new.read_bytes() == b"someone's file"
    new.unlink()
    anchors_path(new).write_text("")
    code, _, err = run(capsys, "journal", "migrate", str(v1), str(new))
    assert code == 2 and "new.db.anchors: already exists" in err and not new.exists()


def test_migrate_refuses_a_journal_that_does_not_verify(v1: Path, capsys) -> None:
    tamper(v1, "UPDATE entries SET operator = 'someone' WHERE seq = 100")
    new = v1.with_name("new.db")
    code, out, err = run(capsys, "journal", "migrate", str(v1), str(new))
    assert (code, out) == (1, "") and err.count("\n") == 1
    assert "FAILED at entry 100" in err and "not migrated" in err
    assert sorted(p.name for p in v1.parent.iterdir() if p.name.startswith(("new", ".new"))) == []


@pytest.mark.parametrize("damage", ["cut short", "a page overwritten"])
def test_migrate_refuses_a_damaged_journal_as_verify_does(v1: Path, capsys, damage: str) -> None:
    """docs/journal.md: a file SQLite finds damaged is a journal that does not verify, and is not
    migrated: exit 1 with verify's line. It was exit 2 with "cannot open the journal: ...", "cannot
    read the journal: ..." or, for most pages, "cannot write the migrated journal" naming the
    temporary file (a reviewer's finding)."""
    size = v1.stat().st_size
    with open(v1, "r+b") as f:
        if damage == "cut short":
            f.truncate(size // 10)
        else:
            f.seek(size // 2 // 4096 * 4096 + 100)  # a page of entries
            f.write(b"\xff" * 1000)
    code, verdict, _ = run(capsys, "journal", "verify", str(v1))
    assert code == 1 and ": FAILED at the journal: " in verdict
    new = v1.with_name("new.db")
    code, out, err = run(capsys, "journal", "migrate", str(v1), str(new))
    assert (code, out) == (1, "")
    assert err == f"shoectl journal migrate: error: {verdict.strip()}: a journal that does not verify is not migrated\n"
    assert sorted(p.name for p in v1.parent.iterdir() if p.name.startswith(("new", ".new"))) == []


def test_migrate_refuses_a_version_2_journal(v1: Path, capsys) -> None:
    new, again = v1.with_name("new.db"), v1.with_name("again.db")
    assert run(capsys, "journal", "migrate", str(v1), str(new))[0] == 0
    code, _, err = run(capsys, "journal", "migrate", str(new), str(again))
    assert code == 2 and "already a schema-version-2 journal: nothing to migrate" in err and not again.exists()


def _hmac_v1_journal(path: Path, key: bytes) -> list[str]:
    """An HMAC journal made version 1 the way version 1 stored it (the serial column device_id,
    user_version 1): a version-1 writer is gone, and tests/data holds a plain sha256 one. Its
    entries' hashes."""
    with Journal.open(path, table_id="T1", hmac_key=key) as j:
        hashes = [j.append(kinds.INPUT_DEVICE, {"role": "shoe", "event": "ShoeEmpty", "fields": {}},
                           device_serial="SN-1", epoch=1, counter=n).hash for n in (1, 2, 3)]
    tamper(path, "ALTER TABLE entries RENAME COLUMN device_serial TO device_id", "PRAGMA user_version = 1",
           "UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    return hashes


def test_migrate_an_hmac_journal_needs_its_key(tmp_path: Path, capsys) -> None:
    key = tmp_path / "journal.key"
    key.write_bytes(b"k" * 32)
    key.chmod(0o600)
    old, new = tmp_path / "old.db", tmp_path / "new.db"
    hashes = _hmac_v1_journal(old, b"k" * 32)
    code, out, err = run(capsys, "journal", "migrate", str(old), str(new))
    assert (code, out) == (2, "") and err.count("\n") == 1 and "HMAC key required" in err and not new.exists()
    assert run(capsys, "journal", "migrate", str(old), str(new), "--hmac-key", str(key))[0] == 0
    assert verify(new, hmac_key=b"k" * 32).ok
    with JournalReader.open(new) as r:
        assert [e.hash for e in r.entries()] == hashes and r.last_device_counter("SN-1") == (1, 3)
        assert [input_from(e).event for e in r.entries()] == [m.ShoeEmpty(counter=n) for n in (1, 2, 3)]


# --- a device event no table wrote ------------------------------------------------------------------


@pytest.mark.parametrize("version, event", [(1, "Teleport"), (2, "TELEPORT"), (2, "SHUFFLE"), (2, "CardRead")])
def test_an_unknown_device_event_is_one_line_naming_the_entry(version: int, event: str) -> None:
    """A command's name (SHUFFLE) is no device event, nor is a v1 class name in a v2 entry."""
    from controller.journal.entry import Entry

    payload = ({"role": "shoe"} if version == 1 else {"device_role": "shoe"}) | {"event": event, "fields": {}}
    entry = Entry(7, "2025-01-31T20:15:00.000000Z", kinds.INPUT_DEVICE, "T1", None, None, "SN", 1, 1, None,
                  payload, "0" * 64, "0" * 64, version)
    with pytest.raises(JournalContentError, match=r"^entry 7 \(input.device\): ") as caught:
        input_from(entry)
    assert "\n" not in str(caught.value)
