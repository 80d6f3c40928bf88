"""`shoectl ctl` refuses a command it does not know, or an argument not written KEY=VALUE, before
it sends anything: a PIN typed there (`ctl --operator d1 4826`) was printed back in the refusal,
to the terminal's scrollback and a script's logged errors (a review). It is named by its type and
length only, as the control socket names it (docs/control.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

from cli_run import run


@pytest.mark.parametrize("typed, said", [
    (["4826"], "unknown command <text of 4 digits, not shown: they may be a PIN> (status, watch, "),
    (["sit", "4826"], "argument <text of 4 digits, not shown: they may be a PIN>: expected KEY=VALUE"),
    (["sitt"], "unknown command 'sitt' (status, watch, "),  # a word is still said
])
def test_ctl_does_not_tell_back_a_pin_typed_where_a_command_or_an_argument_goes(
        capsys, monkeypatch, tmp_path: Path, typed: list[str], said: str) -> None:
    monkeypatch.setenv("SHOECTL_PIN", "2580")
    code, out, err = run(capsys, "ctl", "--socket", str(tmp_path / "none.sock"), "--operator", "d1", *typed)
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert err.startswith(f"shoectl ctl: error: {said}") and "4826" not in err, err


def test_the_console_names_an_unknown_command_of_a_pins_shape_by_its_length() -> None:
    from controller.operators.pins import typed_shown

    assert typed_shown("4826") == "<text of 4 digits, not shown: they may be a PIN>"
    assert typed_shown("sitt") == "'sitt'"
