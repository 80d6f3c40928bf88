"""What people did before a journal's first shoe is in its replay (a review of the people side):
`journal replay` left out every entry without a shoe but a clock step, so the floorperson who
opened the table and under which rules, and the wrong PINs and refused commands while it was
closed, were in the journal and in no replay. docs/journal.md: the events hold "every input
refused (a command, a login, a malformed request) and every operator command but the routine
ones of a round", each with who gave it."""
from __future__ import annotations

import json

from cli_run import run_captured
from tests.control.running_table import command_line


def test_replay_shows_the_logins_and_commands_before_the_first_shoe(start_table, workdir) -> None:
    t = start_table(workdir, manual=True)
    assert t.ask(command_line("d1", "open", pin="1111"))["code"] == "auth"  # a wrong PIN
    assert t.ask(command_line("d1", "open"))["code"] == "forbidden"  # a dealer may not open the table
    t.ok(command_line("fp1", "set_submission", submission="ez-baccarat"))
    t.ok(command_line("fp1", "open"))
    assert t.wait_state("cutting") == "cutting"
    t.assert_stopped_cleanly()
    code, out, err = run_captured("journal", "replay", str(t.journal), "--json")
    assert code == 0, err
    [shoe] = [doc for doc in map(json.loads, out.splitlines()) if doc.get("type", "shoe") == "shoe"]
    events = [(e["kind"], e["operator"], e["payload"].get("command")) for e in shoe["events"]]
    # the program's start, the wrong PIN and the dealer's `open` (both refused at the door), the
    # floorperson's rules and opening: first among the first shoe's events, in the journal's order
    assert events[:5] == [("controller_started", None, None), ("auth_refused", "d1", "open"),
                          ("auth_refused", "d1", "open"), ("operator", "fp1", "set_submission"),
                          ("operator", "fp1", "open")], events
