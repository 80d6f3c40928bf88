"""The operators package's contract at its edges (auth.py, lockouts.py, remembered.py, store.py,
pins.py): the per-connection login throttle, lockouts as the operators file adds and removes ids,
unknown ids' counts, a remembered PIN ended by removal, the PIN rules and the file's checks. Each
test states what the docstring or docs/operators.md requires; a mutation review found each of these
changes of the code surviving the tests before."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from controller.operators import auth as auth_mod
from controller.operators.auth import AuthError, Authenticator, LockedOut, LoginThrottle, UnknownOperator, WrongPin
from controller.operators.pins import PinError, parse_pin_hash
from controller.operators.store import Operator, add_operator, hash_pin, load_operators
from controller.roles import Role
from firmware_bridge.emulator import ManualClock

PINS = {"d1": "8042", "f1": "1357"}


@pytest.fixture(scope="module")
def operators() -> dict[str, Operator]:
    return {"d1": Operator("d1", Role.DEALER, None, hash_pin(PINS["d1"])),
            "f1": Operator("f1", Role.FLOORPERSON, None, hash_pin(PINS["f1"]))}


# LoginThrottle (the control socket's per-connection limit) -----------------------------------

def test_login_throttle_waits_until_the_oldest_failure_leaves_the_window(clock: ManualClock) -> None:
    """``LoginThrottle``: "after ``limit`` of them [failed logins in the window], ``wait(key)`` is
    the time until the oldest leaves the window (0.0: go ahead)". Below the limit there is no wait;
    at the limit the wait runs from the oldest failure, not the newest; the window slides."""
    throttle = LoginThrottle(limit=3, window_s=60, max_keys=8, clock=clock)
    throttle.failed(1)
    clock.advance(10)
    throttle.failed(1)
    assert throttle.wait(1) == 0.0  # 2 of 3
    clock.advance(10)
    throttle.failed(1)  # the third, at t=20
    assert throttle.wait(1) == pytest.approx(40)  # the first (t=0) leaves the window at t=60
    assert throttle.wait(2) == 0.0  # per key
    clock.advance(40)
    assert throttle.wait(1) == 0.0
    throttle.failed(1)  # t=60: the failures in the window are now t=10, 20, 60
    assert throttle.wait(1) == pytest.approx(10)


def test_login_throttle_forgets_the_least_recently_failed_key_first(clock: ManualClock) -> None:
    """``LoginThrottle``: "At most ``max_keys`` keys are remembered, the least recently failed
    forgotten first": a key that failed again is not the one forgotten."""
    throttle = LoginThrottle(limit=2, window_s=60, max_keys=2, clock=clock)
    throttle.failed("a")
    throttle.failed("b")
    assert len(throttle) == 2
    throttle.failed("a")  # "a" is now the most recently failed, and at its limit
    throttle.failed("c")  # one key too many: "b" goes
    assert len(throttle) == 2
    assert throttle.wait("a") > 0  # "a" kept both its failures
    throttle.failed("b")
    assert throttle.wait("b") == 0.0  # "b" starts again from one


# Lockouts ---------------------------------------------------------------------------------------

def test_an_operator_the_file_adds_is_counted_as_an_operator_not_pushed_out_by_a_flood(operators,
                                                                                   clock: ManualClock) -> None:
    """``update_operators``: the reloaded operators are the ones accepted and counted as
    operators (``Lockouts.know``): "operators' counts are kept" and a flood of invented ids
    "never keeps an operator out" nor gives an operator its tries back. An operator added by the
    file after start-up must be counted as one."""
    a = Authenticator({"f1": operators["f1"]}, clock=clock, max_unknown_ids=2, dummy_hashes_per_s=1000)
    a.update_operators(operators)  # d1 added to the file while the table runs
    for _ in range(4):
        with pytest.raises(WrongPin):
            a.authenticate("d1", "0000")
    for n in range(3):  # more invented ids than are remembered
        with pytest.raises(UnknownOperator):
            a.authenticate(f"nobody{n}", "0000")
    assert a.failures("d1") == 4
    with pytest.raises(LockedOut):
        a.authenticate("d1", "0000")  # the fifth in a row


def test_an_unknown_ids_lockout_lasts_its_time_whatever_other_counts_end_before_it(operators,
                                                                                   clock: ManualClock) -> None:
    """lockouts.py: "A count ends ``lockout_s`` after the id's last failed login (a lockout ends
    then too), for every id alike", and an unknown id is locked out exactly as an operator is (so
    the replies do not say which ids exist). Another id's count ending must not end this one."""
    a = Authenticator(operators, clock=clock, dummy_hashes_per_s=1000)
    with pytest.raises(UnknownOperator):
        a.authenticate("ghost1", "0000")  # t=0
    clock.advance(250)
    for _ in range(5):
        with pytest.raises(UnknownOperator):
            a.authenticate("ghost2", "0000")  # t=250: locked out until t=550
    clock.advance(60)  # t=310: ghost1's count has ended, ghost2's lockout has not
    assert a.failures("ghost1") == 0
    with pytest.raises(UnknownOperator) as info:
        a.authenticate("ghost2", "0000")
    assert info.value.said.startswith("logins as 'ghost2' are locked out for another")
    assert a.locked_for("ghost2") == pytest.approx(240)


