"""PIN authentication with lockout, and role authorization (controller.operators.auth)."""
from __future__ import annotations

import threading

import pytest

from controller.operators import auth as auth_mod
from controller.operators.auth import (
    EXIT_AUTH,
    EXIT_FORBIDDEN,
    AccessError,
    AuthError,
    Authenticator,
    LockedOut,
    NotPermitted,
    UnknownOperator,
    WrongPin,
    authorize,
)
from controller.operators.store import Operator, hash_pin
from controller.table.commands import MIN_ROLES
from controller.roles import Role
from firmware_bridge.emulator import ManualClock

PINS = {"d1": "8042", "f1": "1357", "s1": "2580"}


@pytest.fixture(scope="module")
def operators() -> dict[str, Operator]:
    roles = {"d1": Role.DEALER, "f1": Role.FLOORPERSON, "s1": Role.SUPERVISOR}
    return {i: Operator(i, roles[i], None, hash_pin(PINS[i])) for i in PINS}


@pytest.fixture
def authn(operators, clock) -> Authenticator:
    return Authenticator(operators, clock=clock)


def test_the_right_pin_returns_the_operator(authn: Authenticator, operators) -> None:
    assert authn.authenticate("f1", "1357") is operators["f1"]
    assert authn.failures("f1") == 0


def test_wrong_pin_says_how_many_tries_are_left(authn: Authenticator) -> None:
    with pytest.raises(WrongPin) as info:
        authn.authenticate("d1", "8043")
    exc = info.value
    assert exc.tries_left == 4 and exc.operator_id == "d1" and exc.exit_code == EXIT_AUTH
    assert "4 tries left" in str(exc) and "5 min lockout" in str(exc)
    assert "8043" not in str(exc) and "8042" not in str(exc)
    assert authn.failures("d1") == 1


def test_five_failures_lock_out_and_the_lockout_ends(authn: Authenticator, clock: ManualClock) -> None:
    left = []
    for _ in range(4):
        with pytest.raises(WrongPin) as info:
            authn.authenticate("d1", "0000")
        left.append(info.value.tries_left)
    assert left == [4, 3, 2, 1]
    with pytest.raises(LockedOut) as info:
        authn.authenticate("d1", "0000")  # the fifth wrong PIN
    assert info.value.retry_after == 300 and "locked out for 5 min" in str(info.value)
    clock.advance(100)
    with pytest.raises(LockedOut) as info:
        authn.authenticate("d1", PINS["d1"])  # even the right PIN is refused while locked out
    assert info.value.retry_after == pytest.approx(200) and "another 3 min 20 s" in str(info.value)
    assert authn.locked_for("d1") == pytest.approx(200)
    clock.advance(199.5)
    with pytest.raises(LockedOut, match="another 1 s"):
        authn.authenticate("d1", PINS["d1"])
    clock.advance(0.5)
    assert authn.locked_for("d1") == 0.0
    assert authn.authenticate("d1", PINS["d1"]).id == "d1"
    assert authn.failures("d1") == 0


def test_after_a_lockout_there_are_fresh_tries(authn: Authenticator, clock: ManualClock) -> None:
    for _ in range(4):
        with pytest.raises(WrongPin):
            authn.authenticate("d1", "0000")
    with pytest.raises(LockedOut):
        authn.authenticate("d1", "0000")
    clock.advance(300)
    with pytest.raises(WrongPin) as info:
        authn.authenticate("d1", "0000")
    assert info.value.tries_left == 4


def test_a_success_resets_the_count(authn: Authenticator) -> None:
    for _ in range(4):
        with pytest.raises(WrongPin):
            authn.authenticate("d1", "0000")
    authn.authenticate("d1", PINS["d1"])
    assert authn.failures("d1") == 0
    with pytest.raises(WrongPin) as info:  # four more wrong PINs would not lock out: the count restarted
        authn.authenticate("d1", "0000")
    assert info.value.tries_left == 4


def test_lockout_is_per_operator(authn: Authenticator) -> None:
    for _ in range(5):
        with pytest.raises(AuthError):
            authn.authenticate("d1", "0000")
    assert authn.authenticate("f1", PINS["f1"]).id == "f1"
    with pytest.raises(LockedOut):
        authn.authenticate("d1", PINS["d1"])


def test_configurable_limit_and_time(operators, clock: ManualClock) -> None:
    a = Authenticator(operators, max_failures=2, lockout_s=30, clock=clock)
    with pytest.raises(WrongPin, match="1 try left before a 30 s lockout"):
        a.authenticate("s1", "0000")
    with pytest.raises(LockedOut, match="locked out for 30 s"):
        a.authenticate("s1", "0000")
    clock.advance(30)
    assert a.authenticate("s1", PINS["s1"]).id == "s1"
    with pytest.raises(ValueError):
        Authenticator(operators, max_failures=0)
    with pytest.raises(ValueError):
        Authenticator(operators, lockout_s=0)


