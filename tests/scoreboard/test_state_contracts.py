"""Contracts of controller/scoreboard's state-building modules
(docs/scoreboard.md) that no test held: each test here kills a mutant
the suite let live (a mutation review)."""
from __future__ import annotations

from pathlib import Path

from controller.journal import Journal, JournalReader, Record, kinds
from controller.scoreboard.state import TableView
from round_records import round_records


def view_of(path: Path, records: list[Record], table_id: str = "T1") -> TableView:
    with Journal.open(path, table_id=table_id) as j:
        j.append_batch(records)
    with JournalReader.open(path) as r:
        return TableView.from_entries(r.entries())


def test_a_void_round_is_the_last_round_and_counted_off_the_roads(tmp_path: Path) -> None:
    # docs/scoreboard.md: last_round is "the last completed round of the shoe (any kind: normal,
    # simulated, void)"; shoe_so_far.not_on_roads counts "the simulated and void rounds".
    records = [Record(kinds.SHOE_START, {"shoe": "S1", "decks": 8}, shoe="S1"),
               *round_records("S1", 1, "normal", "banker"),
               *round_records("S1", 2, "void")]
    state = view_of(tmp_path / "void.db", records).to_json()
    assert state["last_round"]["round"] == 2 and state["last_round"]["kind"] == "void"
    assert state["shoe_so_far"]["rounds"] == 1 and state["shoe_so_far"]["not_on_roads"] == 1
    assert state["roads"]["bead_plate"] == ["B"]


def test_a_simulated_round_is_counted_off_the_roads(tmp_path: Path) -> None:
    records = [Record(kinds.SHOE_START, {"shoe": "S1", "decks": 8}, shoe="S1"),
               *round_records("S1", 1, "simulated", "player"),
               *round_records("S1", 2, "normal", "banker")]
    so_far = view_of(tmp_path / "sim.db", records).to_json()["shoe_so_far"]
    assert so_far["rounds"] == 1 and so_far["banker"] == 1 and so_far["player"] == 0
    assert so_far["not_on_roads"] == 1


def test_clearing_one_fault_leaves_the_others_with_their_reasons(tmp_path: Path) -> None:
    records = [Record(kinds.SHOE_START, {"shoe": "S1", "decks": 8}, shoe="S1"),
               Record(kinds.FAULT, {"fault": "jam:shoe", "reason": "shoe jam"}, shoe="S1"),
               Record(kinds.FAULT, {"fault": "misread", "reason": "card misread"}, shoe="S1"),
               Record(kinds.FAULT_CLEARED, {"faults": ["jam:shoe"], "by": "F1"}, shoe="S1")]
    state = view_of(tmp_path / "faults.db", records).to_json()["state"]
    assert state["name"] == "fault"
    assert state["faults"] == [{"fault": "misread", "reason": "card misread"}]
    assert state["reason"] == "card misread"


def _op(command: str, state: str) -> Record:
    return Record(kinds.OPERATOR, {"command": command, "args": {}, "operator": "F1", "operator_role": "floorperson",
                                   "state": state})


def _states(path: Path, records: list[Record]) -> list[str]:
    with Journal.open(path, table_id="T1") as j:
        j.append_batch(records)
    view, names = TableView(), []
    with JournalReader.open(path) as r:
        for e in r.entries():
            view.apply(e)
            names.append(view.to_json()["state"]["name"])
    return names


def _shoe_to_betting(shoe: str) -> list[Record]:
    return [Record(kinds.SHOE_START, {"shoe": shoe, "decks": 8}, shoe=shoe),
            Record(kinds.CUT_SKIPPED, {"clause": "681a.5(h)"}, shoe=shoe),
            Record(kinds.SHOE_LOADED, {"cards": 416}, shoe=shoe),
            Record(kinds.BURN, {"card": "3S", "position": 1, "dealer": None}, shoe=shoe)]


def test_a_new_dealer_outside_betting_does_not_say_burning(tmp_path: Path) -> None:
    # state.py: "a new dealer during betting (burning)"; a dealer change while the table shuffles
    # leaves it shuffling.
    names = _states(tmp_path / "dealer.db", [Record(kinds.SHOE_START, {"shoe": "S1", "decks": 8}, shoe="S1"),
                                             Record(kinds.DEALER, {"dealer": "D2"}, shoe="S1")])
    assert names == ["shuffling", "shuffling"]


def test_the_last_rounds_result_already_says_shuffling(tmp_path: Path) -> None:
    # The cover card came out: from the round's result on the board does not invite bets.
    records = [*_shoe_to_betting("S1"),
               Record(kinds.COVER_CARD, {"position": 300, "during_round": False}, shoe="S1"),
               *round_records("S1", 1, "normal", "banker")]
    names = _states(tmp_path / "cover.db", records)
    assert names[-2:] == ["shuffling", "shuffling"]  # after round_result, after discard_rack


def test_an_ordered_reshuffle_ends_the_shoe_on_the_board(tmp_path: Path) -> None:
    records = [*_shoe_to_betting("S1"), _op("order_reshuffle", "betting"), *round_records("S1", 1, "normal", "banker")]
    assert _states(tmp_path / "reshuffle.db", records)[-1] == "shuffling"


def test_a_restarted_shoe_invites_bets_again(tmp_path: Path) -> None:
    # the cover card came out, then the shoe was restarted (shoe_restarted): its rounds are
    # followed by betting again, not shuffling
    records = [*_shoe_to_betting("S1"),
               Record(kinds.COVER_CARD, {"position": 300, "during_round": False}, shoe="S1"),
               Record(kinds.SHOE_RESTARTED, {"reason": "test"}, shoe="S1"),
               Record(kinds.CUT_SKIPPED, {"clause": "681a.5(h)"}, shoe="S1"),
               Record(kinds.SHOE_LOADED, {"cards": 416}, shoe="S1"),
               Record(kinds.BURN, {"card": "3S", "position": 1, "dealer": None}, shoe="S1"),
               *round_records("S1", 1, "normal", "banker")]
    names = _states(tmp_path / "restart.db", records)
    assert names[5] == "shuffling"  # after shoe_restarted
    assert names[-1] == "betting"


