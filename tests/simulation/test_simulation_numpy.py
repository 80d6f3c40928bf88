"""The numpy simulation path (``controller.simulation_numpy``) against the reference path: the
same shuffled shoes dealt by both give the same rounds, shoe by shoe; its own runs agree with the
exact odds; ``shoectl simulate --engine`` picks it and refuses it where it cannot serve."""
from __future__ import annotations

import json

import numpy as np
import pytest

from controller.rules.cards import Composition
from controller.rules.submission import load_preset
from controller.simulation import make_rng, outcome_frequencies, shuffle_and_prepare, simulate, tally_shoe_reference, wager_holds
from controller.simulation_fast import counts_to_facts, tableau_for
from controller.simulation_numpy import deal_shoes, draw_shoes
from tests.cli_run import run


@pytest.mark.parametrize("preset", ["minibaccarat", "ez-baccarat", "midibaccarat"])
def test_numpy_deals_the_reference_rounds_on_the_same_shoes(preset: str) -> None:
    sub = load_preset(preset)
    rng = make_rng(15)
    base = Composition.standard(sub.decks).cards()
    shoes = [shuffle_and_prepare(sub, rng, base) for _ in range(40)]
    ranks = np.array([[c.rank for c in shoe.stack] for shoe in shoes], np.int8)
    dealt = deal_shoes(ranks, np.array([s.first_live for s in shoes]), np.array([s.cover_index for s in shoes]),
                       tableau_for(sub.game))
    for i, shoe in enumerate(shoes):
        ref = tally_shoe_reference(shoe, sub)
        assert (int(dealt.rounds[i]), int(dealt.cards[i])) == (ref.rounds, ref.cards_dealt)
        assert counts_to_facts(tableau_for(sub.game), list(dealt.counts[i])) == ref.facts


def test_numpy_refuses_a_cover_card_without_room_for_a_round() -> None:
    sub = load_preset("minibaccarat")
    shoe = shuffle_and_prepare(sub, make_rng(3), Composition.standard(8).cards())
    ranks = np.array([[c.rank for c in shoe.stack]], np.int8)
    with pytest.raises(Exception, match="room for a whole round"):
        deal_shoes(ranks, 1, np.array([len(shoe.stack) - 3]), tableau_for(sub.game))


@pytest.mark.reg("681a.5(c)", "681a.5(d)", "681a.7(c)")
def test_numpy_shoes_are_whole_shoes_cut_legally_with_the_cover_card_near_the_bottom() -> None:
    """681a.5(c): the cover card "at least ten cards in from the top or the bottom of the stack";
    681a.5(d): "the second cover card in a position at least ten cards above the bottom of the
    stack"; 681a.7(c): "the dealer shall remove the first card and place it in the discard rack".
    Every row is a permutation of the 8-deck shoe (twice: the cut is read from the doubled row)."""
    sub = load_preset("ez-baccarat")
    ranks, first_live, cover = draw_shoes(sub, np.random.default_rng(5), 300)
    n = 416
    assert ranks.shape == (300, 2 * n)
    assert (ranks[:, :n] == ranks[:, n:]).all()
    assert (np.sort(ranks[:, :n], axis=1) == np.sort(np.array([c.rank for c in Composition.standard(8).cards()]))).all()
    cut = first_live - sub.burn_cards
    assert ((cut >= 10) & (cut <= n - 10)).all()
    from_bottom = cut + n - cover
    assert ((from_bottom >= 14) & (from_bottom <= 16)).all()


@pytest.mark.parametrize("preset", ["minibaccarat", "ez-baccarat"])
def test_numpy_simulation_agrees_with_exact_odds(preset: str) -> None:
    """As tests/simulation/test_simulation.py's check for the Python paths: every figure of a seeded numpy
    run within 1.8 times its 95% half-width of the exact figure."""
    from controller.rules.odds import exact_odds

    sub = load_preset(preset)
    t = simulate(sub, 3000, seed=2026, engine="numpy")
    assert t.shoes == 3000 and len(t.batches) == 30 and sum(n for n, _ in t.batches) == t.rounds
    exact = exact_odds(sub)
    figures = [(n, e, exact.outcomes[n]) for n, e in outcome_frequencies(t, sub.game).items()]
    figures += [(n, e, exact.wagers[n]["house_edge"]) for n, e in wager_holds(t, sub).items()]
    for name, est, ref in figures:
        assert abs(est.mean - float(ref)) <= 1.8 * (est.high - est.low) / 2, (name, est, float(ref))


def test_numpy_seeded_runs_repeat() -> None:
    sub = load_preset("minibaccarat")
    a, b = simulate(sub, 30, seed=1, engine="numpy"), simulate(sub, 30, seed=1, engine="numpy")
    assert a.facts == b.facts and a.cards_dealt == b.cards_dealt


def test_cli_engine_numpy_and_python(capsys) -> None:
    code, out, _ = run(capsys, "simulate", "--game", "ez-baccarat", "--shoes", "40", "--seed", "3", "--engine", "numpy", "--json")
    assert code == 0
    rep = json.loads(out)
    assert rep["engine"] == "numpy" and rep["shoes"] == 40
    code, out, _ = run(capsys, "simulate", "--game", "ez-baccarat", "--shoes", "40", "--seed", "3", "--engine", "python", "--json")
    assert code == 0 and json.loads(out)["engine"] == "python"


@pytest.mark.parametrize("argv, needle", [
    (["--game", "21-baccarat", "--engine", "numpy"], "Punto Banco games only"),
    (["--game", "punto-banco", "--engine", "numpy", "--rounds"], "--engine python"),
    (["--game", "punto-banco", "--engine", "gpu"], "invalid choice"),
])
def test_cli_engine_refusals_are_one_line_exit_2(capsys, argv: list[str], needle: str) -> None:
    code, out, err = run(capsys, "simulate", "--shoes", "2", *argv)
    assert code == 2 and out == ""
    assert needle in err and "Traceback" not in err


def test_without_numpy_auto_is_python_and_numpy_is_refused(capsys, monkeypatch) -> None:
    """numpy is an optional extra: where it is not installed (an edge this environment cannot
    reach, hence the stand-in), ``auto`` deals on the Python path and ``--engine numpy`` says how
    to get it, in one line, exit 2."""
    import controller.simulation as simulation

    monkeypatch.setattr(simulation, "numpy_available", lambda: False)
    code, out, _ = run(capsys, "simulate", "--game", "punto-banco", "--shoes", "3", "--seed", "1", "--json")
    assert code == 0 and json.loads(out)["engine"] == "python"
    code, out, err = run(capsys, "simulate", "--game", "punto-banco", "--shoes", "3", "--engine", "numpy")
    assert code == 2 and out == "" and "pip install 'numpy<3,>=1.26' (shoectl's fast extra)" in err and len(err.strip().splitlines()) == 1