def test_unlock_clears_a_lockout_and_says_what_it_cleared(authn: Authenticator, clock: ManualClock) -> None:
    for _ in range(5):
        with pytest.raises(AuthError):
            authn.authenticate("d1", "0000")
    clock.advance(48)
    assert authn.unlock("d1") == "operator 'd1' may log in again (locked out after 5 wrong PINs in a row, with 4 min 12 s to go)"
    assert authn.locked_for("d1") == 0 and authn.failures("d1") == 0
    assert authn.authenticate("d1", PINS["d1"]).id == "d1"


def test_unlock_of_a_count_below_the_lockout_and_of_nothing(authn: Authenticator, clock: ManualClock) -> None:
    with pytest.raises(WrongPin):
        authn.authenticate("f1", "0000")
    assert authn.unlock("f1") == "operator 'f1': 1 wrong PIN in a row cleared"
    assert authn.failures("f1") == 0
    assert authn.unlock("f1") == "operator 'f1' had no wrong PINs to clear"
    for _ in range(5):
        with pytest.raises(AuthError):
            authn.authenticate("d1", "0000")
    clock.advance(300)  # the lockout is over: nothing is left to clear
    assert authn.unlock("d1") == "operator 'd1' had no wrong PINs to clear"
    assert authn.knows("d1") and not authn.knows("nobody")


def test_unknown_operator_still_costs_a_hash(authn: Authenticator, mocker) -> None:
    spy = mocker.spy(auth_mod, "verify_pin")
    with pytest.raises(UnknownOperator, match="unknown operator 'nobody'") as info:
        authn.authenticate("nobody", "8042")
    assert info.value.exit_code == EXIT_AUTH and "8042" not in str(info.value)
    assert spy.call_count == 1  # the same scrypt work as a known id: timing does not reveal who exists
    with pytest.raises(WrongPin):
        authn.authenticate("d1", "0000")
    assert spy.call_count == 2
    assert authn.failures("nobody") == 1  # counted as a known id's failure is


def test_an_unknown_id_is_told_what_a_known_id_is_told_and_locked_out_alike(authn: Authenticator,
                                                                          clock: ManualClock) -> None:
    told: dict[str, list[str]] = {"d1": [], "nobody": []}
    for op_id in told:
        for _ in range(7):
            with pytest.raises(AuthError) as info:
                authn.authenticate(op_id, "0000")
            told[op_id].append(info.value.said)
    assert told["nobody"] == [text.replace("'d1'", "'nobody'") for text in told["d1"]]
    assert told["d1"][0] == "wrong PIN, or no operator 'd1'; 4 tries left before a 5 min lockout"
    assert told["d1"][6].startswith("logins as 'd1' are locked out for another")
    with pytest.raises(UnknownOperator) as info:
        authn.authenticate("nobody", "0000")
    assert str(info.value) == "unknown operator 'nobody'" and info.value.retry_after > 0  # the truth, journaled
    clock.advance(300)
    with pytest.raises(UnknownOperator) as info:
        authn.authenticate("nobody", "0000")
    assert info.value.tries_left == 4  # fresh tries after the lockout, as an operator has


def test_unknown_ids_are_counted_in_bounded_memory_and_never_keep_an_operator_out(operators,
                                                                                clock: ManualClock) -> None:
    a = Authenticator(operators, clock=clock, max_unknown_ids=3, dummy_hashes_per_s=1000)
    with pytest.raises(WrongPin):
        a.authenticate("d1", "0000")
    for n in range(10):
        clock.advance(1)
        with pytest.raises(UnknownOperator):
            a.authenticate(f"nobody{n}", "0000")
    assert a._lockouts.unknown_ids() == 3 and a.failures("nobody9") == 1 and a.failures("nobody0") == 0
    assert a.failures("d1") == 1  # an operator's count is not pushed out by a flood
    assert a.authenticate("d1", PINS["d1"]).id == "d1"


def test_a_count_ends_as_long_as_a_lockout_after_its_last_failed_login(authn: Authenticator, clock: ManualClock) -> None:
    for _ in range(3):
        with pytest.raises(WrongPin):
            authn.authenticate("d1", "0000")
    clock.advance(299)
    with pytest.raises(WrongPin) as info:
        authn.authenticate("d1", "0000")
    assert info.value.tries_left == 1
    clock.advance(300)
    with pytest.raises(WrongPin) as info:
        authn.authenticate("d1", "0000")
    assert info.value.tries_left == 4  # failed logins further apart than the lockout start again


