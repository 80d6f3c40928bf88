"""Tests for the Rules Submission options the regulations govern (controller/rules/submission.py):
the procedure and House Money portion a submission designates, the cover card depth, the burn
count and the dealing it may not change."""
from __future__ import annotations

from decimal import Decimal

import pytest
from submission_helpers import PB, roundtrip, write

from controller.rules.errors import SubmissionError
from controller.rules.model import Dealing
from controller.rules.submission import default_submission, load_preset, load_submission

# Regulation options ---------------------------------------------------------------------------


@pytest.mark.reg("627a.13(c)")
@pytest.mark.parametrize("option", ["discard", "simulated-round"])
def test_unauthorized_third_card_procedure_is_designated(tmp_path, option):
    """627a.13(c): when the Banker stays, the dealer follows "one of the following procedures designated
    in the certificate holder's Rules Submission": either may be designated (discard is the
    default); any other is refused, naming the two allowed."""
    s = load_submission(write(
        tmp_path, f'[submission]\ngame = "punto-banco"\n[irregularities]\nunauthorized_third_card = "{option}"\n'
    ))
    assert s.unauthorized_third_card == option
    assert default_submission().unauthorized_third_card == "discard"
    with pytest.raises(SubmissionError, match=r"irregularities\.unauthorized_third_card: .*allowed: discard, simulated-round"):
        load_submission(write(
            tmp_path, '[submission]\ngame = "punto-banco"\n[irregularities]\nunauthorized_third_card = "keep"\n'
        ))


@pytest.mark.reg("629a.8(c)(3)(i)(A)")
@pytest.mark.parametrize("portion, ok", [('"1"', True), ('"0.5"', True), ("0.25", True), ("1", True),
                                         ('"0"', False), ('"1.01"', False), ('"-0.5"', False)])
def test_house_money_portion(tmp_path, portion, ok):
    """629a.8(c)(3)(i)(A): "if specified in the certificate holder's Rules Submission ..., only a
    specified portion of the winning House Money payout shall be added": the portion is a fraction
    above 0 and at most 1 (all), kept exact as a Decimal."""
    text = (
        '[submission]\ngame = "punto-banco"\n[wagers]\noffered = ["player", "banker", "house_money"]\n'
        f"[house_money]\nportion = {portion}\n"
    )
    path = write(tmp_path, text)
    if ok:
        s = load_submission(path)
        assert s.house_money.portion == Decimal(portion.strip('"'))
        assert isinstance(s.house_money.portion, Decimal)
        assert roundtrip(s) == s
    else:
        with pytest.raises(SubmissionError, match=r"house_money\.portion: out of range"):
            load_submission(path)


@pytest.mark.reg("681a.5(c)")
@pytest.mark.reg("681a.5(d)")
def test_min_cover_depth_may_be_raised_never_lowered(tmp_path):
    """681a.5(c): the cover card "at least ten cards in from the top or the bottom of the stack"; 681a.5(d):
    the second cover card "at least ten cards above the bottom of the stack". A Rules Submission may
    raise the ten, never lower it."""
    base = '[submission]\ngame = "21-baccarat"\n'
    assert load_submission(write(tmp_path, base)).min_cover_depth == 10
    assert load_submission(write(tmp_path, base + "min_cover_depth = 26\n")).min_cover_depth == 26
    for bad in (9, 0, -10):
        with pytest.raises(SubmissionError, match=r"submission\.min_cover_depth: out of range.*never lowered"):
            load_submission(write(tmp_path, base + f"min_cover_depth = {bad}\n"))


@pytest.mark.reg("681a.7(c)")
def test_burn_card_count(tmp_path):
    """681a.7(c): "After each full batch of cards is placed in the shoe, the dealer shall remove
    the first card and place it in the discard rack. Each new dealer ... shall also remove one
    card": one card at 21 Baccarat, so any other count is refused there; the Punto Banco games
    (whose burn section was not found) may set more, and the table and ``simulate`` burn it."""
    base = '[submission]\ngame = "21-baccarat"\n'
    assert load_submission(write(tmp_path, base)).burn_cards == 1
    assert load_preset("21-baccarat").burn_cards == 1
    assert load_submission(write(tmp_path, base + "burn_cards = 1\n")).burn_cards == 1
    with pytest.raises(SubmissionError, match=r"submission\.burn_cards: .*681a\.7\(c\)"):
        load_submission(write(tmp_path, base + "burn_cards = 3\n"))
    assert load_submission(write(tmp_path, PB + "burn_cards = 3\n")).burn_cards == 3
    with pytest.raises(SubmissionError, match=r"submission\.burn_cards: out of range"):
        load_submission(write(tmp_path, base + "burn_cards = 0\n"))


