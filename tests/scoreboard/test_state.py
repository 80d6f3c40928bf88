"""The scoreboard's state model (controller.scoreboard.state.TableView) on journals written by real
emulated runs of `shoectl run`: fed one entry at a time, after every round its roads are those of
`shoectl roadmap --json` and its last round that of `shoectl journal replay --json`, both run on a
journal holding exactly the entries fed so far; its state in words follows the table's own."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.journal import Journal, JournalReader, Record, kinds
from controller.journal.errors import JournalContentError
from controller.rules.submission import load_preset, load_submission
from controller.scoreboard.labels import LANGUAGES, STATE_WORDS, labels
from controller.scoreboard.state import STATES, TableView
from cli_run import run
from tests.scoreboard.runs import copy, shoectl_run

# not on a public page: money, who did what, and when to the microsecond
MONEY = ("wagers", "settlements", "house_money_added", "events", "started", "decided")


def entries_of(journal: Path) -> list[Any]:
    with JournalReader.open(journal) as r:
        return list(r.entries())


@pytest.fixture(scope="module")
def two_shoes(tmp_path_factory) -> list[Any]:
    """Punto Banco from one deck: two shoes (about 16 rounds) and the next one shuffled; a shoe
    jam the automated floorperson clears in the first shoe."""
    tmp = tmp_path_factory.mktemp("two-shoes")
    (tmp / "one-deck.toml").write_text('[submission]\ngame = "punto-banco"\ndecks = 1\n')
    return entries_of(shoectl_run(tmp, "--submission", str(tmp / "one-deck.toml"), "--shoes", "2", "--seed", "2",
                                  "--faults", "jam-at=20"))


@pytest.fixture(scope="module")
def ez_baccarat(tmp_path_factory) -> Path:
    """30 rounds of EZ Baccarat; seed 8 deals two Dragon 7s and a Panda 8."""
    return shoectl_run(tmp_path_factory.mktemp("ez"), "--submission", "ez-baccarat", "--rounds", "30", "--seed", "8")


@pytest.fixture(scope="module")
def baccarat21(tmp_path_factory) -> Path:
    return shoectl_run(tmp_path_factory.mktemp("b21"), "--submission", "21-baccarat", "--rounds", "12", "--seed", "3")


def board_round(doc: dict[str, Any]) -> dict[str, Any]:
    """A replayed round as the board shows it: without the money and the document type, and each
    card without its entry, time and device event (which a public page does not show)."""
    shown = {k: v for k, v in doc.items() if k != "type" and k not in MONEY}
    shown["cards"] = [{k: c[k] for k in ("card", "to", "position")} for c in doc["cards"]]
    return shown


def round_ends(entry: Any) -> bool:
    return entry.kind == kinds.DISCARD_RACK or (entry.kind == kinds.ROUND_RESULT
                                               and entry.payload.get("kind") == "void")


def check_every_round(capsys, tmp: Path, entries: list[Any]) -> list[dict[str, Any]]:
    """Feed ``entries`` to a view one by one and to a journal of their own; after each round and
    each new shoe, the view against `shoectl roadmap --json` and `shoectl journal replay --json`
    of that journal. Returns the view's states at those points."""
    view = TableView()
    states = []
    prefix = tmp / "prefix.db"
    pending: list[Record] = []
    for e in entries:
        view.apply(e)
        pending.append(copy(e))
        if not (round_ends(e) or e.kind == kinds.SHOE_START):
            continue
        # The journal now holds exactly the entries fed to the view (closed: as a finished
        # journal, its -wal file checkpointed away).
        with Journal.open(prefix, table_id=entries[0].table_id) as journal:
            journal.append_batch(pending)
        pending = []
        state = view.to_json()
        assert state["version"] == e.seq and state["shoe"] is not None
        code, out, err = run(capsys, "roadmap", str(prefix), "--json", "--shoe", state["shoe"])
        assert code == 0, err
        assert state["roads"] == json.loads(out)
        code, out, err = run(capsys, "journal", "replay", str(prefix), "--json", "--shoe", state["shoe"])
        assert code == 0, err
        rounds = [d for d in map(json.loads, out.splitlines()) if d["type"] == "round"]
        assert state["last_round"] == (board_round(rounds[-1]) if rounds else None)
        normal = [d for d in rounds if d["kind"] == "normal"]
        so_far = state["shoe_so_far"]
        assert so_far["rounds"] == len(normal) == len(state["roads"]["bead_plate"])
        assert so_far["not_on_roads"] == len(rounds) - len(normal)
        for side in ("banker", "player", "tie"):
            assert so_far[side] == sum(d["outcome"] == side for d in normal)
            assert so_far["percent"][side] == (round(100 * so_far[side] / len(normal), 1) if normal else 0)
        for key, flag in (("naturals", "natural"), ("player_pairs", "player_pair"),
                          ("banker_pairs", "banker_pair"), ("dragon7", "dragon7"), ("panda8", "panda8")):
            assert so_far[key] == sum(bool(d.get(flag)) for d in normal)
        assert state["round"] == (rounds[-1]["round"] if rounds else 0)
        states.append(state)
    json.dumps(states)  # plain JSON all through
    return states


