"""A table resumes under the rules its journal holds, not under ``run``'s default.

A review resumed a Midibaccarat journal without ``--submission``: the replay ran under
Minibaccarat (8 decks against 6) and met a count fault that never happened, and the table did not
resume; with ``--submission ez-baccarat`` it replayed Midibaccarat's rounds under EZ Baccarat's
rules and dealt on under them in the middle of the shoe. Now each ``submission`` record puts its
rules in force from its place in the journal, and other rules asked for on the command line are
taken only at a closed table (as ``set_submission``), refused while a shoe is in play.
"""
from __future__ import annotations

from pathlib import Path

from cli_run import dealt_journal, run
from controller.journal import JournalReader, Record, kinds, verify
from controller.journal.store import Journal
from controller.rules.submission import load_preset
from controller.table.core import TableCore
from controller.table.journaling import rules_record
from controller.table.recovery import replay_journal

RUN = ["run", "--speed", "max", "--display", "lines", "--seed", "4"]


def _submissions(path: Path) -> list[str]:
    with JournalReader.open(path) as r:
        return [e.payload["source"] for e in r.entries(kinds=("submission",))]


def test_a_journal_resumes_under_its_own_rules_without_submission(capsys, tmp_path: Path) -> None:
    journal = dealt_journal(tmp_path / "j.db", "--submission", "midibaccarat", "--rounds", "2", "--seed", "4")
    code, out, err = run(capsys, *RUN, "--journal", str(journal), "--rounds", "3")
    assert code == 0, err
    assert "inputs replayed; the table is betting" in out
    assert _submissions(journal) == ["preset:midibaccarat"]  # nothing else was put in force
    assert verify(journal).ok


def test_other_rules_asked_for_in_the_middle_of_a_shoe_are_refused(capsys, tmp_path: Path) -> None:
    journal = dealt_journal(tmp_path / "j.db", "--submission", "midibaccarat", "--rounds", "2", "--seed", "4")
    before = verify(journal)
    anchors = Path(f"{journal}.anchors")
    anchored = anchors.read_bytes()
    code, out, err = run(capsys, *RUN, "--journal", str(journal), "--rounds", "3", "--submission", "ez-baccarat")
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert ("--submission ez-baccarat: the journal's table plays 'Midibaccarat, 6 decks' and is betting; resume it "
            "without --submission (its rules change at a closed table: close, then set_submission)") in err
    after = verify(journal)
    assert (after.entries, after.last_hash) == (before.entries, before.last_hash)
    assert anchors.read_bytes() == anchored  # a refused input changes nothing: no anchor of an opening refused
    code, out, err = run(capsys, *RUN, "--journal", str(journal), "--rounds", "3", "--submission", "midibaccarat")
    assert code == 0, err  # the same rules: a resume as any


def test_each_submission_record_puts_its_rules_in_force_from_its_place(tmp_path: Path) -> None:
    """A journal where the rules changed (an earlier shoectl journaled other rules at a restart):
    the replay ends under the last ones whatever rules the core was made with."""
    path = tmp_path / "j.db"
    with Journal.open(path, table_id="T1") as journal:
        for preset in ("minibaccarat", "ez-baccarat"):
            journal.append_batch([rules_record(load_preset(preset), None)])
        journal.append_batch([Record(kinds.INPUT_OPERATOR, {"command": "open", "args": {}, "operator_role": "floorperson"},
                                     operator="fp1")])
        core = TableCore(load_preset("midibaccarat"))
        done = replay_journal(core, journal)
    assert done.inputs == 1 and done.rules_journaled["source"] == "preset:ez-baccarat"
    assert core.sub == load_preset("ez-baccarat") and core.state == "shuffling"