def test_editing_the_operators_file_neither_ends_nor_reveals_a_count(operators, authn: Authenticator) -> None:
    for _ in range(5):
        with pytest.raises(AuthError):
            authn.authenticate("d1", "0000")
    with pytest.raises(UnknownOperator):
        authn.authenticate("newcomer", "0000")
    authn.update_operators({k: v for k, v in operators.items() if k != "d1"} | {"newcomer": operators["d1"]})
    with pytest.raises(UnknownOperator) as gone:
        authn.authenticate("d1", PINS["d1"])
    assert gone.value.said.startswith("logins as 'd1' are locked out for another")  # as before it was removed
    with pytest.raises(WrongPin) as added:
        authn.authenticate("newcomer", "0000")
    assert added.value.tries_left == 3  # its failed login while unknown still counts


def test_past_the_dummy_budget_an_unknown_id_waits_as_long_without_the_work(operators, clock: ManualClock,
                                                                            mocker) -> None:
    sleep = mocker.Mock()  # this authenticator's own: time.sleep patched was every thread's in the worker
    a = Authenticator(operators, clock=clock, dummy_hashes_per_s=1, sleep=sleep)
    spy = mocker.spy(auth_mod, "verify_pin")
    for n in range(5):
        with pytest.raises(UnknownOperator):
            a.authenticate(f"nobody{n}", "0000")
    assert spy.call_count == 2  # the burst: twice the rate
    assert sleep.call_count == 3 and all(c.args[0] > 0 for c in sleep.call_args_list)


def test_unknown_operator_ids_are_shown_safely(authn: Authenticator) -> None:
    with pytest.raises(UnknownOperator) as info:
        authn.authenticate("x" * 500 + "\n", "8042")
    assert len(str(info.value)) < 80 and "\n" not in str(info.value)


def test_update_operators_keeps_lockouts_of_those_still_there(operators, authn: Authenticator) -> None:
    for _ in range(5):
        with pytest.raises(AuthError):
            authn.authenticate("d1", "0000")
    with pytest.raises(WrongPin):
        authn.authenticate("f1", "0000")
    authn.update_operators({k: v for k, v in operators.items() if k != "f1"})
    with pytest.raises(LockedOut):
        authn.authenticate("d1", PINS["d1"])
    with pytest.raises(UnknownOperator):
        authn.authenticate("f1", PINS["f1"])
    assert set(authn.operators) == {"d1", "s1"}


def test_parallel_guesses_cannot_overrun_the_limit(operators, clock: ManualClock, mocker) -> None:
    a = Authenticator(operators, clock=clock)
    checks = mocker.spy(auth_mod, "verify_pin")
    results: list[type] = []
    lock = threading.Lock()

    def guess() -> None:
        try:
            a.authenticate("d1", "0000")
        except AuthError as exc:
            with lock:
                results.append(type(exc))

    threads = [threading.Thread(target=guess) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count(WrongPin) == 4 and results.count(LockedOut) == 4
    assert checks.call_count == 5  # a guess that waited while the fifth locked the operator out is not checked


def test_non_string_inputs_are_type_errors(authn: Authenticator) -> None:
    with pytest.raises(TypeError):
        authn.authenticate("d1", 8042)  # type: ignore[arg-type]


# Authorization ------------------------------------------------------------------------------


def test_a_dealer_may_not_order_a_reshuffle(authn: Authenticator) -> None:
    dealer = authn.authenticate("d1", PINS["d1"])
    with pytest.raises(NotPermitted) as info:
        authn.authorize(dealer, "order_reshuffle", MIN_ROLES)
    exc = info.value
    assert (exc.command, exc.needed, exc.role) == ("order_reshuffle", Role.FLOORPERSON, Role.DEALER)
    assert str(exc) == "order_reshuffle needs a floorperson or above; d1 is a dealer"
    assert exc.exit_code == EXIT_FORBIDDEN
    assert isinstance(exc, AccessError) and not isinstance(exc, AuthError)


def test_roles_are_ordered(operators) -> None:
    authorize(operators["f1"], "order_reshuffle", MIN_ROLES)
    authorize(operators["s1"], "order_reshuffle", MIN_ROLES)
    authorize(operators["d1"], "wager", MIN_ROLES)
    for command, needed in MIN_ROLES.items():
        for op in operators.values():
            if op.role >= needed:
                authorize(op, command, MIN_ROLES)
            else:
                with pytest.raises(NotPermitted):
                    authorize(op, command, MIN_ROLES)


def test_an_unknown_command_is_not_permitted(operators) -> None:
    with pytest.raises(NotPermitted, match="not a command") as info:
        authorize(operators["s1"], "self_destruct", MIN_ROLES)
    assert info.value.needed is None


def test_exit_codes_are_distinct_from_the_cli_ones() -> None:
    assert (EXIT_AUTH, EXIT_FORBIDDEN) == (3, 4)
    assert {EXIT_AUTH, EXIT_FORBIDDEN}.isdisjoint({0, 1, 2, 130})
