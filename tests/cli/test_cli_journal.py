"""The command-line contract of `shoectl journal verify|export` (exit codes 0/1/2, one-line errors,
JSON output) through controller.cli.main, with the command module list patched to include
controller.cli.cmd_journal (main.py lists it once the journal is wired in)."""
from __future__ import annotations

import json
import os
import sqlite3
import sys
import types
from pathlib import Path

import pytest

from controller.cli import main as cli_main
from controller.journal import Journal, JournalReader, Record
from cli_run import run
from tampering import tamper

KEY = b"s" * 32


@pytest.fixture(autouse=True)
def with_journal_command(monkeypatch) -> None:
    modules = tuple(m for m in cli_main.COMMAND_MODULES if m != "controller.cli.cmd_journal")
    monkeypatch.setattr(cli_main, "COMMAND_MODULES", ("controller.cli.cmd_journal",) + modules)




@pytest.fixture
def jpath(tmp_path: Path) -> Path:
    p = tmp_path / "table.db"
    with Journal.open(p, table_id="T1") as j:
        j.append_batch([Record("card.read", {"card": c, "n": i}, shoe="S1", round=1, device_serial="shoe-1", epoch=1,
                               counter=i + 1) for i, c in enumerate(["AS", "9H", "KD", "2C", "7S"])])
    return p


@pytest.fixture
def hmac_journal(tmp_path: Path) -> tuple[Path, Path]:
    key = tmp_path / "journal.key"
    key.write_bytes(KEY)
    os.chmod(key, 0o600)
    p = tmp_path / "signed.db"
    with Journal.open(p, table_id="T1", hmac_key=KEY) as j:
        for i in range(3):
            j.append("e", {"i": i})
    return p, key


# --- verify ----------------------------------------------------------------------------------------


def test_verify_intact(capsys, jpath: Path) -> None:
    code, out, err = run(capsys, "journal", "verify", str(jpath))
    with JournalReader.open(jpath) as r:
        h = r.last().hash
    assert code == 0
    assert out == f"{jpath}: ok: 5 entries, last hash {h} (sha256)\n"
    assert err == (f"shoectl journal verify: warning: {jpath}: checked without an anchor: a removed tail, or a rewrite "
                   "with recomputed hashes, would not show (see docs/journal.md, Anchors)\n")
    code, out, err = run(capsys, "journal", "verify", str(jpath), "--anchor", f"5:{h}")
    assert code == 0 and err == ""


def test_verify_json_contract(capsys, jpath: Path) -> None:
    code, out, _ = run(capsys, "journal", "verify", str(jpath), "--json")
    d = json.loads(out)
    assert code == 0
    assert set(d) == {"ok", "entries", "first_bad_seq", "reason", "last_seq", "last_hash", "total", "algorithm",
                      "key_id", "needs_key", "path", "anchors", "links_only", "warnings"}
    assert (d["ok"], d["entries"], d["first_bad_seq"], d["reason"], d["last_seq"]) == (True, 5, None, None, 5)
    assert (d["anchors"], d["links_only"]) == (0, False)
    assert len(d["warnings"]) == 1 and "checked without an anchor" in d["warnings"][0]


def test_verify_tampered_exits_1_naming_the_entry(capsys, jpath: Path) -> None:
    tamper(jpath, "UPDATE entries SET payload = '{\"card\":\"AH\",\"n\":2}' WHERE seq = 3")
    code, out, err = run(capsys, "journal", "verify", str(jpath))
    assert code == 1 and err == ""
    assert out.startswith(f"{jpath}: FAILED at entry 3: entry 3: hash mismatch") and out.count("\n") == 1
    code, out, _ = run(capsys, "journal", "verify", str(jpath), "--json")
    d = json.loads(out)
    assert code == 1 and d["ok"] is False and d["first_bad_seq"] == 3 and d["entries"] == 2


def test_verify_deleted_row(capsys, jpath: Path) -> None:
    tamper(jpath, "DELETE FROM entries WHERE seq = 2")
    code, out, _ = run(capsys, "journal", "verify", str(jpath))
    assert code == 1 and "FAILED at entry 2" in out and "missing" in out


def test_verify_anchors(capsys, jpath: Path) -> None:
    with Journal.open(jpath, table_id="T1") as j:
        anchor = j.anchor()
        h = j.last().hash
    assert run(capsys, "journal", "verify", str(jpath), "--expect-count", "5", "--expect-last-hash", h)[0] == 0
    assert run(capsys, "journal", "verify", str(jpath), "--anchor", anchor, "--anchor", f"1:{h}")[0] == 1
    tamper(jpath, "DELETE FROM entries WHERE seq = 5")
    assert run(capsys, "journal", "verify", str(jpath))[0] == 0  # truncation: invisible to the chain alone
    code, out, _ = run(capsys, "journal", "verify", str(jpath), "--expect-count", "5")
    assert code == 1 and "truncated" in out
    code, out, _ = run(capsys, "journal", "verify", str(jpath), "--anchor", anchor)
    assert code == 1 and "FAILED at entry 5" in out
    code, out, _ = run(capsys, "journal", "verify", str(jpath), "--expect-last-hash", h)
    assert code == 1


