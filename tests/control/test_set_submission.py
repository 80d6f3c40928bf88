"""``set_submission`` at a running table reads a preset or a file of the table's submissions
folder (``shoectl run --submissions DIR``, default ``submissions`` beside the journal), and nothing
else: a floorperson's PIN must not let them read, or learn of, any other file the table's account
can read (a path used to be opened as given, and its error line told whether the file existed and
showed its TOML)."""
from __future__ import annotations

import time

import pytest

from tests.cli_run import preset_with_decks
from tests.control.running_table import PINS, command_line, shoectl


@pytest.mark.slow
def test_only_presets_and_the_submissions_folder_are_read(start_table, workdir) -> None:
    folder = workdir / "submissions"
    folder.mkdir()
    preset_with_decks(folder / "house-ez.toml", "ez-baccarat", 8)  # a file of the house's own
    outside = workdir / "elsewhere.toml"
    preset_with_decks(outside, "minibaccarat", 8)
    t = start_table(workdir, manual=True)
    deadline = time.monotonic() + 20
    while not (at_start := t.journaled("submission")):  # the rules the table started with, once journaled
        assert time.monotonic() < deadline, "the table never journaled its rules"
        time.sleep(0.05)

    def set_submission(name: str) -> dict:
        reply = t.ask(command_line("fp1", "set_submission", submission=name))
        assert reply is not None
        return reply

    refusals = {name: set_submission(name) for name in
                (str(outside), "../elsewhere.toml", "/etc/passwd", "/no/such/file.toml", "house-ez/..")}
    for name, reply in refusals.items():
        assert reply["ok"] is False and reply["code"] == "bad_request", (name, reply)
        # the same words for a file that exists and one that does not: only the folder is described
        assert reply["error"].replace(name, "NAME") == (
            "NAME: neither a preset nor a file of the table's; presets: 21-baccarat, ez-baccarat, "
            f"midibaccarat, minibaccarat; the table's submissions folder {folder} holds house-ez.toml"), reply
    assert t.journaled("submission") == at_start, "a refused name changed the table's rules"

    # a file of the folder, by its name with or without .toml; then a preset
    for name, game in (("house-ez", "ez-baccarat"), ("house-ez.toml", "ez-baccarat"), ("midibaccarat", "punto-banco")):
        reply = set_submission(name)
        assert reply["ok"] is True, reply
        record = t.journaled("submission")[-1]
        assert record["submission"]["game"] == game
    sources = [r["source"] for r in t.journaled("submission")[len(at_start):]]
    assert sources == [str(folder / "house-ez.toml")] * 2 + ["preset:midibaccarat"]

    # what the person at ctl reads: one line, exit 2
    said = shoectl("ctl", "--socket", str(t.sock), "--operator", "fp1", "--pin-stdin", "set_submission",
                   "submission=/etc/passwd", pin=PINS["fp1"])
    assert said.returncode == 2 and said.stderr.count("\n") == 1 and "root:" not in said.stderr, said.stderr
    t.assert_stopped_cleanly()
