"""``shoectl ctl status`` in words: nothing shown that the table does not have."""
from __future__ import annotations

from controller.cli.cmd_ctl import status_text


def test_a_shoe_being_prepared_is_not_said_to_have_no_cards_left() -> None:
    """Between the shuffle and the load the shoe has an id but no count: the reply's
    ``cards_remaining`` is null, which the text printed as "remaining 0", as if the shoe were
    empty."""
    preparing = status_text({"table": "T1", "state": "cutting", "shoe": "T1-S0002", "round": 0,
                             "cards_dealt": 0, "cards_remaining": None})
    assert "cards dealt 0  not loaded in the shoe yet" in preparing and "remaining 0" not in preparing
    dealing = status_text({"table": "T1", "state": "betting", "shoe": "T1-S0002", "round": 4,
                           "cards_dealt": 21, "cards_remaining": 0, "cover_reached": True})
    assert "cards dealt 21  remaining 0  (cover card reached)" in dealing
    assert "no shoe in play" in status_text({"table": "T1", "state": "closed"})


def test_a_reshuffle_ordered_for_after_the_round_is_said() -> None:
    text = status_text({"table": "T1", "state": "squeeze", "shoe": "T1-S0002", "round": 4, "cards_dealt": 21,
                        "cards_remaining": 395, "reshuffle_ordered": True})
    assert "remaining 395  (a reshuffle follows this round)" in text


def test_a_count_fault_says_what_was_counted_and_who_decides() -> None:
    """A floor review: in a count fault the status still read "prompt: SHUFFLING", with no fault
    and nothing to do; the count problem and the way on were only in the journal (the table
    core's part: tests/table/test_shuffle_and_cut.py)."""
    text = status_text({"table": "T1", "state": "count_fault", "shoe": "T1-S0002", "round": 0, "cards_dealt": 0,
                        "cards_remaining": None, "count_problem": "1 card missing after the shuffle",
                        "prompt": "COUNT FAULT: CALL FLOOR"})
    assert ("COUNT FAULT 1 card missing after the shuffle: a floorperson orders a reshuffle (order_reshuffle), "
            "restarts the shoe (restart_shoe) or closes the table (close)") in text
    assert "prompt: COUNT FAULT: CALL FLOOR" in text


def test_a_shoe_given_up_once_the_faults_clear_is_said_over_the_prompt() -> None:
    """A review: after `restart_shoe` while a jam held the table, the status still read "prompt:
    DRAW PLAYER @4", a card of a shoe already given up, with nothing saying so."""
    text = status_text({"table": "T1", "state": "fault", "shoe": "T1-S0001", "round": 1, "cards_dealt": 3,
                        "cards_remaining": 413, "faults": {"jam:shoe": "shoe card jam (SHOE_EXIT)"},
                        "shoe_given_up": "torn card", "prompt": "DRAW PLAYER @4"})
    lines = text.splitlines()
    at = lines.index("SHOE GIVEN UP once the faults are cleared (torn card): its round void, its wagers returned, "
                     "then a new shoe")
    assert lines[at - 1].startswith("FAULTS ") and lines[at + 1] == "prompt: DRAW PLAYER @4"


def test_the_rules_are_named_and_an_ended_shoe_is_not_shown_in_play() -> None:
    """A floor review: the text never named the Rules Submission (a floorperson's set_submission
    could not be seen), and a shoe collected at `close` was still shown with its cards left."""
    text = status_text({"table": "T1", "submission": "Midibaccarat, 8 decks", "state": "closed",
                        "shoe": "T1-S0004", "round": 3, "cards_dealt": 18, "cards_remaining": 398,
                        "shoe_collected": True})
    assert text.splitlines()[0] == ("table T1 (Midibaccarat, 8 decks)  state closed  no shoe in play (the last, "
                                    "T1-S0004, has ended: its cards were collected)")
    assert "remaining 398" not in text


