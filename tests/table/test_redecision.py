"""Deciding a journal again (``controller.table.redecision``, ``shoectl audit decisions``): a real
table's journal, across a restart, decides again to itself, record for record; a journal whose
chain was recomputed by a forger after changing what the table decided does not, and the first
record that differs is named with both sides."""
from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from cli_run import dealt_journal, preset_with_decks, run_captured
from runner_rig import deal_with_the_edge_monitor

from controller.journal import Journal, JournalReader
from controller.signature import signature_label
from controller.table.redecision import BUILT_IN_DEVICES, redecide
from controller.version import shoectl_version
from tests.tampering import rechain, renumber, rewrite, rows, tamper

SHOECTL = [sys.executable, "-m", "controller.cli.main"]
SEQ, KIND, PAYLOAD = 0, 2, 10  # columns of a row of ``entries``


@pytest.fixture(scope="module")
def table_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A journal of two runs of a table on the emulator (the second resumes the first), EZ
    Baccarat, with the edge monitor's records between the rounds."""
    path = tmp_path_factory.mktemp("redecide") / "j.db"
    for seed, rounds in ((3, 12), (4, 24)):
        runner, _ = deal_with_the_edge_monitor(path, "ez-baccarat", seed=seed, rounds=rounds)
        assert runner.error is None
    return path


def shoectl(*args: str) -> SimpleNamespace:
    """``shoectl ARGS`` run in this process (``tests/cli_run.py``): its exit code and output, as
    ``subprocess.run`` gives them (a process of its own costs an interpreter's start each time)."""
    code, out, err = run_captured(*args)
    return SimpleNamespace(returncode=code, stdout=out, stderr=err)


def decided(path: Path):
    with JournalReader.open(path) as reader:
        return redecide(reader.entries())


def forged(src: Path, tmp_path: Path, change) -> Path:
    """A copy of ``src`` whose rows ``change`` rewrote (a list of rows in, a list out), renumbered
    and re-chained as a forger without the key would: it verifies."""
    path = tmp_path / "forged.db"
    shutil.copy(src, path)
    new = renumber(change([list(r) for r in rows(path)]))
    rewrite(path, rechain([tuple(r) for r in new]))
    done = shoectl("journal", "verify", str(path))
    assert done.returncode == 0, done.stderr
    return path


def first(rs: list, kind: str, where=lambda p: True) -> list:
    return next(r for r in rs if r[KIND] == kind and where(json.loads(r[PAYLOAD])))


def set_payload(row: list, **changes) -> int:
    payload = json.loads(row[PAYLOAD])
    payload.update(changes)
    row[PAYLOAD] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return row[SEQ]


