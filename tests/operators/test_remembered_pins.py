"""A right PIN is remembered for a short time (controller.operators.remembered, through the
``Authenticator``): the same operator's same PIN is then accepted without another scrypt, and
nothing about a wrong PIN, a lockout, a new PIN or a removed operator changes."""
from __future__ import annotations

import dataclasses

import pytest

from controller.operators import auth as auth_mod
from controller.operators.auth import Authenticator, LockedOut, UnknownOperator, WrongPin
from controller.operators.remembered import RememberedPins
from controller.operators.store import Operator, hash_pin
from controller.roles import Role


PINS = {"d1": "8042", "f1": "1357"}


@pytest.fixture(scope="module")
def operators() -> dict[str, Operator]:
    return {"d1": Operator("d1", Role.DEALER, None, hash_pin(PINS["d1"])),
            "f1": Operator("f1", Role.FLOORPERSON, None, hash_pin(PINS["f1"]))}


@pytest.fixture
def scrypts(mocker):
    """The PIN checks that ran scrypt (``verify_pin``), counted."""
    return mocker.spy(auth_mod, "verify_pin")


def test_a_right_pin_is_checked_once_then_remembered(operators, clock, scrypts) -> None:
    a = Authenticator(operators, clock=clock, remember_s=300)
    for _ in range(5):
        assert a.authenticate("d1", PINS["d1"]) is operators["d1"]
    assert scrypts.call_count == 1
    assert a.authenticate("f1", PINS["f1"]).id == "f1"  # one operator's PIN is not another's
    assert scrypts.call_count == 2


def test_the_time_counts_from_the_check_and_use_does_not_extend_it(operators, clock, scrypts) -> None:
    a = Authenticator(operators, clock=clock, remember_s=300)
    a.authenticate("d1", PINS["d1"])
    clock.advance(299)
    a.authenticate("d1", PINS["d1"])
    assert scrypts.call_count == 1
    clock.advance(1)  # 300 s after the check, though used a second ago
    a.authenticate("d1", PINS["d1"])
    assert scrypts.call_count == 2


def test_a_wrong_pin_still_costs_a_scrypt_counts_and_ends_the_remembering(operators, clock, scrypts) -> None:
    a = Authenticator(operators, clock=clock)
    a.authenticate("d1", PINS["d1"])
    with pytest.raises(WrongPin, match="4 tries left"):
        a.authenticate("d1", "8043")
    assert scrypts.call_count == 2 and a.failures("d1") == 1
    a.authenticate("d1", PINS["d1"])  # checked in full again
    assert scrypts.call_count == 3 and a.failures("d1") == 0


def test_a_lockout_refuses_even_a_remembered_pin(operators, clock, scrypts) -> None:
    a = Authenticator(operators, clock=clock)
    a.authenticate("d1", PINS["d1"])
    for _ in range(4):
        with pytest.raises(WrongPin):
            a.authenticate("d1", "0000")
    with pytest.raises(LockedOut):
        a.authenticate("d1", "0000")
    calls = scrypts.call_count
    with pytest.raises(LockedOut):
        a.authenticate("d1", PINS["d1"])
    assert scrypts.call_count == calls  # refused unchecked
    clock.advance(300)
    a.authenticate("d1", PINS["d1"])
    assert scrypts.call_count == calls + 1


def test_a_new_pin_in_the_operators_file_ends_the_old_one(operators, clock) -> None:
    a = Authenticator(operators, clock=clock)
    a.authenticate("d1", PINS["d1"])
    a.update_operators({**operators, "d1": dataclasses.replace(operators["d1"], pin_hash=hash_pin("9157"))})
    with pytest.raises(WrongPin):
        a.authenticate("d1", PINS["d1"])
    assert a.authenticate("d1", "9157").id == "d1"


def test_a_removed_operator_is_unknown_whatever_was_remembered(operators, clock) -> None:
    a = Authenticator(operators, clock=clock)
    a.authenticate("d1", PINS["d1"])
    a.update_operators({"f1": operators["f1"]})
    with pytest.raises(UnknownOperator):
        a.authenticate("d1", PINS["d1"])


def test_zero_checks_every_pin_in_full(operators, clock, scrypts) -> None:
    a = Authenticator(operators, clock=clock, remember_s=0)
    for _ in range(3):
        a.authenticate("d1", PINS["d1"])
    assert scrypts.call_count == 3


def test_what_is_kept_is_a_keyed_hash_not_the_pin(operators, clock) -> None:
    one, two = RememberedPins(300, clock), RememberedPins(300, clock)
    one.remember(operators["d1"], PINS["d1"])
    two.remember(operators["d1"], PINS["d1"])
    [(checked, mac_one, _)] = one._by_id.values()
    [(_, mac_two, _)] = two._by_id.values()
    assert checked == operators["d1"].pin_hash and PINS["d1"].encode() not in mac_one
    assert mac_one != mac_two  # a key of its own each
    assert one.matches(operators["d1"], PINS["d1"]) and not one.matches(operators["d1"], "8043")
    with pytest.raises(ValueError):
        RememberedPins(-1, clock)
