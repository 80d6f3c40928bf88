"""The words of a refused control request (``controller.control.requests``): what the client sent,
named as it sent it."""
from __future__ import annotations

import pytest

from controller.control.requests import BadRequest, parse_request


@pytest.mark.parametrize("line, said", [
    (b'{"op": 5}', '"op" must be status, command or subscribe, not 5'),           # was "unknown op a whole number"
    (b'{"op": null}', '"op" must be status, command or subscribe, not null'),
    (b'{"op": "command", "command": ["sit"]}', "unknown command a list (`shoectl ctl --help` lists them)"),
    # a PIN typed where the command goes is not told back (nor journaled: the refusal's words are)
    (b'{"op": "command", "operator": "d1", "command": "4826"}',
     "unknown command <text of 4 digits, not shown: they may be a PIN> (`shoectl ctl --help` lists them)"),
    (b'{"op": "command", "operator": "d1", "command": " 482613 "}',
     "unknown command <text of 6 digits, not shown: they may be a PIN> (`shoectl ctl --help` lists them)"),
    (b'{"op": "command", "operator": "d1", "command": 4826}',
     "unknown command <a number of 4 digits, not shown: they may be a PIN> (`shoectl ctl --help` lists them)"),
    (b'{"op": "command", "command": "482"}', "unknown command '482' (`shoectl ctl --help` lists them)"),
    (b'{"op": "command", "operator": "d1", "pin": "2580", "command": "sit", "args": {"seat": "4826"}}',
     "sit: seat must be a seat number (a whole number from 1), not <text of 4 digits, not shown: they may be a PIN>"),
    (b'{"op": "command", "operator": "d1", "pin": "2580", "command": "sit", "args": {"4826": 1}}',
     "sit: unknown argument <text of 4 digits, not shown: they may be a PIN> (sit takes seat)"),
    (b'{"op": "command", "operator": "f1", "pin": "2580", "command": "enter_card", "args": {"card": "4826"}}',
     "enter_card: card must be a card such as AS, 10H or KD, not <text of 4 digits, not shown: they may be a PIN>"),
    (b'{"op": "command", "operator": "d1", "pin": "2580", "command": "wager", '
     b'"args": {"seat": 1, "kind": "4826", "amount": 100}}',
     "wager: kind must be one of: player, banker, tie, player_pair, banker_pair, dragon7, panda8, "
     "player_bonus, banker_bonus, house_money (not <text of 4 digits, not shown: they may be a PIN>)"),
    (b'{"op": "4826"}', '"op" must be status, command or subscribe, not <text of 4 digits, not shown: they may be a PIN>'),
    (b'{"op": "subscribe", "since": 48261}',
     'a subscription\'s "since" may only be "start", not <a number of 5 digits, not shown: they may be a PIN>'),
    (b'{"op": "command", "operator": "d1", "pin": "2580", "command": "sit", "args": {"seat": -1234}}',
     "sit: seat must be a seat number (a whole number from 1), not -1234"),  # no PIN is negative
    (b'{"op": "command", "operator": "d1", "pin": "2580", "command": "wager", '
     b'"args": {"seat": 1, "kind": "tie", "amount": 99999999999999999999}}',
     "wager: amount must be a sum in minor units (cents): a whole number from 1 to 1000000000000, not "
     "99999999999999999999"),
    (b'{"op": "command", "operator": "d1", "pin": "2580", "command": "sit", "args": {"seat": true}}',
     "sit: seat must be a seat number (a whole number from 1), not true"),
    (b'{"op": "command", "operator": "d1", "pin": "2580", "command": "sit", "args": {"seat": 0}}',
     "sit: seat must be a seat number (a whole number from 1), not 0"),
    # A card that is not one is malformed (exit 2 at ctl), as a seat given as text is; it was the
    # table's refusal (exit 1), as if the card were one it would not take now.
    (b'{"op": "command", "operator": "f1", "pin": "2580", "command": "enter_card", "args": {"card": "ZZ"}}',
     "enter_card: card must be a card such as AS, 10H or KD, not 'ZZ'"),
    # So is a word outside a choice's declared words (a floor review: exit 1, "refused", where a
    # flag's "maybe" was exit 2); a kind the table does not offer is still the table's refusal.
    (b'{"op": "command", "operator": "d1", "pin": "2580", "command": "wager", '
     b'"args": {"seat": 1, "kind": "foo", "amount": 100}}',
     "wager: kind must be one of: player, banker, tie, player_pair, banker_pair, dragon7, panda8, "
     "player_bonus, banker_bonus, house_money (not 'foo')"),
    (b'{"op": "command", "operator": "d1", "pin": "2580", "command": "wager", '
     b'"args": {"seat": 1, "kind": "Dragon7", "amount": 100}}', None),
])
def test_a_refused_request_names_what_was_sent(line: bytes, said: str) -> None:
    """A command's arguments are refused once its operator has logged in (``args_problem``)."""
    try:
        problem = parse_request(line).args_problem
    except BadRequest as refused:
        problem = str(refused)
    assert problem == said


@pytest.mark.parametrize("line, said", [
    (b'{"op": "status"', "a ',' or the closing bracket was expected at character 16"),  # was "Expecting ',' delimiter: line 1 column 16 (char 15)"
    (b'{op: "status"}', "a key in double quotes was expected at character 2"),
    (b'{"op": "status"}}', "more follows the request's object at character 17"),
    (b'{"op": "stat', "a string is not closed, from the one starting at character 8"),
    (b'{"op": "st\\qatus"}', "an escape a JSON string does not have at character 11"),
    (b'{"op": }', "a value was expected at character 8"),
])
def test_a_line_that_is_not_json_is_refused_in_the_protocols_words(line: bytes, said: str) -> None:
    """The JSON reader's own reasons are Python's; the client is told what is wrong and where."""
    with pytest.raises(BadRequest) as refused:
        parse_request(line)
    assert str(refused.value) == f"not a JSON request: {said}"


def test_shown_text_shows_a_byte_that_was_not_utf8_as_every_message_does() -> None:
    """The socket's own copy of ``safe`` showed it as ``\\udcff``; it is ``safe``'s now."""
    from controller.control.requests import shown_text

    assert shown_text("op\udcff") == "op\\xff"
    assert shown_text("x" * 50) == "x" * 40 + "..."
    assert shown_text("a\nb") == "a\\nb"


@pytest.mark.parametrize("line, key", [
    (b'{"op": "command", "operator": "d1", "pin": "2580", "command": "cut", "args": {"position": 5, "position": 60}}',
     "position"),
    (b'{"op": "command", "operator": "nobody", "operator": "alice", "pin": "2580", "command": "open"}', "operator"),
    (b'{"op": "status", "op": "command"}', "op"),
])
def test_a_key_given_twice_is_a_bad_request_not_the_last_one_counting(line: bytes, key: str) -> None:
    """A review of bad inputs sent ``"position":5,"position":60``: the table cut at 60 and journaled
    no trace of the 5; ``"operator"`` twice signed in as the second. ``shoectl ctl`` refuses an
    argument given twice; the socket refuses a key given twice in one object."""
    with pytest.raises(BadRequest) as refused:
        parse_request(line)
    assert str(refused.value) == f'not a JSON request: the key "{key}" is given twice in one object'
