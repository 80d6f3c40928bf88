"""A running table follows its operators file (controller/operators/following.py): what
``shoectl operators add|remove`` changes counts from the next PIN check, without a restart.
Found by a floorperson's review: a removed operator, and an old PIN, were accepted until the
table was restarted, while docs/operators.md said a reloaded file ends them."""
from __future__ import annotations

from pathlib import Path

import pytest
from structlog.testing import capture_logs

from controller.operators.auth import Authenticator, UnknownOperator, WrongPin
from controller.operators.following import FollowedOperators
from controller.operators.store import add_operator, load_operators, remove_operator
from controller.roles import Role


@pytest.fixture
def ops_file(tmp_path: Path) -> Path:
    path = tmp_path / "operators.toml"
    add_operator(path, "fp1", Role.FLOORPERSON, "2580")
    add_operator(path, "d1", Role.DEALER, "3691")
    return path


def _following(path: Path) -> Authenticator:
    operators = load_operators(path)
    return Authenticator(operators, reload=FollowedOperators(path, operators).changed)


def test_a_removed_operator_is_unknown_from_the_next_check(ops_file: Path) -> None:
    auth = _following(ops_file)
    assert auth.authenticate("fp1", "2580").id == "fp1"  # and its PIN is now remembered
    remove_operator(ops_file, "fp1")
    with pytest.raises(UnknownOperator):
        auth.authenticate("fp1", "2580")
    assert auth.authenticate("d1", "3691").id == "d1"


def test_a_new_pin_is_the_only_one_accepted_and_a_new_role_counts_at_once(ops_file: Path) -> None:
    auth = _following(ops_file)
    assert auth.authenticate("d1", "3691").role is Role.DEALER
    add_operator(ops_file, "d1", Role.SUPERVISOR, "8264", replace=True)
    with pytest.raises(WrongPin):
        auth.authenticate("d1", "3691")  # remembered a moment ago: a new PIN ends that
    assert auth.authenticate("d1", "8264").role is Role.SUPERVISOR


def test_a_file_that_cannot_be_read_keeps_the_operators_read_last_and_says_so_once(ops_file: Path) -> None:
    auth = _following(ops_file)
    ops_file.write_text("[operators.fp1\nrole = ", encoding="utf-8")  # a hand edit, half done
    with capture_logs() as logs:
        assert auth.authenticate("fp1", "2580").id == "fp1"
        assert auth.authenticate("d1", "3691").id == "d1"
    errors = [e for e in logs if e["log_level"] == "error"]
    assert len(errors) == 1 and "keeps the operators it read before" in errors[0]["event"]
    assert "operators.toml" in errors[0]["reason"]
    ops_file.unlink()
    add_operator(ops_file, "fp1", Role.FLOORPERSON, "2580")  # mended: d1 is no longer in it
    with pytest.raises(UnknownOperator):
        auth.authenticate("d1", "3691")


def test_an_unchanged_file_is_not_read_again(ops_file: Path, mocker) -> None:
    auth = _following(ops_file)
    read = mocker.patch("controller.operators.following.load_operators")
    for _ in range(3):
        auth.authenticate("d1", "3691")
    assert read.call_count == 0
