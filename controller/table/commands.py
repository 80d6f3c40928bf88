"""Who may do what, and when: every operator command of the table, as data.

``COMMANDS`` maps each command's name to its ``Command``: the least role that may give it, the
states in which the table accepts it (``None``: any), its arguments (name, kind, unit, help) and
its handler (``controller.table.actions``). This is the one place that says so: the table core,
the control socket (role refusals), ``shoectl ctl --help``, the console's ``help CMD`` and
docs/control.md all read it.

``admit(op, state, submission)`` runs the checks in this order, and changes nothing:
1. the command exists; 2. the operator's role is high enough; 3. the table is in one of the
command's states; 4. every required argument is there, none is unknown, each is of its kind
(a whole number, a seat of this table, a wager kind, ...). It returns the parsed arguments, or
raises ``Refused`` with a sentence in the operator's words.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from controller.roles import AUTOMATED_DEALER, Role
from controller.rules.cards import CardError, parse_card
from controller.rules.model import WagerKind
from controller.table import actions as act, decks
from controller.table.errors import Refused
from controller.table.faults import table_words
from controller.table.io import OperatorInput
from shoectl_config.numbers import whole_number_of
from shoectl_config.text import quoted, safe

MAX_AMOUNT = 10**12          # minor units: far above any table limit, far below trouble
MAX_POSITION = 100_000
MAX_TEXT = 64
#: The words a flag is typed as, and what each says: the table's, and ``shoectl ctl``'s and the
#: console's, which send it to the control socket as a JSON boolean.
FLAG_WORDS: Mapping[str, bool] = {"true": True, "yes": True, "false": False, "no": False}


@dataclass(frozen=True)
class Arg:
    """One argument of a command. ``kind``: ``seat``, ``count`` (a whole number >= 0),
    ``money`` (a whole number of minor units > 0), ``choice``, ``flag``, ``text``, ``card``,
    ``table`` (a mapping)."""

    name: str
    kind: str
    help: str
    unit: str = ""
    required: bool = True
    choices: tuple[str, ...] = ()

    def describe(self) -> str:
        """``amount=CENTS`` style, for usage lines."""
        shown = {"seat": "SEAT", "count": "N", "money": "CENTS", "flag": "true|false", "text": "TEXT",
                 "card": "CARD", "table": "{...}"}.get(self.kind) or "|".join(self.choices)
        text = f"{self.name}={shown}"
        return text if self.required else f"[{text}]"

    def parse(self, value: Any, submission: Any) -> Any:
        """The value checked and converted; ``Refused`` naming the argument otherwise. Whole
        numbers may come as JSON numbers or as decimal text (``seat=3`` typed at a console)."""
        kind = self.kind
        if kind in ("seat", "count", "money"):
            number = whole_number_of(value)
            if kind == "seat":
                seats = list(submission.seats)
                if number not in seats:
                    raise Refused(f"{self.name} must be a seat of this table ({', '.join(map(str, seats))})")
                return number
            low, high = (1, MAX_AMOUNT) if kind == "money" else (0, MAX_POSITION)
            if number is None or not low <= number <= high:
                what = "a whole number of minor units (cents)" if kind == "money" else "a whole number"
                raise Refused(f"{self.name} must be {what} from {low} to {high}")
            return number
        if kind == "choice":
            if not isinstance(value, str) or value.lower() not in self.choices:
                raise Refused(f"{self.name} must be one of: {', '.join(self.choices)} (not {_shown(value)})")
            return value.lower()
        if kind == "flag":
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in FLAG_WORDS:
                return FLAG_WORDS[value.lower()]
            raise Refused(f"{self.name} must be true or false")
        if kind == "text":
            if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT or not value.isprintable():
                raise Refused(f"{self.name} must be printable text of 1 to {MAX_TEXT} characters")
            return value.strip()
        if kind == "card":
            try:
                return str(parse_card(value if isinstance(value, str) else ""))
            except CardError:
                raise Refused(f"{self.name} must be a card such as AS, 10H or KD") from None
        if kind == "table":
            if not isinstance(value, Mapping):
                raise Refused(f"{self.name} must be the Rules Submission's contents")
            return dict(value)
        raise AssertionError(f"argument kind {kind!r} has no parser")  # a table error, not input


@dataclass(frozen=True)
class Command:
    name: str
    min_role: Role
    states: tuple[str, ...] | None
    handler: Callable[..., None]
    help: str
    args: tuple[Arg, ...] = ()
    not_now: str = "{command} is not allowed while the table is {state}"  # refused for the state
    # What an operator gives, where it is not what the core takes: set_submission names a preset
    # or a file, which the control server resolves into the contents the core journals.
    given: tuple[Arg, ...] | None = None

    @property
    def operator_args(self) -> tuple[Arg, ...]:
        """The arguments an operator types (console, ``ctl``, the control socket)."""
        return self.args if self.given is None else self.given

    def usage(self) -> str:
        return " ".join([self.name, *(a.describe() for a in self.operator_args)])

    def check_args(self, given: Mapping[str, Any], submission: Any) -> dict[str, Any]:
        """The arguments parsed; ``null`` (None) for an optional one is that argument not given
        (docs/control.md)."""
        known = {a.name: a for a in self.args}
        given = {k: v for k, v in given.items() if not (v is None and k in known and not known[k].required)}
        unknown = sorted(k for k in given if k not in known)
        missing = [a.name for a in self.args if a.required and a.name not in given]
        if unknown or missing:
            problem = "; ".join(filter(None, [
                f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(map(_printable, unknown))}" if unknown else "",
                f"missing {', '.join(missing)}" if missing else ""]))
            raise Refused(f"{problem}: {self.name} takes {_takes(self)}")
        return {name: known[name].parse(value, submission) for name, value in given.items()}


def _shown(value: Any) -> str:
    """A value a client gave, short and printable, for a refusal: text quoted, anything else as
    JSON writes it (requests are JSON: ``true``, ``[1]``)."""
    if isinstance(value, str):
        return quoted(value[:MAX_TEXT])
    return safe(json.dumps(value, default=str)[:MAX_TEXT])


def _printable(text: str) -> str:
    """A name a client gave (a command, an argument): as given when it is short printable text,
    else quoted with its escapes."""
    return text if text.isprintable() and len(text) <= MAX_TEXT else quoted(text[:MAX_TEXT])


def _takes(command: Command) -> str:
    if not command.args:
        return "no arguments"
    return ", ".join(f"{a.name} ({a.help}{', ' + a.unit if a.unit else ''}"
                     f"{': ' + ', '.join(a.choices) if a.choices else ''}{'' if a.required else ', optional'})"
                     for a in command.args)


D, F, S = Role.DEALER, Role.FLOORPERSON, Role.SUPERVISOR
SEAT = Arg("seat", "seat", "a seat number of this table")
# Given, a squeeze command meant for a hand no longer squeezed is refused: two consoles' commands
# for the same hand no longer reach the next one (a review of races). Not required: a journal's
# earlier commands, without it, are decided again as they were.
SQUEEZED = Arg("hand", "choice", "the hand being squeezed, as shown (SQUEEZE PLAYER / BANKER): another is refused",
               required=False, choices=("player", "banker"))
WAGER_KINDS = tuple(k.value for k in WagerKind)
NO_CUT = "no cut is under way (the table is {state})"
NO_SQUEEZE = "no hand is being squeezed (the table is {state})"
# The state said: a command a moment late (another console voided the round) was told "nothing to
# continue", and not what the table is doing instead (a review of races).
NO_HOUSE_MONEY = "no House Money settlement is under way (the table is {state})"

COMMANDS: dict[str, Command] = {c.name: c for c in [
    Command("open", F, ("closed",), act.open_table, "open the table: shuffle a new shoe (681a.5(a))"),
    Command("close", F, ("betting", "count_fault", "ready_to_load", "inspection"), act.close_table,
            "close the table between rounds; the shoe in play ends: its cards are collected and "
            "reconciled (681a.7(d)(1))", (Arg("reason", "text", "why, said and journaled", required=False),)),
    Command("sit", D, None, act.sit, "a player takes a free seat", (SEAT,)),
    Command("leave", D, None, act.leave, "a player leaves a seat with no wagers on the layout or in the round "
            "being dealt", (SEAT,)),
    Command("wager", D, ("betting",), act.wager, "place a wager while betting is open (a wager at a free seat "
            "seats its player, as sit does)", (
        SEAT, Arg("kind", "choice", "the wager", choices=WAGER_KINDS),
        Arg("amount", "money", "the stake", unit="minor units (cents)")),
        "wagers are accepted only while betting is open (the table is {state})"),
    Command("take_back", D, ("betting",), act.take_back,
            "take back a wager placed by mistake, before no more bets: the seat's latest of that kind "
            "goes back to the player", (SEAT, Arg("kind", "choice", "the wager", choices=WAGER_KINDS)),
            "a wager is taken back only while betting is open (the table is {state})"),
    Command("no_more_bets", D, ("betting",), act.no_more_bets, "call no more bets and deal the round (629a.8(b))"),
    Command("cut_decline", D, ("cutting",), act.cut_decline, "the seat offered the cut declines it (681a.5(b))",
            (Arg("seat", "seat", "the seat offered the cut"),), NO_CUT),
    Command("cut", D, ("cutting",), act.cut, "cut the stack with the cover card (681a.5(b)-(c))", (
        Arg("position", "count", "cards from the top of the stack", unit="cards"),
        Arg("seat", "seat", "the player who cuts (none: the dealer)", required=False)), NO_CUT),
    Command("cover", D, ("cutting",), act.cover, "place the second cover card (681a.5(d))",
            (Arg("from_bottom", "count", "cards above the bottom of the stack", unit="cards"),), NO_CUT),
    Command("load", D, ("ready_to_load",), act.load, "load the cut stack into the shoe"),
    Command("dealer_sign_in", D, act.SIGN_IN_STATES, act.dealer_sign_in,
            "a new dealer comes to the table and burns a card before dealing any (681a.7(c)); until then "
            "another operator of the dealer's role is refused",
            (Arg("dealer", "text", "the dealer's name or id as the casino keeps it (not an operator id: not checked "
                 "against the operators file)"),),
            "a new dealer signs in between rounds, not while the table is {state} "
            "(the dealer who began a round or a burn completes it)"),
    Command("reveal", D, ("squeeze",), act.reveal, "turn the squeezed hand face up (629a.8(c))", (SQUEEZED,),
            NO_SQUEEZE),
    Command("relinquish", D, ("squeeze",), act.relinquish,
            "the player holding the cards gives them up, by choice or because a dealer or floorperson "
            "requires it; the right passes on; a player who gives up their own right is not handed the "
            "cards again in the round, one who declines a hand offered declines that hand only "
            "(629a.8(d))", (SQUEEZED, Arg("seat", "seat", "the seat holding the cards now, as shown: another "
                                          "is refused", required=False)), NO_SQUEEZE),
    Command("house_money_add", D, ("house_money",), act.house_money_add,
            "place a winning House Money payout on the original wager: all of it, or the Rules "
            "Submission's portion, once; without it the payout is handed to the player (629a.8(c)(3)(i))", (
                SEAT, Arg("side", "choice", "the original wager", choices=("player", "banker")),
                Arg("amount", "money", "all of the payout, or the Rules Submission's portion of it",
                    unit="minor units (cents)")),
            NO_HOUSE_MONEY),
    Command("continue", D, ("house_money",), act.continue_round, "go on with the round after House Money", (),
            NO_HOUSE_MONEY),
    Command("manual_shuffle_done", D, ("shuffling",), act.manual_shuffle_done,
            "the dealer has shuffled by hand (681a.5(a), (g)(1)): after a shoe, its collected cards (681a.7(d)(2))", (),
            "no shuffle is under way (the table is {state})"),
    Command("preshuffled_decks", D, ("shuffling",), decks.preshuffled_decks,
            "put preshuffled decks in play instead of a shuffle by hand, before play commences or in place of cards "
            "whose count failed (681a.5(a))", (
                Arg("decks", "count", "the decks in the preshuffled pack", unit="decks"),
                Arg("seal", "text", "the pack's seal or lot, for the record", required=False)),
            "no shuffle is under way (the table is {state})"),
    Command("order_recut", F, ("cutting", "ready_to_load"), act.order_recut,
            "order a recut: after the cut, before the cards are in the shoe (681a.5(e))", (),
            "a recut is ordered after the cut and before the cards are in the shoe (the table is {state})"),
    Command("order_reshuffle", F, ("ready_to_load", "cutting", "count_fault", *act.ROUND_STATES), act.order_reshuffle,
            "order a reshuffle: now before loading, or after this round (681a.5(e)-(f))", (),
            "a reshuffle is ordered once the stack is delivered, before it is loaded or between the shoe's rounds; "
            "not while the table is {state}"),
    Command("declare_idle", F, ("betting", "ready_to_load"), act.declare_idle,
            "no gaming activity: the cards out of the shoe and the discard rack, spread for "
            "inspection (681a.5(g)); the shoe in play is reconciled",
            (Arg("face_up", "flag", "spread face up, as a player asked", required=False),)),
    Command("spread_face_up", D, ("inspection",), decks.spread_face_up,
            "a player asks to see the spread cards face up: turn them (681a.5(g))", (),
            "no cards are spread for inspection (the table is {state})"),
    Command("inspection_done", F, ("inspection",), decks.inspection_done,
            "the inspection is over: wash and shuffle, or into the shuffler (681a.5(g))",
            (Arg("reshuffle_batch", "flag", "a player asks that the batch taken out of the shuffler be spread and "
                 "reshuffled before it is dealt (681a.5(g)(2))", required=False),)),
    Command("clear_fault", F, ("fault",), act.clear_fault, "clear a fault the floorperson has dealt with",
            (Arg("key", "text", "the fault to clear (all clearable ones when absent)", required=False),),
            "{nothing_to_clear}"),
    Command("enter_card", F, None, act.enter_card, "enter the card the shoe could not read",
            (Arg("card", "card", "the card, e.g. AS, 10H, KD"),)),
    Command("card_disclosed", F, ("betting",), act.card_disclosed,
            "the card drawn in error that the table holds for the next hand (drawn face down, the last out of "
            "the shoe) was disclosed as it was dealt: it is decided again as disclosed, the Rules Submission's "
            "procedure for a Player's unauthorised third card (627a.13(c)), a simulated round for any other "
            "(627a.13(d))", (),
            "a card drawn in error is said disclosed between rounds, while it waits for the next hand (the table "
            "is {state})"),
    Command("void_round", F, ("dealing", "squeeze", "house_money"), act.void_round,
            "void the round in progress: its wagers returned (a House Money Wager settled before any third card "
            "stands), then the entire set reshuffled (627a.13(e))",
            (Arg("reason", "text", "why, for the record", required=False),),
            "void_round voids a round being dealt; the table is {state}{held_round}"),
    Command("restart_shoe", F, act.RESTART_COMMAND_STATES, act.restart_shoe,
            "the devices lost the shoe: void the round, return the wagers, shuffle anew (while a fault holds the "
            "table: once the faults are cleared)",
            (Arg("reason", "text", "why, for the record", required=False),),
            "nothing to restart while the table is {state}"),
    Command("unlock_operator", S, None, act.unlock_operator,
            "end another operator's lockout and count of wrong PINs, at once (docs/operators.md)",
            (Arg("operator", "text", "the operator's id"),)),
    Command("set_submission", F, ("closed",), act.set_submission, "set the Rules Submission at opening", (
        Arg("submission", "table", "the Rules Submission's contents"),
        Arg("source", "text", "where it came from, for the record", required=False)),
        "the Rules Submission can be changed only while the table is closed",
        given=(Arg("submission", "text", "a preset's name, or the name of a file in the table's submissions "
                   "folder (shoectl run --submissions; default: minibaccarat)", required=False),)),
]}


# The least role for each command, as the operators' authorization reads it (derived, read-only).
MIN_ROLES: Mapping[str, Role] = MappingProxyType({name: c.min_role for name, c in COMMANDS.items()})


def admit(op: OperatorInput, state: str, submission: Any, faults: dict[str, str] | None = None,
          dealer_operator: str | None = None, shoe_given_up: str | None = None,
          held_in: str | None = None, *, automated_dealer_runs: bool = True,
          next_step: str = "") -> tuple[Command, dict[str, Any]]:
    """The command and its parsed arguments if ``op`` may be carried out now (see the module
    docstring); ``Refused`` otherwise (``faults``: those holding the table, named in a refusal
    with what ends each; ``dealer_operator``: the dealer at the table, whom another operator of the
    dealer's role replaces only by signing in, 681a.7(c); ``shoe_given_up``: why the shoe a fault
    holds is given up once the faults clear, if it is; ``held_in``: the state a fault holds;
    ``automated_dealer_runs``: the automated dealer drives the table now, so that a table it dealt
    refuses a person's sign-in only then; ``next_step``: what moves the table on from its state,
    said after a refusal for the state, ``machine.next_step``). Changes nothing."""
    command = COMMANDS.get(op.command)
    if command is None:
        raise Refused(f"unknown command {_printable(str(op.command))}")
    if op.role < command.min_role:
        raise Refused(f"{command.name} needs a {command.min_role.label} or above; "
                      f"{op.operator} is a {op.role.label}")
    if dealer_operator is not None and op.operator != dealer_operator:
        automated = dealer_operator == AUTOMATED_DEALER and automated_dealer_runs
        if command.name == "dealer_sign_in" and automated:
            # A person signed in would leave the automated dealer refused for good: the table would stop.
            raise Refused("the automated dealer deals at this table (shoectl run without --manual): no other dealer "
                          "signs in")
        if op.role is Role.DEALER and command.name != "dealer_sign_in":
            if automated:  # no sign-in to advise: it is refused there (a floorperson review)
                raise Refused(f"{op.operator} is not the dealer at this table: the automated dealer deals here "
                              "(shoectl run without --manual); a dealer's commands are its")
            who = "the automated dealer was, which deals no more" if dealer_operator == AUTOMATED_DEALER else \
                f"{dealer_operator} is"
            raise Refused(f"{op.operator} is not the dealer at this table ({who}): a new dealer signs "
                          "in first (dealer_sign_in), and burns a card before dealing (681a.7(c))")
    if command.states is not None and state not in command.states:
        words = table_words(state, faults or {})
        # a count fault is no fault to clear: said so there, and only there (an examiner's review)
        cleared = ("a count fault is not cleared: it ends with order_reshuffle, restart_shoe or close"
                   if state == "count_fault" else f"no fault holds the table (it is {words})")
        held = "" if state != "fault" or held_in not in act.ROUND_STATES[1:] else (
            f"; its shoe is given up already, once the faults are cleared ({shoe_given_up})" if shoe_given_up else
            "; restart_shoe gives up the shoe a fault holds once the faults are cleared")
        said = command.not_now.format(command=command.name, state=words, nothing_to_clear=cleared, held_round=held)
        # what moves the table on, after every refusal for the state (clear_fault's says it already)
        raise Refused(f"{said}; {next_step}" if next_step and command.name != "clear_fault" else said)
    if not isinstance(op.args, Mapping):
        raise Refused(f"{command.name} takes {_takes(command)}")
    return command, command.check_args(op.args, submission)


def help_text(name: str | None = None) -> str:
    """``help`` for one command (usage, role, arguments) or a list of all of them."""
    if name is None:
        width = max(map(len, COMMANDS))
        return "\n".join(f"  {c.name:<{width}}  {c.min_role.label:<11}  {c.help}" for c in COMMANDS.values())
    c = COMMANDS.get(name)
    if c is None:
        raise Refused(f"unknown command {_printable(name)}")
    when = ", ".join(s.replace("_", " ") for s in c.states) if c.states else "any"
    lines = [f"{c.usage()}", f"  {c.help}", f"  needs: {c.min_role.label} or above", f"  when the table is: {when}"]
    lines += [f"  {a.name}: {a.help}{' (' + a.unit + ')' if a.unit else ''}"
              f"{'; one of ' + ', '.join(a.choices) if a.choices else ''}{'' if a.required else ' (optional)'}"
              for a in c.operator_args]
    return "\n".join(lines)


REFERENCE_BEGIN = "<!-- commands: generated from controller/table/commands.py by `make docs`; do not edit -->"
REFERENCE_END = "<!-- end of commands -->"


def markdown_reference() -> str:
    """The commands as a Markdown table for docs/control.md (between the two markers)."""
    rows = ["| command | who | when (table states) | arguments | what it does |", "|---|---|---|---|---|"]
    for c in COMMANDS.values():
        states = ", ".join(s.replace("_", " ") for s in c.states) if c.states else "any"
        args = "<br>".join(f"`{a.describe()}` {a.help}{' (' + a.unit + ')' if a.unit else ''}".replace("|", "\\|")
                           for a in c.operator_args) or "none"  # a "|" inside a cell ends it in Markdown
        rows.append(f"| `{c.name}` | {c.min_role.label} or above | {states} | {args} | {c.help} |")
    return "\n".join([REFERENCE_BEGIN, *rows, REFERENCE_END])
