"""controller/control/requests.py: the limits its contract states (depth, digits, text lengths,
ids, required arguments, Unicode), each at its edge, without a running table."""
from __future__ import annotations

import json

import pytest

from controller.control.requests import MAX_DEPTH, MAX_DIGITS, MAX_TEXT, MAX_WHOLE, BadRequest, parse_request


def _nested(levels: int) -> bytes:
    """A status request whose "pad" holds lists ``levels`` deep below the request's object."""
    return b'{"op": "status", "pad": ' + b"[" * levels + b"]" * levels + b"}"


def test_a_request_may_be_nested_max_depth_levels_and_no_more() -> None:
    """requests.py: "one object, nested at most ``MAX_DEPTH`` levels" (docs/control.md: at most 8)."""
    assert parse_request(_nested(MAX_DEPTH - 1)).op == "status"  # the object and 7 lists: 8 levels
    with pytest.raises(BadRequest, match=f"nested more than {MAX_DEPTH} levels deep"):
        parse_request(_nested(MAX_DEPTH))


def test_numbers_have_at_most_max_digits_digits() -> None:
    """requests.py: numbers are whole "and at most ``MAX_DIGITS`` digits"."""
    assert parse_request(b'{"op": "status", "pad": -' + b"9" * MAX_DIGITS + b"}").op == "status"
    with pytest.raises(BadRequest, match="is not a whole number of at most 20 digits"):
        parse_request(b'{"op": "status", "pad": ' + b"9" * (MAX_DIGITS + 1) + b"}")


@pytest.mark.parametrize("name", ["operator", "pin"])
def test_operator_and_pin_are_strings_of_at_most_max_text_characters(name: str) -> None:
    """requests.py: a command has "``operator`` and ``pin`` (strings of at most ``MAX_TEXT``
    characters)"."""
    request = {"op": "command", "command": "sit", "operator": "d1", "pin": "2580", "args": {"seat": 1}}
    assert parse_request(json.dumps({**request, name: "1" * MAX_TEXT}).encode()).op == "command"
    with pytest.raises(BadRequest, match=f'a command needs "{name}": a string of at most {MAX_TEXT} characters'):
        parse_request(json.dumps({**request, name: "1" * (MAX_TEXT + 1)}).encode())


@pytest.mark.parametrize("rid", ["bell\u0007", MAX_WHOLE + 1, -(MAX_WHOLE + 1)])
def test_an_id_is_a_whole_number_within_max_whole_or_printable_text(rid) -> None:
    """requests.py: "``id`` is absent, null, a whole number or printable text of at most
    ``MAX_ID`` characters" (whole numbers: within +-``MAX_WHOLE``, which every JSON reader keeps
    exactly): an id that is not is refused, not echoed."""
    assert parse_request(json.dumps({"id": MAX_WHOLE, "op": "status"}).encode()).rid == MAX_WHOLE
    with pytest.raises(BadRequest, match='"id" must be a whole number or printable text'):
        parse_request(json.dumps({"id": rid, "op": "status"}).encode())


def test_a_missing_required_argument_is_a_problem_said_after_the_login() -> None:
    """requests.py: "every required argument is present" (if not, ``args_problem`` says why and
    ``args`` is empty)."""
    req = parse_request(b'{"op": "command", "operator": "d1", "pin": "2580", "command": "sit", "args": {}}')
    assert req.args == {} and req.args_problem is not None and "missing argument seat" in req.args_problem


def test_a_key_that_is_not_valid_unicode_is_refused() -> None:
    """requests.py: "every string, key or value, is valid Unicode (no lone surrogates)"."""
    with pytest.raises(BadRequest, match="a key is not valid Unicode text"):
        parse_request(b'{"op": "status", "\\ud800": 1}')
    with pytest.raises(BadRequest, match="a string is not valid Unicode text"):
        parse_request(b'{"op": "status", "pad": "\\udc00"}')
