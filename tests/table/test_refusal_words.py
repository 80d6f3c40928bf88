"""Refusals in a floorperson's words (a floorperson's review found Python's ``None`` and state
names used as adjectives: "the cut is offered to seat None", "the table is squeeze"). Each
refusal names what is wrong now and, where there is one, what to do instead."""
from __future__ import annotations

import pytest

from bench import Bench

from controller.roles import Role
from controller.table.io import OperatorInput
from firmware_bridge.protocol import messages as m
from controller.table.commands import COMMANDS
from controller.table.machine import CUT_MADE_NEXT, STATE_NEXT, STATES, STATE_WORDS


def _refused(b: Bench) -> str:
    return b.of("refused")[-1]["reason"]


def test_every_state_has_words_for_a_refusal() -> None:
    assert set(STATE_WORDS) == set(STATES) == set(STATE_NEXT)


def test_a_refusal_for_the_state_says_what_comes_first_naming_only_commands_the_state_takes() -> None:
    """A dealer's review: "load is not allowed while the table is cutting" said nothing of what to
    do. The refusal says what moves the table on; a command it names is one the state allows (a
    list of the state's commands was tried once and named some that the table then refused)."""
    b = Bench()
    b.op("open")
    b.op("load", Role.DEALER)
    assert _refused(b) == ("load is not allowed while the table is cutting; next, the cut (cut; cut_decline for "
                           "the seat offered it), then the second cover card (cover)")
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)  # a command's own words, then the same
    assert _refused(b) == ("wagers are accepted only while betting is open (the table is cutting); next, the cut "
                           "(cut; cut_decline for the seat offered it), then the second cover card (cover)")
    b.op("cut", Role.DEALER, position=100)
    b.op("load", Role.DEALER)
    assert _refused(b) == f"load is not allowed while the table is cutting; {CUT_MADE_NEXT}"  # cut is refused now
    before = len(b.of("refused"))
    b.op("cover", Role.DEALER, from_bottom=14)  # what it names is taken
    assert len(b.of("refused")) == before and b.core.state == "ready_to_load"
    for state, words in [*STATE_NEXT.items(), ("cutting", CUT_MADE_NEXT)]:
        named = [w.strip(",();") for w in words.split() if w.strip(",();") in COMMANDS]
        assert all(COMMANDS[name].states is None or state in COMMANDS[name].states for name in named), (state, named)
        assert bool(named) is (state not in ("loading", "burning", "dealing", "fault")), state


def test_a_cut_with_no_seat_offered_it_says_the_dealer_cuts() -> None:
    b = Bench()
    b.op("open")
    assert b.core.state == "cutting" and b.core.shoe.cut_offeree is None  # no seat occupied
    b.op("cut_decline", Role.DEALER, seat=3)
    assert _refused(b) == "no seat is offered the cut now: the dealer cuts"
    b.op("cut", Role.DEALER, position=100, seat=3)
    assert _refused(b).startswith("no seat is offered the cut now (none is occupied, or every player declined)")


def test_a_second_cover_card_beyond_the_stack_says_at_most_not_at_least() -> None:
    b = Bench()
    b.op("open")
    b.op("cut", Role.DEALER, position=100)
    b.op("cover", Role.DEALER, from_bottom=500)
    assert _refused(b) == ("second cover card 500 cards above the bottom of a 416-card stack: it must be below "
                           "the card burned after the load (681a.7(c)), at most 415 cards above the bottom")


def test_a_refusal_in_a_fault_says_the_table_is_held_by_it() -> None:
    """``void_round`` was refused in a fault with "no round in progress", a round being on the
    layout; every state-refusal there now says the fault holds the table."""
    b = Bench()
    b.open_and_cut()
    b.link("shoe", False)
    assert b.core.state == "fault"
    b.op("void_round")
    held = "held by a fault (link:shoe clears when the shoe reconnects)"
    assert _refused(b) == f"void_round voids a round being dealt; the table is {held}"  # betting: no round to void
    b.op("close")
    assert _refused(b) == f"close is not allowed while the table is {held}"