def test_a_count_fault_keeps_its_reason_while_the_table_stays_in_it(tmp_path: Path) -> None:
    path = tmp_path / "count.db"
    with Journal.open(path, table_id="T1") as j:
        j.append_batch([Record(kinds.SHOE_START, {"shoe": "S2", "decks": 8}, shoe="S2"),
                        Record(kinds.COUNT_FAULT, {"problem": "2 cards missing", "counted": 414, "expected": 416},
                               shoe="S2"),
                        Record(kinds.DEALER, {"dealer": "D2"}, shoe="S2")])
    with JournalReader.open(path) as r:
        state = TableView.from_entries(r.entries()).to_json()["state"]
    assert state["name"] == "count_fault" and state["reason"] == "2 cards missing"


def test_two_faults_reasons_are_joined_with_a_semicolon(tmp_path: Path) -> None:
    records = [Record(kinds.SHOE_START, {"shoe": "S1", "decks": 8}, shoe="S1"),
               Record(kinds.FAULT, {"fault": "jam:shoe", "reason": "shoe jam"}, shoe="S1"),
               Record(kinds.FAULT, {"fault": "misread", "reason": "card misread"}, shoe="S1")]
    assert view_of(tmp_path / "two.db", records).to_json()["state"]["reason"] == "shoe jam; card misread"


def test_a_bonus_rank_of_none_is_not_a_fact(tmp_path: Path) -> None:
    # docs/scoreboard.md last_round_facts: player_bonus/banker_bonus for "a winning bonus rank";
    # 21 Baccarat rounds journal "bonus_rank": "none" for a hand without one.
    player = {"cards": ["2S", "3H", "9D"], "total": 14, "bonus_cards": ["2S", "3H", "9D"], "bonus_rank": "none"}
    banker = {"cards": ["5S", "5H", "8D"], "total": 18, "bonus_cards": ["5S", "5H", "8D"], "bonus_rank": "pair"}
    records = [Record(kinds.SHOE_START, {"shoe": "S1", "decks": 6}, shoe="S1"),
               Record("round_start", {"kind": "normal", "round": 1, "wagers": []}, shoe="S1", round=1),
               Record("round_result", {"kind": "normal", "outcome": "banker", "player": player, "banker": banker,
                                       "dealt": [], "game": "21-baccarat"}, shoe="S1", round=1),
               Record("discard_rack", {"cards": []}, shoe="S1", round=1)]
    facts = view_of(tmp_path / "b21.db", records).to_json()["last_round_facts"]
    assert [(f["key"], f.get("rank")) for f in facts] == [("banker_bonus", "pair")]


def test_a_submission_with_an_empty_limits_table_has_no_limits(tmp_path: Path) -> None:
    from controller.rules.submission import load_preset
    sub = load_preset("minibaccarat").to_dict()
    sub["limits"] = {}
    records = [Record(kinds.SUBMISSION, sub)]
    assert view_of(tmp_path / "limits.db", records).to_json()["limits"] is None


def test_placed_folds_a_long_streak_into_a_dragon_tail_at_six_rows() -> None:
    from controller.roadmaps import compute, parse_results
    from controller.scoreboard.state import placed
    roads = compute(parse_results("B" * 8)).to_json()
    assert placed(roads)["big_road"] == [[0, 0], [0, 1], [0, 2], [0, 3], [0, 4], [0, 5], [1, 5], [2, 5]]


def test_a_held_card_used_says_dealing(tmp_path: Path) -> None:
    records = [*_shoe_to_betting("S1"), Record(kinds.HELD_CARD_USED, {"card": "5H"}, shoe="S1")]
    assert _states(tmp_path / "held.db", records)[-1] == "dealing"


def test_a_journal_that_fails_before_any_entry_is_shown_says_none_is_shown() -> None:
    # labels.journal_problem_text: as_of the last entry shown (0: none)
    from controller.scoreboard.labels import journal_problem_text
    text = journal_problem_text("en", "failed_check", 1, "hash mismatch", 0)
    assert text == "the journal failed its check at entry 1: hash mismatch; none of its entries is shown"


def test_a_rate_that_is_no_number_is_shown_as_written_and_nan_or_infinity_is_no_rate() -> None:
    from controller.scoreboard.labels import labels
    from controller.scoreboard.terms import percent_text, terms
    assert percent_text("NaN") is None and percent_text("Infinity") is None
    assert terms({"commission": "five"}, labels("en")) == [
        {"key": "commission", "label": "Commission", "text": "five"}]


def test_a_status_whose_online_is_a_number_is_refused() -> None:
    from controller.floor.topics import STATUS
    from controller.scoreboard.feed_shapes import problem
    assert problem(STATUS, "T1", {"table_id": "T1", "online": 1}) == "online is not true or false"
    assert problem(STATUS, "T1", {"table_id": "T1", "online": True}) is None


def test_a_status_whose_text_field_is_a_number_is_refused() -> None:
    from controller.floor.topics import STATUS
    from controller.scoreboard.feed_shapes import problem
    assert problem(STATUS, "T1", {"table_id": "T1", "state": 5}) == "state is not text"
    assert problem(STATUS, "T1", {"table_id": "T1", "shoe": ["S1"]}) == "shoe is not text"