def test_a_table_s_journal_decides_again_to_itself_across_a_restart(table_journal: Path) -> None:
    result = decided(table_journal)
    assert result.difference is None
    assert result.ok and result.starts == 2 and result.rounds == 36 and not result.assumed_devices
    assert result.records > result.inputs > 0
    done = subprocess.run(  # a process of its own once; in this process below
        [*SHOECTL, "audit", "decisions", str(table_journal)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == (f"{table_journal}: decisions ok: {result.inputs} inputs decided again, {result.records} "
                           "records equal (36 round results), 2 starts\n")


def test_a_settlement_paid_more_is_named_with_both_figures(table_journal: Path, tmp_path: Path) -> None:
    seq = []

    def pay_more(rs: list) -> list:
        row = first(rs, "settlement", lambda p: p["net"] > 0)
        seq.append(set_payload(row, net=json.loads(row[PAYLOAD])["net"] + 100))
        return rs

    path = forged(table_journal, tmp_path, pay_more)
    result = decided(path)
    assert result.difference is not None and result.difference.seq == seq[0]
    net = result.difference.decided["payload"]["net"]
    assert result.difference.journaled["payload"]["net"] == net + 100
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0] == (f"{path}: decisions FAILED at entry {seq[0]}: the journal's settlement record is not what "
                        "the table decides from the input before it")
    assert lines[1] == f"    net: journal {net + 100}, decided {net}"
    # The table that wrote it ran this very code: the difference is the journal's, not a change of program.
    assert lines[2] == (f"    written and decided again by the same program, shoectl {shoectl_version()} (signature "
                        f"{signature_label()}): its own inputs do not decide to the journal's record")
    assert lines[3].startswith(f"{path}: decisions FAILED: ")


def test_a_journal_another_build_wrote_is_said_to_be_so_beside_its_difference(table_journal: Path,
                                                                              tmp_path: Path) -> None:
    """A gaming lab decides a journal of an earlier build again: a difference may then be the
    program's change, not the journal's, and the audit says which program wrote the journal (its
    last start before the difference) beside the one that decided it again."""
    other = "sha256:" + "0" * 64

    def earlier_build(rs: list) -> list:
        for row in rs:
            if row[KIND] == "controller_started":
                set_payload(row, version="0.0.9", signature=other)
        set_payload(first(rs, "settlement", lambda p: p["net"] > 0), net=12345678)
        return rs

    path = forged(table_journal, tmp_path, earlier_build)
    result = decided(path)
    assert result.written_by == {"version": "0.0.9", "signature": other}
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 1
    assert (f"    written by shoectl 0.0.9 (signature {other}), decided again by another, shoectl {shoectl_version()} "
            f"(signature {signature_label()}): a difference may be a change in how the program decides, not in the "
            "journal; decide it again with the program that wrote it") in done.stdout.splitlines()
    done = shoectl("audit", "decisions", "--json", str(path))
    said = json.loads(done.stdout)
    assert said["written_by"] == {"version": "0.0.9", "signature": other}
    assert said["decided_by"] == {"version": shoectl_version(), "signature": signature_label()}


@pytest.mark.parametrize("change", ["outcome", "card", "cut"])
def test_a_decision_changed_is_found_where_it_lies(table_journal: Path, tmp_path: Path, change: str) -> None:
    seq = []

    def forge(rs: list) -> list:
        if change == "outcome":  # the Banker's win written as the Player's
            seq.append(set_payload(first(rs, "round_result", lambda p: p["outcome"] == "banker"), outcome="player"))
        elif change == "card":  # a card the Player drew given to the Banker
            seq.append(set_payload(first(rs, "card", lambda p: p["to"] == "player"), to="banker"))
        else:
            row = first(rs, "cut")
            seq.append(set_payload(row, position=json.loads(row[PAYLOAD])["position"] + 1))
        return rs

    result = decided(forged(table_journal, tmp_path, forge))
    assert result.difference is not None and result.difference.seq == seq[0]
    assert result.difference.journaled["kind"] == result.difference.decided["kind"]


def test_a_record_taken_out_or_added_is_found(table_journal: Path, tmp_path: Path) -> None:
    removed = []

    def take_out(rs: list) -> list:
        row = first(rs, "settlement")
        removed.append(row[SEQ])
        return [r for r in rs if r is not row]

    result = decided(forged(table_journal, tmp_path, take_out))
    assert result.difference is not None and result.difference.journaled is not None
    assert result.difference.decided["kind"] == "settlement" and result.difference.seq == removed[0]

    def add_one(rs: list) -> list:  # a second copy of the last round's result, at the end
        return [*rs, list(rs[[r[KIND] for r in rs].index("round_result")])]

    path = forged(table_journal, tmp_path, add_one)
    result = decided(path)
    assert result.difference is not None and result.difference.seq == len(rows(path))
    assert result.difference.why.startswith("a record of kind round_result that no input made")


def test_an_input_before_any_rules_and_a_start_in_another_state_are_named(table_journal: Path, tmp_path: Path) -> None:
    result = decided(forged(table_journal, tmp_path, lambda rs: [r for r in rs if r[KIND] != "submission"]))
    assert result.difference is not None
    assert result.difference.why.startswith("an input before any Rules Submission: nothing says by which rules")

    seq = []

    def restart_elsewhere(rs: list) -> list:
        second = [r for r in rs if r[KIND] == "controller_started"][1]
        seq.append(set_payload(second, state="dealing" if json.loads(second[PAYLOAD])["state"] != "dealing" else "closed"))
        return rs

    result = decided(forged(table_journal, tmp_path, restart_elsewhere))
    assert result.difference is not None and result.difference.seq == seq[0]
    assert result.difference.why.startswith("the controller started in state ")


def test_the_devices_of_a_start(table_journal: Path, tmp_path: Path) -> None:
    """Without them (an earlier shoectl) the built-in table's are assumed, and said; malformed,
    they are named; other devices at a restart make a new table that replays the inputs so far,
    as the restarted table did."""
    def strip(rs: list) -> list:
        for r in rs:
            if r[KIND] == "controller_started":
                payload = json.loads(r[PAYLOAD])
                del payload["capabilities"]
                r[PAYLOAD] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return rs

    path = forged(table_journal, tmp_path, strip)
    result = decided(path)
    assert result.ok and result.assumed_devices
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 0
    assert "decided as the built-in emulator's table there" in done.stdout.splitlines()[0]

    seq = []

    def malformed(rs: list) -> list:
        seq.append(set_payload([r for r in rs if r[KIND] == "controller_started"][1], capabilities={"shuffler": "yes"}))
        return rs

    result = decided(forged(table_journal, tmp_path, malformed))
    assert result.difference is not None and result.difference.seq == seq[0]
    assert "malformed payload: field 'capabilities' of the wrong kind" in result.difference.why

    def approved(rs: list) -> list:  # another approval, the same decisions
        set_payload([r for r in rs if r[KIND] == "controller_started"][1],
                    capabilities={**BUILT_IN_DEVICES, "approval": "PGCB-2026-0001"})
        return rs

    result = decided(forged(table_journal, tmp_path, approved))
    assert result.ok, result.difference

    def automatic(rs: list) -> list:  # an automatic shoe from the restart on: no cut is offered
        set_payload([r for r in rs if r[KIND] == "controller_started"][1],
                    capabilities={**BUILT_IN_DEVICES, "automatic_shoe": True, "approval": "PGCB-2026-0001"})
        return rs

    result = decided(forged(table_journal, tmp_path, automatic))
    assert result.difference is not None


def test_a_journal_without_entries_or_not_verifying_is_not_decided(tmp_path: Path, table_journal: Path) -> None:
    empty = tmp_path / "empty.db"
    Journal.open(empty, table_id="T1").close()
    done = shoectl("audit", "decisions", str(empty))
    assert done.returncode == 2 and done.stderr.strip().endswith("the journal holds no entries")
    edited = tmp_path / "edited.db"
    shutil.copy(table_journal, edited)
    tamper(edited, "UPDATE entries SET payload = replace(payload, '\"net\":', '\"net\": ') WHERE kind = 'settlement'")
    done = shoectl("audit", "decisions", str(edited))
    assert done.returncode == 1 and done.stdout == ""
    assert "nothing was written" in done.stderr


def test_a_version_1_journal_is_decided_by_the_rules_given_and_its_records_without_the_keys_added_since(
        tmp_path: Path) -> None:
    """tests/data/journal-v1.sql (an earlier shoectl, Minibaccarat) names neither its rules nor its
    devices: without ``--submission`` its first input is named; with it, its 82 rounds decide
    again to themselves. Its records lack the keys version 2 gained since (the reconciliation's
    ``remaining_counted_by``...): another program wrote it, so they are compared without them, and
    said (an upgrade review: every journal of the first week failed here, read as forged)."""
    path = tmp_path / "v1.db"
    conn = sqlite3.connect(path)
    conn.executescript((Path(__file__).parent.parent / "data" / "journal-v1.sql").read_text(encoding="utf-8"))
    conn.close()
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 1
    assert done.stdout.splitlines()[0] == (f"{path}: decisions FAILED at entry 1: an input before any Rules "
                                           "Submission: nothing says by which rules it was decided (--submission "
                                           "names them)")
    assert done.stdout.splitlines()[1].startswith("    the program that wrote the journal, or this one, cannot be told "
                                                  "by its signature")
    done = shoectl("audit", "decisions", "--submission", "minibaccarat", "--json", str(path))
    assert done.returncode == 0, done.stdout
    result = json.loads(done.stdout)
    assert result["ok"] and result["assumed_devices"] and result["rounds"] == 82 and result["inputs"] == 922
    assert result["written_by"] is None  # no start of it is journaled
    assert result["compared_without"] == {"reconciliation": ["remaining_counted_by"]}
    assert "not used" not in done.stderr  # the rules given were used
    done = shoectl("audit", "decisions", "--submission", "minibaccarat", str(path))
    assert done.returncode == 0 and done.stdout.splitlines()[-2:] == [
        f"{path}: records written by an earlier program lack keys added since, compared without them: "
        "reconciliation without remaining_counted_by",
        f"{path}: decisions ok: 922 inputs decided again, 2012 records equal (82 round results), 0 starts"]


def _stripped(row: list) -> int:
    payload = json.loads(row[PAYLOAD])
    del payload["remaining_counted_by"]
    row[PAYLOAD] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return row[SEQ]


def _starts_signed(rs: list, signature) -> None:
    """Every ``controller_started`` record's ``signature`` set to ``signature``; None: deleted, and
    its ``driver`` with it, as a start of before 2026-12-06 names neither."""
    for row in rs:
        if row[KIND] == "controller_started":
            payload = json.loads(row[PAYLOAD])
            payload.pop("signature")
            if signature is not None:
                payload["signature"] = signature
            else:
                payload.pop("driver")
            row[PAYLOAD] = json.dumps(payload, sort_keys=True, separators=(",", ":"))


@pytest.mark.parametrize("signature", ["kept", "sha256:" + "0" * 64, "deleted"], ids=["its-own", "edited",
                                                                                     "deleted-its-driver-kept"])
def test_a_key_added_since_stripped_from_a_journal_whose_starts_name_a_signature_is_a_difference(
        table_journal: Path, tmp_path: Path, signature: str) -> None:
    """The leniency for an earlier program's records is not a forger's: every program that names
    its signature at its starts (since 2026-12-06) writes the keys version 2 gained by 2026-12-05,
    so a reconciliation without ``remaining_counted_by`` there, re-chained so that it verifies,
    fails the audit at that record, whatever signature the starts name (a review of the mend's
    first form, which a forger's edited signature turned lenient)."""
    seq = []

    def forge(rs: list) -> list:
        if signature == "deleted":  # a start that names its driver (since 2026-12-07) names its signature too
            for row in rs:
                if row[KIND] == "controller_started":
                    row[PAYLOAD] = json.dumps({k: v for k, v in json.loads(row[PAYLOAD]).items() if k != "signature"},
                                              sort_keys=True, separators=(",", ":"))
        elif signature != "kept":
            _starts_signed(rs, signature)
        seq.append(_stripped(first(rs, "reconciliation", lambda p: "remaining_counted_by" in p)))
        return rs

    path = forged(table_journal, tmp_path, forge)
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 1, done.stdout
    assert done.stdout.splitlines()[0] == (f"{path}: decisions FAILED at entry {seq[0]}: the journal's reconciliation "
                                           "record is not what the table decides from the input before it")
    assert "    remaining_counted_by: journal (none), decided " in done.stdout


@pytest.fixture(scope="module")
def two_shoes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One start, two one-deck shoes: two reconciliations written by one program."""
    folder = tmp_path_factory.mktemp("two-shoes")
    rules = preset_with_decks(folder / "one-deck.toml", "minibaccarat", 1)
    return dealt_journal(folder / "j.db", "--submission", str(rules), "--shoes", "2", "--no-edge-monitor")


@pytest.mark.parametrize("stripped", [(0,), (1,), (0, 1)], ids=["the-first", "the-second", "both"])
def test_a_start_that_names_no_signature_is_compared_without_a_key_only_if_none_of_its_records_has_it(
        two_shoes: Path, tmp_path: Path, stripped: tuple[int, ...]) -> None:
    """A start naming no signature (a program of before 2026-12-06) is compared without the keys
    added since only where none of its records of that kind carries the key: one program writes it
    in all of them or in none. What the audit cannot tell (docs/audit.md): every record of the start
    stripped and its signature deleted reads as an earlier program's, detail lost, no decision."""
    seqs = []

    def forge(rs: list) -> list:
        _starts_signed(rs, None)
        reconciliations = [r for r in rs if r[KIND] == "reconciliation"]
        assert len(reconciliations) >= 2
        seqs.extend(_stripped(reconciliations[i]) for i in stripped)
        seqs.append(reconciliations[1][SEQ])
        return rs

    path = forged(two_shoes, tmp_path, forge)
    done = shoectl("audit", "decisions", str(path))
    lines = done.stdout.splitlines()
    if stripped == (0, 1):
        assert done.returncode == 0, done.stdout
        assert lines[-2] == (f"{path}: records written by an earlier program lack keys added since, compared without "
                             "them: reconciliation without remaining_counted_by")
    elif stripped == (0,):  # the next one carries it: the first is not an earlier program's
        assert done.returncode == 1, done.stdout
        assert f"decisions FAILED at entry {seqs[-1]}: the journal's reconciliation record carries remaining_counted_by, " \
               f"which its reconciliation record at entry {seqs[0]} lacks: one program writes it in all of them or in " \
               "none" in lines[0] and "compared without" not in done.stdout, done.stdout
    else:  # the one before carried it
        assert done.returncode == 1, done.stdout
        assert f"decisions FAILED at entry {seqs[0]}: the journal's reconciliation record is not what the table " \
               "decides from the input before it" in done.stdout


def test_rules_given_that_the_journal_does_not_need_are_said_not_used(table_journal: Path) -> None:
    """A review of bad inputs: `audit decisions --submission ez-baccarat` on a journal that names
    its rules was taken without a word, as if it had been applied. Said, in one warning line; the
    verdict is the journal's own rules'."""
    done = shoectl("audit", "decisions", "--submission", "minibaccarat", str(table_journal))
    assert done.returncode == 0 and "decisions ok" in done.stdout, done.stderr
    assert done.stderr.splitlines()[-1] == ("shoectl audit decisions: warning: --submission minibaccarat: not used: "
                                            "the journal names its rules before its first input, and they decided it")


@pytest.mark.parametrize("field, value, says", [
    ("device_role", "dealer", "field 'device_role' of the wrong kind"),
    ("device_role", ["shoe"], "field 'device_role' of the wrong kind"),
    ("command", ["wager"], "field 'command' of the wrong kind"),
    ("args", [], "field 'args' of the wrong kind"),
])
def test_an_input_no_table_wrote_is_named_not_decided(table_journal: Path, tmp_path: Path, field: str, value,
                                                      says: str) -> None:
    """A fuzzing of the audit: an operator command journaled as a list made the core fail with a
    Python error (and the traceback reached the auditor); a device event from a role no device
    plays was decided as the shoe's."""
    seq = []

    def forge(rs: list) -> list:
        kind = "input.device" if field == "device_role" else "input.operator"
        seq.append(set_payload(first(rs, kind), **{field: value}))
        return rs

    path = forged(table_journal, tmp_path, forge)
    result = decided(path)
    assert result.difference is not None and result.difference.seq == seq[0] and says in result.difference.why
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stdout.splitlines()[0].startswith(f"{path}: decisions FAILED at entry {seq[0]}: entry {seq[0]} ")


def _other_rules(row: list) -> list:
    """The submission record ``row`` with the Tie paid more: other rules."""
    other = list(row)
    payload = json.loads(row[PAYLOAD])
    payload["paytable"] = {**payload["paytable"], "tie": "9:1"}
    other[PAYLOAD] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
    return other


def test_rules_put_in_force_where_no_table_would_are_named(table_journal: Path, tmp_path: Path) -> None:
    """A review of the audit: a submission record that no command made was put in force wherever it
    lay; a forger who put another paytable between two rounds, and rewrote the settlements after
    it, had a journal that decided again to itself. The running table writes one as it
    starts, before any input, and takes other rules only at a closed table."""
    seq = []

    def between_rounds(rs: list) -> list:
        rules = first(rs, "submission")
        after = [i for i, r in enumerate(rs) if r[KIND] == "round_result"][3]
        at = next(i for i in range(after, len(rs)) if rs[i][KIND].startswith("input."))  # that input's records done
        seq.append(rs[at][SEQ])
        return [*rs[:at], _other_rules(rules), *rs[at:]]

    result = decided(forged(table_journal, tmp_path, between_rounds))
    assert result.difference is not None and result.difference.seq == seq[0]
    assert result.difference.why.startswith("a submission record that no command made, after the table's inputs")

    def at_the_restart(rs: list) -> list:  # the second start found the table dealing a shoe
        at = [i for i, r in enumerate(rs) if r[KIND] == "controller_started"][1] + 1
        seq.append(rs[at][SEQ])
        return [*rs[:at], _other_rules(first(rs, "submission")), *rs[at:]]

    result = decided(forged(table_journal, tmp_path, at_the_restart))
    assert result.difference is not None and result.difference.seq == seq[1]
    assert result.difference.why.startswith("other rules put in force at a start while the table is ")


def test_a_paytable_forged_under_a_shipped_presets_name_is_named(table_journal: Path, tmp_path: Path) -> None:
    """A surveillance review: the journal's first submission record (source `preset:ez-baccarat`)
    forged to pay the Tie 9:1, with the settlements after it paid so and the chain recomputed,
    decided again to itself: the audit took the paytable as the record said. A record that names
    a preset this program ships is compared with that preset."""
    seq = []

    def forge(rs: list) -> list:
        at = next(i for i, r in enumerate(rs) if r[KIND] == "submission")
        seq.append(rs[at][SEQ])
        rs[at] = _other_rules(rs[at])
        return rs

    result = decided(forged(table_journal, tmp_path, forge))
    assert result.difference is not None and result.difference.seq == seq[0]
    assert result.difference.why == ("the submission record names the shipped preset:ez-baccarat, but its rules are not "
                                     "that preset's: paytable.tie: 9:1, the preset's 8:1")


@pytest.mark.parametrize("column, value", [(9, "mallory"), (5, 7)], ids=["operator", "round_no"])
def test_a_record_s_columns_are_compared_and_named_as_columns(table_journal: Path, tmp_path: Path, column: int,
                                                             value) -> None:
    """A surveillance review: the `operator` column of an operator's record was never compared (who
    gave a command could be changed unseen), and a column changed read as its payload's key of the
    same name ("round: journal 7, decided 2" for the column round_no and for the payload's round)."""
    seq = []

    def forge(rs: list) -> list:
        at = next(i for i, r in enumerate(rs) if r[KIND] == ("operator" if column == 9 else "round_start"))
        rs[at] = [*rs[at][:column], value, *rs[at][column + 1:]]
        seq.append(rs[at][SEQ])
        return rs

    path = forged(table_journal, tmp_path, forge)
    result = decided(path)
    assert result.difference is not None and result.difference.seq == seq[0]
    done = shoectl("audit", "decisions", str(path))
    name = "operator" if column == 9 else "round_no"
    assert done.returncode == 1 and done.stdout.splitlines()[1].startswith(f"    column {name}: journal "
                                                                           f"{json.dumps(value)}, decided ")


def test_a_surveillance_notice_deleted_or_changed_is_named(table_journal: Path, tmp_path: Path) -> None:
    """A surveillance review: an `edge_alert` deleted, the chain recomputed, passed verify and this
    audit (nothing left said a notice was due). The `edge` record carries the monitor's threshold;
    an edge record whose figures pass it is followed by its alert, with those wagers."""
    journal = tmp_path / "alerts.db"
    runner, _ = deal_with_the_edge_monitor(journal, "ez-baccarat", seed=5, rounds=6, threshold="-0.05")
    assert runner.error is None  # at -5 %, every round's Player and Banker are above it: an alert a round
    with JournalReader.open(journal) as reader:
        entries = list(reader.entries())
    alerts = [e for e in entries if e.kind == "edge_alert"]
    assert alerts and all(e.payload.get("threshold") == "-0.05" for e in entries if e.kind == "edge")
    assert decided(journal).ok
    edge_seq = max(e.seq for e in entries if e.kind == "edge" and e.seq < alerts[0].seq)
    result = decided(forged(journal, tmp_path, lambda rs: [r for r in rs if r[SEQ] != alerts[0].seq]))
    assert result.difference is not None and result.difference.seq == alerts[0].seq  # the entry in its place
    assert result.difference.why.startswith(f"no edge_alert follows the edge record of entry {edge_seq} (round ")
    assert "whose figures call for one: " in result.difference.why

    def fewer_wagers(rs: list) -> list:
        at = next(i for i, r in enumerate(rs) if r[SEQ] == alerts[0].seq)
        payload = json.loads(rs[at][PAYLOAD])
        payload["wagers"] = dict(list(payload["wagers"].items())[:-1]) or {"tie": "0.5"}
        rs[at][PAYLOAD] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return rs

    result = decided(forged(journal, tmp_path, fewer_wagers))
    assert result.difference is not None and result.difference.seq == alerts[0].seq
    assert result.difference.why.startswith(f"the edge_alert names other wagers than the edge record of entry {edge_seq}")

    def alert_and_threshold_taken_out(rs: list) -> list:  # a review: the threshold taken out with the alert
        last = max(i for i, r in enumerate(rs) if r[KIND] == "edge_alert")
        edge = max(i for i in range(last) if rs[i][KIND] == "edge")
        payload = json.loads(rs[edge][PAYLOAD])
        del payload["threshold"]
        rs[edge][PAYLOAD] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return rs[:last] + rs[last + 1:]

    result = decided(forged(journal, tmp_path, alert_and_threshold_taken_out))
    assert result.difference is not None
    assert result.difference.why == "an edge record without the threshold every edge record before it carries"


def test_the_events_a_device_never_sent_given_up_are_not_decided_again(table_journal: Path, tmp_path: Path) -> None:
    """A review of the audit: `events_given_up`, which a device's sender journals once a floorperson
    gave the events up (not a record the core makes with an input), failed the audit."""
    def given_up(rs: list) -> list:
        last = list(rs[-1])
        note = [last[SEQ] + 1, last[1], "events_given_up", "T1", last[4], last[5], None, None, None, None,
                json.dumps({"device_role": "shoe", "device_serial": "EMU-emulated-shoe", "epoch": 7, "first": 3,
                            "last": 4}, sort_keys=True, separators=(",", ":")), None, None]
        return [*rs, note]

    result = decided(forged(table_journal, tmp_path, given_up))
    assert result.ok, result.difference


@pytest.mark.parametrize("number", ["NaN", "Infinity", "1e999"])
def test_a_number_no_table_writes_read_without_the_check_is_a_difference_not_a_crash(
        table_journal: Path, tmp_path: Path, number: str) -> None:
    """A review of bad inputs fed ``audit decisions --no-verify`` a record holding NaN: a 39-line
    traceback, exit 1, which a script reads as the audit's own finding. It is the first record
    that differs, named in one line."""
    path = tmp_path / "nan.db"
    shutil.copy(table_journal, path)
    row = first(rows(path), "settlement")
    tamper(path, "UPDATE entries SET payload = ? WHERE seq = ?", params=(f'{{"net":{number}}}', row[SEQ]))
    done = shoectl("audit", "decisions", "--no-verify", str(path))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.splitlines()[0] == (f"{path}: decisions FAILED at entry {row[SEQ]}: the journal's settlement "
                                           "record holds a number no table writes (not a number, or infinite)")


@pytest.mark.parametrize("change", ["reworded", "another_state"])
def test_a_refusal_is_compared_without_its_words(table_journal: Path, tmp_path: Path, change: str) -> None:
    """A review of this audit: a journal written the day before failed `audit decisions` on a
    refusal whose words a later version mended, and read as tampered with. A refusal changes
    nothing; it is compared by its input, state and operator, not by its words (a forged state is
    still found)."""
    seq = []

    def refused_between_rounds(rs: list) -> list:
        # after the last round's cards went to the rack (after the last start, whose count of
        # inputs replayed it would change), a floorperson's clear_fault, refused
        at = max(i for i, r in enumerate(rs) if r[KIND] == "discard_rack") + 1
        shoe = rs[at - 1][4]
        command = list(rs[at - 1])
        command[KIND], command[5], command[6:9], command[9] = "input.operator", None, [None] * 3, "fp1"
        command[PAYLOAD] = '{"args":{},"command":"clear_fault","operator_role":"floorperson"}'
        refusal = list(command)
        refusal[KIND], refusal[9] = "refused", None
        state = "betting" if change == "reworded" else "dealing"
        refusal[PAYLOAD] = json.dumps({"input": "clear_fault", "operator": "fp1", "reason": "words of another day",
                                       "state": state}, sort_keys=True, separators=(",", ":"))
        command[4] = refusal[4] = shoe
        seq.append(at + 2)  # the refusal's seq once renumbered (seqs are 1-based)
        return rs[:at] + [command, refusal] + rs[at:]

    result = decided(forged(table_journal, tmp_path, refused_between_rounds))
    if change == "reworded":
        assert result.difference is None, result.difference
    else:
        assert result.difference is not None and result.difference.seq == seq[0]
        assert result.difference.decided["payload"]["state"] == "betting"


def test_a_start_naming_no_signature_inserted_after_one_that_names_one_is_not_an_earlier_programs(
        two_shoes: Path, tmp_path: Path) -> None:
    """Every program since 2026-12-06 names its signature (and since 2026-12-07 its driver), so no
    earlier program's start comes after one that does. A forger who inserts a start naming neither
    before one reconciliation of a journal this program wrote, and a copy of the real start after
    it, and strips that record's ``remaining_counted_by``: the audit passed, the leniency reaching
    any single record (a review of the mend's second form). It fails at that record."""
    from controller.table.redecision import _Redecider

    with JournalReader.open(two_shoes) as reader:
        entries = list(reader.entries())

    def state_before(seq: int) -> tuple[str, int]:
        walk = _Redecider()
        for e in entries:
            if e.seq >= seq:
                break
            walk.take(e)
        assert walk.result.difference is None and not walk.expected
        return walk.core.state, len(walk.read.inputs)

    seqs = []

    def forge(rs: list) -> list:
        start = first(rs, "controller_started")
        target = first(rs, "reconciliation")[SEQ]
        inputs = ("input.device", "input.operator", "input.status", "input.command_failed")
        before = max(e.seq for e in entries if e.seq < target and e.kind in inputs)
        after = min(e.seq for e in entries if e.seq > target and e.kind in inputs)

        def start_at(seq: int, signed: bool) -> list:
            row = list(start)
            state, replayed = state_before(seq)
            payload = {**json.loads(row[PAYLOAD]), "state": state, "replayed": replayed}
            if not signed:
                del payload["signature"], payload["driver"]
            row[PAYLOAD] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
            return row

        out = []
        for row in rs:
            if row[SEQ] in (before, after):
                out.append(start_at(row[SEQ], signed=row[SEQ] == after))
            if row[SEQ] == target:
                _stripped(row)
            out.append(row)
        seqs.append(next(i for i, r in enumerate(out, start=1) if r[KIND] == "reconciliation"))
        return out

    path = forged(two_shoes, tmp_path, forge)
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 1, done.stdout
    assert done.stdout.splitlines()[0] == (f"{path}: decisions FAILED at entry {seqs[0]}: the journal's reconciliation "
                                           "record is not what the table decides from the input before it"), done.stdout


@pytest.fixture(scope="module")
def two_starts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two starts of one table, each dealing two one-deck shoes: four reconciliations."""
    folder = tmp_path_factory.mktemp("two-starts")
    rules = preset_with_decks(folder / "one-deck.toml", "minibaccarat", 1)
    for _ in range(2):
        dealt_journal(folder / "j.db", "--submission", str(rules), "--shoes", "2", "--no-edge-monitor")
    return folder / "j.db"


def test_the_keys_an_earlier_start_was_compared_without_are_still_named_when_a_later_start_fails(
        two_starts: Path, tmp_path: Path) -> None:
    """Two starts naming no signature: the first's reconciliations lack ``remaining_counted_by``
    (an earlier program's, compared without it); the second's first lacks it and its next carries
    it: the audit fails there. The first start's records were compared without the key all the
    same, and ``compared_without`` (the line before the verdict) still says so (a review of the mend)."""
    seqs = []

    def forge(rs: list) -> list:
        _starts_signed(rs, None)
        reconciliations = [r for r in rs if r[KIND] == "reconciliation"]
        assert len(reconciliations) == 4
        seqs.extend(_stripped(r) for r in reconciliations[:3])
        seqs.append(reconciliations[3][SEQ])
        return rs

    path = forged(two_starts, tmp_path, forge)
    done = shoectl("audit", "decisions", "--json", str(path))
    result = json.loads(done.stdout)
    assert done.returncode == 1 and result["difference"]["seq"] == seqs[3]
    assert f"at entry {seqs[2]} lacks" in result["difference"]["why"]
    assert result["compared_without"] == {"reconciliation": ["remaining_counted_by"]}, result["compared_without"]
    done = shoectl("audit", "decisions", str(path))
    assert (f"{path}: records written by an earlier program lack keys added since, compared without them: "
            "reconciliation without remaining_counted_by") in done.stdout.splitlines(), done.stdout


@pytest.fixture(scope="module")
def midi_journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One Midibaccarat shoe on the emulator: squeezes, each hand revealed with its Point Count."""
    folder = tmp_path_factory.mktemp("midi")
    return dealt_journal(folder / "j.db", "--submission", "midibaccarat", "--shoes", "1", "--seed", "8",
                         "--no-edge-monitor")


def test_a_midibaccarat_journal_of_a_program_of_before_the_point_count_decides_again_to_itself(
        midi_journal: Path, tmp_path: Path) -> None:
    """A program of 2026-12-06 before 08:09 (760d7da0~1; no signature: those came at 12:06) journaled
    ``revealed`` as {"hand", "by"}: the Point Count (629a.8(c)(1)-(2)) was added that morning. Its
    journal is this one with every start's signature and driver, and every revealed record's
    ``point_count``, left out: an earlier program's, not a forger's (a review ran that program: its
    journal failed at its first ``revealed``, "point_count: journal (none), decided 2")."""
    def as_written_then(rs: list) -> list:
        _starts_signed(rs, None)
        for row in rs:
            if row[KIND] == "revealed":
                payload = json.loads(row[PAYLOAD])
                payload.pop("point_count")
                row[PAYLOAD] = json.dumps(payload, sort_keys=True, separators=(",", ":"))
        return rs

    path = forged(midi_journal, tmp_path, as_written_then)
    done = shoectl("audit", "decisions", str(path))
    assert done.returncode == 0, done.stdout
    assert "compared without them: revealed without point_count" in done.stdout


def test_a_key_added_after_signatures_began_is_allowed_only_to_starts_that_name_no_driver() -> None:
    """``discard``'s ``disclosed`` (a card out after its shoe ended) came on 2026-12-07 at 10:01, after
    the programs began to sign their starts (2026-12-06) and before they named their driver (10:41):
    a signed start of those days is an earlier program's for that key, not for the keys added before
    signatures; a start naming a driver writes them all (a review: a signature alone held it to
    every key, and such a journal failed as if forged)."""
    from controller.journal.chain import canonical_json
    from controller.table.earlier_programs import EarlierPrograms

    decided = {"card": "9S", "position": 7, "reason": "drawn from shoe 1, which has ended", "disclosed": False}
    journaled = {k: v for k, v in decided.items() if k != "disclosed"}
    text = canonical_json(journaled)
    burn_decided, burn_journaled = {"card": "8C", "position": 1, "due": "load"}, {"card": "8C", "position": 1}

    signed = EarlierPrograms({}, {}, {}, {})
    signed.started({"version": "0.1.0", "signature": "sha256:" + "0" * 64})
    assert signed.lenient("discard", 5, text, journaled, decided)
    assert not signed.lenient("burn", 6, canonical_json(burn_journaled), burn_journaled, burn_decided)
    assert signed.compared_without == {"discard": ["disclosed"]}

    driven = EarlierPrograms({}, {}, {}, {})
    driven.started({"version": "0.1.0", "signature": "sha256:" + "0" * 64, "driver": "automated"})
    assert not driven.lenient("discard", 5, text, journaled, decided)
    then_unsigned = EarlierPrograms({}, {}, {}, {})  # a start naming neither, after one that named a driver: a forger's
    then_unsigned.started({"driver": None})
    then_unsigned.started({"version": "0.1.0"})
    assert not then_unsigned.lenient("discard", 5, text, journaled, decided)


def test_a_start_signed_by_this_very_program_is_not_an_earlier_programs_whatever_it_lacks() -> None:
    """This program names its driver at every start and writes ``discard``'s ``disclosed``: a start
    that carries its own signature but no driver is not one of 2026-12-06 (a forger deleted its
    driver); a discard without ``disclosed`` under it is a difference, not "written by an earlier
    program" (a review of the marks). Another program's signature without a driver may be one of
    those days."""
    from controller.journal.chain import canonical_json
    from controller.table.earlier_programs import EarlierPrograms

    decided = {"card": "9S", "position": 7, "reason": "drawn from shoe T1-S0001, which has ended: collected with "
               "its cards, not dealt", "disclosed": True}
    journaled = {k: v for k, v in decided.items() if k != "disclosed"}
    for signature, lenient in ((signature_label(), False), ("sha256:" + "1" * 64, True)):
        keys = EarlierPrograms({}, {}, {}, {})
        keys.started({"version": shoectl_version(), "replayed": 0, "state": "closed", "signature": signature})
        assert keys.lenient("discard", 46, canonical_json(journaled), journaled, decided) is lenient
        assert keys.compared_without == ({"discard": ["disclosed"]} if lenient else {})
