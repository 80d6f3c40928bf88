"""``shoectl ctl`` and the console type each KEY=VALUE as the commands table declares the argument.

They used to turn anything that looked like a number into one, and true/false into booleans,
whatever the argument: an operator whose id is all digits could not be unlocked
(``unlock_operator operator=4711`` was refused as "not a whole number"), a reason or a seal
number typed as digits was refused, and ``amount=2_500`` or ``seat=٣`` (Python's ``int`` reads
both) were taken as numbers the table itself refuses.
"""
from __future__ import annotations

import pytest

from controller.cli.cmd_ctl import parse_args
from controller.control.requests import BadRequest, check_args, parameters
from controller.errors import UsageError
from controller.table.commands import COMMANDS


@pytest.mark.parametrize(("command", "items", "sent"), [
    ("unlock_operator", ["operator=4711"], {"operator": "4711"}),
    ("dealer_sign_in", ["dealer=1234"], {"dealer": "1234"}),
    ("preshuffled_decks", ["decks=8", "seal=00123"], {"decks": 8, "seal": "00123"}),
    ("close", ["reason=42"], {"reason": "42"}),
    ("close", ["reason=true"], {"reason": "true"}),
    ("wager", ["seat=3", "kind=banker", "amount=2500"], {"seat": 3, "kind": "banker", "amount": 2500}),
    ("declare_idle", ["face_up=TRUE"], {"face_up": True}),
    ("inspection_done", ["reshuffle_batch=false"], {"reshuffle_batch": False}),
])
def test_each_value_has_its_arguments_type(command: str, items: list[str], sent: dict) -> None:
    args = parse_args(command, items)
    assert args == sent and type(args.get("reason", "")) is str
    assert check_args(command, args) == sent  # what the control socket accepts


@pytest.mark.parametrize(("command", "items", "refusal"), [
    ("wager", ["seat=3", "kind=banker", "amount=2_500"], "amount must be a sum in minor units"),
    # a minus sign: sent as the number it is (not "not '-500'", text), and said to be no amount
    ("wager", ["seat=3", "kind=banker", "amount=-500"], r"amount must be a sum in minor units \(cents\): a whole "
                                                         r"number from 1 to 1000000000000, not -500"),
    ("wager", ["seat=3", "kind=banker", "amount=0"], "amount must be a sum in minor units .*, not 0"),
    ("cut", ["position=-5"], "position must be a whole number from 0 to .*, not -5"),
    ("dealer_sign_in", ["dealer=   "], "dealer must be printable text of 1 to 64 characters, not blank"),
    ("wager", ["seat=٣", "kind=banker", "amount=100"], "seat must be a seat number"),
    ("wager", ["seat=-1", "kind=banker", "amount=100"], "seat must be a seat number .*, not -1"),  # no table has it
    ("sit", ["seat=0"], "seat must be a seat number .*, not 0"),
    ("wager", ["seat=3", "kind=banker", "amount=" + "9" * 30], "amount must be a sum in minor units"),
    ("wager", ["seat=3", "kind=banker", "amount=" + "9" * 5000], "amount must be a sum in minor units"),
    ("declare_idle", ["face_up=maybe"], "face_up must be true or false"),
    ("sit", ["seat=3", "chair=2"], "unknown argument 'chair'"),
])
def test_a_value_not_of_its_type_goes_as_typed_for_the_table_to_refuse(command: str, items: list[str],
                                                                       refusal: str) -> None:
    args = parse_args(command, items)
    with pytest.raises(BadRequest, match=refusal):
        check_args(command, args)


def test_every_commands_arguments_typed_at_a_prompt_are_accepted_by_the_socket() -> None:
    from controller.control.requests import COUNT, MONEY

    sample = {COUNT: "7", MONEY: "2500", "true or false": "true", "text": "banker",
              "a card such as AS, 10H or KD": "10H", "a seat number (a whole number from 1)": "3"}
    for name in COMMANDS:
        items = [f"{arg}={sample[kind]}" for arg, (kind, _, _) in parameters(name).items()]
        check_args(name, parse_args(name, items))  # raises BadRequest if a value went with the wrong type


@pytest.mark.parametrize("item", ["seat", "=3", "seat=3 seat=4"])
def test_malformed_items_are_usage_errors(item: str) -> None:
    items = item.split(" ")
    with pytest.raises(UsageError):
        parse_args("sit", items)


@pytest.mark.parametrize(("value", "said"), [("12.50", "not '12.50'"), ("x" * 41, "not text")])
def test_a_number_that_is_not_a_whole_one_is_named_as_typed(value: str, said: str) -> None:
    """`amount=12.50` was refused as "not text", though the user typed a number. (`amount=-100`
    too; it is now sent as the number it is, and said to be no amount.)"""
    with pytest.raises(BadRequest) as refused:
        check_args("wager", parse_args("wager", ["seat=3", "kind=banker", f"amount={value}"]))
    assert str(refused.value).endswith(f"amount must be a sum in minor units (cents): a whole number from 1 to "
                                       f"1000000000000, {said}")


def test_every_whole_number_up_to_the_limit_is_taken_as_one() -> None:
    """A review found `amount=9007199254740991` (16 digits) refused as "not '9007199254740991'":
    text of 16 digits was sent as text. It is sent as the number, and said to be beyond what an
    amount may be as the number it is."""
    for value in (2**53 - 1, 10**15, -(2**53 - 1)):
        args = parse_args("wager", ["seat=3", "kind=banker", f"amount={value}"])
        assert args["amount"] == value
    check_args("wager", parse_args("wager", ["seat=3", "kind=banker", "amount=1000000000000"]))  # the most there is
    with pytest.raises(BadRequest) as refused:
        check_args("wager", parse_args("wager", ["seat=3", "kind=banker", f"amount={2**53 - 1}"]))
    assert str(refused.value).endswith(f"from 1 to 1000000000000, not {2**53 - 1}")


@pytest.mark.parametrize("word", ["true", "yes", "false", "no", "YES", "maybe", "1", "on"])
def test_a_flag_typed_at_a_prompt_is_taken_or_refused_alike_by_ctl_the_socket_and_the_table(word: str) -> None:
    """The commands table owns what a flag's words are: the table took ``yes`` and ``no``, but
    ``shoectl ctl`` and the console sent them as text, which the control socket refused ("face_up
    must be true or false, not 'yes'"): a review of who decides an argument's type."""
    from controller.rules.submission import load_preset
    from controller.table.errors import Refused

    arg = next(a for a in COMMANDS["declare_idle"].args if a.name == "face_up")
    try:
        table_takes = arg.parse(word, load_preset("minibaccarat"))
    except Refused:
        table_takes = None
    try:
        sent = check_args("declare_idle", parse_args("declare_idle", [f"face_up={word}"]))["face_up"]
    except BadRequest:
        sent = None
    assert sent == table_takes and (sent is None) == (word in ("maybe", "1", "on"))


def test_the_words_a_flag_is_typed_as_are_documented() -> None:
    """docs/control.md said `true` or `false` for a flag when ``yes`` and ``no`` are taken too (a
    review of the mend that made ctl send them as booleans)."""
    from pathlib import Path

    from controller.table.commands import FLAG_WORDS

    text = " ".join((Path(__file__).resolve().parents[2] / "docs" / "control.md").read_text(encoding="utf-8").split())
    at = text.index("for a flag")
    assert all(f"`{word}`" in text[at - 80:at] for word in FLAG_WORDS), text[at - 80:at + 20]
