"""The words of a refused control request (``controller.control.requests``): what the client sent,
named as it sent it."""
from __future__ import annotations

import pytest

from controller.control.requests import BadRequest, parse_request


@pytest.mark.parametrize("line, said", [
    (b'{"op": 5}', '"op" must be status, command or subscribe, not 5'),           # was "unknown op a whole number"
    (b'{"op": null}', '"op" must be status, command or subscribe, not null'),
    (b'{"op": "command", "command": ["sit"]}', "unknown command a list (`shoectl ctl --help` lists them)"),
    (b'{"op": "command", "operator": "d1", "pin": "2580", "command": "wager", '
     b'"args": {"seat": 1, "kind": "tie", "amount": 99999999999999999999}}',
     "wager: amount must be a whole number (at most 9007199254740991 either way), not 99999999999999999999"),
    (b'{"op": "command", "operator": "d1", "pin": "2580", "command": "sit", "args": {"seat": true}}',
     "sit: seat must be a whole number (at most 9007199254740991 either way), not true"),
])
def test_a_refused_request_names_what_was_sent(line: bytes, said: str) -> None:
    """A command's arguments are refused once its operator has logged in (``args_problem``)."""
    try:
        problem = parse_request(line).args_problem
    except BadRequest as refused:
        problem = str(refused)
    assert problem == said