def test_a_stack_the_table_closed_before_loading_is_not_shown_in_play() -> None:
    """An operator review: closed from a count fault, the status still showed the stack given up
    ("shoe T1-S0003 ... not loaded in the shoe yet"), as if it would be dealt."""
    text = status_text({"table": "T1", "state": "closed", "shoe": "T1-S0003", "round": 0, "cards_dealt": 0,
                        "cards_remaining": None})
    assert text.splitlines()[0] == ("table T1  state closed  no shoe in play (the last, T1-S0003, was never loaded: "
                                    "the table closed first)")


def test_each_settlement_says_what_the_dealer_pays_or_collects() -> None:
    """A floor review: the console and ``ctl watch`` printed a round's hands and outcome, and
    nothing of what to pay or collect; a House Money win's payout had to be worked out by hand."""
    from controller.cli.cmd_ctl import event_text

    def line(kind: str, **p) -> str | None:
        return event_text({"type": kind, "seat": 2, "kind": "banker", "amount": 1000, **p})

    assert line("settlement", result="win", win=950, commission=50, net=950) == (
        "  seat 2 banker 10.00: pay 9.50 (commission 0.50 withheld)")
    assert line("settlement", result="lose", win=0, commission=0, net=-1000) == "  seat 2 banker 10.00: collect"
    assert line("settlement", result="push", win=0, commission=0, net=0) == (
        "  seat 2 banker 10.00: push, the stake stays with the player")
    assert event_text({"type": "settlement", "seat": 5, "kind": "house_money", "amount": 1000, "result": "win",
                       "win": 3000, "commission": 0, "net": 3000}) == "  seat 5 house_money 10.00: pay 30.00"
    assert line("wager_returned", result="push", win=0, commission=0, net=0) == "  seat 2 banker 10.00: returned"
    # as the event stream gives them, with their round: a money review read a round's House Money
    # lines, printed right under the round before's result, as that round's
    assert line("settlement", result="lose", win=0, commission=0, net=-1000, shoe="T1-S0001", round=11) == (
        "round 11: seat 2 banker 10.00: collect")


def test_a_new_shoe_has_no_last_outcome_of_the_shoe_before() -> None:
    """A floor review: a new shoe (here after a whole Minibaccarat shoe) still said "last outcome
    banker", the last shoe's; the round and the last outcome are the shoe's, as the scoreboard's and
    the feed's status are."""
    from tests.table.bench import Bench  # noqa: PLC0415 - the table core's test bench

    b = Bench()
    b.open_and_cut()
    b.play_round([(1, "player", 100)])
    assert b.core.snapshot()["last_outcome"] in ("player", "banker", "tie")
    b.op("order_reshuffle")  # between rounds: the shoe ends now, a new one is shuffled
    snap = b.core.snapshot()
    assert snap["shoe"].endswith("S0002") and snap["last_outcome"] is None and snap["round"] == 0
    assert "no round decided yet" in status_text(snap)


def test_the_dealer_the_seat_offered_the_cut_and_a_simulated_round_are_said() -> None:
    """An operator review: the status never said who was dealing, who was offered the cut (only the
    shoe's prompt did), nor that the round in progress was a simulated one (627a.13(c)(2): no
    wagers), which read as an ordinary round."""
    cutting = status_text({"table": "T1", "state": "cutting", "shoe": "T1-S0002", "round": 0, "cards_dealt": 0,
                           "cards_remaining": None, "cut_offered_to": 7, "dealer": "Bob Smith"})
    assert "the cut is offered to seat 7" in cutting.splitlines() and "dealer Bob Smith" in cutting.splitlines()
    simulated = status_text({"table": "T1", "state": "dealing", "shoe": "T1-S0002", "round": 5, "round_kind": "simulated",
                             "cards_dealt": 30, "cards_remaining": 380})
    assert simulated.splitlines()[0].endswith("shoe T1-S0002  round 5  (a simulated round: no wagers)")
    assert "cut is offered" not in simulated and "dealer" not in simulated


