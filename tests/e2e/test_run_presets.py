"""A whole shoe of each game through the real path (pty, pyserial, protocol, link, table core,
journal), the journal then checked against the regulated procedure, clause by clause."""
from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from controller.journal import JournalReader
from controller.rules.submission import load_preset

from .journal_checks import check_integrity

SHOECTL = [sys.executable, "-m", "controller.cli.main"]


def played(tmp: Path, preset: str, seed: int = 3) -> list:
    journal = tmp / "journal.db"
    proc = subprocess.run([*SHOECTL, "run", "--submission", preset, "--journal", str(journal), "--shoes", "1",
                           "--seed", str(seed), "--speed", "max", "--dealt-log", str(tmp / "dealt.log"), "--json"],
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    check_integrity(tmp, journal)
    with JournalReader.open(journal) as r:
        return list(r.entries())


def of(entries: list, kind: str) -> list[dict]:
    return [e.payload for e in entries if e.kind == kind]


@pytest.mark.slow
@pytest.mark.reg("681a.5(a)", "681a.5(b)", "681a.5(c)", "681a.5(d)", "681a.5(f)", "681a.7(a)", "681a.7(c)",
                 "681a.7(d)", "681a.7(d)(1)", "681a.7(d)(2)", "681a.7(h)", "681a.7(l)")
@pytest.mark.parametrize("preset", ["minibaccarat", "ez-baccarat", "21-baccarat"])
def test_a_whole_shoe_follows_the_procedure(tmp_path: Path, preset: str) -> None:
    """The journal of one whole shoe, clause by clause. 681a.5(a): the dealer or a device shall
    "shuffle the cards ... so that the cards are randomly intermixed" (the shuffler's reports come
    first); 681a.5(b): "The dealer shall begin with the player seated in the highest number position
    at the table" and "offer the stack to each player until a player accepts the cut"; 681a.5(c):
    the cover card "at least ten cards in from the top or the bottom of the stack"; 681a.5(d): "the
    second cover card in a position at least ten cards above the bottom of the stack"; 681a.7(a):
    "the stacked cards shall be placed in the dealing shoe"; 681a.7(c): then "the dealer shall remove
    the first card and place it in the discard rack"; 681a.7(d): when the cover card appears "the
    hand shall be completed", then (d)(1) "Collect and reshuffle the cards by removing the cards
    remaining in the shoe and placing them in the discard rack to ensure that no cards are missing"
    (the reconciliation counts every card) and (d)(2) "Shuffle the cards so that they are randomly
    intermixed" (the next shoe is started); 681a.5(f): "A reshuffle of the cards in the shoe shall
    take place after the cover card is reached in the shoe and the round of play is completed";
    681a.7(h): "Starting with the player farthest to the dealer's right and continuing around the
    table in a counterclockwise direction the dealer shall then settle all Player and Banker
    Wagers"; 681a.7(l): the cards go to the discard rack "in a manner that permits the
    reconstruction of each hand": each round's discard holds its cards in the order dealt."""
    sub = load_preset(preset)
    entries = played(tmp_path, preset)
    kinds = [e.kind for e in entries]
    # shuffled and counted, offered for the cut, cut and covered within the limits, loaded, burned
    assert of(entries, "input.device")[0]["event"] in ("SHUFFLE_PROGRESS", "SHUFFLE_DONE")
    assert kinds.index("shoe_start") < kinds.index("cut_offer") < kinds.index("cut") < kinds.index("cover") \
        < kinds.index("shoe_loaded") < kinds.index("burn") < kinds.index("round_start")
    order = of(entries, "cut_offer")[0]["order"]
    declined = kinds[kinds.index("cut_offer"):kinds.index("cut")].count("cut_declined")
    cut, cover = of(entries, "cut")[0], of(entries, "cover")[0]
    assert order and order[0] == max(order)  # the highest number position first
    if declined < len(order):
        assert cut["by"] == f"seat {order[declined]}"  # the first seat offered that did not decline
    else:
        assert not cut["by"].startswith("seat")  # every player declined: the dealer cut
    assert 10 <= cut["position"] <= cut["stack"] - 10 and cover["from_bottom"] >= 10
    # the cover card came out, that round was completed, then the cards were reconciled and reshuffled
    i_cover = kinds.index("cover_card")
    after_cover = kinds[i_cover:kinds.index("reconciliation")]
    assert after_cover.count("round_result") == 1 and "round_start" not in after_cover  # that round, no other
    rec = of(entries, "reconciliation")[0]
    assert rec["ok"] and rec["total"] == sub.decks * 52
    assert kinds.index("reconciliation") > i_cover and kinds[kinds.index("reconciliation"):].count("shoe_start") == 1
    # settlement counterclockwise from the dealer's right, Player/Banker first
    order = {s: i for i, s in enumerate(sub.seats)}
    seq = []
    for e in entries:
        if e.kind == "round_start":
            seq = []
        elif e.kind == "settlement" and e.payload["kind"] in ("player", "banker"):
            seq.append(order[e.payload["seat"]])
        elif e.kind == "round_result":
            assert seq == sorted(seq)
    # every round's cards go to the discard rack in the order they were dealt
    assert len(of(entries, "discard_rack")) == len([r for r in of(entries, "round_result") if r["kind"] != "void"])
    dealt: list[str] = []
    for e in entries:
        if e.kind == "round_start":
            dealt = []
        elif e.kind == "card":
            dealt.append(e.payload["card"])
        elif e.kind == "discard_rack":
            assert e.payload["cards"] == dealt


@pytest.mark.slow
@pytest.mark.reg("629a.8(c)", "629a.8(c)(1)", "629a.8(c)(2)", "629a.8(c)(3)", "629a.8(c)(3)(i)", "629a.8(c)(3)(ii)")
def test_midibaccarat_squeeze_and_house_money_before_third_cards(tmp_path: Path) -> None:
    """A whole Midibaccarat shoe's journal. 629a.8(c): "The dealer shall then deal an initial four
    cards from the dealing shoe"; (c)(1): "hand the two cards of the Player's Hand, face down, to the
    player with the highest wager on the Player's Hand"; (c)(2): then "the two cards of the Banker's
    Hand, face down, to the player with the highest wager on the Banker's Hand"; (c)(3): "Prior to
    dealing a third card to the Player's or Banker's Hand, the dealer shall settle all House Money
    Wagers", (c)(3)(i) "after the initial two cards of the Player's Hand and Banker's Hand have been
    turned face up on the layout"; (c)(3)(ii): "After settling the House Money Wagers, the game shall
    resume by dealing any third cards". In every round the first squeeze of each hand goes to a seat
    holding that hand's highest wager, and each House Money settlement comes after four cards and
    both hands revealed, before any fifth card."""
    entries = played(tmp_path, "midibaccarat", seed=8)
    squeezes = of(entries, "squeeze")
    assert {s["hand"] for s in squeezes} >= {"player", "banker"}
    rounds_with_hm = 0
    cards_in_round = revealed = 0
    hm_seen_at = None
    highest: dict[str, int] = {}
    first_squeeze: dict[str, int] = {}
    for e in entries:
        if e.kind == "round_start":
            cards_in_round, revealed, hm_seen_at, first_squeeze = 0, 0, None, {}
            wagers: Counter[tuple[int, str]] = Counter()  # a seat's wagers on a hand, together
            for w in e.payload["wagers"]:
                wagers[(w["seat"], w["kind"])] += w["amount"]
            highest = {hand: max((n for (_, kind), n in wagers.items() if kind == hand), default=0)
                       for hand in ("player", "banker")}
        elif e.kind == "card":
            cards_in_round += 1
        elif e.kind == "revealed":
            revealed += 1
        elif e.kind == "squeeze" and e.payload["hand"] not in first_squeeze:
            hand = e.payload["hand"]
            first_squeeze[hand] = e.payload["seat"]
            assert cards_in_round == 4 and (hand == "player") == (revealed == 0)  # the Player's Hand first
            if highest[hand]:
                assert wagers[(e.payload["seat"], hand)] == highest[hand]
        elif e.kind == "settlement" and e.payload["kind"] == "house_money" and hm_seen_at is None:
            hm_seen_at = cards_in_round
            rounds_with_hm += 1
            assert cards_in_round == 4 and revealed >= 2  # both hands face up, before any third card
    assert rounds_with_hm > 0


@pytest.mark.reg("681a.5(d)", "681a.7(c)")
def test_a_one_deck_shoe_with_a_long_burn_is_covered_and_dealt(tmp_path: Path) -> None:
    """681a.5(d): "the second cover card in a position at least ten cards above the bottom of the
    stack"; 681a.7(c): the burn ("remove the first card") after the load, here forty cards, which
    the submission may set: the cover card goes below them, at 10-12 cards above the bottom of a
    one-deck stack. The automated dealer placed it at 14-16 whatever the burn, and the table
    refused every cover for ever, filling its journal (a configuration review)."""
    path = tmp_path / "long-burn.toml"
    path.write_text('[submission]\ngame = "punto-banco"\ndecks = 1\nburn_cards = 40\n')
    entries = played(tmp_path, str(path))
    assert not of(entries, "refused")
    (cover,) = of(entries, "cover")
    assert 10 <= cover["from_bottom"] <= 12
    assert len(of(entries, "burn")) == 40 and of(entries, "card")  # burned, then dealt