def test_a_refusal_in_a_fault_names_what_ends_each_fault() -> None:
    """A floor review: refusals while a misread or a lost link held the table said "(clear it
    first)", and ``clear_fault`` then refused to clear either. Each fault now says what ends it."""
    b = Bench()
    b.open_and_cut()
    b.link("shoe", False)
    b.core.faults["misread"] = "card at position 8 could not be read"  # beside the lost link
    b.core.faults["jam:shuffler"] = "jam"
    b.op("close")
    assert _refused(b) == ("close is not allowed while the table is held by a fault (link:shoe clears when the "
                           "shoe reconnects; misread: a floorperson enters the card (enter_card); jam:shuffler: a "
                           "floorperson clears it (clear_fault key=jam:shuffler))")


def test_a_seat_is_taken_once_and_left_once() -> None:
    """A review found ``sit`` on a taken seat and ``leave`` of an empty one accepted and journaled
    as if a player had come or gone."""
    b = Bench()
    b.op("sit", Role.DEALER, seat=3)
    before = b.core.snapshot()
    assert before["seats_taken"] == [3]
    b.op("sit", Role.DEALER, seat=3)
    assert _refused(b) == "seat 3 is taken" and b.core.snapshot() == before
    b.op("leave", Role.DEALER, seat=5)
    assert _refused(b) == "seat 5 is empty" and b.core.snapshot() == before
    b.op("leave", Role.DEALER, seat=3)
    assert b.core.snapshot()["seats_taken"] == []


def test_a_seat_whose_wagers_are_in_the_round_being_dealt_cannot_leave_until_it_is_settled() -> None:
    """A review had seats 3 and 4 leave at the squeeze: the table then handed the Banker's Hand to
    a seat it held empty. Their wagers left the layout at "no more bets", which was all ``leave``
    looked at."""
    b = Bench("midibaccarat")
    b.open_and_cut(seats=(3, 4))
    b.play_round([(3, "banker", 5000), (4, "player", 5000)])
    assert b.core.state == "squeeze"
    before = b.core.snapshot()
    for seat in (3, 4):
        b.op("leave", Role.DEALER, seat=seat)
        assert _refused(b) == (f"seat {seat} has wagers in the round being dealt; it may leave once the round is "
                               "settled")
        assert b.core.snapshot() == before
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    assert b.core.state == "betting"  # the round is settled
    b.op("leave", Role.DEALER, seat=4)
    assert b.core.snapshot()["seats_taken"] == [3]


@pytest.mark.reg("629a.8(d)")
def test_a_seat_given_the_squeeze_cannot_leave_with_it() -> None:
    """629a.8(d): a player who declines to turn the cards over passes the right on, to "the player
    immediately to the right" and "each of the other players in turn": a seat with no wager may
    hold it. Such a seat that left kept it, and the table prompted the dealer to hand the cards to
    an empty seat, then to whoever sat there next (a review of roles). It is refused, changing
    nothing; it may relinquish the right first."""
    b = Bench("midibaccarat")
    b.open_and_cut(seats=(3, 4))
    b.play_round([(3, "banker", 5000), (4, "player", 5000)])
    while b.core.snapshot()["prompt"].startswith("SQUEEZE PLAYER"):
        b.op("reveal", Role.DEALER)
    b.op("sit", Role.DEALER, seat=5)  # a player sits down, with no wager
    while not b.core.snapshot()["prompt"].endswith("SEAT 5"):
        b.op("relinquish", Role.DEALER)
    before = b.core.snapshot()
    b.op("leave", Role.DEALER, seat=5)
    assert _refused(b) == ("seat 5 holds the cards being turned over; it may relinquish them first, or leave once "
                           "the round is settled")
    assert b.core.snapshot() == before
    b.op("relinquish", Role.DEALER)
    assert not b.core.snapshot()["prompt"].endswith("SEAT 5")
    b.op("leave", Role.DEALER, seat=5)
    assert 5 not in b.core.snapshot()["seats_taken"]