@pytest.mark.reg("681a.5(d)", "681a.7(c)")
@pytest.mark.parametrize("decks, depth, burn, ok", [(1, 10, 42, True), (1, 10, 43, False), (1, 10, 52, False),
                                                    (1, 20, 32, True), (1, 20, 33, False), (8, 10, 52, True)])
def test_a_burn_count_that_leaves_no_place_for_the_second_cover_card_is_refused(tmp_path, decks, depth, burn, ok):
    """681a.5(d): the dealer "shall then insert the second cover card in a position at least ten
    cards above the bottom of the stack" (or the submission's deeper minimum); 681a.7(c): after the
    batch is placed in the shoe the dealer "shall remove the first card" (the burn): the cover
    card goes below the burned cards. A burn count that leaves no such place is refused when the
    file is read, naming the key and the most it may be (a table once refused every cover, for
    ever, and filled its journal; a configuration review)."""
    text = f'[submission]\ngame = "punto-banco"\ndecks = {decks}\nmin_cover_depth = {depth}\nburn_cards = {burn}\n'
    if ok:
        assert load_submission(write(tmp_path, text)).burn_cards == burn
        return
    deck_word = "deck" if decks == 1 else "decks"
    with pytest.raises(SubmissionError, match=rf"submission\.burn_cards: {burn} cards burned leave no place for the "
                       rf"second cover card.*at most {decks * 52 - depth} for {decks} {deck_word}$"):
        load_submission(write(tmp_path, text))


@pytest.mark.reg("681a.7(e)")
def test_21_baccarat_is_dealt_face_up(tmp_path):
    """681a.7(e): the dealer deals "One card face up to the area" of the Player's Hand, then the
    Banker's, and "A second card face up" to each: a 21 Baccarat Rules Submission cannot deal face
    down."""
    assert load_preset("21-baccarat").dealing is Dealing.FACE_UP
    with pytest.raises(SubmissionError, match=r"submission\.dealing: .*face up \(681a\.7\(e\)\)"):
        load_submission(write(tmp_path, '[submission]\ngame = "21-baccarat"\ndealing = "face-down"\n'))


@pytest.mark.reg("681a.7(g)")
@pytest.mark.reg("681a.7(f)(2)")
@pytest.mark.parametrize("threshold", [12, 16, 18, 21])
def test_21_baccarat_draws_below_17_whatever_a_submission_says(tmp_path, threshold):
    """681a.7(g): "the dealer shall draw one additional card face up to the Player's or Banker's
    Hand if either ... has a total value of less than a soft or hard 17"; (f)(2) draws the Bonus-only
    card below the same 17. The 17 is the regulation's, not the Rules Submission's."""
    base = '[submission]\ngame = "21-baccarat"\n[twentyone]\n'
    assert load_submission(write(tmp_path, base + "draw_threshold = 17\n")).to_dict()["twentyone"]["draw_threshold"] == 17
    with pytest.raises(SubmissionError, match=rf"twentyone\.draw_threshold: .*17.*681a\.7\(f\)\(2\), \(g\)\), not {threshold}"):
        load_submission(write(tmp_path, base + f"draw_threshold = {threshold}\n"))


@pytest.mark.reg("681a.7(f)(2)")
def test_21_baccarat_always_draws_the_bonus_only_card(tmp_path):
    """681a.7(f)(2): with a natural, if "any player placed a Bonus Wager, one additional card shall
    be drawn" to a hand below 17, for the Bonus Wager only. A Rules Submission cannot turn it off."""
    base = '[submission]\ngame = "21-baccarat"\n[twentyone]\n'
    assert load_submission(write(tmp_path, base + "bonus_only_card = true\n")).to_dict()["twentyone"]["bonus_only_card"] is True
    with pytest.raises(SubmissionError, match=r"twentyone\.bonus_only_card: 681a\.7\(f\)\(2\) requires it"):
        load_submission(write(tmp_path, base + "bonus_only_card = false\n"))
