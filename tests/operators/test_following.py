"""A running table follows its operators file (controller/operators/following.py): what
``shoectl operators add|remove`` changes counts from the next PIN check, without a restart.
Found by a floorperson's review: a removed operator, and an old PIN, were accepted until the
table was restarted, while docs/operators.md said a reloaded file ends them."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from controller.operators.auth import Authenticator, UnknownOperator, WrongPin
from controller.operators.following import FollowedOperators
from controller.operators.store import add_operator, load_operators, remove_operator
from controller.roles import Role

NOBODY = 65534


@pytest.fixture
def ops_file(tmp_path: Path) -> Path:
    path = tmp_path / "operators.toml"
    add_operator(path, "fp1", Role.FLOORPERSON, "2580")
    add_operator(path, "d1", Role.DEALER, "3691")
    return path


def _following(path: Path) -> Authenticator:
    followed = FollowedOperators(path)  # as `shoectl run` does: before it reads the file
    operators = load_operators(path)
    followed.read_at_start(operators)
    return Authenticator(operators, reload=followed.changed)


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


def test_two_connections_following_the_file_at_once_apply_the_newer_read_last(ops_file: Path, mocker) -> None:
    """A review of the threads: connection A read the file (a new dealer x9 added) and waited for
    the authenticator (another connection's PIN check holds it for a scrypt); meanwhile x9 was
    removed and connection B read and applied that. A then applied its older read, and as the file
    did not change again, x9 was accepted from then on. Now a read is applied before the next is
    made."""
    auth = _following(ops_file)
    time.sleep(0.01)  # the file's next version has another modification time
    add_operator(ops_file, "x9", Role.DEALER, "4829")  # the version connection A reads
    applying = Authenticator.update_operators
    a_has_read, b_went = threading.Event(), threading.Event()

    def a_applies_late(self, operators):
        if threading.current_thread().name == "A":
            a_has_read.set()
            b_went.wait(0.5)  # as long as B may take: B either waits for A or goes first
        applying(self, operators)

    mocker.patch.object(Authenticator, "update_operators", a_applies_late)
    a = threading.Thread(target=auth.has_operators, name="A")
    a.start()
    assert a_has_read.wait(5)
    remove_operator(ops_file, "x9")  # x9 removed: the version connection B reads
    b = threading.Thread(target=auth.has_operators, name="B")
    b.start()
    b.join(5)
    b_went.set()
    a.join(5)
    assert not a.is_alive() and not b.is_alive()
    assert sorted(auth.operators) == ["d1", "fp1"]
    with pytest.raises(UnknownOperator):
        auth.authenticate("x9", "4829")


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another account needs root")
def test_a_file_another_account_made_decides_nothing_at_start_or_when_followed(tmp_path: Path, capsys) -> None:
    """A security review: a table started before its operators file existed followed the one
    another account then made beside its journal (a folder it could write to): that account added
    itself as a supervisor, and its `open` was accepted. The file's owner is the table's account
    or root, or the file decides nothing."""
    from cli_run import run

    journal = tmp_path / "j.db"
    ops_file = tmp_path / "operators.toml"
    auth = Authenticator({}, reload=FollowedOperators(ops_file).changed)
    add_operator(ops_file, "evil", Role.SUPERVISOR, "7294")
    os.chown(ops_file, NOBODY, NOBODY)
    with capture_logs() as logs, pytest.raises(UnknownOperator):
        auth.authenticate("evil", "7294")
    [error] = [e for e in logs if e["log_level"] == "error"]
    assert "belongs to nobody, not to the account running the table or root" in error["reason"]
    os.chown(ops_file, 0, 0)  # given to root: it decides
    with capture_logs():  # its "read again", which a test file run alone would print
        assert auth.authenticate("evil", "7294").role is Role.SUPERVISOR
    os.chown(ops_file, NOBODY, NOBODY)
    capsys.readouterr()
    code, out, err = run(capsys, "run", "--journal", str(journal), "--rounds", "1", "--speed", "max",
                         "--display", "lines")
    assert (code, out) == (2, "") and err.count("\n") == 1, err
    assert f"{ops_file}: belongs to nobody, not to the account running the table or root" in err
    assert not journal.exists()


def test_a_change_between_the_tables_read_and_its_follower_is_read(tmp_path: Path) -> None:
    """A review of the people side: the follower took the file's signature after `shoectl run` had
    read the file, so a dealer removed in between stayed accepted until the next edit, without a
    word. Made before the read, the follower reads such a change at once."""
    path = tmp_path / "operators.toml"
    add_operator(path, "sup", Role.SUPERVISOR, "1357")
    add_operator(path, "d2", Role.DEALER, "5926")
    followed = FollowedOperators(path)
    read_at_start = load_operators(path)
    remove_operator(path, "d2")  # the IT officer removes a dealer who left, as the table starts
    followed.read_at_start(read_at_start)
    fresh = followed.changed()
    assert fresh is not None and "d2" not in fresh