def states_after_rounds(capsys, journal: Path) -> list[dict[str, Any]]:
    """The view's state after each round of ``journal``; each last round is the round of
    `shoectl journal replay --json` (a round's document does not change with later entries),
    the roads at the end those of `shoectl roadmap --json`."""
    view, states = TableView(), []
    for e in entries_of(journal):
        view.apply(e)
        if round_ends(e):
            states.append(view.to_json())
    code, out, err = run(capsys, "journal", "replay", str(journal), "--json")
    assert code == 0, err
    rounds = [d for d in map(json.loads, out.splitlines()) if d["type"] == "round"]
    assert [s["last_round"] for s in states] == [board_round(d) for d in rounds]
    code, out, err = run(capsys, "roadmap", str(journal), "--json")
    assert code == 0, err
    assert states[-1]["roads"] == json.loads(out)
    return states


def test_after_every_round_the_view_is_roadmap_and_replay(capsys, tmp_path: Path, two_shoes: list[Any]) -> None:
    states = check_every_round(capsys, tmp_path, two_shoes)
    shoes = [e.payload["shoe"] for e in two_shoes if e.kind == kinds.SHOE_START]
    assert len(shoes) == 3 and len(states) == len(shoes) + sum(map(round_ends, two_shoes))
    assert [s["table"] for s in states] == ["T1"] * len(states)
    assert all(a["version"] < b["version"] for a, b in zip(states, states[1:]))


def test_a_new_shoe_resets_the_roads_and_the_counts(capsys, tmp_path: Path, two_shoes: list[Any]) -> None:
    view = TableView()
    for e in two_shoes:
        before = view.to_json()
        view.apply(e)
        if e.kind == kinds.SHOE_START and before["shoe"] is not None:
            after = view.to_json()
            assert before["shoe_so_far"]["rounds"] > 0 and before["roads"]["big_road"]
            assert after["shoe"] == e.payload["shoe"] != before["shoe"]
            assert after["round"] == 0 and after["last_round"] is None and after["last_round_facts"] == []
            assert after["roads"] == {"bead_plate": [], "bead_pairs": [], "big_road": [], "big_eye_boy": [], "small_road": [],
                                      "cockroach_pig": []}
            assert after["shoe_so_far"]["rounds"] == 0 and after["shoe_so_far"]["percent"]["banker"] == 0
            assert after["state"]["name"] == "shuffling"


def test_the_state_is_the_tables_own(two_shoes: list[Any], ez_baccarat: Path) -> None:
    """Each operator command and refusal journals the state the table was in: the view, fed the
    entries before it, says the same."""
    checked = set()
    for entries in (two_shoes, entries_of(ez_baccarat)):
        view = TableView()
        for e in entries:
            if e.kind in (kinds.OPERATOR, kinds.REFUSED):
                assert view.to_json()["state"]["name"] == e.payload["state"], e
                checked.add(e.payload["state"])
            view.apply(e)
    assert {"closed", "cutting", "ready_to_load", "betting"} <= checked


def test_after_the_last_round_of_a_shoe_the_board_does_not_invite_bets(two_shoes: list[Any]) -> None:
    """A review of the scoreboard: the round the cover card came out in ended with "Place your
    bets" on the board (and stayed so at a table whose floorperson had not reshuffled yet); the
    table deals no round after it (681a.7(d)), so the board says the shoe is being reshuffled."""
    view, cover_out, after = TableView(), False, []
    for e in two_shoes:
        view.apply(e)
        if e.kind == kinds.COVER_CARD:
            cover_out = True
        elif e.kind == kinds.SHOE_START:
            cover_out = False
        if e.kind == kinds.DISCARD_RACK:
            after.append((cover_out, view.to_json()["state"]["name"]))
    assert (True, "shuffling") in after and (False, "betting") in after
    assert all(state != "betting" for out, state in after if out)


