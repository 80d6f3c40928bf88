"""``shoectl audit results``: what a journal's rounds yielded, checked against the journal itself
read independently here (a lab's review: no command gave a journal's frequencies, holds or
commission; a lab had to write its own script over `journal export`)."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from cli_run import dealt_journal, preset_with_decks, run
from controller.journal import Journal, JournalReader


@pytest.fixture(scope="module")
def journal(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("results")
    two_decks = preset_with_decks(where / "mini-2.toml", "minibaccarat", 2)
    # a card found face up: a simulated round (its wagers pushed, under this Rules Submission)
    return dealt_journal(where / "j.db", "--shoes", "3", "--seed", "8", "--submission", str(two_decks),
                         "--faults", "dealer-expose-at=30")


def _entries(path: Path, *kinds: str) -> list:
    with JournalReader.open(path) as reader:
        return list(reader.entries(kinds=kinds))


def test_the_figures_are_the_journals_rounds_and_money(capsys, journal: Path) -> None:
    code, out, err = run(capsys, "audit", "results", str(journal), "--json")
    assert (code, err) == (0, "")
    [rep] = json.loads(out)["rules"]
    results = _entries(journal, "round_result")
    normal = [e.payload for e in results if e.payload.get("kind", "normal") == "normal"]
    assert rep["rounds"] == len(normal) > 0 and rep["shoes"] == 3
    assert rep["simulated_rounds"] == sum(e.payload.get("kind") == "simulated" for e in results) >= 1
    assert rep["cards_dealt"] == sum(p["cards_used"] for p in normal)
    outcomes = Counter(p["outcome"] for p in normal)
    for side in ("player", "banker", "tie"):
        assert rep["outcomes"][side]["value"] == pytest.approx(outcomes[side] / len(normal))
        low, high = rep["outcomes"][side]["ci95"]
        assert low <= rep["outcomes"][side]["value"] <= high
    assert rep["outcomes"]["player_pair"]["value"] == pytest.approx(sum(p["player_pair"] for p in normal) / len(normal))
    # the exact figures are the published ones (REFERENCE.md; a 2-deck shoe: the odds of 2 decks)
    code, odds, _ = run(capsys, "odds", "--submission", str(journal.parent / "mini-2.toml"), "--json")
    assert code == 0
    assert rep["outcomes"]["tie"]["exact"] == pytest.approx(json.loads(odds)["outcomes"]["tie"])

    settled = [e.payload for e in _entries(journal, "settlement")]
    returned = [e.payload for e in _entries(journal, "wager_returned")]
    for kind in {p["kind"] for p in settled + returned}:
        mine = [p for p in settled if p["kind"] == kind]
        money = rep["money"][kind]
        staked, net = sum(p["amount"] for p in mine), sum(p["net"] for p in mine)
        assert (money["settled"], money["staked"], money["players_net"]) == (len(mine), staked, net)
        assert money["commission"] == sum(p.get("commission") or 0 for p in mine)
        assert (money["won"], money["lost"], money["pushed"]) == tuple(
            sum(p["result"] == r for p in mine) for r in ("win", "lose", "push"))
        assert money["hold"] == (pytest.approx(-net / staked) if staked else None)
        assert (money["returned"], money["returned_amount"]) == (
            sum(p["kind"] == kind for p in returned), sum(p["amount"] for p in returned if p["kind"] == kind))
    total = rep["money_total"]
    assert (total["settled"], total["staked"], total["players_net"]) == (
        len(settled), sum(p["amount"] for p in settled), sum(p["net"] for p in settled))
    assert total["commission"] == rep["money"]["banker"]["commission"] > 0

    code, text, _ = run(capsys, "audit", "results", str(journal))
    lines = text.splitlines()
    assert code == 0 and lines[0].startswith("Minibaccarat, ") and "(punto-banco, 2 decks; " in lines[0]
    assert ": 3 shoes, " in lines[0] and " 1 simulated, " in lines[0]
    assert any(line.startswith("total ") for line in lines) and any(line.startswith("tie ") for line in lines)


def test_a_journal_without_rounds_or_not_a_journal_is_one_line_exit_2(capsys, tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    with Journal.open(empty, table_id="T1"):
        pass
    not_one = tmp_path / "notes.txt"
    not_one.write_text("not a journal\n")
    for path, says in ((empty, "no round decided under a journaled Rules Submission"), (not_one, "not")):
        code, out, err = run(capsys, "audit", "results", str(path))
        errors = [line for line in err.splitlines() if ": error: " in line]  # an empty journal is warned of too
        assert (code, out) == (2, "") and len(errors) == 1 and says in errors[0], err


def test_21_baccarat_bonus_wagers_are_figured_over_the_rounds_their_cards_were_dealt(capsys, tmp_path: Path) -> None:
    journal = dealt_journal(tmp_path / "t21.db", "--submission", "21-baccarat", "--rounds", "30", "--seed", "3")
    code, out, _ = run(capsys, "audit", "results", str(journal), "--json")
    [rep] = json.loads(out)["rules"]
    assert code == 0 and rep["game"] == "21-baccarat" and rep["rounds"] == 30
    results = [e.payload for e in _entries(journal, "round_result")]
    in_play = [p for p in results if p.get("bonus_in_play")]
    assert in_play and "player_bonus" in rep["wagers_per_unit"]
    # each Bonus rank's frequency over those rounds, beside the exact figure (a lab's review)
    for side in ("player", "banker"):
        pairs = sum(p[side]["bonus_rank"] == "pair" for p in in_play)
        figure = rep["outcomes"][f"{side}_bonus:pair"]
        assert figure["value"] == pytest.approx(pairs / len(in_play)) and 0.1 < figure["exact"] < 0.2
    assert "player_pair" not in rep["outcomes"]  # 21 Baccarat has no pair wagers


def test_a_void_rounds_wagers_are_returned_not_settled(capsys, tmp_path: Path) -> None:
    """A review of this command: a void round settles each wager as a push, and they were counted
    as settled and pushed, diluting every hold; a void round decides no wager."""
    from controller.journal import Record
    from controller.roles import Role
    from tests.table.bench import Bench

    b = Bench()
    b.open_and_cut()
    b.play_round([(1, "player", 2500), (2, "banker", 1000)])  # a round decided: both settled
    b.auto_deal = False
    b.op("wager", Role.DEALER, seat=3, kind="tie", amount=500)
    b.op("no_more_bets", Role.DEALER)
    b.draw()
    b.draw()
    b.op("void_round")
    path = tmp_path / "void.db"
    with Journal.open(path, table_id="T1") as journal:
        journal.append("submission", {"source": "preset:minibaccarat", **b.sub.to_dict()})
        journal.append_batch(Record(r.kind, r.payload, r.shoe, r.round) for r in b.records)
    code, out, err = run(capsys, "audit", "results", str(path), "--json")
    assert code == 0, err
    [rep] = json.loads(out)["rules"]
    assert (rep["rounds"], rep["void_rounds"]) == (1, 1)
    tie = rep["money"]["tie"]
    assert (tie["settled"], tie["staked"], tie["pushed"], tie["returned"], tie["returned_amount"]) == (0, 0, 0, 1, 500)
    assert rep["money"]["player"]["settled"] == rep["money"]["banker"]["settled"] == 1
    assert rep["money_total"]["settled"] == 2 and rep["money_total"]["returned"] == 1
    # one round decided: a hold per unit has no spread, so no interval and no verdict (a review
    # read "NO" for every wager of a two-round journal, an interval of no width)
    player = rep["wagers_per_unit"]["player"]
    assert player["ci95"] is None and player["agrees"] is None and player["exact"] > 0
    assert rep["outcomes"]["player"]["ci95"][0] < rep["outcomes"]["player"]["ci95"][1]
    code, text, _ = run(capsys, "audit", "results", str(path))
    assert code == 0 and ": 1 shoe, 1 round, 1 void, " in text.splitlines()[0]
    assert [line for line in text.splitlines() if line.startswith("player ")][1].split()[2:4] == ["-", "(no"]


def test_a_house_money_payout_placed_on_a_wager_is_not_counted_as_staked(capsys, tmp_path: Path) -> None:
    """A money review: a House Money payout the dealer places on the original wager (629a.8(c)(3)(i))
    "is winnings moved on the layout, not a wager" (docs/rules-submission.md), and `audit results`
    counted it as staked: the Player's staked and the total passed what the players wagered, and
    every hold was off. It is counted apart (`house_money_riding`); staked is the `wager` records'
    sum; the hold is over both, what was at risk."""
    from controller.roles import Role

    b = _midibaccarat_round_with_house_money_placed()
    b.op("continue", Role.DEALER)
    while b.core.state == "squeeze":
        b.op("reveal", Role.DEALER)
    path = tmp_path / "house-money.db"
    rep = _results_of(capsys, b, path, "midibaccarat")
    player = rep["money"]["player"]
    [settled] = [s for s in b.of("settlement") if s["kind"] == "player"]
    assert settled["amount"] == 130
    assert (player["staked"], player["house_money_riding"], player["players_net"]) == (100, 30, settled["net"])
    assert player["hold"] == pytest.approx(-settled["net"] / 130)
    assert rep["money_total"]["staked"] == sum(w["amount"] for w in b.of("wager")) == 110
    code, text, _ = run(capsys, "audit", "results", str(path))
    assert code == 0 and "House Money payouts placed on wagers and decided with them: 0.30 (not in staked" in text


def test_a_voided_wager_carrying_a_house_money_payout_returns_its_stake(capsys, tmp_path: Path) -> None:
    """The same review: a void round's returned amount counted the payout placed on the wager as
    a stake returned. The House Money settlement stands (docs/assumptions.md); the Player wager's
    own 100 is returned, the 30 riding on it is said apart."""
    from controller.roles import Role
    from firmware_bridge.protocol import messages as m

    b = _midibaccarat_round_with_house_money_placed()
    b.auto_deal = False
    b.op("continue", Role.DEALER)
    b.event("shoe", m.ShoeEmpty())  # no card for the Player's third: void
    assert b.of("round_result")[-1]["kind"] == "void"
    rep = _results_of(capsys, b, tmp_path / "void.db", "midibaccarat")
    player = rep["money"]["player"]
    assert (player["settled"], player["returned"], player["returned_amount"], player["staked"]) == (0, 1, 100, 0)
    assert rep["money"]["house_money"]["settled"] == 1  # its settlement stands


def _midibaccarat_round_with_house_money_placed():  # noqa: ANN202 - a tests.table.bench.Bench
    """A Midibaccarat bench whose first round's House Money wager won (seat 2: 10 on House Money,
    100 on the Player) and whose 30 payout the dealer placed on the Player wager, at the third
    cards (the Player's pair of 5s, Banker 2: both draw)."""
    from controller.roles import Role
    from controller.rules.cards import parse_cards
    from tests.table.bench import Bench, stack_with

    b = Bench("midibaccarat", stack=stack_with(parse_cards("5S,KH,5D,2C,KD,KC"), decks=6))
    b.open_and_cut(seats=(1, 2, 3, 4))
    b.play_round([(2, "player", 100), (2, "house_money", 10)])
    b.op("reveal", Role.DEALER)
    b.op("reveal", Role.DEALER)
    b.op("house_money_add", Role.DEALER, seat=2, side="player", amount=30)
    return b


def _results_of(capsys, b, path: Path, preset: str) -> dict:
    """``audit results --json`` of a journal holding ``b``'s records under ``preset``."""
    from controller.journal import Record

    with Journal.open(path, table_id="T1") as journal:
        journal.append("submission", {"source": f"preset:{preset}", **b.sub.to_dict()})
        journal.append_batch(Record(r.kind, r.payload, r.shoe, r.round) for r in b.records)
    code, out, err = run(capsys, "audit", "results", str(path), "--json")
    assert code == 0, err
    [rep] = json.loads(out)["rules"]
    return rep


def test_a_journal_ending_inside_a_round_keeps_what_the_round_settled(capsys, tmp_path: Path) -> None:
    """`audit results` (controller/audit/results.py: "a round the journal ends in: what it settled
    (House Money) stands"): a journal that ends after the House Money Wager was settled and before
    the round's result still counts that settlement (a mutation review: dropping it failed no test);
    the Player wager, undecided, is neither settled nor returned."""
    b = _midibaccarat_round_with_house_money_placed()
    assert not b.of("round_result") and [s["kind"] for s in b.of("settlement")] == ["house_money"]
    rep = _results_of(capsys, b, tmp_path / "ends-inside.db", "midibaccarat")
    [settled] = b.of("settlement")
    house_money = rep["money"]["house_money"]
    assert (house_money["settled"], house_money["staked"], house_money["players_net"]) == (1, 10, settled["net"])
    assert "player" not in rep["money"] or rep["money"]["player"]["settled"] == 0


def test_rules_put_in_force_again_count_in_their_first_group(capsys, tmp_path: Path) -> None:
    """`audit results` gives "one ``RulesResults`` per Rules Submission the rounds were dealt under
    (a floorperson's ``set_submission`` starts another)": rules set again after others are the same
    Rules Submission, their rounds counted in its one group, not a second (a mutation review)."""
    from controller.journal import Record
    from controller.rules.submission import load_preset
    from round_records import round_records

    def rules(preset: str) -> Record:
        return Record("submission", {"source": f"preset:{preset}", **load_preset(preset).to_dict()})

    path = tmp_path / "again.db"
    with Journal.open(path, table_id="T1") as journal:
        for shoe, preset, rounds in (("S1", "minibaccarat", 2), ("S2", "ez-baccarat", 1), ("S3", "minibaccarat", 3)):
            journal.append_batch([rules(preset), Record("shoe_start", {"decks": 8, "shoe": shoe}, shoe=shoe)])
            for n in range(1, rounds + 1):
                journal.append_batch(round_records(shoe, n))
    code, out, err = run(capsys, "audit", "results", str(path), "--json")
    assert code == 0, err
    groups = json.loads(out)["rules"]
    assert [(g["game"], g["rounds"], g["shoes"]) for g in groups] == [("punto-banco", 5, 2), ("ez-baccarat", 1, 1)]


def test_a_returned_wager_carrying_a_house_money_payout_returns_only_its_stake(capsys, tmp_path: Path) -> None:
    """`audit results` (controller/audit/results.py: a House Money payout placed on a wager "is
    winnings moved on the layout, counted apart ... and left out of ``returned_amount``"): a
    journal whose Player wager, with the 30 payout riding on it, is given back by a
    ``wager_returned`` record (a table returns wagers so when a shoe is lost; the record's amount,
    as a settlement's, is the wager with what rides on it: 130) says 100 returned, not 130 (a
    mutation review: counting the payout as returned failed no test)."""
    from controller.journal import Record
    from controller.rules.model import WagerKind
    from controller.rules.wagers import Result, Settlement

    b = _midibaccarat_round_with_house_money_placed()
    [added] = [r for r in b.records if r.kind == "house_money_added"]
    returned = Record("wager_returned", Settlement(2, WagerKind.PLAYER, 130, Result.PUSH).to_json(), added.shoe, added.round)
    path = tmp_path / "returned.db"
    with Journal.open(path, table_id="T1") as journal:
        journal.append("submission", {"source": "preset:midibaccarat", **b.sub.to_dict()})
        journal.append_batch([*(Record(r.kind, r.payload, r.shoe, r.round) for r in b.records), returned])
    code, out, err = run(capsys, "audit", "results", str(path), "--json")
    assert code == 0, err
    [rep] = json.loads(out)["rules"]
    player = rep["money"]["player"]
    assert (player["settled"], player["returned"], player["returned_amount"], player["staked"]) == (0, 1, 100, 0)


def test_a_simulated_round_s_wagers_are_returned_not_settled_as_pushes(capsys, tmp_path: Path) -> None:
    """`audit results` counts "the pushes a void or simulated round settles its wagers with, which
    no round decided" as returned (627a.13(d): a round whose first card was found face up is a
    simulated round "in which wagers may not be accepted"; this Rules Submission returns them): the
    Player wager of 100 is returned, not settled and pushed (a mutation review: counting only a void
    round's pushes as returned failed no test)."""
    import dataclasses

    from controller.rules.cards import parse_cards
    from controller.rules.submission import load_preset
    from tests.table.bench import Bench, stack_with

    sub = dataclasses.replace(load_preset("minibaccarat"), simulated_round_wagers="return")
    b = Bench(stack=stack_with(parse_cards("9S,AS,2S,3S,4S,5S,6S,7S"), decks=8), submission=sub)
    b.open_and_cut()
    b.face_up_at.add(b.drawn + 1)  # the round's first card found face up: 627a.13(d)
    b.play_round([(1, "player", 100)])
    assert b.of("round_result")[-1]["kind"] == "simulated" and [s["result"] for s in b.of("settlement")] == ["push"]
    player = _results_of(capsys, b, tmp_path / "simulated.db", "minibaccarat")["money"]["player"]
    assert (player["settled"], player["pushed"], player["returned"], player["returned_amount"]) == (0, 0, 1, 100)


@pytest.mark.parametrize("shoes, per_batch", [(3, 1), (30, 1), (61, 2)])
def test_the_intervals_are_over_batches_of_whole_shoes_in_journal_order(shoes: int, per_batch: int) -> None:
    """`audit results` tallies "each shoe a batch of its own, so the 95 % intervals are over whole
    shoes: a shoe's rounds are not independent" (controller/audit/results.py), grouped as a
    simulation's are (about 30 batches: 61 shoes in batches of 2, the last shoe in a batch of its
    own): every batch holds the rounds of whole consecutive shoes (a mutation review: batches cut
    otherwise failed no test)."""
    from collections import Counter

    from controller.audit.results import _batched
    from controller.simulation_shoe import Tally

    tallies = {f"T1-S{n:04d}": Tally(shoes=1, rounds=n + 1, facts=Counter({f"fact-{n}": n + 1}))
               for n in range(shoes)}
    total = _batched(tallies)
    groups = [list(range(start, min(start + per_batch, shoes))) for start in range(0, shoes, per_batch)]
    assert total.batches == [(sum(n + 1 for n in g), Counter({f"fact-{n}": n + 1 for n in g})) for g in groups]
    assert (total.shoes, total.rounds) == (shoes, sum(n + 1 for n in range(shoes)))


def test_a_journal_written_before_tables_journaled_their_rules_is_counted_under_the_rules_named(
        capsys, journal: Path, tmp_path: Path) -> None:
    """tests/data/journal-v1.sql (the first evening's shoectl, Minibaccarat) names no rules: `audit
    results` said only "no round decided under a journaled Rules Submission", with no way to name
    them (an upgrade review), as `audit decisions --submission` can. Given them, its 82 rounds are
    counted; given them for a journal that names its own, they are not used, and said so."""
    import sqlite3

    path = tmp_path / "v1.db"
    conn = sqlite3.connect(path)
    conn.executescript((Path(__file__).parent.parent / "data" / "journal-v1.sql").read_text(encoding="utf-8"))
    conn.close()
    code, out, err = run(capsys, "audit", "results", str(path))
    assert (code, out) == (2, "") and "name them with --submission" in err
    code, out, err = run(capsys, "audit", "results", str(path), "--submission", "minibaccarat", "--json")
    [rep] = json.loads(out)["rules"]
    assert code == 0 and "not used" not in err
    assert (rep["submission"], rep["rounds"] + rep["simulated_rounds"] + rep["void_rounds"]) == ("preset:minibaccarat", 82)
    code, named, err = run(capsys, "audit", "results", str(journal), "--submission", "ez-baccarat", "--json")
    assert code == 0 and "--submission ez-baccarat: not used: the journal names its rules before its first round" in err
    assert named == run(capsys, "audit", "results", str(journal), "--json")[1]


def test_the_rules_named_and_the_same_rules_journaled_later_are_one_rules_submission(capsys, tmp_path: Path) -> None:
    """A journal whose submission record comes after its first round, given the same rules: the
    rounds before it and after it are one Rules Submission's (a review: two groups, the shoe counted
    in both, the intervals split); the rules named were used (no warning)."""
    import shutil

    from tests.tampering import rechain, renumber, rewrite, rows

    journal = dealt_journal(tmp_path / "src.db", "--rounds", "3", "--seed", "1", "--no-edge-monitor")
    path = tmp_path / "late.db"
    shutil.copy(journal, path)
    rs = [list(r) for r in rows(path)]
    sub = next(r for r in rs if r[2] == "submission")
    rs.remove(sub)
    at = next(i for i, r in enumerate(rs) if r[2] == "round_result" and r[5] == 1)
    sub[4] = rs[at][4]
    rs.insert(at + 2, sub)
    rewrite(path, rechain([tuple(r) for r in renumber(rs)]))
    whole = json.loads(run(capsys, "audit", "results", str(journal), "--json")[1])["rules"]
    code, out, err = run(capsys, "audit", "results", str(path), "--submission", "minibaccarat", "--json")
    assert code == 0 and "not used" not in err, err
    assert [(r["submission"], r["shoes"], r["rounds"]) for r in json.loads(out)["rules"]] == [
        (r["submission"], r["shoes"], r["rounds"]) for r in whole]


def test_the_money_columns_stay_apart_at_the_largest_amounts_a_table_takes(capsys, tmp_path: Path) -> None:
    """A money review: the money table's columns had fixed widths and nothing between them, and
    "1,000,000,000.00" fills one (a limit may be 100,000,000,000 minor units, docs/
    rules-submission.md): 1,000,000,002.10 staked on 3 Banker wagers read as "31,000,000,002.10",
    and a signed net ran into the figure before it. Each column keeps two spaces before its widest
    cell; with small amounts the table is as it was."""
    from tests.table.bench import Bench

    most = 100_000_000_000  # minor units: 1,000,000,000.00
    b = Bench()
    b.open_and_cut()
    b.play_round([(1, "banker", most), (2, "player", most), (3, "tie", 500)])
    path = tmp_path / "large.db"
    _results_of(capsys, b, path, "minibaccarat")
    code, text, _ = run(capsys, "audit", "results", str(path))
    assert code == 0
    lines = text.splitlines()
    heading = next(i for i, line in enumerate(lines) if line.startswith("money "))
    rows = {}
    for line in lines[heading + 1:]:
        if not line.strip():
            break
        name, *cells = line.split()
        rows[name] = cells
    # settled, staked, players net, hold, commission, won/lost/pushed, returned: one word each
    assert all(len(cells) == 7 for cells in rows.values()), rows
    assert rows["banker"][:2] == ["1", "1,000,000,000.00"] and rows["player"][:2] == ["1", "1,000,000,000.00"]
    assert rows["total"][:2] == ["3", "2,000,000,005.00"]
    widths = {len(line) for line in lines[heading:heading + 1 + len(rows)]}
    assert len(widths) == 1, "every row as wide as the heading: the columns line up"