@pytest.mark.reg("629a.8(d)")
def test_a_seat_that_turned_its_hand_over_may_leave_and_a_third_card_passes_on() -> None:
    """A review of the day's changes: a seat whose hand was turned over was refused `leave` and
    told to relinquish, which took the right of the seat squeezing now. It may leave; a third card
    for the hand it held goes to "the player immediately to the right" and on, as from a seat that
    gave its right up (629a.8(d)), never to the empty seat."""
    b = Bench("midibaccarat", seed=1)
    b.open_and_cut(seats=(3, 4))
    b.play_round([(3, "banker", 5000), (4, "player", 5000)])
    b.op("sit", Role.DEALER, seat=5)
    while not b.core.snapshot()["prompt"].endswith("SEAT 5"):
        b.op("relinquish", Role.DEALER)
    b.op("reveal", Role.DEALER)  # seat 5 turns the Player's Hand over
    refused = len(b.of("refused"))
    b.op("leave", Role.DEALER, seat=5)
    assert len(b.of("refused")) == refused and 5 not in b.core.occupied
    start = len(b.sent)
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    assert len([r for r in b.of("squeeze") if r["hand"] == "player"]) == 2  # the Player's third card came
    assert not [o for o in b.sent[start:] if "SEAT 5" in getattr(o.message, "text", "")]
    assert b.core.state == "betting"


def test_an_open_door_is_the_devices_to_end_and_clear_fault_says_so_as_the_refusal_does() -> None:
    """Two places classified how a fault ends and disagreed on a door: a refusal said it "clears
    when the door is closed", yet ``clear_fault`` (without a key too) cleared it while the door was
    open, and the table resumed into a shoe that refuses every command with its door open. One
    table of endings serves both: the door's device ends it, and a floorperson's clearing of the
    other faults leaves it holding the table."""
    b = Bench()
    b.open_and_cut()
    b.event("shoe", m.Door(True))
    b.core.faults["jam:shuffler"] = "jam"
    b.op("close")
    assert _refused(b) == ("close is not allowed while the table is held by a fault (door:shoe clears when the "
                           "shoe's door is closed; jam:shuffler: a floorperson clears it (clear_fault key=jam:shuffler))")
    before = b.core.snapshot()
    b.op("clear_fault", key="door:shoe")
    assert _refused(b) == "door:shoe clears when the shoe's door is closed" and b.core.snapshot() == before
    b.op("clear_fault")  # every fault a floorperson may clear: the jam, not the door
    assert list(b.core.faults) == ["door:shoe"] and b.core.state == "fault"
    b.op("clear_fault")
    assert _refused(b) == "no fault a floorperson can clear (door:shoe clears when the shoe's door is closed)"
    b.event("shoe", m.Door(False))
    assert b.core.state == "betting" and not b.core.faults
    b.op("clear_fault")  # no count-fault hint where there is none (an examiner's review)
    assert _refused(b) == "no fault holds the table (it is betting)"


def test_refusals_in_a_count_fault_and_while_shuffling_say_what_is_so() -> None:
    """An operator review: in a count fault (the status: COUNT FAULT ... CALL FLOOR) `clear_fault`
    answered "there is no fault"; while the shoe was being shuffled `order_reshuffle` answered "no
    shoe to reshuffle"."""
    b = Bench(count_delta=-1)
    b.op("open")
    assert b.core.state == "count_fault"
    b.op("clear_fault")
    assert _refused(b) == "a count fault is not cleared: it ends with order_reshuffle, restart_shoe or close"
    b = Bench(auto_deal=False)
    b.core.handle(OperatorInput("open", {}, "fp1", Role.FLOORPERSON))  # the shuffler is not told: still shuffling
    assert b.core.state == "shuffling"
    b.op("order_reshuffle")
    assert _refused(b) == ("a reshuffle is ordered once the stack is delivered, before it is loaded or between the "
                           "shoe's rounds; not while the table is shuffling; next, the shuffle (the shuffler's; at a "
                           "table without one, manual_shuffle_done or preshuffled_decks)")