def test_a_fault_shows_its_reason_until_it_clears(two_shoes: list[Any]) -> None:
    view = TableView()
    seen = []
    for e in two_shoes:
        view.apply(e)
        state = view.to_json()["state"]
        if e.kind == kinds.FAULT:
            assert state["name"] == "fault" and state["text"] == STATE_WORDS["fault"]["en"]
            assert state["reason"] == e.payload["reason"] == "shoe card jam (SHOE_EXIT)"
            assert state["faults"] == [{"fault": "jam:shoe", "reason": e.payload["reason"]}]
            seen.append(e.kind)
        elif e.kind == kinds.RESUMED:
            assert state["name"] == e.payload["state"] and state["reason"] is None and state["faults"] == []
            seen.append(e.kind)
    assert seen == [kinds.FAULT, kinds.RESUMED]


def test_states_in_words_round_by_round(ez_baccarat: Path) -> None:
    view = TableView()
    names = []
    for e in entries_of(ez_baccarat):
        view.apply(e)
        name = view.to_json()["state"]["name"]
        if not names or names[-1] != name:
            names.append(name)
    assert names[:8] == ["closed", "shuffling", "cutting", "ready_to_load", "loading", "burning", "betting",
                         "no_more_bets"]
    assert names[8:11] == ["dealing", "betting", "no_more_bets"]
    assert set(names) <= set(STATES)


def test_ez_baccarat_dragon7_and_panda8(capsys, ez_baccarat: Path) -> None:
    states = states_after_rounds(capsys, ez_baccarat)
    rounds = [s["last_round"] for s in states if s["last_round"]]
    assert all("dragon7" in r and "panda8" in r for r in rounds)
    last = states[-1]
    assert last["game"] == "ez-baccarat"
    assert last["shoe_so_far"]["dragon7"] >= 1 and last["shoe_so_far"]["panda8"] >= 1
    facts = [[f["key"] for f in s["last_round_facts"]] for s in states]
    assert any("dragon7" in f for f in facts) and any("panda8" in f for f in facts)
    for s in states:
        r = s["last_round"]
        if r is not None:
            assert [f["key"] for f in s["last_round_facts"] if f["key"] in ("dragon7", "panda8")] == \
                [k for k in ("dragon7", "panda8") if r[k]]


def test_21_baccarat_bonus_cards(capsys, baccarat21: Path) -> None:
    states = states_after_rounds(capsys, baccarat21)
    assert states[-1]["game"] == "21-baccarat"
    bonus_only = 0
    for s in states:
        r = s["last_round"]
        if r is None or r["kind"] == "void":
            continue
        assert "bonus_cards" in r["player"] and "bonus_rank" in r["banker"]
        cards = [f for f in s["last_round_facts"] if f["key"] == "bonus_card"]
        assert [(f["card"], f["to"]) for f in cards] == [(c["card"], c["to"]) for c in r["cards"]
                                                         if c["to"].endswith("_bonus")]
        bonus_only += len(cards)
    assert bonus_only >= 1


def test_labels_in_english_and_chinese(two_shoes: list[Any]) -> None:
    view = TableView.from_entries(two_shoes)
    en, zh = view.to_json("en"), view.to_json("zh")
    assert (zh["labels"]["banker"], zh["labels"]["player"], zh["labels"]["tie"]) == ("庄", "闲", "和")
    assert (en["labels"]["banker"], en["labels"]["player"], en["labels"]["tie"]) == ("Banker", "Player", "Tie")
    assert zh["labels"]["big_road"] == "大路" and zh["labels"]["ask_banker"] == "庄问路"
    assert zh["state"]["text"] == STATE_WORDS[zh["state"]["name"]]["zh"] != en["state"]["text"]
    assert {k: v for k, v in zh.items() if k not in ("labels", "state", "last_round_facts", "rules_terms")} == \
        {k: v for k, v in en.items() if k not in ("labels", "state", "last_round_facts", "rules_terms")}
    assert set(labels("en")) == set(labels("zh")) and all(labels(lang)[f"state.{s}"] for lang in LANGUAGES
                                                          for s in STATES)
    assert all(v.strip() for lang in LANGUAGES for v in labels(lang).values())
    with pytest.raises(ValueError, match="no labels in 'fr': the languages are en, zh"):
        view.to_json("fr")