@pytest.mark.parametrize("args", [
    ["--expect-count", "-1"], ["--expect-count", "many"], ["--expect-last-hash", "abc"],
    ["--anchor", "5"], ["--anchor", "x:" + "0" * 64], ["--anchor", "0:" + "0" * 64],
])
def test_verify_bad_arguments(capsys, jpath: Path, args) -> None:
    code, out, err = run(capsys, "journal", "verify", str(jpath), *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and "error" in err


@pytest.mark.parametrize("args", [
    ["journal", "export", "{j}", "--since", "99999999999999999999999"],
    ["journal", "export", "{j}", "--since", "9223372036854775808"],
    ["journal", "export", "{j}", "--since", "1" + "0" * 5000],
    ["journal", "verify", "{j}", "--expect-count", "99999999999999999999999"],
    ["journal", "verify", "{j}", "--anchor", "99999999999999999999999:" + "0" * 64],
    ["journal", "verify", "{j}", "--anchor", "\u00b2:" + "0" * 64],
    ["journal", "replay", "{j}", "--round", "99999999999999999999999"],
    ["journal", "replay", "{j}", "--round", "0"],
])
def test_every_number_option_is_bounded(capsys, jpath: Path, args: list[str]) -> None:
    """`export --since 99999999999999999999999` printed an OverflowError traceback: every number
    a journal command takes is a whole number that fits SQLite's integers, refused in one line."""
    code, out, err = run(capsys, *(a.format(j=jpath) for a in args))
    assert (code, out) == (2, "") and err.count("\n") == 1 and "error" in err
    assert "Error" not in err and "Traceback" not in err and "_anchor" not in err
    assert len(err) < 400


def test_the_largest_seq_is_accepted(capsys, jpath: Path) -> None:
    code, out, _ = run(capsys, "journal", "export", str(jpath), "--since", "9223372036854775807")
    assert (code, out) == (0, "")


def test_verify_missing_file(capsys, tmp_path: Path) -> None:
    code, out, err = run(capsys, "journal", "verify", str(tmp_path / "none.db"))
    assert code == 2 and out == ""
    assert err == f"shoectl journal verify: error: {tmp_path / 'none.db'}: no such journal\n"


def test_verify_not_sqlite(capsys, tmp_path: Path) -> None:
    p = tmp_path / "x.db"
    p.write_text("hello\n" * 1000)
    code, out, err = run(capsys, "journal", "verify", str(p))
    assert code == 2 and out == "" and err.count("\n") == 1 and "not an SQLite database" in err


def test_verify_foreign_sqlite(capsys, tmp_path: Path) -> None:
    p = tmp_path / "x.db"
    c = sqlite3.connect(p)
    c.execute("CREATE TABLE t (x)")
    c.commit()
    c.close()
    code, _, err = run(capsys, "journal", "verify", str(p))
    assert code == 2 and err.count("\n") == 1 and "not a journal" in err


def test_verify_directory(capsys, tmp_path: Path) -> None:
    code, _, err = run(capsys, "journal", "verify", str(tmp_path))
    assert code == 2 and "is a directory" in err


def test_verify_hmac(capsys, hmac_journal: tuple[Path, Path], tmp_path: Path) -> None:
    p, key = hmac_journal
    code, out, err = run(capsys, "journal", "verify", str(p), "--hmac-key", str(key))
    assert code == 0 and "ok: 3 entries" in out and "hmac-sha256, key id" in out
    code, out, err = run(capsys, "journal", "verify", str(p))
    assert code == 2 and out == "" and err.count("\n") == 1 and "HMAC key required" in err and "--hmac-key" in err
    wrong = tmp_path / "wrong.key"
    wrong.write_bytes(b"w" * 32)
    os.chmod(wrong, 0o600)
    code, out, _ = run(capsys, "journal", "verify", str(p), "--hmac-key", str(wrong))
    assert code == 1 and "wrong HMAC key" in out
    os.chmod(key, 0o644)
    code, out, err = run(capsys, "journal", "verify", str(p), "--hmac-key", str(key))
    assert code == 2 and "readable by group or others" in err and err.count("\n") == 1
    code, _, err = run(capsys, "journal", "verify", str(p), "--hmac-key", str(tmp_path / "nokey"))
    assert code == 2 and "not found" in err


def test_journal_needs_a_subcommand(capsys) -> None:
    code, _, err = run(capsys, "journal")
    assert code == 2 and "error" in err


# --- export ----------------------------------------------------------------------------------------


def test_export_jsonl_to_stdout(capsys, jpath: Path) -> None:
    """(``jpath`` has no anchors file: every reader says so, as verify does; a surveillance review
    found export, replay, roadmap, audit and odds silent on a journal whose tail could have been
    cut.)"""
    code, out, err = run(capsys, "journal", "export", str(jpath), "--format", "jsonl")
    assert code == 0 and err == (f"shoectl journal export: warning: {jpath}: checked without an anchor: a removed "
                                 "tail, or a rewrite with recomputed hashes, would not show (see docs/journal.md, "
                                 "Anchors)\n")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [d["seq"] for d in lines] == [1, 2, 3, 4, 5]
    assert list(lines[0]) == ["seq", "ts", "kind", "table_id", "shoe_id", "round_no", "device_serial", "device_epoch",
                              "device_counter", "operator", "payload", "prev_hash", "hash", "schema_version"]
    assert lines[0]["payload"] == {"card": "AS", "n": 0} and lines[1]["prev_hash"] == lines[0]["hash"]
    assert (lines[4]["device_serial"], lines[4]["device_epoch"], lines[4]["device_counter"]) == ("shoe-1", 1, 5)
    assert {d["schema_version"] for d in lines} == {2}


def test_export_since(capsys, jpath: Path) -> None:
    code, out, _ = run(capsys, "journal", "export", str(jpath), "--since", "3")
    assert code == 0 and [json.loads(x)["seq"] for x in out.splitlines()] == [4, 5]
    code, out, _ = run(capsys, "journal", "export", str(jpath), "--since", "99")
    assert code == 0 and out == ""


def test_export_to_file(capsys, jpath: Path, tmp_path: Path) -> None:
    dest = tmp_path / "out.jsonl"
    code, out, err = run(capsys, "journal", "export", str(jpath), "-o", str(dest))
    assert code == 0 and out == f"{dest}: 5 entries\n" and "checked without an anchor" in err
    assert len(dest.read_text(encoding="utf-8").splitlines()) == 5
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []  # no temp file left


def test_export_to_a_missing_directory(capsys, jpath: Path, tmp_path: Path) -> None:
    code, out, err = run(capsys, "journal", "export", str(jpath), "-o", str(tmp_path / "no" / "out.jsonl"))
    assert code == 2 and out == "" and err.count("\n") == 1 and f"no such folder {tmp_path / 'no'}" in err


def test_export_failure_leaves_no_partial_file(capsys, jpath: Path, tmp_path: Path, mocker) -> None:
    dest = tmp_path / "out.jsonl"
    dest.write_text("previous export\n")
    mocker.patch("controller.fsutil.os.fsync", side_effect=OSError(28, "No space left on device"))
    code, _, err = run(capsys, "journal", "export", str(jpath), "-o", str(dest))
    assert code == 2 and "No space left on device" in err
    assert dest.read_text() == "previous export\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".out")] == []


def test_export_errors(capsys, tmp_path: Path, jpath: Path) -> None:
    code, _, err = run(capsys, "journal", "export", str(tmp_path / "none.db"))
    assert code == 2 and "no such journal" in err
    code, _, err = run(capsys, "journal", "export", str(jpath), "--format", "csv")
    assert code == 2 and "invalid choice" in err


# --- the hook for `journal replay` ------------------------------------------------------------------


def test_another_module_can_add_replay(capsys, monkeypatch, jpath: Path) -> None:
    """A module listed before or after cmd_journal adds `journal replay` without editing it."""
    from controller.cli.cmd_journal import add_subcommand

    def register(sub) -> None:
        p = add_subcommand(sub, "replay", help="replay rounds")
        p.add_argument("path")
        p.set_defaults(func=lambda args: print(f"replayed {args.path}") or 0)

    fake = types.ModuleType("controller.cli.fake_cmd_journal_replay")
    fake.register = register
    monkeypatch.setitem(sys.modules, "controller.cli.fake_cmd_journal_replay", fake)
    for order in (("fake_cmd_journal_replay", "cmd_journal"), ("cmd_journal", "fake_cmd_journal_replay")):
        monkeypatch.setitem(cli_main.COMMANDS, "journal", order)  # the modules of `shoectl journal ...`
        code, out, _ = run(capsys, "journal", "replay", str(jpath))
        assert code == 0 and out == f"replayed {jpath}\n"
        assert run(capsys, "journal", "verify", str(jpath))[0] == 0