def test_an_unknown_ids_count_ends_after_its_own_last_failure(operators, clock: ManualClock) -> None:
    """lockouts.py: of the ids that are no operator's, counts are kept "by last failed login"
    and each ends ``lockout_s`` after that id's last failed login: another id failing again later
    does not keep an ended count alive (failed logins further apart start again from one)."""
    a = Authenticator(operators, clock=clock, dummy_hashes_per_s=1000)
    with pytest.raises(UnknownOperator):
        a.authenticate("ghost-a", "0000")  # t=0
    clock.advance(1)
    with pytest.raises(UnknownOperator):
        a.authenticate("ghost-b", "0000")  # t=1
    clock.advance(199)
    with pytest.raises(UnknownOperator):
        a.authenticate("ghost-a", "0000")  # t=200: ghost-a's count goes on until t=500
    clock.advance(150)  # t=350: ghost-b's count (last failed at t=1) has ended
    assert a.failures("ghost-b") == 0
    assert a.failures("ghost-a") == 2
    with pytest.raises(UnknownOperator) as info:
        a.authenticate("ghost-b", "0000")
    assert info.value.tries_left == 4


def test_a_removed_operators_lockout_ends_on_time(operators, clock: ManualClock) -> None:
    """docs/operators.md: "a count moves with its id when the operators file adds or removes it,
    so editing the file neither ends nor reveals one", and a count ends 300 s after the id's last
    failed login. Removing a locked-out operator must not make its lockout outlast its time."""
    a = Authenticator(operators, clock=clock, dummy_hashes_per_s=1000)
    for _ in range(5):
        with pytest.raises(AuthError):
            a.authenticate("d1", "0000")  # t=0: locked out until t=300
    clock.advance(100)
    with pytest.raises(UnknownOperator):
        a.authenticate("ghost", "0000")  # t=100: counted until t=400
    clock.advance(50)
    a.update_operators({"f1": operators["f1"]})  # t=150: d1 removed from the file
    clock.advance(150)  # t=300: d1's lockout has ended
    assert a.locked_for("d1") == 0.0 and a.failures("d1") == 0
    with pytest.raises(UnknownOperator) as info:
        a.authenticate("d1", PINS["d1"])
    assert info.value.tries_left == 4  # told what an operator whose lockout ended is told


def test_locked_for_is_zero_when_not_locked_out(operators, clock: ManualClock) -> None:
    """``locked_for(id)``: "Seconds of lockout left for ``operator_id`` (0.0 when not locked
    out)": wrong PINs below the limit are a count, not a lockout."""
    a = Authenticator(operators, clock=clock)
    with pytest.raises(WrongPin):
        a.authenticate("d1", "0000")
    assert a.failures("d1") == 1
    assert a.locked_for("d1") == 0.0


# Remembered PINs --------------------------------------------------------------------------------

def test_the_operators_removal_ends_the_remembered_pin_even_if_added_back(operators, clock: ManualClock,
                                                                          mocker) -> None:
    """docs/operators.md: "a new PIN in a reloaded operators file, or the operator's removal, ends
    it" (remembered.py ``keep_only``). An operator removed and then added back (the file restored)
    has their PIN checked in full again."""
    scrypts = mocker.spy(auth_mod, "verify_pin")
    a = Authenticator(operators, clock=clock)
    a.authenticate("d1", PINS["d1"])
    assert scrypts.call_count == 1
    a.update_operators({"f1": operators["f1"]})  # d1 removed
    a.update_operators(operators)  # and the old file put back
    a.authenticate("d1", PINS["d1"])
    assert scrypts.call_count == 2


# The operators file and PIN rules ---------------------------------------------------------------

def test_add_refuses_a_pin_that_is_the_operators_id(tmp_path: Path) -> None:
    """docs/operators.md PIN rules: refused as too easy to guess, "the operator's own id (`4711`
    for operator `4711`)"; store.py: "A new PIN must pass ``check_pin``" (with the id)."""
    path = tmp_path / "operators.toml"
    with pytest.raises(PinError, match="operator's id"):
        add_operator(path, "4711", Role.DEALER, "4711")
    assert not path.exists()


def test_a_group_writable_file_loads_with_a_warning(tmp_path: Path) -> None:
    """store.py: "A file that the group or others may read or write (mode bits 0o066) is not an
    error: it is reported in ``Operators.warnings``"; a group that may write it may change who
    operates the table."""
    path = tmp_path / "operators.toml"
    add_operator(path, "d1", Role.DEALER, "2580")
    os.chmod(path, 0o620)
    assert stat.S_IMODE(path.stat().st_mode) == 0o620
    warnings = load_operators(path).warnings
    assert any("change who may operate" in w for w in warnings), warnings


def test_a_hash_needing_exactly_256_mib_is_accepted_and_more_is_not() -> None:
    """docs/operators.md: a stored hash is refused unless "128·r·N at most 256 MiB"."""
    h = hash_pin("2580").split("$")
    salt, digest = h[2], h[3]
    assert parse_pin_hash(f"scrypt$n={2**18},r=8,p=1${salt}${digest}").n == 2**18  # exactly 256 MiB
    with pytest.raises(ValueError, match="256 MiB"):
        parse_pin_hash(f"scrypt$n={2**18},r=9,p=1${salt}${digest}")