def test_the_rules_submission_in_force(tmp_path: Path) -> None:
    """The Rules Submission of a ``submission`` record (what a floorperson's set_submission
    journals): its paytable, commission and offered wagers."""
    sub = load_preset("ez-baccarat").to_dict()
    path = tmp_path / "submission.db"
    with Journal.open(path, table_id="T9") as j:
        j.append_batch([Record(kinds.SUBMISSION, sub), Record(kinds.SHOE_START, {"shoe": "S1", "decks": 8}, shoe="S1")])
    with JournalReader.open(path) as r:
        state = TableView.from_entries(r.entries()).to_json()
    assert state["table"] == "T9" and state["game"] == "ez-baccarat" and state["version"] == 2
    rules = state["rules"]
    assert rules["paytable"]["dragon7"] == "40:1" and rules["paytable"]["tie"] == "8:1"
    assert rules["commission"] == "0" and rules["player_commission"] is None
    assert rules["offered"] == sub["wagers"]["offered"] and rules["decks"] == 8
    assert rules["bonus_paytable"] is None and state["limits"] is None


def test_the_limits_of_the_rules_submission_in_force(tmp_path: Path) -> None:
    """A ``submission`` record with ``[limits]``: each wager's min and max in minor units and as
    text in major units, ``table_max`` last, a label for each in both languages; a later record
    without limits takes them away (null: "ask the dealer")."""
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "minibaccarat-limits.toml"
    path = tmp_path / "limits.db"
    limits = view_after_submission(path, load_submission(example).to_dict()).to_json()["limits"]
    assert list(limits) == ["player", "banker", "tie", "player_pair", "banker_pair", "table_max"]
    assert limits["banker"] == {"min": 2500, "max": 500000, "text": "25.00 \u2013 5,000.00"}
    assert limits["tie"]["text"] == "5.00 \u2013 500.00"
    assert limits["table_max"] == {"max": 750000, "text": "7,500.00"}
    assert json.loads(json.dumps(limits)) == limits
    for lang in LANGUAGES:
        assert all(labels(lang).get(key) for key in limits), lang
    assert view_after_submission(path, load_preset("minibaccarat").to_dict()).to_json()["limits"] is None


def view_after_submission(path: Path, submission: dict[str, Any]) -> TableView:
    """The view of the journal at ``path`` once a ``submission`` record is appended to it."""
    with Journal.open(path, table_id="T1") as j:
        j.append(kinds.SUBMISSION, submission)
    with JournalReader.open(path) as r:
        return TableView.from_entries(r.entries())


@pytest.mark.parametrize("preset", ["minibaccarat", "midibaccarat", "ez-baccarat", "21-baccarat"])
def test_every_word_of_the_rules_has_a_label(tmp_path: Path, preset: str) -> None:
    """The page prints labels only: each wager of the paytable, each Bonus rank, in both languages."""
    rules = view_after_submission(tmp_path / "submission.db", load_preset(preset).to_dict()).to_json()["rules"]
    assert rules["paytable"]
    for lang in LANGUAGES:
        words = labels(lang)
        assert all(wager in words for wager in [*rules["paytable"], *rules["offered"]])
        assert all(f"rank.{rank}" in words for rank in rules["bonus_paytable"] or {})
    if preset == "21-baccarat":
        assert rules["bonus_paytable"] and rules["player_commission"] is not None


def test_an_empty_view() -> None:
    state = TableView("T3").to_json("zh")
    assert state["table"] == "T3" and state["version"] == 0 and state["shoe"] is None and state["round"] == 0
    assert state["state"] == {"name": "closed", "text": STATE_WORDS["closed"]["zh"], "reason": None, "faults": []}
    assert state["ask"] == {side: {"big_eye_boy": None, "small_road": None, "cockroach_pig": None}
                            for side in ("banker", "player")}
    assert state["rules"] is None and state["last_round"] is None and state["game"] is None


def test_a_malformed_record_is_one_line_naming_the_entry(tmp_path: Path) -> None:
    """A record without what its kind needs (a forger's, or a journal read unchecked) is refused
    as replay refuses it, and the view stays as it was."""
    path = tmp_path / "forged.db"
    with Journal.open(path, table_id="T1") as j:
        j.append_batch([Record(kinds.SHOE_START, {"shoe": "S1", "decks": 8}, shoe="S1"),
                        Record(kinds.FAULT, {"fault": "jam:shoe"}, shoe="S1")])
    with JournalReader.open(path) as r:
        first, forged = list(r.entries())
    view = TableView.from_entries([first])
    before = view.to_json()
    with pytest.raises(JournalContentError, match=r"^entry 2 \(fault\): malformed payload: no field 'reason'$"):
        view.apply(forged)
    assert view.to_json() == before