def test_a_refusal_on_the_watch_names_the_operator_id_and_the_system_account_that_typed() -> None:
    from controller.cli.cmd_ctl import event_text

    ev = {"type": "auth_refused", "command": "open", "operator": "fp9", "account": "alice", "reason": "wrong PIN"}
    assert event_text(ev) == "open refused (fp9, account alice): wrong PIN"
    assert event_text({**ev, "account": None}) == "open refused (fp9): wrong PIN"  # a table of before


def test_status_names_the_operator_the_table_holds_as_the_dealer() -> None:
    """A floorperson review: refusals said "(d1 is)" while status showed no dealer, or another name."""
    assert "dealer d1" in status_text({"table": "T1", "state": "betting", "dealer_operator": "d1"}).splitlines()
    assert "dealer Bob (operator d1)" in status_text({"table": "T1", "state": "betting", "dealer": "Bob",
                                                      "dealer_operator": "d1"}).splitlines()


def test_a_21_baccarat_rounds_line_shows_the_card_drawn_for_the_bonus_alone() -> None:
    """681a.7(f)(2): a card drawn "for purposes of the Bonus Wager". A review of the dealer's
    console: it printed "pay 10.00" for a Banker Bonus Wager beside "B 5C 6D", the 5H that made the
    pair not shown anywhere but `journal replay`. A hand whose Bonus cards are its own and won
    nothing says nothing more."""
    from controller.cli.cmd_ctl import event_text
    from controller.rules.cards import parse_cards
    from controller.rules.engine import deal
    from controller.rules.submission import load_preset

    sub = load_preset("21-baccarat")
    result = deal(parse_cards("AS,5C,JH,6D,5H"), sub.game, sub.twentyone, bonus_in_play=True).to_json()
    line = event_text({"type": "round_result", "shoe": "T1-S0001", "round": 4, "kind": "normal", **result})
    assert line == "T1-S0001 round 4 [normal]: P AS JH (21)  B 5C 6D (11) bonus 5C 6D 5H: pair -> player"
    # a round without a Bonus Wager says nothing of Bonus ranks its hands happen to make (a review:
    # "bonus 5C 8S 5H: pair" beside rounds where nothing was wagered on it)
    plain = deal(parse_cards("KS,5C,KH,5D,9S"), sub.game, sub.twentyone, bonus_in_play=False).to_json()
    assert plain["banker"]["bonus_rank"] != "none" or plain["player"]["bonus_rank"] != "none"
    line = event_text({"type": "round_result", "shoe": "T1-S0001", "round": 5, "kind": "normal", **plain})
    assert "bonus" not in line


def test_an_accepted_wager_is_said_as_the_table_took_it() -> None:
    """A review of the dealer's console: `wager ... amount=25` (meant as 25.00) was answered
    "wager: ok", and only `status` showed 0.25. The reply says the wager in major units, and a
    wager taken back as returned; other commands' replies are as before."""
    from controller.cli.cmd_ctl import ok_line

    placed = {"ok": True, "records": [{"type": "operator", "command": "wager"},
                                      {"type": "wager", "seat": 2, "kind": "banker", "amount": 25}]}
    assert ok_line("wager", placed) == "wager: ok: seat 2 banker 0.25"
    back = {"ok": True, "records": [{"type": "wager_returned", "seat": 2, "kind": "banker", "amount": 2500,
                                     "result": "push", "win": 0, "commission": 0, "net": 0}]}
    assert ok_line("take_back", back) == "take_back: ok: seat 2 banker 25.00 returned"
    assert ok_line("open", {"ok": True, "records": [{"type": "operator"}]}) == "open: ok"
    assert ok_line("unlock_operator", {"ok": True, "records": [], "said": "d1 may log in again"}) == (
        "unlock_operator: ok: d1 may log in again")