def test_the_replay_knows_where_each_start_of_the_controller_fell(tmp_path: Path) -> None:
    """``controller_started`` records are read by the input they came before, so that the replay
    tells the core where each start fell, as the live table was told (``TableCore.restarted``)."""
    path = tmp_path / "j.db"
    opened = Record(kinds.INPUT_OPERATOR, {"command": "open", "args": {}, "operator_role": "floorperson"},
                    operator="fp1")
    started = Record(kinds.CONTROLLER_STARTED, {"version": "0", "replayed": 0, "state": "closed"})
    with Journal.open(path, table_id="T1") as journal:
        journal.append_batch([started])
        journal.append_batch([opened])
        journal.append_batch([started])
        core = TableCore(load_preset("minibaccarat"))
        restarts = []
        core.restarted = lambda driver=None, real=core.restarted: (restarts.append(core.state), real(driver))  # type: ignore[method-assign]
        assert replay_journal(core, journal).inputs == 1
    assert restarts == ["closed", "shuffling"]  # before the open, and after it
    assert core.state == "shuffling" and core.shoe.restarted  # the second start fell during the shuffle


def test_the_replay_holds_few_inputs_at_once_and_decides_the_same_in_any_chunks(tmp_path: Path, monkeypatch) -> None:
    """A review of long shifts: a start held every input of its journal at once (138 MB for 250
    shoes, the heap that much larger for the table's life). The replay feeds them as read, a chunk
    at a time; where the chunks end changes nothing: a refusal still meets its own input, a start
    and the rules fall where they did."""
    import controller.table.recovery as recovery

    dealt = dealt_journal(tmp_path / "dealt.db", "--rounds", "12", "--seed", "5")
    dealt_journal(dealt, "--rounds", "2")  # started again on it: a second start among the inputs
    refusals = tmp_path / "refused.db"
    opened = Record(kinds.INPUT_OPERATOR, {"command": "open", "args": {}, "operator_role": "floorperson"},
                    operator="fp1")
    with Journal.open(refusals, table_id="T1") as journal:
        journal.append_batch([rules_record(load_preset("minibaccarat"), None)])
        journal.append_batch([opened])
        journal.append_batch([opened, Record(kinds.REFUSED, {"command": "open", "reason": "the table is open"})])
        journal.append_batch([opened, Record(kinds.REFUSED, {"command": "open", "reason": "the table is open"})])
    for path in (dealt, refusals):
        outcomes = []
        for chunk in (1, 2, 3, 4096):
            monkeypatch.setattr(recovery, "REPLAY_CHUNK", chunk)
            fed: list[int] = []
            core = TableCore(load_preset("minibaccarat"))
            real = core.recover
            core.recover = lambda inputs, verdicts, real=real: (fed.append(len(inputs)), real(inputs, verdicts))[1]
            with JournalReader.open(path) as reader:
                done = recovery.replay_journal(core, reader)
            assert max(fed) <= chunk and sum(fed) == done.inputs
            outcomes.append((done.inputs, done.serial_of_role, core.snapshot()))
        assert all(o == outcomes[0] for o in outcomes), path.name
    assert outcomes[0][0] == 3 and outcomes[0][2]["state"] == "shuffling"


def test_the_same_rules_read_from_another_path_resume_as_any(capsys, tmp_path: Path) -> None:
    """A review installing the table as an integrator would: a table started with
    ``--submission sub/casino.toml`` refused to resume in the middle of its shoe when the same file
    was named by its absolute path (as the systemd unit's ``SHOECTL_RUN_ARGS`` does), by a copy of it,
    or by the preset it was printed from ("its rules change": they did not; exit 2, which the unit
    does not restart). Where the rules were read from is not what they are."""
    rules = tmp_path / "sub" / "casino.toml"
    rules.parent.mkdir()
    code, printed, err = run(capsys, "rules", "show", "midibaccarat")
    assert code == 0, err
    rules.write_text(printed)
    (tmp_path / "copy.toml").write_text(printed)
    journal = dealt_journal(tmp_path / "j.db", "--submission", str(rules), "--rounds", "2", "--seed", "4")
    for spelled in (f"{tmp_path}/sub/../sub/casino.toml", str(tmp_path / "copy.toml"), "midibaccarat"):
        code, out, err = run(capsys, *RUN, "--journal", str(journal), "--rounds", "1", "--submission", spelled)
        assert code == 0, (spelled, err)
        assert "inputs replayed; the table is betting" in out
    assert _submissions(journal) == [str(rules)]  # the rules in force were never put in force again
    code, out, err = run(capsys, *RUN, "--journal", str(journal), "--rounds", "1", "--submission", "minibaccarat")
    assert code == 2 and "its rules change at a closed table" in err  # other rules are still refused
    assert verify(journal).ok