def test_a_new_dealer_a_squeeze_closing_and_a_count_fault(tmp_path: Path) -> None:
    """A new dealer's burn, a squeeze, a count fault with its problem, a closed table: the state
    after each record of a journal made by hand."""
    shoe = "S1"
    steps = [
        (Record(kinds.SHOE_START, {"shoe": shoe, "decks": 8}, shoe=shoe), "shuffling"),
        (Record(kinds.CUT_SKIPPED, {"clause": "681a.5(h)"}, shoe=shoe), "loading"),
        (Record(kinds.SHOE_LOADED, {"cards": 416}, shoe=shoe), "burning"),
        (Record(kinds.BURN, {"card": "3S", "position": 1, "dealer": None}, shoe=shoe), "betting"),
        (Record(kinds.DEALER, {"dealer": "D2"}, shoe=shoe), "burning"),
        (Record(kinds.BURN, {"card": "4S", "position": 2, "dealer": "D2"}, shoe=shoe), "betting"),
        (Record(kinds.ROUND_START, {"round": 1, "kind": "normal", "wagers": []}, shoe=shoe, round=1), "no_more_bets"),
        (Record(kinds.SQUEEZE, {"hand": "player", "seat": 3}, shoe=shoe, round=1), "squeeze"),
        (Record(kinds.REVEALED, {"hand": "player", "by": "seat 3"}, shoe=shoe, round=1), "dealing"),
        (Record(kinds.OPERATOR, {"command": "close", "args": {}, "operator": "F1", "operator_role": "floorperson",
                                 "state": "betting"}), "closed"),
        (Record(kinds.SHOE_START, {"shoe": "S2", "decks": 8}, shoe="S2"), "shuffling"),
        (Record(kinds.COUNT_FAULT, {"problem": "2 cards missing", "counted": 414, "expected": 416}, shoe="S2"),
         "count_fault"),
    ]
    path = tmp_path / "by-hand.db"
    with Journal.open(path, table_id="T1") as j:
        j.append_batch([record for record, _ in steps])
    view = TableView()
    with JournalReader.open(path) as r:
        for e, (_, expected) in zip(r.entries(), steps):
            view.apply(e)
            assert view.to_json()["state"]["name"] == expected, e.kind
    state = view.to_json("zh")["state"]
    assert state == {"name": "count_fault", "text": "暂停：牌数不符", "reason": "2 cards missing", "faults": []}


def test_the_state_places_every_road_cell_as_roadmaps_fold_does(two_shoes: list[Any]) -> None:
    """The page draws each cell where the state's ``placed`` says: ``roadmaps.fold``'s places of
    the roads beside them (one implementation of the dragon tails), for every state of a shoe."""
    from controller.roadmaps import fold

    view = TableView()
    for e in two_shoes:
        view.apply(e)
        if round_ends(e):
            state = view.to_json()
            assert set(state["placed"]) == {"big_road", "big_eye_boy", "small_road", "cockroach_pig"}
            for road, places in state["placed"].items():
                assert places == [[c.x, c.y] for c in fold(state["roads"][road])], road
    json.dumps(state)


@pytest.mark.parametrize("preset", ["minibaccarat", "midibaccarat", "ez-baccarat", "21-baccarat"])
def test_the_terms_beside_the_paytable_are_those_the_table_settles_by(tmp_path: Path, preset: str) -> None:
    """A money review: at a 21 Baccarat table taking 3 % of a winning Player wager the board said
    "No commission"; EZ Baccarat's Banker push on a three-card 7 and House Money's odds were not
    shown; a rate of 0.051234 read "5.12%". The terms are the record's, in each language."""
    from controller.scoreboard.terms import terms

    sub = load_preset(preset).to_dict()
    if preset == "21-baccarat":
        sub["commission"] = {**sub["commission"], "rate": "0.051234", "player_rate": "0.03"}
    view = view_after_submission(tmp_path / "submission.db", sub)
    for lang in LANGUAGES:
        words = labels(lang)
        shown = {t["key"]: (t["label"], t["text"]) for t in view.to_json(lang)["rules_terms"]}
        expected = {"minibaccarat": {"commission": (words["commission"], "5%")},
                    "midibaccarat": {"commission": (words["commission"], "5%"),
                                     "house_money_either_pair": (words["house_money_either_pair"], "3:1"),
                                     "house_money_both_pairs": (words["house_money_both_pairs"], "15:1")},
                    "ez-baccarat": {"commission": (words["commission"], words["no_commission"]),
                                    "three_card_seven": (words["banker"], words["three_card_seven_push"])},
                    "21-baccarat": {"commission": (words["banker_commission"], "5.1234%"),
                                    "player_commission": (words["player_commission"], "3%")}}[preset]
        assert shown == expected
    assert terms(None, labels("en")) == [] and TableView("T1").to_json()["rules_terms"] == []