def test_a_void_says_why_and_help_says_when_a_command_is_taken() -> None:
    """An operator review: `void_round` took no reason (its record said only "voided by the
    floorperson"), and `help COMMAND` did not say in which table states the command is taken, which
    docs/control.md's table says."""
    from controller.table.commands import help_text

    b = Bench()
    b.open_and_cut()
    b.auto_deal = False
    b.op("wager", Role.DEALER, seat=1, kind="player", amount=100)
    b.op("no_more_bets", Role.DEALER)
    assert b.core.state == "dealing"
    b.op("void_round", reason="cards fell on the floor")
    assert b.of("round_result")[-1]["reason"] == "voided by the floorperson: cards fell on the floor"
    assert "  when the table is: dealing, squeeze, house money" in help_text("void_round").splitlines()
    assert "  when the table is: any" in help_text("enter_card").splitlines()


@pytest.mark.reg("681a.7(l)")
def test_the_replay_of_a_void_round_names_its_cards_and_who_voided_it(tmp_path, capsys) -> None:
    """681a.7(l): cards are placed so as to permit "the reconstruction of each hand in the event
    of a question or dispute". A void round is the disputed one; an examiner's review read its
    replay line as `VOID (voided by the floorperson: ...), wagers returned`, without the cards
    that were out (the journal has them); who voided it is the operator record below it."""
    from cli_run import run
    from controller.journal import Journal, Record

    b = Bench()
    b.dealing_by_hand()
    b.draw()
    b.draw()
    b.op("void_round", Role.SUPERVISOR, "sup1", reason="a card fell face up")
    dealt = [p["card"] for p in b.of("card")]
    assert len(dealt) == 2
    path = tmp_path / "void.db"
    with Journal.open(path, table_id="T1") as journal:
        journal.append_batch(Record(r.kind, r.payload, r.shoe, r.round) for r in b.records)
    code, out, err = run(capsys, "journal", "replay", str(path))
    assert code == 0, err
    lines = out.splitlines()
    [at] = [i for i, line in enumerate(lines) if "VOID" in line]
    assert lines[at].endswith(f": VOID (voided by the floorperson: a card fell face up): "
                              f"{dealt[0]}>P {dealt[1]}>B; wagers returned"), lines[at]
    # who voided it: the operator record, below the round (the record's words stay those of every
    # journal written before, which `audit decisions` compares whole)
    assert lines[at + 1].endswith(" by sup1: void_round reason=a card fell face up"), out


def test_a_squeeze_or_house_money_command_a_moment_late_is_told_what_the_table_does() -> None:
    """A review of races: a floorperson voided the round while House Money was settled; the
    dealer's `continue`, a moment later, was refused "nothing to continue", nothing said of the
    shuffle under way. The refusal says the table's state, and changes nothing."""
    b = Bench("midibaccarat")
    b.open_and_cut(seats=(3, 4))
    b.play_round([(3, "banker", 5000), (4, "player", 5000)])
    b.op("void_round", Role.FLOORPERSON, reason="a race")
    state = b.core.state
    before = b.core.snapshot()
    for command in ("continue", "house_money_add", "reveal", "relinquish"):
        args = {"seat": 3, "side": "banker", "amount": 100} if command == "house_money_add" else {}
        b.op(command, Role.DEALER, **args)
        said = _refused(b)
        assert f"(the table is {state.replace('_', ' ')}); " in said and b.core.snapshot() == before, said
